// RUN: mobile-opt %s -p onnx-fold-batchnorm | filecheck %s
// RUN: mobile-opt %s --pass-pipeline='builtin.module(onnx-fold-batchnorm{fold-affine=false})' | filecheck %s --check-prefix=NOAFFINE

builtin.module {
  // Conv without bias, then BatchNormalization: f = scale / sqrt(var + eps) = [0.5, 1, 2],
  // W' = W * f per output channel, B' = (0 - mean) * f + B.
  // CHECK-LABEL: func.func @conv_bn(
  // CHECK-NEXT:    %w_folded = onnx.Constant {value = dense<{{\[\[\[\[}}5.000000e-01]], {{\[\[}}5.000000e-01]]], {{\[\[\[}}1.000000e+00]], {{\[\[}}1.000000e+00]]], {{\[\[\[}}2.000000e+00]], {{\[\[}}2.000000e+00]]]]> : tensor<3x2x1x1xf32>}
  // CHECK-NEXT:    %bias_folded = onnx.Constant {value = dense<[-5.000000e-01, 1.000000e+00, 0.000000e+00]> : tensor<3xf32>}
  // CHECK-NEXT:    %y = onnx.Conv %x, %w_folded, %bias_folded {pads = array<i64: 0, 0, 0, 0>}
  // CHECK-NEXT:    func.return %y
  func.func @conv_bn(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
    %none = onnx.None
    %w = onnx.Constant {value = dense<1.0> : tensor<3x2x1x1xf32>} : tensor<3x2x1x1xf32>
    %scale = onnx.Constant {value = dense<1.0> : tensor<3xf32>} : tensor<3xf32>
    %b = onnx.Constant {value = dense<[0.0, 1.0, 0.0]> : tensor<3xf32>} : tensor<3xf32>
    %mean = onnx.Constant {value = dense<[1.0, 0.0, 0.0]> : tensor<3xf32>} : tensor<3xf32>
    %var = onnx.Constant {value = dense<[4.0, 1.0, 0.25]> : tensor<3xf32>} : tensor<3xf32>
    %c = onnx.Conv %x, %w, %none {pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, none) -> tensor<1x3x4x4xf32>
    %y = onnx.BatchNormalization %c, %scale, %b, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
    func.return %y : tensor<1x3x4x4xf32>
  }

  // A conv bias goes through the normalisation too: B' = (B - mean) * f + beta = (2 - 1) * 0.5 + 3.
  // CHECK-LABEL: func.func @conv_bias_bn(
  // CHECK:         onnx.Constant {value = dense<5.000000e-01> : tensor<1x1x1x1xf32>}
  // CHECK-NEXT:    onnx.Constant {value = dense<3.500000e+00> : tensor<1xf32>}
  // CHECK-NEXT:    onnx.Conv
  // CHECK-NOT:     onnx.BatchNormalization
  func.func @conv_bias_bn(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
    %w = onnx.Constant {value = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32>
    %cb = onnx.Constant {value = dense<2.0> : tensor<1xf32>} : tensor<1xf32>
    %scale = onnx.Constant {value = dense<1.0> : tensor<1xf32>} : tensor<1xf32>
    %b = onnx.Constant {value = dense<3.0> : tensor<1xf32>} : tensor<1xf32>
    %mean = onnx.Constant {value = dense<1.0> : tensor<1xf32>} : tensor<1xf32>
    %var = onnx.Constant {value = dense<4.0> : tensor<1xf32>} : tensor<1xf32>
    %c = onnx.Conv %x, %w, %cb : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
    %y = onnx.BatchNormalization %c, %scale, %b, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x1x3x3xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
    func.return %y : tensor<1x1x3x3xf32>
  }

  // Folded weights too large to print inline become derived weight files.
  // CHECK-LABEL: func.func @large_weight(
  // CHECK:         %[[W:.*]] = onnx.Weight {store = "{{.*}}.npy", key = "{{[0-9a-f]+}}"} : tensor<8x4x3x3xf32>
  // CHECK:         onnx.Conv %x, %[[W]], %{{.*}} {kernel_shape = array<i64: 3, 3>}
  // CHECK-NOT:     onnx.BatchNormalization
  func.func @large_weight(%x: tensor<1x4x5x5xf32>) -> tensor<1x8x3x3xf32> {
    %none = onnx.None
    %w = onnx.Constant {value = dense<0.5> : tensor<8x4x3x3xf32>} : tensor<8x4x3x3xf32>
    %p = onnx.Constant {value = dense<2.0> : tensor<8xf32>} : tensor<8xf32>
    %c = onnx.Conv %x, %w, %none {kernel_shape = array<i64: 3, 3>} : (tensor<1x4x5x5xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x8x3x3xf32>
    %y = onnx.BatchNormalization %c, %p, %p, %p, %p : (tensor<1x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x3x3xf32>
    func.return %y : tensor<1x8x3x3xf32>
  }

  // A FusedConv without activation folds and stays a FusedConv.
  // CHECK-LABEL: func.func @fused_conv_no_activation(
  // CHECK:         onnx.FusedConv
  // CHECK-NOT:     onnx.BatchNormalization
  func.func @fused_conv_no_activation(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
    %none = onnx.None
    %w = onnx.Constant {value = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32>
    %p = onnx.Constant {value = dense<1.0> : tensor<1xf32>} : tensor<1xf32>
    %c = onnx.FusedConv %x, %w, %none : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x3x3xf32>
    %y = onnx.BatchNormalization %c, %p, %p, %p, %p : (tensor<1x1x3x3xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
    func.return %y : tensor<1x1x3x3xf32>
  }

  // Must not fire: the conv result has a second user.
  // CHECK-LABEL: func.func @conv_two_users(
  // CHECK:         %c = onnx.Conv %x, %w, %none
  // CHECK-NEXT:    %y = onnx.BatchNormalization %c
  // CHECK-NEXT:    func.return %y, %c
  func.func @conv_two_users(%x: tensor<1x1x3x3xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) {
    %none = onnx.None
    %w = onnx.Constant {value = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32>
    %p = onnx.Constant {value = dense<1.0> : tensor<1xf32>} : tensor<1xf32>
    %c = onnx.Conv %x, %w, %none : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x3x3xf32>
    %y = onnx.BatchNormalization %c, %p, %p, %p, %p : (tensor<1x1x3x3xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
    func.return %y, %c : tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>
  }

  // Must not fire: the mean is not a constant, nor is the weight of the second conv.
  // CHECK-LABEL: func.func @not_constant(
  // CHECK:         onnx.BatchNormalization
  // CHECK:         onnx.BatchNormalization
  func.func @not_constant(%x: tensor<1x1x3x3xf32>, %mean: tensor<1xf32>, %w2: tensor<1x1x1x1xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) {
    %none = onnx.None
    %w = onnx.Constant {value = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32>
    %p = onnx.Constant {value = dense<1.0> : tensor<1xf32>} : tensor<1xf32>
    %c = onnx.Conv %x, %w, %none : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x3x3xf32>
    %y = onnx.BatchNormalization %c, %p, %p, %mean, %p : (tensor<1x1x3x3xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
    %c2 = onnx.Conv %x, %w2, %none : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x3x3xf32>
    %y2 = onnx.BatchNormalization %c2, %p, %p, %p, %p : (tensor<1x1x3x3xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
    func.return %y, %y2 : tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>
  }

  // Must not fire: the activation of a FusedConv sits between conv and normalisation.
  // CHECK-LABEL: func.func @fused_conv_with_activation(
  // CHECK:         onnx.FusedConv {{.*}}activation = "Relu"
  // CHECK-NEXT:    onnx.BatchNormalization
  func.func @fused_conv_with_activation(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
    %none = onnx.None
    %w = onnx.Constant {value = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32>
    %p = onnx.Constant {value = dense<1.0> : tensor<1xf32>} : tensor<1xf32>
    %c = onnx.FusedConv %x, %w, %none {activation = "Relu"} : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x3x3xf32>
    %y = onnx.BatchNormalization %c, %p, %p, %p, %p : (tensor<1x1x3x3xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
    func.return %y : tensor<1x1x3x3xf32>
  }

  // The light models' decomposed form: Conv, BatchNormalization, then a per-channel
  // Mul and Add of Unsqueeze'd constants: all of it folds into one Conv.
  // CHECK-LABEL: func.func @conv_bn_mul_add(
  // CHECK:         onnx.Constant {value = dense<{{\[\[\[\[}}3.000000e+00]]], {{\[\[\[}}5.000000e+00]]]]> : tensor<2x1x1x1xf32>}
  // CHECK-NEXT:    onnx.Constant {value = dense<[7.000000e+00, 1.000000e+00]> : tensor<2xf32>}
  // CHECK-NEXT:    onnx.Conv
  // CHECK-NEXT:    func.return
  // NOAFFINE-LABEL: func.func @conv_bn_mul_add(
  // NOAFFINE:         onnx.Conv
  // NOAFFINE-NEXT:    onnx.Mul
  // NOAFFINE-NEXT:    onnx.Add
  func.func @conv_bn_mul_add(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
    %none = onnx.None
    %w = onnx.Constant {value = dense<1.0> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
    %p = onnx.Constant {value = dense<[1.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
    %z = onnx.Constant {value = dense<[0.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
    %s = onnx.Constant {value = dense<[[[3.0]], [[5.0]]]> : tensor<2x1x1xf32>} : tensor<2x1x1xf32>
    %t = onnx.Constant {value = dense<[[[[7.0]], [[1.0]]]]> : tensor<1x2x1x1xf32>} : tensor<1x2x1x1xf32>
    %c = onnx.Conv %x, %w, %none : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x3x3xf32>
    %bn = onnx.BatchNormalization %c, %p, %z, %z, %p {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
    %m = onnx.Mul %bn, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
    %y = onnx.Add %t, %m : (tensor<1x2x1x1xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    func.return %y : tensor<1x2x3x3xf32>
  }

  // BatchNormalization after a non-conv absorbs the per-channel Mul and Add (and a Div).
  // CHECK-LABEL: func.func @bn_mul_add(
  // CHECK:         %[[S:.*]] = onnx.Constant {value = dense<[1.500000e+00, 2.500000e+00]> : tensor<2xf32>}
  // CHECK-NEXT:    %[[B:.*]] = onnx.Constant {value = dense<[3.500000e+00, 5.000000e-01]> : tensor<2xf32>}
  // CHECK-NEXT:    onnx.BatchNormalization %x, %[[S]], %[[B]], %z, %p
  // CHECK-NEXT:    func.return
  func.func @bn_mul_add(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
    %p = onnx.Constant {value = dense<[1.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
    %z = onnx.Constant {value = dense<[0.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
    %s = onnx.Constant {value = dense<[[[3.0]], [[5.0]]]> : tensor<2x1x1xf32>} : tensor<2x1x1xf32>
    %t = onnx.Constant {value = dense<[[[7.0]], [[1.0]]]> : tensor<2x1x1xf32>} : tensor<2x1x1xf32>
    %two = onnx.Constant {value = dense<2.0> : tensor<f32>} : tensor<f32>
    %bn = onnx.BatchNormalization %x, %p, %z, %z, %p : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
    %m = onnx.Mul %s, %bn : (tensor<2x1x1xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    %a = onnx.Add %m, %t : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
    %y = onnx.Div %a, %two : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
    func.return %y : tensor<1x2x3x3xf32>
  }

  // Must not fire: the Mul constant varies over the spatial dims, and the Sub has the
  // conv on its right (c - conv is no scaling of the conv).
  // CHECK-LABEL: func.func @not_per_channel(
  // CHECK:         onnx.Conv
  // CHECK-NEXT:    onnx.Mul
  // CHECK:         onnx.Conv
  // CHECK-NEXT:    onnx.Sub
  func.func @not_per_channel(%x: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
    %none = onnx.None
    %w = onnx.Constant {value = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32>
    %s = onnx.Constant {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
    %one = onnx.Constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
    %c = onnx.Conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
    %y = onnx.Mul %c, %s : (tensor<1x1x2x2xf32>, tensor<2x2xf32>) -> tensor<1x1x2x2xf32>
    %c2 = onnx.Conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
    %y2 = onnx.Sub %one, %c2 : (tensor<f32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
    func.return %y, %y2 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
  }
}
