// RUN: mobile-opt %s | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s

// Fused ops, as onnx-fuse forms them: a conv or matrix product with its bias and
// one trailing activation, whose parameters (LeakyRelu's alpha, Clip's bounds,
// HardSigmoid's alpha and beta) are `activation_params`.

// CHECK: builtin.module {

%n = onnx.None
%x = "test.op"() : () -> tensor<1x3x224x224xf32>
%w = "test.op"() : () -> tensor<32x3x3x3xf32>
%b = "test.op"() : () -> tensor<32xf32>
%w_dw = "test.op"() : () -> tensor<32x1x3x3xf32>
// CHECK-NEXT:   %n = onnx.None
// CHECK-NEXT:   %x = "test.op"() : () -> tensor<1x3x224x224xf32>
// CHECK-NEXT:   %w = "test.op"() : () -> tensor<32x3x3x3xf32>
// CHECK-NEXT:   %b = "test.op"() : () -> tensor<32xf32>
// CHECK-NEXT:   %w_dw = "test.op"() : () -> tensor<32x1x3x3xf32>

// Conv + ReLU6 (Clip 0, 6) with the geometry of Conv: (224 + 2 - 3) / 2 + 1 = 112;
// a depthwise conv + ReLU; a conv + LeakyRelu; a conv with no activation.
%conv_relu6 = onnx.FusedConv %x, %w, %b {activation = "Clip", activation_params = array<f32: 0.000000e+00, 6.000000e+00>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>
%conv_dw = onnx.FusedConv %conv_relu6, %w_dw, %b {activation = "Relu", group = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>
%conv_leaky = onnx.FusedConv %x, %w, %n {activation = "LeakyRelu", activation_params = array<f32: 1.000000e-01>, auto_pad = "SAME_UPPER"} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, none) -> tensor<1x32x224x224xf32>
%conv_plain = onnx.FusedConv %x, %w, %b : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<1x32x222x222xf32>
// CHECK-NEXT:   %conv_relu6 = onnx.FusedConv %x, %w, %b {activation = "Clip", activation_params = array<f32: 0.000000e+00, 6.000000e+00>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>
// CHECK-NEXT:   %conv_dw = onnx.FusedConv %conv_relu6, %w_dw, %b {activation = "Relu", group = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>
// CHECK-NEXT:   %conv_leaky = onnx.FusedConv %x, %w, %n {activation = "LeakyRelu", activation_params = array<f32: 1.000000e-01>, auto_pad = "SAME_UPPER"} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, none) -> tensor<1x32x224x224xf32>
// CHECK-NEXT:   %conv_plain = onnx.FusedConv %x, %w, %b : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<1x32x222x222xf32>

// Gemm + HardSigmoid, Gemm + Sigmoid with Gemm's attributes.
%feat = "test.op"() : () -> tensor<1x1280xf32>
%fc_w = "test.op"() : () -> tensor<1000x1280xf32>
%fc_b = "test.op"() : () -> tensor<1000xf32>
%gemm_hsig = onnx.FusedGemm %feat, %fc_w, %fc_b {activation = "HardSigmoid", activation_params = array<f32: 2.000000e-01, 5.000000e-01>, transB = 1 : i64} : (tensor<1x1280xf32>, tensor<1000x1280xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
%at = "test.op"() : () -> tensor<64x4xf32>
%bt = "test.op"() : () -> tensor<64x10xf32>
%gemm_sig = onnx.FusedGemm %at, %bt, %n {activation = "Sigmoid", alpha = 5.000000e-01 : f32, transA = 1 : i64} : (tensor<64x4xf32>, tensor<64x10xf32>, none) -> tensor<4x10xf32>
// CHECK-NEXT:   %feat = "test.op"() : () -> tensor<1x1280xf32>
// CHECK-NEXT:   %fc_w = "test.op"() : () -> tensor<1000x1280xf32>
// CHECK-NEXT:   %fc_b = "test.op"() : () -> tensor<1000xf32>
// CHECK-NEXT:   %gemm_hsig = onnx.FusedGemm %feat, %fc_w, %fc_b {activation = "HardSigmoid", activation_params = array<f32: 2.000000e-01, 5.000000e-01>, transB = 1 : i64} : (tensor<1x1280xf32>, tensor<1000x1280xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
// CHECK-NEXT:   %at = "test.op"() : () -> tensor<64x4xf32>
// CHECK-NEXT:   %bt = "test.op"() : () -> tensor<64x10xf32>
// CHECK-NEXT:   %gemm_sig = onnx.FusedGemm %at, %bt, %n {activation = "Sigmoid", alpha = 5.000000e-01 : f32, transA = 1 : i64} : (tensor<64x4xf32>, tensor<64x10xf32>, none) -> tensor<4x10xf32>

// A transformer MLP: MatMul + bias + Gelu, batched; MatMul + Tanh without bias;
// HardSwish after a 1-D product.
%tokens = "test.op"() : () -> tensor<1x197x768xf32>
%mlp_w = "test.op"() : () -> tensor<768x3072xf32>
%mlp_b = "test.op"() : () -> tensor<3072xf32>
%mlp = onnx.FusedMatMul %tokens, %mlp_w, %mlp_b {activation = "Gelu"} : (tensor<1x197x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<1x197x3072xf32>
%mm_tanh = onnx.FusedMatMul %tokens, %mlp_w, %n {activation = "Tanh"} : (tensor<1x197x768xf32>, tensor<768x3072xf32>, none) -> tensor<1x197x3072xf32>
%v = "test.op"() : () -> tensor<768xf32>
%mm_hswish = onnx.FusedMatMul %v, %mlp_w, %mlp_b {activation = "HardSwish"} : (tensor<768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<3072xf32>
// CHECK-NEXT:   %tokens = "test.op"() : () -> tensor<1x197x768xf32>
// CHECK-NEXT:   %mlp_w = "test.op"() : () -> tensor<768x3072xf32>
// CHECK-NEXT:   %mlp_b = "test.op"() : () -> tensor<3072xf32>
// CHECK-NEXT:   %mlp = onnx.FusedMatMul %tokens, %mlp_w, %mlp_b {activation = "Gelu"} : (tensor<1x197x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<1x197x3072xf32>
// CHECK-NEXT:   %mm_tanh = onnx.FusedMatMul %tokens, %mlp_w, %n {activation = "Tanh"} : (tensor<1x197x768xf32>, tensor<768x3072xf32>, none) -> tensor<1x197x3072xf32>
// CHECK-NEXT:   %v = "test.op"() : () -> tensor<768xf32>
// CHECK-NEXT:   %mm_hswish = onnx.FusedMatMul %v, %mlp_w, %mlp_b {activation = "HardSwish"} : (tensor<768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<3072xf32>

// CHECK-NEXT: }
