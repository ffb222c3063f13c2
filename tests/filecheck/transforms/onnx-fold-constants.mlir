// RUN: mobile-opt %s -p onnx-fold-constants | filecheck %s
// RUN: mobile-opt %s --pass-pipeline='builtin.module(onnx-fold-constants{max-elements=32})' | filecheck %s --check-prefix=SMALL

builtin.module {
  // The light model zoo's weight generators: ConstantOfShape of a constant shape.
  // Small results print inline, large ones become derived weights.
  // CHECK-LABEL: func.func @constant_of_shape(
  // CHECK-NEXT:    %small = onnx.Constant {value = dense<2.000000e-02> : tensor<2x3xf32>} : tensor<2x3xf32>
  // CHECK-NEXT:    %large = onnx.Weight {store = "{{.*}}.npy", key = "{{[0-9a-f]+}}"} : tensor<4x16xf32>
  // CHECK-NEXT:    func.return %small, %large
  // SMALL-LABEL: func.func @constant_of_shape(
  // SMALL:         %small = onnx.Constant {value = dense<2.000000e-02> : tensor<2x3xf32>}
  // SMALL:         %large = onnx.ConstantOfShape
  func.func @constant_of_shape() -> (tensor<2x3xf32>, tensor<4x16xf32>) {
    %s1 = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : tensor<2xi64>
    %small = onnx.ConstantOfShape %s1 {value = dense<0.02> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<2x3xf32>
    %s2 = onnx.Constant {value = dense<[4, 16]> : tensor<2xi64>} : tensor<2xi64>
    %large = onnx.ConstantOfShape %s2 {value = dense<0.02> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<4x16xf32>
    func.return %small, %large : tensor<2x3xf32>, tensor<4x16xf32>
  }

  // An exporter's dynamic reshape: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
  // The shape of x is static, so everything but the Reshape itself folds away.
  // CHECK-LABEL: func.func @shape_chain(
  // CHECK-NEXT:    %[[S:.*]] = onnx.Constant {value = dense<[2, -1]> : tensor<2xi64>} : tensor<2xi64>
  // CHECK-NEXT:    %y = onnx.Reshape %x, %[[S]] : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  // CHECK-NEXT:    func.return %y
  func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
    %shape = onnx.Shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
    %zero = onnx.Constant {value = dense<0> : tensor<i64>} : tensor<i64>
    %batch = onnx.Gather %shape, %zero : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
    %axes = onnx.Constant {value = dense<0> : tensor<1xi64>} : tensor<1xi64>
    %b1 = onnx.Unsqueeze %batch, %axes : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %minus = onnx.Constant {value = dense<-1> : tensor<1xi64>} : tensor<1xi64>
    %target = onnx.Concat %b1, %minus {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %y = onnx.Reshape %x, %target : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
    func.return %y : tensor<2x12xf32>
  }

  // Unsqueeze'd per-channel constants (the light models' BN affine part), a Cast and
  // a two-result Split all fold; ops on the non-constant x stay.
  // CHECK-LABEL: func.func @mixed(
  // CHECK-NEXT:    %[[U:.*]] = onnx.Constant {value = dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]]> : tensor<2x1x1xf32>}
  // CHECK-NEXT:    %y = onnx.Mul %x, %[[U]]
  // CHECK-NEXT:    %[[C:.*]] = onnx.Constant {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>}
  // CHECK-NEXT:    %[[P0:.*]] = onnx.Constant {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>}
  // CHECK-NEXT:    %[[P1:.*]] = onnx.Constant {value = dense<4.000000e+00> : tensor<1xf32>}
  // CHECK-NEXT:    func.return %y, %[[C]], %[[P0]], %[[P1]]
  func.func @mixed(%x: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<1xf32>) {
    %none = onnx.None
    %v = onnx.Constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
    %axes = onnx.Constant {value = dense<[1, 2]> : tensor<2xi64>} : tensor<2xi64>
    %u = onnx.Unsqueeze %v, %axes : (tensor<2xf32>, tensor<2xi64>) -> tensor<2x1x1xf32>
    %y = onnx.Mul %x, %u : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
    %i = onnx.Constant {value = dense<[1, 2, 3, 4]> : tensor<4xi32>} : tensor<4xi32>
    %c = onnx.Cast %i {to = f32} : (tensor<4xi32>) -> tensor<4xf32>
    %sizes = onnx.Constant {value = dense<[3, 1]> : tensor<2xi64>} : tensor<2xi64>
    %p0, %p1 = onnx.Split %c, %sizes : (tensor<4xf32>, tensor<2xi64>) -> (tensor<3xf32>, tensor<1xf32>)
    func.return %y, %c, %p0, %p1 : tensor<1x2x3x3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<1xf32>
  }

  // Dead ops go, whatever their operands; used ones on non-constants stay.
  // CHECK-LABEL: func.func @dead(
  // CHECK-NEXT:    %y = onnx.Relu %x
  // CHECK-NEXT:    func.return %y
  func.func @dead(%x: tensor<4xf32>) -> tensor<4xf32> {
    %unused = onnx.Sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
    %c = onnx.Constant {value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
    %also_unused = onnx.Add %c, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %y = onnx.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
    func.return %y : tensor<4xf32>
  }
}
