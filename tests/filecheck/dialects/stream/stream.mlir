// RUN: mobile-opt %s | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s

// The stream dialect (FlashMem weight streaming): the overlap plan on the module and on
// each weight, and the host ops that load chunks of a weight's pixels into staging memory,
// transform them into the weight's texture, and wait on them before the kernel that
// reads it. Layers are the host function's launches (1, 2, 3); layer 0 is before them.
// A load or transform after the launch of layer l runs while that kernel does.

// The plan: 1024-byte chunks, at most 4096 bytes in flight, three layers, solved optimally.
// CHECK:      builtin.module attributes {stream.plan = #stream.plan<chunk = 1024, budget = 4096, layers = 3, status = optimal>} {
builtin.module attributes {stream.plan = #stream.plan<chunk = 1024, budget = 4096, layers = 3, status = optimal>} {
  ocl.kernel @relu(%y: !texture.image2d<8x4xf32>, %x: !texture.image2d<8x4xf32>) {
    ocl.return
  }
  ocl.kernel @conv(%y: !texture.image2d<16x4xf32>, %x: !texture.image2d<8x4xf32>, %w: !texture.image2d<72x4xf32>, %b: !texture.image2d<4x1xf16>) {
    ocl.return
  }
  // CHECK-NEXT:   ocl.kernel @relu(%y: !texture.image2d<8x4xf32>, %x: !texture.image2d<8x4xf32>) {
  // CHECK-NEXT:     ocl.return
  // CHECK-NEXT:   }
  // CHECK-NEXT:   ocl.kernel @conv(%y: !texture.image2d<16x4xf32>, %x: !texture.image2d<8x4xf32>, %w: !texture.image2d<72x4xf32>, %b: !texture.image2d<4x1xf16>) {
  // CHECK-NEXT:     ocl.return
  // CHECK-NEXT:   }

  func.func @host(%x: !texture.image2d<8x4xf32>) {
    // The conv weight (72x4 f32 pixels, 4608 bytes: five chunks, the last one 512 bytes)
    // is streamed: loaded from layer 1 on, two chunks move at layer 1 and three at
    // layer 2, and layer 3 reads it. The bias is preloaded: its one chunk moves at layer 0.
    %cw = onnx.Weight {store = "/models/net.onnx", key = "conv.weight", stream.weight_plan = #stream.weight_plan<stream, chunks = 5, load = 1, use = 3, moves = [1: 2, 2: 3]>} : tensor<16x8x3x3xf32>
    %cb = onnx.Weight {store = "/models/net.onnx", key = "conv.bias", stream.weight_plan = #stream.weight_plan<preload, chunks = 1, load = 0, use = 3, moves = [0: 1]>} : tensor<16xf16>
    // CHECK-NEXT:   func.func @host(%x: !texture.image2d<8x4xf32>) {
    // CHECK-NEXT:     %cw = onnx.Weight {stream.weight_plan = #stream.weight_plan<stream, chunks = 5, load = 1, use = 3, moves = [1: 2, 2: 3]>, store = "/models/net.onnx", key = "conv.weight"} : tensor<16x8x3x3xf32>
    // CHECK-NEXT:     %cb = onnx.Weight {stream.weight_plan = #stream.weight_plan<preload, chunks = 1, load = 0, use = 3, moves = [0: 1]>, store = "/models/net.onnx", key = "conv.bias"} : tensor<16xf16>

    // Layer 0: the preloaded bias, 4x1 f16 pixels (32 bytes) in one short chunk.
    %b = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 16>} : !texture.image2d<4x1xf16>
    %sb = stream.load %cb {chunks = #stream.chunks<!texture.image2d<4x1xf16>, size = 1024, first = 0, count = 1>, layout = #texture.layout<rows4>} : tensor<16xf16> -> !stream.staging<32>
    %tb = stream.transform %sb, %b {chunks = #stream.chunks<!texture.image2d<4x1xf16>, size = 1024, first = 0, count = 1>} : !stream.staging<32>, !texture.image2d<4x1xf16>
    stream.wait %tb
    // CHECK-NEXT:     %b = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 16>} : !texture.image2d<4x1xf16>
    // CHECK-NEXT:     %sb = stream.load %cb {chunks = #stream.chunks<!texture.image2d<4x1xf16>, size = 1024, first = 0, count = 1>, layout = #texture.layout<rows4>} : tensor<16xf16> -> !stream.staging<32>
    // CHECK-NEXT:     %tb = stream.transform %sb, %b {chunks = #stream.chunks<!texture.image2d<4x1xf16>, size = 1024, first = 0, count = 1>} : !stream.staging<32>, !texture.image2d<4x1xf16>
    // CHECK-NEXT:     stream.wait %tb

    // Layer 1, with chunks 0..1 of the conv weight moving alongside it.
    %a1 = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 8, 4, 4>} : !texture.image2d<8x4xf32>
    ocl.launch @relu(%a1, %x) {global_size = array<i64: 8, 4>} : !texture.image2d<8x4xf32>, !texture.image2d<8x4xf32>
    %w = texture.alloc {layout = #texture.layout<oihw4o>, shape = array<i64: 16, 8, 3, 3>} : !texture.image2d<72x4xf32>
    %s0 = stream.load %cw {chunks = #stream.chunks<!texture.image2d<72x4xf32>, size = 1024, first = 0, count = 2>, layout = #texture.layout<oihw4o>} : tensor<16x8x3x3xf32> -> !stream.staging<2048>
    %t0 = stream.transform %s0, %w {chunks = #stream.chunks<!texture.image2d<72x4xf32>, size = 1024, first = 0, count = 2>} : !stream.staging<2048>, !texture.image2d<72x4xf32>
    // CHECK-NEXT:     %a1 = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 8, 4, 4>} : !texture.image2d<8x4xf32>
    // CHECK-NEXT:     ocl.launch @relu(%a1, %x) {global_size = array<i64: 8, 4>} : !texture.image2d<8x4xf32>, !texture.image2d<8x4xf32>
    // CHECK-NEXT:     %w = texture.alloc {layout = #texture.layout<oihw4o>, shape = array<i64: 16, 8, 3, 3>} : !texture.image2d<72x4xf32>
    // CHECK-NEXT:     %s0 = stream.load %cw {chunks = #stream.chunks<!texture.image2d<72x4xf32>, size = 1024, first = 0, count = 2>, layout = #texture.layout<oihw4o>} : tensor<16x8x3x3xf32> -> !stream.staging<2048>
    // CHECK-NEXT:     %t0 = stream.transform %s0, %w {chunks = #stream.chunks<!texture.image2d<72x4xf32>, size = 1024, first = 0, count = 2>} : !stream.staging<2048>, !texture.image2d<72x4xf32>

    // Layer 2, with chunks 2..4 (2560 bytes: the last chunk is short).
    %a2 = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 8, 4, 4>} : !texture.image2d<8x4xf32>
    ocl.launch @relu(%a2, %a1) {global_size = array<i64: 8, 4>} : !texture.image2d<8x4xf32>, !texture.image2d<8x4xf32>
    %s1 = stream.load %cw {chunks = #stream.chunks<!texture.image2d<72x4xf32>, size = 1024, first = 2, count = 3>, layout = #texture.layout<oihw4o>} : tensor<16x8x3x3xf32> -> !stream.staging<2560>
    %t1 = stream.transform %s1, %w {chunks = #stream.chunks<!texture.image2d<72x4xf32>, size = 1024, first = 2, count = 3>} : !stream.staging<2560>, !texture.image2d<72x4xf32>
    // CHECK-NEXT:     %a2 = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 8, 4, 4>} : !texture.image2d<8x4xf32>
    // CHECK-NEXT:     ocl.launch @relu(%a2, %a1) {global_size = array<i64: 8, 4>} : !texture.image2d<8x4xf32>, !texture.image2d<8x4xf32>
    // CHECK-NEXT:     %s1 = stream.load %cw {chunks = #stream.chunks<!texture.image2d<72x4xf32>, size = 1024, first = 2, count = 3>, layout = #texture.layout<oihw4o>} : tensor<16x8x3x3xf32> -> !stream.staging<2560>
    // CHECK-NEXT:     %t1 = stream.transform %s1, %w {chunks = #stream.chunks<!texture.image2d<72x4xf32>, size = 1024, first = 2, count = 3>} : !stream.staging<2560>, !texture.image2d<72x4xf32>

    // Layer 3 reads the weight: it waits on both of its transforms first.
    stream.wait %t0, %t1
    %y = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 16, 4, 4>} : !texture.image2d<16x4xf32>
    ocl.launch @conv(%y, %a2, %w, %b) {global_size = array<i64: 16, 4>} : !texture.image2d<16x4xf32>, !texture.image2d<8x4xf32>, !texture.image2d<72x4xf32>, !texture.image2d<4x1xf16>
    func.return
  }
  // CHECK-NEXT:     stream.wait %t0, %t1
  // CHECK-NEXT:     %y = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 16, 4, 4>} : !texture.image2d<16x4xf32>
  // CHECK-NEXT:     ocl.launch @conv(%y, %a2, %w, %b) {global_size = array<i64: 16, 4>} : !texture.image2d<16x4xf32>, !texture.image2d<8x4xf32>, !texture.image2d<72x4xf32>, !texture.image2d<4x1xf16>
  // CHECK-NEXT:     func.return
  // CHECK-NEXT:   }

  // An integer weight, computed on the host from a constant, goes into f32 pixels, here
  // of the buffer fallback: 2x4 pixels, 128 bytes.
  func.func @table() {
    %tw = onnx.Weight {store = "/models/table.npy", key = "table"} : tensor<6x4xi32>
    %table = onnx.Transpose %tw : (tensor<6x4xi32>) -> tensor<4x6xi32>
    %ix = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 4, 6>} : !texture.buffer2d<2x4xf32>
    %s = stream.load %table {chunks = #stream.chunks<!texture.buffer2d<2x4xf32>, size = 1024, first = 0, count = 1>, layout = #texture.layout<rows4>} : tensor<4x6xi32> -> !stream.staging<128>
    %t = stream.transform %s, %ix {chunks = #stream.chunks<!texture.buffer2d<2x4xf32>, size = 1024, first = 0, count = 1>} : !stream.staging<128>, !texture.buffer2d<2x4xf32>
    stream.wait %t
    "test.op"(%ix) : (!texture.buffer2d<2x4xf32>) -> ()
    func.return
  }
  // CHECK-NEXT:   func.func @table() {
  // CHECK-NEXT:     %tw = onnx.Weight {store = "/models/table.npy", key = "table"} : tensor<6x4xi32>
  // CHECK-NEXT:     %table = onnx.Transpose %tw : (tensor<6x4xi32>) -> tensor<4x6xi32>
  // CHECK-NEXT:     %ix = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 4, 6>} : !texture.buffer2d<2x4xf32>
  // CHECK-NEXT:     %s = stream.load %table {chunks = #stream.chunks<!texture.buffer2d<2x4xf32>, size = 1024, first = 0, count = 1>, layout = #texture.layout<rows4>} : tensor<4x6xi32> -> !stream.staging<128>
  // CHECK-NEXT:     %t = stream.transform %s, %ix {chunks = #stream.chunks<!texture.buffer2d<2x4xf32>, size = 1024, first = 0, count = 1>} : !stream.staging<128>, !texture.buffer2d<2x4xf32>
  // CHECK-NEXT:     stream.wait %t
  // CHECK-NEXT:     "test.op"(%ix) : (!texture.buffer2d<2x4xf32>) -> ()
  // CHECK-NEXT:     func.return
  // CHECK-NEXT:   }

  // The types and attributes on their own (a 1x1 f16 image: 8 bytes, four 2-byte chunks).
  %tok, %buf = "test.op"() {decisions = [#stream.decision<preload>, #stream.decision<stream>], statuses = [#stream.status<optimal>, #stream.status<feasible>, #stream.status<heuristic>], chunks = #stream.chunks<!texture.image2d<1x1xf16>, size = 2, first = 3, count = 1>, plan = #stream.plan<chunk = 65536, budget = 524288000, layers = 120, status = heuristic>} : () -> (!stream.token, !stream.staging<1>)
  // CHECK-NEXT:   %tok, %buf = "test.op"() {decisions = [#stream.decision<preload>, #stream.decision<stream>], statuses = [#stream.status<optimal>, #stream.status<feasible>, #stream.status<heuristic>], chunks = #stream.chunks<!texture.image2d<1x1xf16>, size = 2, first = 3, count = 1>, plan = #stream.plan<chunk = 65536, budget = 524288000, layers = 120, status = heuristic>} : () -> (!stream.token, !stream.staging<1>)
}
// CHECK-NEXT: }
