// RUN: mobile-opt %s -p flashmem-stream | filecheck %s
// RUN: mobile-opt %s -p flashmem-stream | mobile-opt -p flashmem-stream | filecheck %s
// RUN: sed 's/layers = 4/layers = 5/' %s | not mobile-opt -p flashmem-stream 2>&1 | filecheck %s --check-prefix=LAYERS
// RUN: sed 's/chunks = 16, load = 2, use = 4, moves = \[2: 10, 3: 6\]/chunks = 8, load = 2, use = 4, moves = [2: 2, 3: 6]/' %s | not mobile-opt -p flashmem-stream 2>&1 | filecheck %s --check-prefix=CHUNKS
// RUN: sed 's/attributes {stream.plan = [^}]*}//' %s | not mobile-opt -p flashmem-stream 2>&1 | filecheck %s --check-prefix=NOPLAN
// RUN: not mobile-opt %s -p 'flashmem-stream,flashmem-plan{budget-mb=1.0}' 2>&1 | filecheck %s --check-prefix=AGAIN

// flashmem-stream: four launches are layers 1-4. %p1 is preloaded and keeps its pack;
// %p2 streams: its texture is made after layer 2 (its load layer), 10 of its 16 chunks
// move alongside layer 2 and 6 alongside layer 3, and layer 4 waits on both moves. Its
// weight, a constant expression computed just before layer 4 (as flashmem-split's column
// blocks are), moves before layer 2, where its first load reads it.

// CHECK:      %p1 = texture.pack %w1 {stream.weight_plan = #stream.weight_plan<preload, {{.*}}>
// CHECK-NOT:  stream.
// CHECK:      ocl.launch @conv(%a, %px, %p1)
// CHECK-NOT:  stream.
// CHECK:      %b = texture.alloc
// CHECK-NEXT: %w2t = onnx.Weight {store = "m.onnx", key = "w2t"} : tensor<256x64xf32>
// CHECK-NEXT: %w2 = onnx.Transpose %w2t
// CHECK-NEXT: ocl.launch @relu(%b, %a)
// CHECK-NEXT: %p2 = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 64, 256>} : !texture.image2d<64x64xf32>
// CHECK-NEXT: %staged = stream.load %w2 {chunks = #stream.chunks<!texture.image2d<64x64xf32>, size = 4096, first = 0, count = 10>, layout = #texture.layout<rows4>} : tensor<64x256xf32> -> !stream.staging<40960>
// CHECK-NEXT: %moved = stream.transform %staged, %p2 {chunks = #stream.chunks<!texture.image2d<64x64xf32>, size = 4096, first = 0, count = 10>} : !stream.staging<40960>, !texture.image2d<64x64xf32>
// CHECK-NEXT: %c = texture.alloc
// CHECK-NEXT: ocl.launch @relu(%c, %b)
// CHECK-NEXT: %staged_1 = stream.load %w2 {chunks = #stream.chunks<!texture.image2d<64x64xf32>, size = 4096, first = 10, count = 6>, layout = #texture.layout<rows4>} : tensor<64x256xf32> -> !stream.staging<24576>
// CHECK-NEXT: %moved_1 = stream.transform %staged_1, %p2 {chunks = #stream.chunks<!texture.image2d<64x64xf32>, size = 4096, first = 10, count = 6>} : !stream.staging<24576>, !texture.image2d<64x64xf32>
// CHECK-NEXT: %d = texture.alloc
// CHECK-NEXT: stream.wait %moved, %moved_1
// CHECK-NEXT: ocl.launch @conv(%d, %c, %p2)
// CHECK-NOT:  stream.weight_plan<stream

// LAYERS: error: {{.*}}flashmem-stream: @main_graph launches 4 kernels, but its stream.plan has 5 layers: plan again
// CHUNKS: error: {{.*}}flashmem-stream: the plan of w2 moves 8 chunks, but its !texture.image2d<64x64xf32> takes 16 of 4096 bytes
// NOPLAN: error: {{.*}}flashmem-stream: the module has no stream.plan: run flashmem-plan first
// AGAIN: error: {{.*}}flashmem-plan: weight w2 already streams (flashmem-stream ran): plan the module before it

builtin.module attributes {stream.plan = #stream.plan<chunk = 4096, budget = 150000, layers = 4, status = optimal>} {
  ocl.kernel @conv(%out: !texture.image2d<64x4xf32>, %in: !texture.image2d<64x4xf32>, %w: !texture.image2d<64x64xf32>) attributes {onnx.node = "node 'conv1' (Conv)"} {
    ocl.return
  }
  ocl.kernel @relu(%out: !texture.image2d<64x4xf32>, %in: !texture.image2d<64x4xf32>) attributes {onnx.node = "node 'relu1' (Relu)"} {
    ocl.return
  }
  func.func @main_graph(%x: tensor<1x4x4x64xf32>) -> tensor<1x4x4x64xf32> {
    %w1 = onnx.Weight {store = "m.onnx", key = "w1"} : tensor<64x256xf32>
    %p1 = texture.pack %w1 {layout = #texture.layout<rows4>, stream.weight_plan = #stream.weight_plan<preload, chunks = 16, load = 0, use = 1, moves = [0: 16]>} : tensor<64x256xf32> -> !texture.image2d<64x64xf32>
    %px = texture.pack %x {layout = #texture.layout<nc4hw4>} : tensor<1x4x4x64xf32> -> !texture.image2d<64x4xf32>
    %a = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 4, 4, 64>} : !texture.image2d<64x4xf32>
    ocl.launch @conv(%a, %px, %p1) {global_size = array<i64: 64, 4>} : !texture.image2d<64x4xf32>, !texture.image2d<64x4xf32>, !texture.image2d<64x64xf32>
    %b = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 4, 4, 64>} : !texture.image2d<64x4xf32>
    ocl.launch @relu(%b, %a) {global_size = array<i64: 64, 4>} : !texture.image2d<64x4xf32>, !texture.image2d<64x4xf32>
    %c = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 4, 4, 64>} : !texture.image2d<64x4xf32>
    ocl.launch @relu(%c, %b) {global_size = array<i64: 64, 4>} : !texture.image2d<64x4xf32>, !texture.image2d<64x4xf32>
    %w2t = onnx.Weight {store = "m.onnx", key = "w2t"} : tensor<256x64xf32>
    %w2 = onnx.Transpose %w2t : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %p2 = texture.pack %w2 {layout = #texture.layout<rows4>, stream.weight_plan = #stream.weight_plan<stream, chunks = 16, load = 2, use = 4, moves = [2: 10, 3: 6]>} : tensor<64x256xf32> -> !texture.image2d<64x64xf32>
    %d = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 4, 4, 64>} : !texture.image2d<64x4xf32>
    ocl.launch @conv(%d, %c, %p2) {global_size = array<i64: 64, 4>} : !texture.image2d<64x4xf32>, !texture.image2d<64x4xf32>, !texture.image2d<64x64xf32>
    %y = texture.unpack %d {layout = #texture.layout<nc4hw4>} : !texture.image2d<64x4xf32> -> tensor<1x4x4x64xf32>
    func.return %y : tensor<1x4x4x64xf32>
  }
}
