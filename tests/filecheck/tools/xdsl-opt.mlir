// The project's universe is published under the `xdsl.universe` entry point, so
// stock xdsl-opt reads, verifies and transforms the onnx dialect too.

// RUN: xdsl-opt %s | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | xdsl-opt | filecheck %s
// RUN: mobile-opt %s | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s -p onnx-fold-constants | filecheck %s --check-prefix=FOLD

%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%w = onnx.Weight {store = "/models/net.onnx", key = "conv.weight"} : tensor<8x3x3x3xf32>
%n = onnx.None
%c = onnx.Conv %x, %w, %n {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, none) -> tensor<1x8x8x8xf32>
%s = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : tensor<2xi64>
%one = onnx.Constant {value = dense<1> : tensor<i64>} : tensor<i64>
%shape = onnx.Mul %s, %one : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
%flat = onnx.Reshape %c, %shape : (tensor<1x8x8x8xf32>, tensor<2xi64>) -> tensor<1x512xf32>
"test.op"(%flat) : (tensor<1x512xf32>) -> ()

// CHECK:      builtin.module {
// CHECK-NEXT:   %x = "test.op"() : () -> tensor<1x3x8x8xf32>
// CHECK-NEXT:   %w = onnx.Weight {store = "/models/net.onnx", key = "conv.weight"} : tensor<8x3x3x3xf32>
// CHECK-NEXT:   %n = onnx.None
// CHECK-NEXT:   %c = onnx.Conv %x, %w, %n {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, none) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:   %s = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %one = onnx.Constant {value = dense<1> : tensor<i64>} : tensor<i64>
// CHECK-NEXT:   %shape = onnx.Mul %s, %one : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
// CHECK-NEXT:   %flat = onnx.Reshape %c, %shape : (tensor<1x8x8x8xf32>, tensor<2xi64>) -> tensor<1x512xf32>
// CHECK-NEXT:   "test.op"(%flat) : (tensor<1x512xf32>) -> ()
// CHECK-NEXT: }

// onnx-fold-constants (this project's pass) folds the shape computation; the
// weight is not needed for that and is not loaded.
// FOLD:      %shape = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : tensor<2xi64>
// FOLD-NEXT: %flat = onnx.Reshape %c, %shape : (tensor<1x8x8x8xf32>, tensor<2xi64>) -> tensor<1x512xf32>

