// RUN: mobile-opt %s --split-input-file --verify-diagnostics -p onnx-to-texture | filecheck %s
// RUN: mobile-opt %s --split-input-file --verify-diagnostics -p onnx-to-texture | filecheck %s --check-prefix=NOPASS
// RUN: %python %inputs/exit_status.py mobile-opt %s --split-input-file -p onnx-to-texture | filecheck %s --check-prefix=ONELINE
// RUN: %python %inputs/exit_status.py mobile-opt %s --split-input-file -p 'onnx-to-texture{storage=f64}' | filecheck %s --check-prefix=STORAGE

// What onnx-to-texture cannot lower fails with one line naming the node.

// Every chunk fails: nothing is lowered.
// NOPASS-NOT: ocl.kernel

// ONELINE:      [output]
// ONELINE-NEXT: mobile-opt: error: {{.*}}onnx_to_texture_errors.mlir: node 'dq' (DequantizeLinear) has no GPU lowering
// ONELINE-NEXT: [exit status 1]

// STORAGE:      [output]
// STORAGE-NEXT: mobile-opt: error: {{.*}}onnx_to_texture_errors.mlir: onnx-to-texture: storage is f32 or f16, not f64
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

// Clip bounds are compile-time scalars.
builtin.module {
  func.func @main_graph(%x: tensor<2x4xf32>, %hi: tensor<f32>) -> tensor<2x4xf32> {
    %none = onnx.None
    %y = onnx.Clip %x, %none, %hi : (tensor<2x4xf32>, none, tensor<f32>) -> tensor<2x4xf32> loc("clip")
    func.return %y : tensor<2x4xf32>
  }
}

// CHECK: node 'clip' (Clip): only float32 elementwise ops with constant scalar bounds run on the GPU

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
