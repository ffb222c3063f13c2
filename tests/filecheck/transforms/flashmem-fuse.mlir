// flashmem-fuse: FlashMem's adaptive fusion (§4.3). Four FusedConv{Relu} of 32 channels
// on 16x16, 4 KiB chunks: each conv reads 69760 B, so its Conv part may move 3 chunks
// (20 %) and its Relu part 24 (300 % of 32 KiB); fused, the kernel keeps the least, 3.
// A weight is 9 chunks: below 0.2 MiB no plan streams them within C3 and fits.

// At 0.172 MiB the plan moves 6 chunks of %w3 over conv2's capacity; C3 kept, %w3 would be
// preloaded (W_new = 36864 B). Splitting conv2 gives 3 + 24 chunks and the re-plan keeps
// C3. --explain says so on stderr, which comes before the IR.
// RUN: mobile-opt %s -p 'flashmem-fuse{budget-mb=0.172 chunk-kb=4}' --explain 2>&1 | filecheck %s
// CHECK:      flashmem-fuse @main_graph: 4 layers, plan cp-sat, C3 relaxed (optimal), peak 176384 B, 6 chunks over capacity ('r2' 6)
// CHECK-NEXT:   round 1: split layer 3 ('r2'): capacity 3 -> 3 + 24 chunks
// CHECK-NEXT:   round 1: 5 layers, plan cp-sat (optimal), peak 176384 B, 0 chunks over capacity
// CHECK:      %r0 = onnx.FusedConv %x, %w0, %b0 {{.*}}activation = "Relu"
// CHECK-NEXT: %r1 = onnx.FusedConv %r0, %w1, %b1 {{.*}}activation = "Relu"
// CHECK-NEXT: %r2_conv = onnx.Conv %r1, %w2, %b2 {flashmem.split = "capacity 3 -> 3 + 24 chunks, alpha 0.2; penalty 368.64 (W_new 36864 B, dz 0 B*layers)", kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
// CHECK-NEXT: %r2 = onnx.Relu %r2_conv {flashmem.split = "capacity 3 -> 3 + 24 chunks, {{.*}}"} : (tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
// CHECK-NEXT: %y = onnx.FusedConv %r2, %w3, %b3 {{.*}}activation = "Relu"
// CHECK-NEXT: func.return %y

// At 0.21 MiB a plan within C3 fits (every weight it cannot stream is preloaded): the
// plan needs no capacity, so every kernel stays fused.
// RUN: mobile-opt %s -p 'flashmem-fuse{budget-mb=0.21 chunk-kb=4}' | filecheck %s --check-prefix=LOOSE
// LOOSE-NOT:  flashmem.split
// LOOSE-COUNT-4: onnx.FusedConv {{.*}}activation = "Relu"
// LOOSE-NOT:  flashmem.split
// LOOSE:      func.return

// The α rule: 3 + 24 >= (1 + α) 3 holds up to α = 8; at α = 9 the split is refused, no
// other kernel qualifies, and the graph stays fused (over capacity).
// RUN: mobile-opt %s -p 'flashmem-fuse{budget-mb=0.172 chunk-kb=4 alpha=9}' --explain 2>&1 | filecheck %s --check-prefix=ALPHA9
// ALPHA9:      6 chunks over capacity
// ALPHA9-NEXT: round 1: no fused kernel qualifies
// ALPHA9-NOT:  flashmem.split
// ALPHA9-COUNT-4: onnx.FusedConv {{.*}}activation = "Relu"

// User errors: one line, exit 1.
// RUN: not mobile-opt %s -p 'flashmem-fuse{budget-mb=0.1 chunk-kb=4}' 2>&1 | filecheck %s --check-prefix=BUDGET
// BUDGET: mobile-opt: error: {{.*}}flashmem-fuse: @main_graph: budget 0.10 MB is below the least budget that works, 0.17 MB; layer 'r0' alone needs 0.10 MB
// RUN: not mobile-opt %s -p 'flashmem-fuse{budget-mb=1 alpha=-1}' 2>&1 | filecheck %s --check-prefix=ALPHA
// ALPHA: mobile-opt: error: pass pipeline 'flashmem-fuse{budget-mb=1 alpha=-1}': flashmem-fuse: alpha must not be negative, not -1

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
