// RUN: mobile-opt %s | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s

// onnx.None, onnx.Constant, onnx.Weight and onnx.ConstantOfShape.

// CHECK:      builtin.module {

// An omitted optional input.
%none = onnx.None
// CHECK-NEXT:   %none = onnx.None

// Inline constants: splat, 1-D, scalar, boolean, unsigned and empty.
%half = onnx.Constant {value = dense<5.000000e-01> : tensor<2x3xf32>} : tensor<2x3xf32>
%shape = onnx.Constant {value = dense<[2, 3, 4]> : tensor<3xi64>} : tensor<3xi64>
%axis = onnx.Constant {value = dense<-1> : tensor<i64>} : tensor<i64>
%mask = onnx.Constant {value = dense<[true, false, true]> : tensor<3xi1>} : tensor<3xi1>
%zp = onnx.Constant {value = dense<[0, 128, 255]> : tensor<3xui8>} : tensor<3xui8>
%nothing = onnx.Constant {value = dense<> : tensor<0xi64>} : tensor<0xi64>
%h = onnx.Constant {value = dense<[1.000000e+00, 2.500000e-01]> : tensor<2xf16>} : tensor<2xf16>
// CHECK-NEXT:   %half = onnx.Constant {value = dense<5.000000e-01> : tensor<2x3xf32>} : tensor<2x3xf32>
// CHECK-NEXT:   %shape = onnx.Constant {value = dense<[2, 3, 4]> : tensor<3xi64>} : tensor<3xi64>
// CHECK-NEXT:   %axis = onnx.Constant {value = dense<-1> : tensor<i64>} : tensor<i64>
// CHECK-NEXT:   %mask = onnx.Constant {value = dense<[true, false, true]> : tensor<3xi1>} : tensor<3xi1>
// CHECK-NEXT:   %zp = onnx.Constant {value = dense<[0, 128, 255]> : tensor<3xui8>} : tensor<3xui8>
// CHECK-NEXT:   %nothing = onnx.Constant {value = dense<> : tensor<0xi64>} : tensor<0xi64>
// CHECK-NEXT:   %h = onnx.Constant {value = dense<[1.000000e+00, 2.500000e-01]> : tensor<2xf16>} : tensor<2xf16>

// Weights held outside the IR: an initializer of an .onnx file, a derived .npy.
%w = onnx.Weight {store = "/models/mobilenet_v2.onnx", key = "features.0.0.weight"} : tensor<32x3x3x3xf32>
%folded = onnx.Weight {store = "/cache/weights/3f2a9c0d.npy", key = "3f2a9c0d"} : tensor<1000xf32>
// CHECK-NEXT:   %w = onnx.Weight {store = "/models/mobilenet_v2.onnx", key = "features.0.0.weight"} : tensor<32x3x3x3xf32>
// CHECK-NEXT:   %folded = onnx.Weight {store = "/cache/weights/3f2a9c0d.npy", key = "3f2a9c0d"} : tensor<1000xf32>

// ConstantOfShape: f32 zeros by default; the element type follows `value`; an
// empty shape gives a scalar; a shape that is not constant is not checked.
%zeros = onnx.ConstantOfShape %shape : (tensor<3xi64>) -> tensor<2x3x4xf32>
%sevens = onnx.ConstantOfShape %shape {value = dense<7> : tensor<1xi64>} : (tensor<3xi64>) -> tensor<2x3x4xi64>
%scalar = onnx.ConstantOfShape %nothing {value = dense<1.000000e+00> : tensor<1xf16>} : (tensor<0xi64>) -> tensor<f16>
%dyn_shape = "test.op"() : () -> tensor<2xi64>
%dyn = onnx.ConstantOfShape %dyn_shape : (tensor<2xi64>) -> tensor<?x?xf32>
// CHECK-NEXT:   %zeros = onnx.ConstantOfShape %shape : (tensor<3xi64>) -> tensor<2x3x4xf32>
// CHECK-NEXT:   %sevens = onnx.ConstantOfShape %shape {value = dense<7> : tensor<1xi64>} : (tensor<3xi64>) -> tensor<2x3x4xi64>
// CHECK-NEXT:   %scalar = onnx.ConstantOfShape %nothing {value = dense<1.000000e+00> : tensor<1xf16>} : (tensor<0xi64>) -> tensor<f16>
// CHECK-NEXT:   %dyn_shape = "test.op"() : () -> tensor<2xi64>
// CHECK-NEXT:   %dyn = onnx.ConstantOfShape %dyn_shape : (tensor<2xi64>) -> tensor<?x?xf32>

// CHECK-NEXT: }
