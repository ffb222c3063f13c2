// RUN: mobile-opt %s --split-input-file --verify-diagnostics -p onnx-to-hvx | filecheck %s

// onnx-to-hvx chooses nothing. A product without a recorded implementation is an error.
builtin.module {
  func.func @main_graph(%a: tensor<8x4xui8> {onnx.name = "a", hvx.layout = #hvx.layout<col4>}) -> (tensor<8x4xui8> {onnx.name = "y"}) {
    %s = onnx.Constant {value = dense<2.000000e-02> : tensor<f32>} : tensor<f32>
    %z = onnx.Constant {value = dense<128> : tensor<ui8>} : tensor<ui8>
    %wz = onnx.Constant {value = dense<0> : tensor<i8>} : tensor<i8>
    %w = onnx.Constant {value = dense<1> : tensor<4x4xi8>} : tensor<4x4xi8>
    %y = onnx.QLinearMatMul %a, %s, %z, %w, %s, %wz, %s, %z : (tensor<8x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<8x4xui8>
    func.return %y : tensor<8x4xui8>
  }
}

// CHECK: op onnx.QLinearMatMul: no implementation recorded (run select-layouts{target=dsp} first)

// -----

// A product that reads its input in another layout than it was written in, with no
// hvx.relayout between them.
builtin.module {
  func.func @main_graph(%a: tensor<8x4xui8> {onnx.name = "a", hvx.layout = #hvx.layout<col1>}) -> (tensor<8x4xui8> {onnx.name = "y"}) {
    %s = onnx.Constant {value = dense<2.000000e-02> : tensor<f32>} : tensor<f32>
    %z = onnx.Constant {value = dense<128> : tensor<ui8>} : tensor<ui8>
    %wz = onnx.Constant {value = dense<0> : tensor<i8>} : tensor<i8>
    %w = onnx.Constant {value = dense<1> : tensor<4x4xi8>} : tensor<4x4xi8>
    %y = onnx.QLinearMatMul %a, %s, %z, %w, %s, %wz, %s, %z {hvx.implementation = #hvx.implementation<col4, vrmpy, 409 packets, 1565 cycles>} : (tensor<8x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<8x4xui8>
    func.return %y : tensor<8x4xui8>
  }
}

// CHECK: op onnx.QLinearMatMul: reads a in col4, but it is written in col1 and no hvx.relayout moves it (run select-layouts)

// -----

// The recorded instruction must be the one the layout runs.
builtin.module {
  func.func @main_graph(%a: tensor<8x4xui8> {onnx.name = "a", hvx.layout = #hvx.layout<col4>}) -> (tensor<8x4xui8> {onnx.name = "y"}) {
    %s = onnx.Constant {value = dense<2.000000e-02> : tensor<f32>} : tensor<f32>
    %z = onnx.Constant {value = dense<128> : tensor<ui8>} : tensor<ui8>
    %wz = onnx.Constant {value = dense<0> : tensor<i8>} : tensor<i8>
    %w = onnx.Constant {value = dense<1> : tensor<4x4xi8>} : tensor<4x4xi8>
    %y = onnx.QLinearMatMul %a, %s, %z, %w, %s, %wz, %s, %z {hvx.implementation = #hvx.implementation<col4, vmpy, 409 packets, 1565 cycles>} : (tensor<8x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<8x4xui8>
    func.return %y : tensor<8x4xui8>
  }
}

// CHECK: op onnx.QLinearMatMul: runs vrmpy in layout col4, not the recorded vmpy

// -----

// A layout-only operator needs its result's layout.
builtin.module {
  func.func @main_graph(%a: tensor<1x4x4x4xui8> {onnx.name = "a", hvx.layout = #hvx.layout<col4>}) -> (tensor<1x4x5x5xui8> {onnx.name = "y"}) {
    %y = onnx.MaxPool %a {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4xui8>) -> tensor<1x4x5x5xui8>
    func.return %y : tensor<1x4x5x5xui8>
  }
}

// CHECK: op onnx.MaxPool: no layout recorded (run select-layouts{target=dsp} first)
