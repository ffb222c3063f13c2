// flashmem-fuse: FlashMem's adaptive fusion (§4.3). Four FusedConv{Relu} of 32 channels
// on 16x16, 4 KiB chunks: each conv reads 69760 B, so its Conv part may move 3 chunks
// (20 %) and its Relu part 24 (300 % of 32 KiB); fused, the kernel is of its Conv's class,
// the one that tolerates least, and keeps 3. A weight is 9 chunks: within C3 no fused layer
// before a weight's use can move it, so a plan within C3 preloads them (0.2075 MiB, W held
// all run); a plan that moves 9 chunks at one layer needs 0.2036 MiB.

// At 0.206 MiB the plan moves 6 chunks over the capacity of r0 and of r2; C3 kept, their
// weights would be preloaded (W_new 73728 B). Splitting r0 and r2 gives each 3 + 24 chunks,
// and the re-plan keeps C3 at a lower peak. --explain says so on stderr, before the IR.
// RUN: mobile-opt %s -p 'flashmem-fuse{budget-mb=0.206 chunk-kb=4}' --explain 2>&1 | filecheck %s
// CHECK:      flashmem-fuse @main_graph: 4 layers, plan cp-sat, C3 relaxed (optimal), peak 213504 B, 12 chunks over capacity ('r0' 6, 'r2' 6)
// CHECK-NEXT:   round 1: split layer 1 ('r0'): capacity 3 -> 3 + 24 chunks, alpha 0.2; penalty 552.96 (W_new 73728 B, dz -73728 B*layers)
// CHECK-NEXT:   round 1: split layer 3 ('r2'): capacity 3 -> 3 + 24 chunks
// CHECK-NEXT:   round 1: 6 layers, plan cp-sat (optimal), peak 201216 B, 0 chunks over capacity
// CHECK:      %r0_conv = onnx.Conv %x, %w0, %b0 {flashmem.split = "capacity 3 -> 3 + 24 chunks, alpha 0.2; penalty 552.96 (W_new 73728 B, dz -73728 B*layers)", kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
// CHECK-NEXT: %r0 = onnx.Relu %r0_conv {flashmem.split = "capacity 3 -> 3 + 24 chunks, {{.*}}"} : (tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
// CHECK-NEXT: %r1 = onnx.FusedConv %r0, %w1, %b1 {{.*}}activation = "Relu"
// CHECK-NEXT: %r2_conv = onnx.Conv %r1, %w2, %b2 {flashmem.split = "capacity 3 -> 3 + 24 chunks, {{.*}}"
// CHECK-NEXT: %r2 = onnx.Relu %r2_conv {flashmem.split = "capacity 3 -> 3 + 24 chunks, {{.*}}"}
// CHECK-NEXT: %y = onnx.FusedConv %r2, %w3, %b3 {{.*}}activation = "Relu"
// CHECK-NEXT: func.return %y

// At 0.21 MiB a plan within C3 fits (every weight preloaded): the plan needs no
// capacity, so every kernel stays fused.
// RUN: mobile-opt %s -p 'flashmem-fuse{budget-mb=0.21 chunk-kb=4}' | filecheck %s --check-prefix=LOOSE
// LOOSE-NOT:  flashmem.split
// LOOSE-COUNT-4: onnx.FusedConv {{.*}}activation = "Relu"
// LOOSE-NOT:  flashmem.split
// LOOSE:      func.return

// The α rule: 3 + 24 >= (1 + α) 3 holds up to α = 8; at α = 9 the split is refused, no
// other kernel qualifies, and the graph stays fused (over capacity).
// RUN: mobile-opt %s -p 'flashmem-fuse{budget-mb=0.206 chunk-kb=4 alpha=9}' --explain 2>&1 | filecheck %s --check-prefix=ALPHA9
// ALPHA9:      12 chunks over capacity
// ALPHA9-NEXT: round 1: no fused kernel qualifies
// ALPHA9-NOT:  flashmem.split
// ALPHA9-COUNT-4: onnx.FusedConv {{.*}}activation = "Relu"

// User errors: one line, exit 1.
// RUN: not mobile-opt %s -p 'flashmem-fuse{budget-mb=0.2 chunk-kb=4}' 2>&1 | filecheck %s --check-prefix=BUDGET
// BUDGET: mobile-opt: error: {{.*}}flashmem-fuse: @main_graph: budget 0.20 MB is below the least budget that works, 0.21 MB; layer 'r1' alone needs 0.14 MB
// RUN: not mobile-opt %s -p 'flashmem-fuse{budget-mb=1 alpha=-1}' 2>&1 | filecheck %s --check-prefix=ALPHA
// ALPHA: mobile-opt: error: pass pipeline 'flashmem-fuse{budget-mb=1 alpha=-1}': flashmem-fuse: alpha must not be negative, not -1
// RUN: not mobile-opt %s -p 'flashmem-fuse{budget-mb=1 device=nosuch}' 2>&1 | filecheck %s --check-prefix=DEVICE
// DEVICE: mobile-opt: error: {{.*}}flashmem-fuse: nosuch: no such device profile (shipped: {{.*}})

builtin.module {
  func.func @main_graph(%x: tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32> {
    %w0 = onnx.Weight {store = "weights.onnx", key = "w0"} : tensor<32x32x3x3xf32>
    %b0 = onnx.Weight {store = "weights.onnx", key = "b0"} : tensor<32xf32>
    %w1 = onnx.Weight {store = "weights.onnx", key = "w1"} : tensor<32x32x3x3xf32>
    %b1 = onnx.Weight {store = "weights.onnx", key = "b1"} : tensor<32xf32>
    %w2 = onnx.Weight {store = "weights.onnx", key = "w2"} : tensor<32x32x3x3xf32>
    %b2 = onnx.Weight {store = "weights.onnx", key = "b2"} : tensor<32xf32>
    %w3 = onnx.Weight {store = "weights.onnx", key = "w3"} : tensor<32x32x3x3xf32>
    %b3 = onnx.Weight {store = "weights.onnx", key = "b3"} : tensor<32xf32>
    %r0 = onnx.FusedConv %x, %w0, %b0 {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, activation = "Relu"} : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
    %r1 = onnx.FusedConv %r0, %w1, %b1 {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, activation = "Relu"} : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
    %r2 = onnx.FusedConv %r1, %w2, %b2 {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, activation = "Relu"} : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
    %y = onnx.FusedConv %r2, %w3, %b3 {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, activation = "Relu"} : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
    func.return %y : tensor<1x32x16x16xf32>
  }
}
