// RUN: mobile-opt %s | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s

// Quantized ops: scales and zero points are per tensor (a scalar) or per axis
// (1-D along `axis`), as a QDQ or QOperator model exports them.

// CHECK: builtin.module {

%n = onnx.None
%x = "test.op"() : () -> tensor<1x3x224x224xf32>
%w = "test.op"() : () -> tensor<32x3x3x3xf32>
%scale = onnx.Constant {value = dense<1.862000e-02> : tensor<f32>} : tensor<f32>
%zp_u8 = onnx.Constant {value = dense<128> : tensor<ui8>} : tensor<ui8>
%w_scale = onnx.Constant {value = dense<3.000000e-03> : tensor<32xf32>} : tensor<32xf32>
%w_zp = onnx.Constant {value = dense<0> : tensor<32xi8>} : tensor<32xi8>
// CHECK-NEXT:   %n = onnx.None
// CHECK-NEXT:   %x = "test.op"() : () -> tensor<1x3x224x224xf32>
// CHECK-NEXT:   %w = "test.op"() : () -> tensor<32x3x3x3xf32>
// CHECK-NEXT:   %scale = onnx.Constant {value = dense<1.862000e-02> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:   %zp_u8 = onnx.Constant {value = dense<128> : tensor<ui8>} : tensor<ui8>
// CHECK-NEXT:   %w_scale = onnx.Constant {value = dense<3.000000e-03> : tensor<32xf32>} : tensor<32xf32>
// CHECK-NEXT:   %w_zp = onnx.Constant {value = dense<0> : tensor<32xi8>} : tensor<32xi8>

// QuantizeLinear: the result type is the zero point's, else output_dtype's
// (3 = INT8), else uint8.
%q = onnx.QuantizeLinear %x, %scale, %zp_u8 : (tensor<1x3x224x224xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x224x224xui8>
%q_default = onnx.QuantizeLinear %x, %scale, %n : (tensor<1x3x224x224xf32>, tensor<f32>, none) -> tensor<1x3x224x224xui8>
%q_dtype = onnx.QuantizeLinear %x, %scale, %n {output_dtype = 3 : i64} : (tensor<1x3x224x224xf32>, tensor<f32>, none) -> tensor<1x3x224x224xi8>
%q_axis = onnx.QuantizeLinear %w, %w_scale, %w_zp {axis = 0 : i64} : (tensor<32x3x3x3xf32>, tensor<32xf32>, tensor<32xi8>) -> tensor<32x3x3x3xi8>
// CHECK-NEXT:   %q = onnx.QuantizeLinear %x, %scale, %zp_u8 : (tensor<1x3x224x224xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x224x224xui8>
// CHECK-NEXT:   %q_default = onnx.QuantizeLinear %x, %scale, %n : (tensor<1x3x224x224xf32>, tensor<f32>, none) -> tensor<1x3x224x224xui8>
// CHECK-NEXT:   %q_dtype = onnx.QuantizeLinear %x, %scale, %n {output_dtype = 3 : i64} : (tensor<1x3x224x224xf32>, tensor<f32>, none) -> tensor<1x3x224x224xi8>
// CHECK-NEXT:   %q_axis = onnx.QuantizeLinear %w, %w_scale, %w_zp {axis = 0 : i64} : (tensor<32x3x3x3xf32>, tensor<32xf32>, tensor<32xi8>) -> tensor<32x3x3x3xi8>

// DequantizeLinear: the result has the scale's float type; int32 biases have no
// zero point; per-axis along the default axis 1.
%dq = onnx.DequantizeLinear %q, %scale, %zp_u8 : (tensor<1x3x224x224xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x224x224xf32>
%dq_axis = onnx.DequantizeLinear %q_axis, %w_scale, %w_zp {axis = 0 : i64} : (tensor<32x3x3x3xi8>, tensor<32xf32>, tensor<32xi8>) -> tensor<32x3x3x3xf32>
%bias_q = "test.op"() : () -> tensor<32xi32>
%bias_scale = onnx.Constant {value = dense<5.586000e-05> : tensor<32xf32>} : tensor<32xf32>
%dq_bias = onnx.DequantizeLinear %bias_q, %bias_scale, %n {axis = 0 : i64} : (tensor<32xi32>, tensor<32xf32>, none) -> tensor<32xf32>
%act = "test.op"() : () -> tensor<1x32x8x8xi8>
%act_scale = onnx.Constant {value = dense<1.250000e-01> : tensor<32xf16>} : tensor<32xf16>
%dq_f16 = onnx.DequantizeLinear %act, %act_scale, %n : (tensor<1x32x8x8xi8>, tensor<32xf16>, none) -> tensor<1x32x8x8xf16>
// CHECK-NEXT:   %dq = onnx.DequantizeLinear %q, %scale, %zp_u8 : (tensor<1x3x224x224xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x224x224xf32>
// CHECK-NEXT:   %dq_axis = onnx.DequantizeLinear %q_axis, %w_scale, %w_zp {axis = 0 : i64} : (tensor<32x3x3x3xi8>, tensor<32xf32>, tensor<32xi8>) -> tensor<32x3x3x3xf32>
// CHECK-NEXT:   %bias_q = "test.op"() : () -> tensor<32xi32>
// CHECK-NEXT:   %bias_scale = onnx.Constant {value = dense<5.586000e-05> : tensor<32xf32>} : tensor<32xf32>
// CHECK-NEXT:   %dq_bias = onnx.DequantizeLinear %bias_q, %bias_scale, %n {axis = 0 : i64} : (tensor<32xi32>, tensor<32xf32>, none) -> tensor<32xf32>
// CHECK-NEXT:   %act = "test.op"() : () -> tensor<1x32x8x8xi8>
// CHECK-NEXT:   %act_scale = onnx.Constant {value = dense<1.250000e-01> : tensor<32xf16>} : tensor<32xf16>
// CHECK-NEXT:   %dq_f16 = onnx.DequantizeLinear %act, %act_scale, %n : (tensor<1x32x8x8xi8>, tensor<32xf16>, none) -> tensor<1x32x8x8xf16>

// QLinearConv: uint8 activations, int8 per-channel weights, an int32 bias; the
// output has y_zero_point's type and the geometry of Conv: (224 + 2 - 3) / 2 + 1.
%qw = "test.op"() : () -> tensor<32x3x3x3xi8>
%y_scale = onnx.Constant {value = dense<2.352000e-02> : tensor<f32>} : tensor<f32>
%qconv = onnx.QLinearConv %q, %scale, %zp_u8, %qw, %w_scale, %w_zp, %y_scale, %zp_u8, %bias_q {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xui8>, tensor<f32>, tensor<ui8>, tensor<32x3x3x3xi8>, tensor<32xf32>, tensor<32xi8>, tensor<f32>, tensor<ui8>, tensor<32xi32>) -> tensor<1x32x112x112xui8>
%qw_dw = "test.op"() : () -> tensor<32x1x3x3xi8>
%qconv_dw = onnx.QLinearConv %qconv, %y_scale, %zp_u8, %qw_dw, %w_scale, %w_zp, %y_scale, %zp_u8, %n {group = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x112x112xui8>, tensor<f32>, tensor<ui8>, tensor<32x1x3x3xi8>, tensor<32xf32>, tensor<32xi8>, tensor<f32>, tensor<ui8>, none) -> tensor<1x32x112x112xui8>
// CHECK-NEXT:   %qw = "test.op"() : () -> tensor<32x3x3x3xi8>
// CHECK-NEXT:   %y_scale = onnx.Constant {value = dense<2.352000e-02> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:   %qconv = onnx.QLinearConv %q, %scale, %zp_u8, %qw, %w_scale, %w_zp, %y_scale, %zp_u8, %bias_q {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xui8>, tensor<f32>, tensor<ui8>, tensor<32x3x3x3xi8>, tensor<32xf32>, tensor<32xi8>, tensor<f32>, tensor<ui8>, tensor<32xi32>) -> tensor<1x32x112x112xui8>
// CHECK-NEXT:   %qw_dw = "test.op"() : () -> tensor<32x1x3x3xi8>
// CHECK-NEXT:   %qconv_dw = onnx.QLinearConv %qconv, %y_scale, %zp_u8, %qw_dw, %w_scale, %w_zp, %y_scale, %zp_u8, %n {group = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x112x112xui8>, tensor<f32>, tensor<ui8>, tensor<32x1x3x3xi8>, tensor<32xf32>, tensor<32xi8>, tensor<f32>, tensor<ui8>, none) -> tensor<1x32x112x112xui8>

// QLinearMatMul: batched activations times a matrix with per-column scales.
%qa = "test.op"() : () -> tensor<1x16x64xui8>
%qb = "test.op"() : () -> tensor<64x32xui8>
%b_scale = onnx.Constant {value = dense<1.000000e-02> : tensor<32xf32>} : tensor<32xf32>
%b_zp = onnx.Constant {value = dense<128> : tensor<32xui8>} : tensor<32xui8>
%qmm = onnx.QLinearMatMul %qa, %scale, %zp_u8, %qb, %b_scale, %b_zp, %y_scale, %zp_u8 : (tensor<1x16x64xui8>, tensor<f32>, tensor<ui8>, tensor<64x32xui8>, tensor<32xf32>, tensor<32xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x16x32xui8>
// CHECK-NEXT:   %qa = "test.op"() : () -> tensor<1x16x64xui8>
// CHECK-NEXT:   %qb = "test.op"() : () -> tensor<64x32xui8>
// CHECK-NEXT:   %b_scale = onnx.Constant {value = dense<1.000000e-02> : tensor<32xf32>} : tensor<32xf32>
// CHECK-NEXT:   %b_zp = onnx.Constant {value = dense<128> : tensor<32xui8>} : tensor<32xui8>
// CHECK-NEXT:   %qmm = onnx.QLinearMatMul %qa, %scale, %zp_u8, %qb, %b_scale, %b_zp, %y_scale, %zp_u8 : (tensor<1x16x64xui8>, tensor<f32>, tensor<ui8>, tensor<64x32xui8>, tensor<32xf32>, tensor<32xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x16x32xui8>

// CHECK-NEXT: }
