// The onnx verifiers run under stock xdsl-opt as well.

// RUN: xdsl-opt %s --split-input-file --verify-diagnostics | filecheck %s

// 8 + 2 - 3 + 1 = 8, not 6.
%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%w = "test.op"() : () -> tensor<8x3x3x3xf32>
%n = onnx.None
%c = onnx.Conv %x, %w, %n {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, none) -> tensor<1x8x6x6xf32>

// CHECK: onnx.Conv: result #0 has type tensor<1x8x6x6xf32>, but the operands give tensor<1x8x8x8xf32>

// -----

%x = "test.op"() : () -> tensor<1x1000xf32>
%y = onnx.FusedMatMul %x, %x, %x {activation = "Swish"} : (tensor<1x1000xf32>, tensor<1x1000xf32>, tensor<1x1000xf32>) -> tensor<1x1000xf32>

// CHECK: onnx.FusedMatMul: unknown activation 'Swish'
