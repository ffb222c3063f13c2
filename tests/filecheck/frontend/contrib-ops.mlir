// onnxruntime's QOperator com.microsoft ops import as the QDQ units they stand for;
// the float op keeps the node's name, and what cannot be expressed names the node.

// RUN: %python %inputs/make_model.py ms_qlinear_add %t.add.onnx
// RUN: mobile-translate --import-onnx %t.add.onnx | filecheck %s --check-prefix=ADD
// ADD:      %a_dequantized = onnx.DequantizeLinear %a, %a_scale, %a_zero
// ADD-NEXT: %b_dequantized = onnx.DequantizeLinear %b, %b_scale, %b_zero
// ADD-NEXT: %y_float = onnx.Add %a_dequantized, %b_dequantized
// ADD-NEXT: %y = onnx.QuantizeLinear %y_float, %y_scale, %y_zero : (tensor<1x8x5x7xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x8x5x7xui8>
// ADD-NEXT: func.return %y

// QGemm adds its int32 C to the accumulator: C dequantizes with a_scale * b_scale.
// RUN: %python %inputs/make_model.py ms_qgemm %t.gemm.onnx
// RUN: mobile-translate --import-onnx %t.gemm.onnx | filecheck %s --check-prefix=GEMM
// GEMM:      %bias_scale = onnx.Constant {value = dense<0.000241889138> : tensor<f32>}
// GEMM:      %bias_dequantized = onnx.DequantizeLinear %bias, %bias_scale, %bias_zero : (tensor<10xi32>, tensor<f32>, tensor<i32>) -> tensor<10xf32>
// GEMM-NEXT: %y_float = onnx.Gemm %a_dequantized, %w_dequantized, %bias_dequantized {transB = 1 : i64}
// GEMM-NEXT: %y = onnx.QuantizeLinear %y_float, %y_scale, %y_zero

// RUN: %python %inputs/make_model.py ms_qlinear_gap %t.gap.onnx
// RUN: mobile-translate --import-onnx %t.gap.onnx | filecheck %s --check-prefix=GAP
// GAP:      onnx.DequantizeLinear %a, %a_scale, %a_zero : (tensor<1x8x5x7xi8>
// GAP-NEXT: %y_float = onnx.GlobalAveragePool %a_dequantized : (tensor<1x8x5x7xf32>) -> tensor<1x8x1x1xf32>
// GAP-NEXT: %y = onnx.QuantizeLinear %y_float, %y_scale, %y_zero

// RUN: %python %inputs/make_model.py ms_channels_last %t.nhwc.onnx
// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx %t.nhwc.onnx | filecheck %s --check-prefix=NHWC
// NHWC:      [output]
// NHWC-NEXT: mobile-translate: error: {{.*}}nhwc.onnx: node 'pool' (QLinearGlobalAveragePool): channels_last=1 is not supported
// NHWC-NEXT: [exit status 1]
