// RUN: mobile-opt %s -p onnx-fuse | filecheck %s
// RUN: mobile-opt %s --pass-pipeline='builtin.module(onnx-fuse{activations=Relu,Clip})' | filecheck %s --check-prefix=ONLY
// RUN: not mobile-opt %s -p 'onnx-fuse{activations=Swish}' 2>&1 | filecheck %s --check-prefix=BADOPT

// BADOPT: mobile-opt: error: pass pipeline 'onnx-fuse{activations=Swish}': onnx-fuse: unknown activations ['Swish']

builtin.module {
  // CHECK-LABEL: func.func @conv_relu(
  // CHECK-NEXT:    %none = onnx.None
  // CHECK-NEXT:    %w = onnx.Constant
  // CHECK-NEXT:    %y = onnx.FusedConv %x, %w, %none {kernel_shape = array<i64: 1, 1>, activation = "Relu"} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32>
  // CHECK-NEXT:    func.return %y
  // ONLY-LABEL: func.func @conv_relu(
  // ONLY:         onnx.FusedConv {{.*}}activation = "Relu"
  func.func @conv_relu(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
    %none = onnx.None
    %w = onnx.Constant {value = dense<1.0> : tensor<2x2x1x1xf32>} : tensor<2x2x1x1xf32>
    %c = onnx.Conv %x, %w, %none {kernel_shape = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32>
    %y = onnx.Relu %c : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    func.return %y : tensor<1x2x3x3xf32>
  }

  // A per-channel constant Add becomes the conv bias, then Clip (Relu6) is fused.
  // CHECK-LABEL: func.func @conv_bias_clip(
  // CHECK:         %[[B:.*]] = onnx.Constant {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
  // CHECK-NEXT:    %y = onnx.FusedConv %x, %w, %[[B]] {activation = "Clip", activation_params = array<f32: 0.000000e+00, 6.000000e+00>}
  // CHECK-NEXT:    func.return %y
  // ONLY-LABEL: func.func @conv_bias_clip(
  // ONLY:         onnx.FusedConv {{.*}}activation = "Clip"
  func.func @conv_bias_clip(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
    %none = onnx.None
    %w = onnx.Constant {value = dense<1.0> : tensor<2x2x1x1xf32>} : tensor<2x2x1x1xf32>
    %b = onnx.Constant {value = dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>} : tensor<2x1x1xf32>
    %lo = onnx.Constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
    %hi = onnx.Constant {value = dense<6.0> : tensor<f32>} : tensor<f32>
    %c = onnx.Conv %x, %w, %none : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32>
    %a = onnx.Add %c, %b : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
    %y = onnx.Clip %a, %lo, %hi : (tensor<1x2x3x3xf32>, tensor<f32>, tensor<f32>) -> tensor<1x2x3x3xf32>
    func.return %y : tensor<1x2x3x3xf32>
  }

  // An absent Clip bound becomes the f32 extreme; LeakyRelu and HardSigmoid keep their attributes.
  // CHECK-LABEL: func.func @parameters(
  // CHECK:         onnx.FusedConv {{.*}}activation = "Clip", activation_params = array<f32: 0.000000e+00, 3.40282347e+38>
  // CHECK:         onnx.FusedConv {{.*}}activation = "LeakyRelu", activation_params = array<f32: 2.000000e-01>
  // CHECK:         onnx.FusedConv {{.*}}activation = "HardSigmoid", activation_params = array<f32: 5.000000e-01, 2.500000e-01>
  func.func @parameters(%x: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
    %none = onnx.None
    %w = onnx.Constant {value = dense<1.0> : tensor<2x2x1x1xf32>} : tensor<2x2x1x1xf32>
    %lo = onnx.Constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
    %c1 = onnx.Conv %x, %w, %none : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32>
    %y1 = onnx.Clip %c1, %lo, %none : (tensor<1x2x3x3xf32>, tensor<f32>, none) -> tensor<1x2x3x3xf32>
    %c2 = onnx.Conv %x, %w, %none : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32>
    %y2 = onnx.LeakyRelu %c2 {alpha = 0.2 : f32} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    %c3 = onnx.Conv %x, %w, %none : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32>
    %y3 = onnx.HardSigmoid %c3 {alpha = 0.5 : f32, beta = 0.25 : f32} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    func.return %y1, %y2, %y3 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
  }

  // CHECK-LABEL: func.func @gemm_sigmoid(
  // CHECK-NEXT:    %y = onnx.FusedGemm %a, %b, %c {transB = 1 : i64, activation = "Sigmoid"} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT:    func.return %y
  // ONLY-LABEL: func.func @gemm_sigmoid(
  // ONLY-NEXT:    onnx.Gemm
  // ONLY-NEXT:    onnx.Sigmoid
  func.func @gemm_sigmoid(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>, %c: tensor<3xf32>) -> tensor<2x3xf32> {
    %g = onnx.Gemm %a, %b, %c {transB = 1 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %y = onnx.Sigmoid %g : (tensor<2x3xf32>) -> tensor<2x3xf32>
    func.return %y : tensor<2x3xf32>
  }

  // MatMul + Add(bias) + Gelu: one FusedMatMul; the bias need not be a constant.
  // CHECK-LABEL: func.func @matmul_bias_gelu(
  // CHECK-NEXT:    %y = onnx.FusedMatMul %a, %b, %bias {activation = "Gelu"} : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  // CHECK-NEXT:    func.return %y
  func.func @matmul_bias_gelu(%a: tensor<2x4x8xf32>, %b: tensor<8x8xf32>, %bias: tensor<8xf32>) -> tensor<2x4x8xf32> {
    %m = onnx.MatMul %a, %b : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
    %s = onnx.Add %bias, %m : (tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %y = onnx.Gelu %s : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    func.return %y : tensor<2x4x8xf32>
  }

  // MatMul + activation without bias, and MatMul + bias without activation.
  // CHECK-LABEL: func.func @matmul_partial(
  // CHECK-NEXT:    %[[NONE:none.*]] = onnx.None
  // CHECK-NEXT:    %y1 = onnx.FusedMatMul %a, %b, %[[NONE]] {activation = "Tanh"}
  // CHECK-NEXT:    %y2 = onnx.FusedMatMul %a, %b, %bias : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT:    func.return %y1, %y2
  func.func @matmul_partial(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %bias: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %m1 = onnx.MatMul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %y1 = onnx.Tanh %m1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %m2 = onnx.MatMul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %y2 = onnx.Add %m2, %bias : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    func.return %y1, %y2 : tensor<4x8xf32>, tensor<4x8xf32>
  }

  // Must not fire: the conv result has two users; the tanh-approximated Gelu has no
  // fused form; a residual Add is no bias; the Clip bound is not a constant.
  // CHECK-LABEL: func.func @negatives(
  // CHECK:         %c1 = onnx.Conv
  // CHECK-NEXT:    %y1 = onnx.Relu %c1
  // CHECK-NEXT:    %m = onnx.MatMul
  // CHECK-NEXT:    %y2 = onnx.Gelu %m {approximate = "tanh"}
  // CHECK-NEXT:    %c3 = onnx.Conv
  // CHECK-NEXT:    %y3 = onnx.Add %c3, %x
  // CHECK-NEXT:    %c4 = onnx.Conv
  // CHECK-NEXT:    %y4 = onnx.Clip %c4, %lo, %none
  // CHECK-NEXT:    func.return
  func.func @negatives(%x: tensor<1x2x3x3xf32>, %lo: tensor<f32>, %a: tensor<4x8xf32>, %b: tensor<8x8xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<4x8xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
    %none = onnx.None
    %w = onnx.Constant {value = dense<1.0> : tensor<2x2x1x1xf32>} : tensor<2x2x1x1xf32>
    %c1 = onnx.Conv %x, %w, %none : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32>
    %y1 = onnx.Relu %c1 : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    %m = onnx.MatMul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %y2 = onnx.Gelu %m {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %c3 = onnx.Conv %x, %w, %none : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32>
    %y3 = onnx.Add %c3, %x : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    %c4 = onnx.Conv %x, %w, %none : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32>
    %y4 = onnx.Clip %c4, %lo, %none : (tensor<1x2x3x3xf32>, tensor<f32>, none) -> tensor<1x2x3x3xf32>
    func.return %c1, %y1, %y2, %y3, %y4 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<4x8xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
  }

  // Must not fire: the bias broadcasts the product to a larger shape; the activation
  // follows an already fused activation.
  // CHECK-LABEL: func.func @no_bias_broadcast(
  // CHECK-NEXT:    %none = onnx.None
  // CHECK-NEXT:    %m = onnx.MatMul
  // CHECK-NEXT:    %y = onnx.Add %m, %bias
  // CHECK-NEXT:    %f = onnx.FusedConv {{.*}}activation = "Relu"
  // CHECK-NEXT:    %z = onnx.Sigmoid %f
  func.func @no_bias_broadcast(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %bias: tensor<3x4x8xf32>, %x: tensor<1x2x3x3xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<3x4x8xf32>, tensor<1x2x3x3xf32>) {
    %none = onnx.None
    %m = onnx.MatMul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %y = onnx.Add %m, %bias : (tensor<4x8xf32>, tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
    %f = onnx.FusedConv %x, %w, %none {activation = "Relu"} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32>
    %z = onnx.Sigmoid %f : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    func.return %y, %z : tensor<3x4x8xf32>, tensor<1x2x3x3xf32>
  }
}
