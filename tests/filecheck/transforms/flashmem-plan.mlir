// RUN: mobile-opt %s -p 'flashmem-plan{budget-mb=0.3 chunk-kb=4}' | filecheck %s
// RUN: not mobile-opt %s -p 'flashmem-plan{budget-mb=0.05 chunk-kb=4}' 2>&1 | filecheck %s --check-prefix=ALONE
// RUN: not mobile-opt %s -p 'flashmem-plan{budget-mb=0.1 chunk-kb=4}' 2>&1 | filecheck %s --check-prefix=LEAST
// RUN: not mobile-opt %s -p 'flashmem-plan' 2>&1 | filecheck %s --check-prefix=NOBUDGET

// flashmem-plan: five launches are layers 1-5; the two 64 KiB weights are read by layers
// 2 and 5, the 4 KiB activations share two slots (8 KiB of arena).

// A loose budget preloads both (λ and μ only break ties).
// CHECK:      builtin.module attributes {stream.plan = #stream.plan<chunk = 4096, budget = 314573, layers = 5, status = optimal>}
// CHECK:      texture.pack %w1 {stream.weight_plan = #stream.weight_plan<preload, chunks = 16, load = 0, use = 2, moves = [0: 16]>
// CHECK:      texture.pack %w2 {stream.weight_plan = #stream.weight_plan<preload, chunks = 16, load = 0, use = 5, moves = [0: 16]>


// ALONE: error: {{.*}}flashmem-plan: budget 0.05 MB is below what layer 'conv1' needs alone: 0.08 MB (the least budget that works is 0.14 MB)
// LEAST: error: {{.*}}flashmem-plan: budget 0.10 MB is below the least budget that works, 0.14 MB; layer 'conv1' alone needs 0.08 MB
// NOBUDGET: error: {{.*}}flashmem-plan: budget-mb is required and positive

builtin.module {
  ocl.kernel @conv(%out: !texture.image2d<64x4xf32>, %in: !texture.image2d<64x4xf32>, %w: !texture.image2d<64x64xf32>) attributes {onnx.node = "node 'conv1' (Conv)"} {
    ocl.return
  }
  ocl.kernel @conv2(%out: !texture.image2d<64x4xf32>, %in: !texture.image2d<64x4xf32>, %w: !texture.image2d<64x64xf32>) attributes {onnx.node = "node 'conv2' (Conv)"} {
    ocl.return
  }
  ocl.kernel @relu(%out: !texture.image2d<64x4xf32>, %in: !texture.image2d<64x4xf32>) attributes {onnx.node = "node 'relu1' (Relu)"} {
    ocl.return
  }
  func.func @main_graph(%x: tensor<1x4x4x64xf32>) -> tensor<1x4x4x64xf32> {
    %w1 = onnx.Weight {store = "m.onnx", key = "w1"} : tensor<64x256xf32>
    %w2 = onnx.Weight {store = "m.onnx", key = "w2"} : tensor<64x256xf32>
    %p1 = texture.pack %w1 {layout = #texture.layout<rows4>} : tensor<64x256xf32> -> !texture.image2d<64x64xf32>
    %p2 = texture.pack %w2 {layout = #texture.layout<rows4>} : tensor<64x256xf32> -> !texture.image2d<64x64xf32>
    %px = texture.pack %x {layout = #texture.layout<nc4hw4>} : tensor<1x4x4x64xf32> -> !texture.image2d<64x4xf32>
    %a0 = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 4, 4, 64>} : !texture.image2d<64x4xf32>
    ocl.launch @relu(%a0, %px) {global_size = array<i64: 64, 4>} : !texture.image2d<64x4xf32>, !texture.image2d<64x4xf32>
    %a = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 4, 4, 64>} : !texture.image2d<64x4xf32>
    ocl.launch @conv(%a, %a0, %p1) {global_size = array<i64: 64, 4>} : !texture.image2d<64x4xf32>, !texture.image2d<64x4xf32>, !texture.image2d<64x64xf32>
    %b = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 4, 4, 64>} : !texture.image2d<64x4xf32>
    ocl.launch @relu(%b, %a) {global_size = array<i64: 64, 4>} : !texture.image2d<64x4xf32>, !texture.image2d<64x4xf32>
    %c = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 4, 4, 64>} : !texture.image2d<64x4xf32>
    ocl.launch @relu(%c, %b) {global_size = array<i64: 64, 4>} : !texture.image2d<64x4xf32>, !texture.image2d<64x4xf32>
    %d = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 4, 4, 64>} : !texture.image2d<64x4xf32>
    ocl.launch @conv2(%d, %c, %p2) {global_size = array<i64: 64, 4>} : !texture.image2d<64x4xf32>, !texture.image2d<64x4xf32>, !texture.image2d<64x64xf32>
    %y = texture.unpack %d {layout = #texture.layout<nc4hw4>} : !texture.image2d<64x4xf32> -> tensor<1x4x4x64xf32>
    func.return %y : tensor<1x4x4x64xf32>
  }
}
