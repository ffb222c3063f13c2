// RUN: mobile-opt %s --split-input-file --verify-diagnostics | filecheck %s

// onnx.None only ever yields `none`.
%n = "onnx.None"() : () -> tensor<f32>

// CHECK:      result 'result' at position 0 does not verify:
// CHECK-NEXT: tensor<f32> should be of base attribute none_type

// -----

// The value attribute and the result disagree.
%c = onnx.Constant {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>} : tensor<3xf32>

// CHECK: onnx.Constant: value has type tensor<2xf32>, result has tensor<3xf32>

// -----

%c = onnx.Constant {value = dense<[1, 2]> : tensor<2xi64>} : tensor<2xi32>

// CHECK: onnx.Constant: value has type tensor<2xi64>, result has tensor<2xi32>

// -----

%w = onnx.Weight {store = "model.onnx", key = "fc.weight"} : tensor<?x512xf32>

// CHECK: onnx.Weight: weights must have a static shape

// -----

%w = "onnx.Weight"() <{store = "model.onnx"}> : () -> tensor<10xf32>

// CHECK: property 'key' expected in operation 'onnx.Weight'

// -----

%shape = onnx.Constant {value = dense<[2, 3, 4]> : tensor<3xi64>} : tensor<3xi64>
%z = onnx.ConstantOfShape %shape : (tensor<3xi64>) -> tensor<2x3x5xf32>

// CHECK: onnx.ConstantOfShape: result #0 has type tensor<2x3x5xf32>, but the operands give tensor<2x3x4xf32>

// -----

// Without `value` the fill is 0.0 : f32.
%shape = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : tensor<2xi64>
%z = onnx.ConstantOfShape %shape : (tensor<2xi64>) -> tensor<2x3xi64>

// CHECK: onnx.ConstantOfShape: result #0 has type tensor<2x3xi64>, but the operands give tensor<2x3xf32>

// -----

%shape = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : tensor<2xi64>
%z = onnx.ConstantOfShape %shape {value = dense<[1, 2]> : tensor<2xi64>} : (tensor<2xi64>) -> tensor<2x3xi64>

// CHECK: onnx.ConstantOfShape: value must hold one element

// -----

%shape = onnx.Constant {value = dense<[2, -1]> : tensor<2xi64>} : tensor<2xi64>
%z = onnx.ConstantOfShape %shape : (tensor<2xi64>) -> tensor<2x4xf32>

// CHECK: onnx.ConstantOfShape: shape [2, -1] has a negative dimension

// -----

%shape = "test.op"() : () -> tensor<2xf32>
%z = "onnx.ConstantOfShape"(%shape) : (tensor<2xf32>) -> tensor<?x?xf32>

// CHECK:      operand 'input' at position 0 does not verify:
// CHECK-NEXT: f32 should be of base attribute integer_type
