// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %inputs/make_model.py opset9 opset9.onnx
// RUN: mobile-opt opset9.onnx | filecheck %s

// An opset-9 model is converted to opset 21, the dialect's semantics, on import:
//
// * Unsqueeze-9 takes `axes` as an attribute; Unsqueeze-13 as an input, here a
//   constant operand.
// * Softmax-9 with axis 1 normalises over all of dims 1.. taken as one (the input
//   is coerced to 2-D); Softmax-13 normalises along one axis. The conversion
//   flattens to [1, 12], takes the softmax along the last axis, and reshapes back
//   to the input's shape: the converter's `Shape` of `u`, whose shape is static, is
//   a constant that the import folds.

// CHECK:      func.func @main_graph(%x: tensor<3x4xf32> {onnx.name = "x"}) -> (tensor<1x3x4xf32> {onnx.name = "y"}) {
// CHECK-NEXT:   %[[AXES:.*]] = onnx.Constant {value = dense<0> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %u = onnx.Unsqueeze %x, %[[AXES]] : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<1x3x4xf32>
// CHECK-NEXT:   %[[SHAPE:.*]] = onnx.Constant {value = dense<[1, 3, 4]> : tensor<3xi64>} : tensor<3xi64>
// CHECK-NEXT:   %[[FLAT:.*]] = onnx.Flatten %u : (tensor<1x3x4xf32>) -> tensor<1x12xf32>
// CHECK-NEXT:   %[[SOFTMAX:.*]] = onnx.Softmax %[[FLAT]] : (tensor<1x12xf32>) -> tensor<1x12xf32>
// CHECK-NEXT:   %y = onnx.Reshape %[[SOFTMAX]], %[[SHAPE]] : (tensor<1x12xf32>, tensor<3xi64>) -> tensor<1x3x4xf32>
// CHECK-NEXT:   func.return %y : tensor<1x3x4xf32>
// CHECK-NEXT: }
