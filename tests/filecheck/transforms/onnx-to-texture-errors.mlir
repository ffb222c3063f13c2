// RUN: mobile-opt %s --split-input-file --verify-diagnostics -p select-layouts,onnx-to-texture | filecheck %s
// RUN: mobile-opt %s --split-input-file --verify-diagnostics -p select-layouts,onnx-to-texture | filecheck %s --check-prefix=NOPASS
// RUN: %python %inputs/exit_status.py mobile-opt %s --split-input-file -p select-layouts,onnx-to-texture | filecheck %s --check-prefix=ONELINE
// RUN: %python %inputs/exit_status.py mobile-opt %s --split-input-file -p 'select-layouts,onnx-to-texture{storage=f64}' | filecheck %s --check-prefix=STORAGE

// What onnx-to-texture cannot lower fails with one line naming the node.

// Every chunk fails: nothing is lowered.
// NOPASS-NOT: ocl.kernel

// ONELINE:      [output]
// ONELINE-NEXT: mobile-opt: error: {{.*}}onnx-to-texture-errors.mlir: node 'dq' (DequantizeLinear) has no GPU lowering
// ONELINE-NEXT: [exit status 1]

// STORAGE:      [output]
// STORAGE-NEXT: mobile-opt: error: {{.*}}onnx-to-texture-errors.mlir: onnx-to-texture: storage is f32 or f16, not f64
// STORAGE-NEXT: [exit status 1]

// An op with no lowering rule.
builtin.module {
  func.func @main_graph(%x: tensor<1x4xi8>, %s: tensor<f32>) -> tensor<1x4xf32> {
    %none = onnx.None
    %y = onnx.DequantizeLinear %x, %s, %none : (tensor<1x4xi8>, tensor<f32>, none) -> tensor<1x4xf32> loc("dq")
    func.return %y : tensor<1x4xf32>
  }
}

// CHECK: node 'dq' (DequantizeLinear) has no GPU lowering

// -----

// Only float32 tensors run on the GPU: not an int8 result, not a float16 graph.
builtin.module {
  func.func @main_graph(%x: tensor<1x4xf32>, %s: tensor<f32>) -> tensor<1x4xi8> {
    %zp = onnx.Constant {value = dense<0> : tensor<i8>} : tensor<i8>
    %y = onnx.QuantizeLinear %x, %s, %zp : (tensor<1x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4xi8> loc("q")
    func.return %y : tensor<1x4xi8>
  }
}

// CHECK: node 'q' (QuantizeLinear): only float32 tensors run on the GPU

// -----

builtin.module {
  func.func @main_graph(%x: tensor<2x4xf16>) -> tensor<2x4xf16> {
    %y = onnx.Relu %x : (tensor<2x4xf16>) -> tensor<2x4xf16> loc("relu16")
    func.return %y : tensor<2x4xf16>
  }
}

// CHECK: node 'relu16' (Relu): only float32 tensors run on the GPU

// -----

// Integer and boolean tensors run in indexing, comparison and selection ops only
// (exact integers in float pixels), not in reductions.
builtin.module {
  func.func @main_graph(%x: tensor<2x4xi64>) -> tensor<1x1xi64> {
    %none = onnx.None
    %y = onnx.ReduceSum %x, %none : (tensor<2x4xi64>, none) -> tensor<1x1xi64> loc("isum")
    func.return %y : tensor<1x1xi64>
  }
}

// CHECK: node 'isum' (ReduceSum): only float32 tensors run on the GPU (integer and boolean ones in indexing, comparison and selection ops)

// -----

// Integers live in float pixels: a constant beyond 2^24 would not be exact.
builtin.module {
  func.func @main_graph(%x: tensor<4xi64>) -> tensor<4xi1> {
    %big = onnx.Constant {value = dense<[1, 2, 16777217, 4]> : tensor<4xi64>} : tensor<4xi64>
    %y = onnx.Equal %x, %big : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1> loc("eq_big")
    func.return %y : tensor<4xi1>
  }
}

// CHECK: node 'eq_big' (Equal): integer constant beyond ±2^24 is not exact in a float texel

// -----

// Clip bounds are compile-time scalars.
builtin.module {
  func.func @main_graph(%x: tensor<2x4xf32>, %hi: tensor<f32>) -> tensor<2x4xf32> {
    %none = onnx.None
    %y = onnx.Clip %x, %none, %hi : (tensor<2x4xf32>, none, tensor<f32>) -> tensor<2x4xf32> loc("clip")
    func.return %y : tensor<2x4xf32>
  }
}

// CHECK: node 'clip' (Clip): only float32, integer and boolean elementwise ops with constant scalar bounds run on the GPU

// -----

// Ops of other dialects in the graph.
builtin.module {
  func.func @main_graph(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %y = "test.op"(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    func.return %y : tensor<2x4xf32>
  }
}

// CHECK: test.op is not an onnx op

// -----

// Without a location the op is named by its kind.
builtin.module {
  func.func @main_graph(%x: tensor<1x4xi8>, %s: tensor<f32>) -> tensor<1x4xf32> {
    %none = onnx.None
    %y = onnx.DequantizeLinear %x, %s, %none : (tensor<1x4xi8>, tensor<f32>, none) -> tensor<1x4xf32>
    func.return %y : tensor<1x4xf32>
  }
}

// CHECK: op onnx.DequantizeLinear has no GPU lowering
