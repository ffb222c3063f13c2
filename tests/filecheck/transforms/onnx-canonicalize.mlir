// RUN: mobile-opt %s -p onnx-canonicalize | filecheck %s
// RUN: mobile-opt %s --pass-pipeline='builtin.module(onnx-canonicalize{rtol=0.1})' | filecheck %s --check-prefix=LOOSE
//
// The written-out activations below are what `onnx_pattern_models.pattern_model`
// builds, imported with `mobile-opt model.onnx`.

builtin.module {
  // PyTorch export of exact Gelu: x * (erf(x / 1.4142) + 1) * 0.5.
  // CHECK-LABEL: func.func @gelu_erf_div(
  // CHECK-NEXT:    %[[Y:.*]] = onnx.Gelu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT:    func.return %[[Y]]
  func.func @gelu_erf_div(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %c = onnx.Constant {value = dense<1.41421354> : tensor<f32>} : tensor<f32>
    %c_1 = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : tensor<f32>
    %c_2 = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : tensor<f32>
    %div = onnx.Div %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %erf = onnx.Erf %div : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %add = onnx.Add %erf, %c_1 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %mul = onnx.Mul %x, %add : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_1 = onnx.Mul %mul, %c_2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    func.return %mul_1 : tensor<2x8xf32>
  }

  // The 0.5 multiplied first, erf of x * 0.7071.
  // CHECK-LABEL: func.func @gelu_erf_half_first(
  // CHECK-NEXT:    %[[Y:.*]] = onnx.Gelu %x :
  // CHECK-NEXT:    func.return %[[Y]]
  func.func @gelu_erf_half_first(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %c = onnx.Constant {value = dense<0.707106769> : tensor<f32>} : tensor<f32>
    %c_1 = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : tensor<f32>
    %c_2 = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : tensor<f32>
    %mul = onnx.Mul %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %erf = onnx.Erf %mul : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_1 = onnx.Mul %x, %c_1 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %add = onnx.Add %c_2, %erf : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_2 = onnx.Mul %mul_1, %add : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    func.return %mul_2 : tensor<2x8xf32>
  }

  // Every operand order swapped.
  // CHECK-LABEL: func.func @gelu_erf_swapped(
  // CHECK-NEXT:    %[[Y:.*]] = onnx.Gelu %x :
  // CHECK-NEXT:    func.return %[[Y]]
  func.func @gelu_erf_swapped(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %c = onnx.Constant {value = dense<0.707106769> : tensor<f32>} : tensor<f32>
    %c_1 = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : tensor<f32>
    %c_2 = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : tensor<f32>
    %mul = onnx.Mul %c, %x : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %erf = onnx.Erf %mul : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %add = onnx.Add %c_2, %erf : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_1 = onnx.Mul %add, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_2 = onnx.Mul %c_1, %mul_1 : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    func.return %mul_2 : tensor<2x8xf32>
  }

  // The 0.5 applied to the (1 + erf) factor.
  // CHECK-LABEL: func.func @gelu_erf_half_inner(
  // CHECK-NEXT:    %[[Y:.*]] = onnx.Gelu %x :
  // CHECK-NEXT:    func.return %[[Y]]
  func.func @gelu_erf_half_inner(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %c = onnx.Constant {value = dense<1.41421354> : tensor<f32>} : tensor<f32>
    %c_1 = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : tensor<f32>
    %c_2 = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : tensor<f32>
    %div = onnx.Div %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %erf = onnx.Erf %div : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %add = onnx.Add %erf, %c_1 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %mul = onnx.Mul %add, %c_2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %mul_1 = onnx.Mul %x, %mul : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    func.return %mul_1 : tensor<2x8xf32>
  }

  // The tanh approximation with Pow(x, 3).
  // CHECK-LABEL: func.func @gelu_tanh_pow(
  // CHECK-NEXT:    %[[Y:.*]] = onnx.Gelu %x {approximate = "tanh"} :
  // CHECK-NEXT:    func.return %[[Y]]
  func.func @gelu_tanh_pow(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %c = onnx.Constant {value = dense<3.000000e+00> : tensor<f32>} : tensor<f32>
    %c_1 = onnx.Constant {value = dense<4.471500e-02> : tensor<f32>} : tensor<f32>
    %c_2 = onnx.Constant {value = dense<0.797884583> : tensor<f32>} : tensor<f32>
    %c_3 = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : tensor<f32>
    %c_4 = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : tensor<f32>
    %pow = onnx.Pow %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %mul = onnx.Mul %pow, %c_1 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %add = onnx.Add %x, %mul : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_1 = onnx.Mul %add, %c_2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %tanh = onnx.Tanh %mul_1 : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %add_1 = onnx.Add %tanh, %c_3 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %mul_2 = onnx.Mul %c_4, %x : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_3 = onnx.Mul %mul_2, %add_1 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    func.return %mul_3 : tensor<2x8xf32>
  }

  // The tanh approximation with x * (x * x) and the sum swapped.
  // CHECK-LABEL: func.func @gelu_tanh_mul(
  // CHECK-NEXT:    %[[Y:.*]] = onnx.Gelu %x {approximate = "tanh"} :
  // CHECK-NEXT:    func.return %[[Y]]
  func.func @gelu_tanh_mul(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %c = onnx.Constant {value = dense<4.471500e-02> : tensor<f32>} : tensor<f32>
    %c_1 = onnx.Constant {value = dense<0.797884583> : tensor<f32>} : tensor<f32>
    %c_2 = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : tensor<f32>
    %c_3 = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : tensor<f32>
    %mul = onnx.Mul %x, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_1 = onnx.Mul %x, %mul : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_2 = onnx.Mul %c, %mul_1 : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %add = onnx.Add %mul_2, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_3 = onnx.Mul %c_1, %add : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %tanh = onnx.Tanh %mul_3 : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %add_1 = onnx.Add %c_2, %tanh : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_4 = onnx.Mul %x, %add_1 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_5 = onnx.Mul %mul_4, %c_3 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    func.return %mul_5 : tensor<2x8xf32>
  }

  // x * HardSigmoid(x, 1/6, 1/2).
  // CHECK-LABEL: func.func @hardswish_hardsigmoid(
  // CHECK-NEXT:    %[[Y:.*]] = onnx.HardSwish %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT:    func.return %[[Y]]
  func.func @hardswish_hardsigmoid(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %hardsigmoid = onnx.HardSigmoid %x {alpha = 0.166666672 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul = onnx.Mul %x, %hardsigmoid : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    func.return %mul : tensor<2x8xf32>
  }

  // x * Clip(x + 3, 0, 6) / 6.
  // CHECK-LABEL: func.func @hardswish_clip_div(
  // CHECK-NEXT:    %[[Y:.*]] = onnx.HardSwish %x :
  // CHECK-NEXT:    func.return %[[Y]]
  func.func @hardswish_clip_div(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %c = onnx.Constant {value = dense<3.000000e+00> : tensor<f32>} : tensor<f32>
    %c_1 = onnx.Constant {value = dense<0.000000e+00> : tensor<f32>} : tensor<f32>
    %c_2 = onnx.Constant {value = dense<6.000000e+00> : tensor<f32>} : tensor<f32>
    %c_3 = onnx.Constant {value = dense<6.000000e+00> : tensor<f32>} : tensor<f32>
    %add = onnx.Add %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %clip = onnx.Clip %add, %c_1, %c_2 : (tensor<2x8xf32>, tensor<f32>, tensor<f32>) -> tensor<2x8xf32>
    %mul = onnx.Mul %x, %clip : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %div = onnx.Div %mul, %c_3 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    func.return %div : tensor<2x8xf32>
  }

  // x * (Clip(3 + x, 0, 6) * 0.16667).
  // CHECK-LABEL: func.func @hardswish_clip_mul(
  // CHECK-NEXT:    %[[Y:.*]] = onnx.HardSwish %x :
  // CHECK-NEXT:    func.return %[[Y]]
  func.func @hardswish_clip_mul(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %c = onnx.Constant {value = dense<3.000000e+00> : tensor<f32>} : tensor<f32>
    %c_1 = onnx.Constant {value = dense<0.000000e+00> : tensor<f32>} : tensor<f32>
    %c_2 = onnx.Constant {value = dense<6.000000e+00> : tensor<f32>} : tensor<f32>
    %c_3 = onnx.Constant {value = dense<0.166666672> : tensor<f32>} : tensor<f32>
    %add = onnx.Add %c, %x : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %clip = onnx.Clip %add, %c_1, %c_2 : (tensor<2x8xf32>, tensor<f32>, tensor<f32>) -> tensor<2x8xf32>
    %mul = onnx.Mul %clip, %c_3 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %mul_1 = onnx.Mul %x, %mul : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    func.return %mul_1 : tensor<2x8xf32>
  }

  // Relu6 spelled Min(Relu(x + 3), 6), divided by 6 before the product.
  // CHECK-LABEL: func.func @hardswish_relu6(
  // CHECK-NEXT:    %[[Y:.*]] = onnx.HardSwish %x :
  // CHECK-NEXT:    func.return %[[Y]]
  func.func @hardswish_relu6(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %c = onnx.Constant {value = dense<3.000000e+00> : tensor<f32>} : tensor<f32>
    %c_1 = onnx.Constant {value = dense<6.000000e+00> : tensor<f32>} : tensor<f32>
    %c_2 = onnx.Constant {value = dense<6.000000e+00> : tensor<f32>} : tensor<f32>
    %add = onnx.Add %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %relu = onnx.Relu %add : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %min = onnx.Min %relu, %c_1 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %div = onnx.Div %min, %c_2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %mul = onnx.Mul %div, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    func.return %mul : tensor<2x8xf32>
  }

  // Must not fire: x / 1.5 inside the erf (only a loose rtol accepts it).
  // CHECK-LABEL: func.func @not_gelu_wrong_constant(
  // CHECK:         onnx.Erf
  // CHECK-NOT:     onnx.Gelu
  // CHECK:         func.return
  // LOOSE-LABEL: func.func @not_gelu_wrong_constant(
  // LOOSE-NEXT:    onnx.Gelu %x
  // LOOSE-NEXT:    func.return
  func.func @not_gelu_wrong_constant(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %c = onnx.Constant {value = dense<1.500000e+00> : tensor<f32>} : tensor<f32>
    %c_1 = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : tensor<f32>
    %c_2 = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : tensor<f32>
    %div = onnx.Div %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %erf = onnx.Erf %div : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %add = onnx.Add %erf, %c_1 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %mul = onnx.Mul %x, %add : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_1 = onnx.Mul %mul, %c_2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    func.return %mul_1 : tensor<2x8xf32>
  }

  // Must not fire: the erf result has another user.
  // CHECK-LABEL: func.func @not_gelu_shared_erf(
  // CHECK:         %erf = onnx.Erf
  // CHECK-NOT:     onnx.Gelu
  // CHECK:         func.return %mul_1, %erf
  func.func @not_gelu_shared_erf(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
    %c = onnx.Constant {value = dense<1.41421354> : tensor<f32>} : tensor<f32>
    %c_1 = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : tensor<f32>
    %c_2 = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : tensor<f32>
    %div = onnx.Div %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %erf = onnx.Erf %div : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %add = onnx.Add %erf, %c_1 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %mul = onnx.Mul %x, %add : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul_1 = onnx.Mul %mul, %c_2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    func.return %mul_1, %erf : tensor<2x8xf32>, tensor<2x8xf32>
  }

  // Must not fire: x + 2 instead of x + 3.
  // CHECK-LABEL: func.func @not_hardswish_offset(
  // CHECK:         onnx.Clip
  // CHECK-NOT:     onnx.HardSwish
  // CHECK:         func.return
  func.func @not_hardswish_offset(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %c = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : tensor<f32>
    %c_1 = onnx.Constant {value = dense<0.000000e+00> : tensor<f32>} : tensor<f32>
    %c_2 = onnx.Constant {value = dense<6.000000e+00> : tensor<f32>} : tensor<f32>
    %c_3 = onnx.Constant {value = dense<6.000000e+00> : tensor<f32>} : tensor<f32>
    %add = onnx.Add %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %clip = onnx.Clip %add, %c_1, %c_2 : (tensor<2x8xf32>, tensor<f32>, tensor<f32>) -> tensor<2x8xf32>
    %mul = onnx.Mul %x, %clip : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %div = onnx.Div %mul, %c_3 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    func.return %div : tensor<2x8xf32>
  }

  // Must not fire: HardSigmoid with ONNX's default alpha 0.2 is not x/6 + 1/2.
  // CHECK-LABEL: func.func @not_hardswish_default_hardsigmoid(
  // CHECK-NEXT:    %hardsigmoid = onnx.HardSigmoid %x
  // CHECK-NEXT:    %mul = onnx.Mul %x, %hardsigmoid
  // CHECK-NEXT:    func.return %mul
  func.func @not_hardswish_default_hardsigmoid(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %hardsigmoid = onnx.HardSigmoid %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %mul = onnx.Mul %x, %hardsigmoid : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    func.return %mul : tensor<2x8xf32>
  }

  // Identity and inference-mode Dropout are no-ops; x may have further users.
  // CHECK-LABEL: func.func @no_ops(
  // CHECK-NEXT:    %[[G:.*]] = onnx.HardSwish %x
  // CHECK-NEXT:    func.return %[[G]], %x
  func.func @no_ops(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
    %none = onnx.None
    %i = onnx.Identity %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %d = onnx.Dropout %i, %none, %none : (tensor<2x8xf32>, none, none) -> tensor<2x8xf32>
    %h = onnx.HardSigmoid %d {alpha = 0.16666667 : f32, beta = 0.5 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %y = onnx.Mul %h, %d : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    func.return %y, %d : tensor<2x8xf32>, tensor<2x8xf32>
  }

  // Must not fire: the 0.5 of shape 1x1x1 broadcasts the result to rank 3, which a
  // Gelu of x would not.
  // CHECK-LABEL: func.func @not_gelu_broadcast(
  // CHECK-NOT:     onnx.Gelu
  // CHECK:         func.return
  func.func @not_gelu_broadcast(%x: tensor<2x8xf32>) -> tensor<1x2x8xf32> {
    %s = onnx.Constant {value = dense<0.70710678> : tensor<f32>} : tensor<f32>
    %one = onnx.Constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
    %half = onnx.Constant {value = dense<0.5> : tensor<1x1x1xf32>} : tensor<1x1x1xf32>
    %m = onnx.Mul %x, %s : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %e = onnx.Erf %m : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %a = onnx.Add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %p = onnx.Mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %y = onnx.Mul %p, %half : (tensor<2x8xf32>, tensor<1x1x1xf32>) -> tensor<1x2x8xf32>
    func.return %y : tensor<1x2x8xf32>
  }

  // A training_mode that is a constant false is inference mode too. (A run-time
  // training_mode is rejected by the verifier: see nn-invalid.mlir.)
  // CHECK-LABEL: func.func @dropout_constant_inference_mode(
  // CHECK-NEXT:    func.return %x
  func.func @dropout_constant_inference_mode(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %none = onnx.None
    %f = onnx.Constant {value = dense<false> : tensor<i1>} : tensor<i1>
    %d = onnx.Dropout %x, %none, %f : (tensor<2x8xf32>, none, tensor<i1>) -> tensor<2x8xf32>
    func.return %d : tensor<2x8xf32>
  }
}
