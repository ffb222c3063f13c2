// RUN: mobile-opt %s | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s

// Neural-network ops: convolutions, matrix products, pools, normalisations,
// softmax, dropout and reductions, with result shapes worked out by hand from the
// ONNX operator definitions.

// CHECK: builtin.module {

%n = onnx.None
// CHECK-NEXT:   %n = onnx.None

// --- Conv ------------------------------------------------------------------

// Stem conv, stride 2, pad 1: (224 + 2 - 3) / 2 + 1 = 112.
%img = "test.op"() : () -> tensor<1x3x224x224xf32>
%w_stem = "test.op"() : () -> tensor<32x3x3x3xf32>
%b_stem = "test.op"() : () -> tensor<32xf32>
%stem = onnx.Conv %img, %w_stem, %b_stem {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>
// CHECK-NEXT:   %img = "test.op"() : () -> tensor<1x3x224x224xf32>
// CHECK-NEXT:   %w_stem = "test.op"() : () -> tensor<32x3x3x3xf32>
// CHECK-NEXT:   %b_stem = "test.op"() : () -> tensor<32xf32>
// CHECK-NEXT:   %stem = onnx.Conv %img, %w_stem, %b_stem {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>

// Depthwise: group = channels, weight (32, 1, 3, 3).
%w_dw = "test.op"() : () -> tensor<32x1x3x3xf32>
%dw = onnx.Conv %stem, %w_dw, %n {group = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>, none) -> tensor<1x32x112x112xf32>
// CHECK-NEXT:   %w_dw = "test.op"() : () -> tensor<32x1x3x3xf32>
// CHECK-NEXT:   %dw = onnx.Conv %stem, %w_dw, %n {group = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>, none) -> tensor<1x32x112x112xf32>

// Grouped: 64 input channels in 4 groups of 16, 128 outputs; no padding: 56 - 2 = 54.
%x56 = "test.op"() : () -> tensor<1x64x56x56xf32>
%w_g = "test.op"() : () -> tensor<128x16x3x3xf32>
%grouped = onnx.Conv %x56, %w_g, %n {group = 4 : i64} : (tensor<1x64x56x56xf32>, tensor<128x16x3x3xf32>, none) -> tensor<1x128x54x54xf32>
// CHECK-NEXT:   %x56 = "test.op"() : () -> tensor<1x64x56x56xf32>
// CHECK-NEXT:   %w_g = "test.op"() : () -> tensor<128x16x3x3xf32>
// CHECK-NEXT:   %grouped = onnx.Conv %x56, %w_g, %n {group = 4 : i64} : (tensor<1x64x56x56xf32>, tensor<128x16x3x3xf32>, none) -> tensor<1x128x54x54xf32>

// Dilation 2 makes a 3x3 kernel span 5: 56 + 4 - 5 + 1 = 56.
%w64 = "test.op"() : () -> tensor<64x64x3x3xf32>
%dilated = onnx.Conv %x56, %w64, %n {dilations = array<i64: 2, 2>, pads = array<i64: 2, 2, 2, 2>} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:   %w64 = "test.op"() : () -> tensor<64x64x3x3xf32>
// CHECK-NEXT:   %dilated = onnx.Conv %x56, %w64, %n {dilations = array<i64: 2, 2>, pads = array<i64: 2, 2, 2, 2>} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x56x56xf32>

// TF-style asymmetric padding (bottom/right only): (224 + 1 - 3) / 2 + 1 = 112.
%w8 = "test.op"() : () -> tensor<8x3x3x3xf32>
%asym = onnx.Conv %img, %w8, %n {pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<8x3x3x3xf32>, none) -> tensor<1x8x112x112xf32>
// CHECK-NEXT:   %w8 = "test.op"() : () -> tensor<8x3x3x3xf32>
// CHECK-NEXT:   %asym = onnx.Conv %img, %w8, %n {pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<8x3x3x3xf32>, none) -> tensor<1x8x112x112xf32>

// auto_pad SAME_*: output = ceil(input / stride), whatever the kernel.
%x15 = "test.op"() : () -> tensor<1x16x16x15xf32>
%w_s = "test.op"() : () -> tensor<8x16x3x3xf32>
%same_upper = onnx.Conv %x15, %w_s, %n {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>} : (tensor<1x16x16x15xf32>, tensor<8x16x3x3xf32>, none) -> tensor<1x8x8x8xf32>
%x10 = "test.op"() : () -> tensor<1x4x10x10xf32>
%w_k4 = "test.op"() : () -> tensor<4x4x4x4xf32>
%same_lower = onnx.Conv %x10, %w_k4, %n {auto_pad = "SAME_LOWER"} : (tensor<1x4x10x10xf32>, tensor<4x4x4x4xf32>, none) -> tensor<1x4x10x10xf32>
// CHECK-NEXT:   %x15 = "test.op"() : () -> tensor<1x16x16x15xf32>
// CHECK-NEXT:   %w_s = "test.op"() : () -> tensor<8x16x3x3xf32>
// CHECK-NEXT:   %same_upper = onnx.Conv %x15, %w_s, %n {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>} : (tensor<1x16x16x15xf32>, tensor<8x16x3x3xf32>, none) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:   %x10 = "test.op"() : () -> tensor<1x4x10x10xf32>
// CHECK-NEXT:   %w_k4 = "test.op"() : () -> tensor<4x4x4x4xf32>
// CHECK-NEXT:   %same_lower = onnx.Conv %x10, %w_k4, %n {auto_pad = "SAME_LOWER"} : (tensor<1x4x10x10xf32>, tensor<4x4x4x4xf32>, none) -> tensor<1x4x10x10xf32>

// auto_pad VALID: no padding, (32 - 5) / 2 + 1 = 14.
%x32 = "test.op"() : () -> tensor<1x3x32x32xf32>
%w5 = "test.op"() : () -> tensor<16x3x5x5xf32>
%valid = onnx.Conv %x32, %w5, %n {auto_pad = "VALID", strides = array<i64: 2, 2>} : (tensor<1x3x32x32xf32>, tensor<16x3x5x5xf32>, none) -> tensor<1x16x14x14xf32>
// CHECK-NEXT:   %x32 = "test.op"() : () -> tensor<1x3x32x32xf32>
// CHECK-NEXT:   %w5 = "test.op"() : () -> tensor<16x3x5x5xf32>
// CHECK-NEXT:   %valid = onnx.Conv %x32, %w5, %n {auto_pad = "VALID", strides = array<i64: 2, 2>} : (tensor<1x3x32x32xf32>, tensor<16x3x5x5xf32>, none) -> tensor<1x16x14x14xf32>

// 1-D conv over a sequence (N, C, L), in f16.
%seq = "test.op"() : () -> tensor<1x80x100xf16>
%w_1d = "test.op"() : () -> tensor<256x80x3xf16>
%conv1d = onnx.Conv %seq, %w_1d, %n {pads = array<i64: 1, 1>} : (tensor<1x80x100xf16>, tensor<256x80x3xf16>, none) -> tensor<1x256x100xf16>
// CHECK-NEXT:   %seq = "test.op"() : () -> tensor<1x80x100xf16>
// CHECK-NEXT:   %w_1d = "test.op"() : () -> tensor<256x80x3xf16>
// CHECK-NEXT:   %conv1d = onnx.Conv %seq, %w_1d, %n {pads = array<i64: 1, 1>} : (tensor<1x80x100xf16>, tensor<256x80x3xf16>, none) -> tensor<1x256x100xf16>

// --- ConvTranspose -----------------------------------------------------------
// out = stride (in - 1) + output_padding + (k - 1) dilation + 1 - pads

// 2x upsampling: 2 * 7 + 4 - 2 = 16; W is (C_in, C_out / group, k, k).
%x8 = "test.op"() : () -> tensor<1x64x8x8xf32>
%w_t = "test.op"() : () -> tensor<64x32x4x4xf32>
%b_t = "test.op"() : () -> tensor<32xf32>
%up = onnx.ConvTranspose %x8, %w_t, %b_t {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x64x8x8xf32>, tensor<64x32x4x4xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
// CHECK-NEXT:   %x8 = "test.op"() : () -> tensor<1x64x8x8xf32>
// CHECK-NEXT:   %w_t = "test.op"() : () -> tensor<64x32x4x4xf32>
// CHECK-NEXT:   %b_t = "test.op"() : () -> tensor<32xf32>
// CHECK-NEXT:   %up = onnx.ConvTranspose %x8, %w_t, %b_t {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x64x8x8xf32>, tensor<64x32x4x4xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>

// output_padding resolves the stride ambiguity: 2 * 6 + 1 + 3 - 2 = 14 (13 without).
%x7 = "test.op"() : () -> tensor<1x16x7x7xf32>
%w_t3 = "test.op"() : () -> tensor<16x8x3x3xf32>
%out_pad = onnx.ConvTranspose %x7, %w_t3, %n {output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x7x7xf32>, tensor<16x8x3x3xf32>, none) -> tensor<1x8x14x14xf32>
%no_out_pad = onnx.ConvTranspose %x7, %w_t3, %n {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x7x7xf32>, tensor<16x8x3x3xf32>, none) -> tensor<1x8x13x13xf32>
// CHECK-NEXT:   %x7 = "test.op"() : () -> tensor<1x16x7x7xf32>
// CHECK-NEXT:   %w_t3 = "test.op"() : () -> tensor<16x8x3x3xf32>
// CHECK-NEXT:   %out_pad = onnx.ConvTranspose %x7, %w_t3, %n {output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x7x7xf32>, tensor<16x8x3x3xf32>, none) -> tensor<1x8x14x14xf32>
// CHECK-NEXT:   %no_out_pad = onnx.ConvTranspose %x7, %w_t3, %n {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x7x7xf32>, tensor<16x8x3x3xf32>, none) -> tensor<1x8x13x13xf32>

// output_shape states the spatial output directly; the pads follow from it.
%out_shape = onnx.ConvTranspose %x7, %w_t3, %n {output_shape = array<i64: 14, 15>, strides = array<i64: 2, 2>} : (tensor<1x16x7x7xf32>, tensor<16x8x3x3xf32>, none) -> tensor<1x8x14x15xf32>
// CHECK-NEXT:   %out_shape = onnx.ConvTranspose %x7, %w_t3, %n {output_shape = array<i64: 14, 15>, strides = array<i64: 2, 2>} : (tensor<1x16x7x7xf32>, tensor<16x8x3x3xf32>, none) -> tensor<1x8x14x15xf32>

// Grouped: 32 inputs in 4 groups, 4 outputs each: 16 channels; 8 + 3 - 1 = 10.
%x8b = "test.op"() : () -> tensor<1x32x8x8xf32>
%w_tg = "test.op"() : () -> tensor<32x4x3x3xf32>
%t_grouped = onnx.ConvTranspose %x8b, %w_tg, %n {group = 4 : i64} : (tensor<1x32x8x8xf32>, tensor<32x4x3x3xf32>, none) -> tensor<1x16x10x10xf32>
// CHECK-NEXT:   %x8b = "test.op"() : () -> tensor<1x32x8x8xf32>
// CHECK-NEXT:   %w_tg = "test.op"() : () -> tensor<32x4x3x3xf32>
// CHECK-NEXT:   %t_grouped = onnx.ConvTranspose %x8b, %w_tg, %n {group = 4 : i64} : (tensor<1x32x8x8xf32>, tensor<32x4x3x3xf32>, none) -> tensor<1x16x10x10xf32>

// auto_pad SAME_UPPER: output = input * stride.
%x5 = "test.op"() : () -> tensor<1x8x5x5xf32>
%w_t8 = "test.op"() : () -> tensor<8x8x3x3xf32>
%t_same = onnx.ConvTranspose %x5, %w_t8, %n {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>} : (tensor<1x8x5x5xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x10x10xf32>
// CHECK-NEXT:   %x5 = "test.op"() : () -> tensor<1x8x5x5xf32>
// CHECK-NEXT:   %w_t8 = "test.op"() : () -> tensor<8x8x3x3xf32>
// CHECK-NEXT:   %t_same = onnx.ConvTranspose %x5, %w_t8, %n {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>} : (tensor<1x8x5x5xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x10x10xf32>

// --- MatMul --------------------------------------------------------------------

%a48 = "test.op"() : () -> tensor<4x8xf32>
%b816 = "test.op"() : () -> tensor<8x16xf32>
%a_batch = "test.op"() : () -> tensor<2x1x4x8xf32>
%b_batch = "test.op"() : () -> tensor<3x8x5xf32>
%v8 = "test.op"() : () -> tensor<8xf32>
%b_3d = "test.op"() : () -> tensor<2x8x5xf32>
// CHECK-NEXT:   %a48 = "test.op"() : () -> tensor<4x8xf32>
// CHECK-NEXT:   %b816 = "test.op"() : () -> tensor<8x16xf32>
// CHECK-NEXT:   %a_batch = "test.op"() : () -> tensor<2x1x4x8xf32>
// CHECK-NEXT:   %b_batch = "test.op"() : () -> tensor<3x8x5xf32>
// CHECK-NEXT:   %v8 = "test.op"() : () -> tensor<8xf32>
// CHECK-NEXT:   %b_3d = "test.op"() : () -> tensor<2x8x5xf32>

// 2-D; batch dims (2, 1) and (3) broadcast to (2, 3); 1-D operands are promoted
// to a row (left) or a column (right) and the promoted dim is removed again.
%mm = onnx.MatMul %a48, %b816 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
%mm_batch = onnx.MatMul %a_batch, %b_batch : (tensor<2x1x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x3x4x5xf32>
%mm_vec_mat = onnx.MatMul %v8, %b816 : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
%mm_mat_vec = onnx.MatMul %a48, %v8 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
%mm_dot = onnx.MatMul %v8, %v8 : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
%mm_vec_batch = onnx.MatMul %v8, %b_3d : (tensor<8xf32>, tensor<2x8x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:   %mm = onnx.MatMul %a48, %b816 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:   %mm_batch = onnx.MatMul %a_batch, %b_batch : (tensor<2x1x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK-NEXT:   %mm_vec_mat = onnx.MatMul %v8, %b816 : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
// CHECK-NEXT:   %mm_mat_vec = onnx.MatMul %a48, %v8 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
// CHECK-NEXT:   %mm_dot = onnx.MatMul %v8, %v8 : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
// CHECK-NEXT:   %mm_vec_batch = onnx.MatMul %v8, %b_3d : (tensor<8xf32>, tensor<2x8x5xf32>) -> tensor<2x5xf32>

// --- Gemm ----------------------------------------------------------------------

// Classifier head: B stored (N, K) with transB; C [1000] broadcasts over rows.
%feat = "test.op"() : () -> tensor<1x1280xf32>
%fc_w = "test.op"() : () -> tensor<1000x1280xf32>
%fc_b = "test.op"() : () -> tensor<1000xf32>
%fc = onnx.Gemm %feat, %fc_w, %fc_b {transB = 1 : i64} : (tensor<1x1280xf32>, tensor<1000x1280xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
// CHECK-NEXT:   %feat = "test.op"() : () -> tensor<1x1280xf32>
// CHECK-NEXT:   %fc_w = "test.op"() : () -> tensor<1000x1280xf32>
// CHECK-NEXT:   %fc_b = "test.op"() : () -> tensor<1000xf32>
// CHECK-NEXT:   %fc = onnx.Gemm %feat, %fc_w, %fc_b {transB = 1 : i64} : (tensor<1x1280xf32>, tensor<1000x1280xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>

// transA: A is (K, M) = (64, 4); C (4, 1) broadcasts over columns, a scalar C over all.
%at = "test.op"() : () -> tensor<64x4xf32>
%b64 = "test.op"() : () -> tensor<64x10xf32>
%c_col = "test.op"() : () -> tensor<4x1xf32>
%c_s = "test.op"() : () -> tensor<f32>
%gemm_ta = onnx.Gemm %at, %b64, %c_col {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, transA = 1 : i64} : (tensor<64x4xf32>, tensor<64x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
%gemm_s = onnx.Gemm %at, %b64, %c_s {transA = 1 : i64} : (tensor<64x4xf32>, tensor<64x10xf32>, tensor<f32>) -> tensor<4x10xf32>
%b_t2 = "test.op"() : () -> tensor<10x64xf32>
%gemm_tt = onnx.Gemm %at, %b_t2, %n {transA = 1 : i64, transB = 1 : i64} : (tensor<64x4xf32>, tensor<10x64xf32>, none) -> tensor<4x10xf32>
// CHECK-NEXT:   %at = "test.op"() : () -> tensor<64x4xf32>
// CHECK-NEXT:   %b64 = "test.op"() : () -> tensor<64x10xf32>
// CHECK-NEXT:   %c_col = "test.op"() : () -> tensor<4x1xf32>
// CHECK-NEXT:   %c_s = "test.op"() : () -> tensor<f32>
// CHECK-NEXT:   %gemm_ta = onnx.Gemm %at, %b64, %c_col {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, transA = 1 : i64} : (tensor<64x4xf32>, tensor<64x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
// CHECK-NEXT:   %gemm_s = onnx.Gemm %at, %b64, %c_s {transA = 1 : i64} : (tensor<64x4xf32>, tensor<64x10xf32>, tensor<f32>) -> tensor<4x10xf32>
// CHECK-NEXT:   %b_t2 = "test.op"() : () -> tensor<10x64xf32>
// CHECK-NEXT:   %gemm_tt = onnx.Gemm %at, %b_t2, %n {transA = 1 : i64, transB = 1 : i64} : (tensor<64x4xf32>, tensor<10x64xf32>, none) -> tensor<4x10xf32>

// --- Pools ---------------------------------------------------------------------

// ResNet stem pool: (112 + 2 - 3) / 2 + 1 = 56.
%x112 = "test.op"() : () -> tensor<1x64x112x112xf32>
%maxpool = onnx.MaxPool %x112 {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:   %x112 = "test.op"() : () -> tensor<1x64x112x112xf32>
// CHECK-NEXT:   %maxpool = onnx.MaxPool %x112 {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>

// ceil_mode rounds the window count up: floor(53 / 2) + 1 = 27, ceil(53 / 2) + 1 = 28.
%pool_floor = onnx.MaxPool %x56 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x64x56x56xf32>) -> tensor<1x64x27x27xf32>
%pool_ceil = onnx.MaxPool %x56 {ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x64x56x56xf32>) -> tensor<1x64x28x28xf32>
// CHECK-NEXT:   %pool_floor = onnx.MaxPool %x56 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x64x56x56xf32>) -> tensor<1x64x27x27xf32>
// CHECK-NEXT:   %pool_ceil = onnx.MaxPool %x56 {ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x64x56x56xf32>) -> tensor<1x64x28x28xf32>

// ...but a window that would start in the trailing padding is dropped: with
// input 4, end pad 1, kernel 2, stride 2, the third window would start at 4.
%x4 = "test.op"() : () -> tensor<1x8x4x4xf32>
%pool_ceil_drop = onnx.MaxPool %x4 {ceil_mode = 1 : i64, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>
// CHECK-NEXT:   %x4 = "test.op"() : () -> tensor<1x8x4x4xf32>
// CHECK-NEXT:   %pool_ceil_drop = onnx.MaxPool %x4 {ceil_mode = 1 : i64, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>

// Dilated pool (span 3: 10 - 3 + 1 = 8), storage_order, SAME_UPPER (ceil(7 / 2) = 4), 1-D.
%x10b = "test.op"() : () -> tensor<1x8x10x10xf32>
%pool_dil = onnx.MaxPool %x10b {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>, storage_order = 1 : i64} : (tensor<1x8x10x10xf32>) -> tensor<1x8x8x8xf32>
%x7b = "test.op"() : () -> tensor<1x8x7x7xf32>
%pool_same = onnx.MaxPool %x7b {auto_pad = "SAME_UPPER", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x8x7x7xf32>) -> tensor<1x8x4x4xf32>
%s100 = "test.op"() : () -> tensor<1x16x100xf32>
%pool_1d = onnx.MaxPool %s100 {kernel_shape = array<i64: 4>, strides = array<i64: 4>} : (tensor<1x16x100xf32>) -> tensor<1x16x25xf32>
// CHECK-NEXT:   %x10b = "test.op"() : () -> tensor<1x8x10x10xf32>
// CHECK-NEXT:   %pool_dil = onnx.MaxPool %x10b {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>, storage_order = 1 : i64} : (tensor<1x8x10x10xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:   %x7b = "test.op"() : () -> tensor<1x8x7x7xf32>
// CHECK-NEXT:   %pool_same = onnx.MaxPool %x7b {auto_pad = "SAME_UPPER", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x8x7x7xf32>) -> tensor<1x8x4x4xf32>
// CHECK-NEXT:   %s100 = "test.op"() : () -> tensor<1x16x100xf32>
// CHECK-NEXT:   %pool_1d = onnx.MaxPool %s100 {kernel_shape = array<i64: 4>, strides = array<i64: 4>} : (tensor<1x16x100xf32>) -> tensor<1x16x25xf32>

// AveragePool: a 7x7 head, count_include_pad with pads, and ceil_mode
// (floor(9 / 2) + 1 = 5, ceil(9 / 2) + 1 = 6).
%x7c = "test.op"() : () -> tensor<1x1024x7x7xf32>
%avg_head = onnx.AveragePool %x7c {kernel_shape = array<i64: 7, 7>} : (tensor<1x1024x7x7xf32>) -> tensor<1x1024x1x1xf32>
%x28 = "test.op"() : () -> tensor<1x32x28x28xf32>
%avg_pad = onnx.AveragePool %x28 {count_include_pad = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
%x11 = "test.op"() : () -> tensor<1x16x11x11xf32>
%avg_ceil = onnx.AveragePool %x11 {ceil_mode = 1 : i64, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x16x11x11xf32>) -> tensor<1x16x6x6xf32>
// CHECK-NEXT:   %x7c = "test.op"() : () -> tensor<1x1024x7x7xf32>
// CHECK-NEXT:   %avg_head = onnx.AveragePool %x7c {kernel_shape = array<i64: 7, 7>} : (tensor<1x1024x7x7xf32>) -> tensor<1x1024x1x1xf32>
// CHECK-NEXT:   %x28 = "test.op"() : () -> tensor<1x32x28x28xf32>
// CHECK-NEXT:   %avg_pad = onnx.AveragePool %x28 {count_include_pad = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
// CHECK-NEXT:   %x11 = "test.op"() : () -> tensor<1x16x11x11xf32>
// CHECK-NEXT:   %avg_ceil = onnx.AveragePool %x11 {ceil_mode = 1 : i64, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x16x11x11xf32>) -> tensor<1x16x6x6xf32>

// Global pools keep N and C and reduce every spatial dim to 1.
%gap = onnx.GlobalAveragePool %x7c : (tensor<1x1024x7x7xf32>) -> tensor<1x1024x1x1xf32>
%gmp_1d = onnx.GlobalMaxPool %s100 : (tensor<1x16x100xf32>) -> tensor<1x16x1xf32>
%vol = "test.op"() : () -> tensor<2x8x4x4x4xf32>
%gmp_3d = onnx.GlobalMaxPool %vol : (tensor<2x8x4x4x4xf32>) -> tensor<2x8x1x1x1xf32>
// CHECK-NEXT:   %gap = onnx.GlobalAveragePool %x7c : (tensor<1x1024x7x7xf32>) -> tensor<1x1024x1x1xf32>
// CHECK-NEXT:   %gmp_1d = onnx.GlobalMaxPool %s100 : (tensor<1x16x100xf32>) -> tensor<1x16x1xf32>
// CHECK-NEXT:   %vol = "test.op"() : () -> tensor<2x8x4x4x4xf32>
// CHECK-NEXT:   %gmp_3d = onnx.GlobalMaxPool %vol : (tensor<2x8x4x4x4xf32>) -> tensor<2x8x1x1x1xf32>

// --- Normalisation -------------------------------------------------------------

%x55 = "test.op"() : () -> tensor<1x96x55x55xf32>
%lrn = onnx.LRN %x55 {bias = 2.000000e+00 : f32, size = 5 : i64} : (tensor<1x96x55x55xf32>) -> tensor<1x96x55x55xf32>
// CHECK-NEXT:   %x55 = "test.op"() : () -> tensor<1x96x55x55xf32>
// CHECK-NEXT:   %lrn = onnx.LRN %x55 {bias = 2.000000e+00 : f32, size = 5 : i64} : (tensor<1x96x55x55xf32>) -> tensor<1x96x55x55xf32>

// Per-channel statistics along dim 1, for NCHW and for (N, C).
%bn_scale = "test.op"() : () -> tensor<32xf32>
%bn_b = "test.op"() : () -> tensor<32xf32>
%bn_mean = "test.op"() : () -> tensor<32xf32>
%bn_var = "test.op"() : () -> tensor<32xf32>
%bn = onnx.BatchNormalization %stem, %bn_scale, %bn_b, %bn_mean, %bn_var {epsilon = 1.000000e-03 : f32} : (tensor<1x32x112x112xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>
%flat = "test.op"() : () -> tensor<8x32xf32>
%bn_2d = onnx.BatchNormalization %flat, %bn_scale, %bn_b, %bn_mean, %bn_var : (tensor<8x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT:   %bn_scale = "test.op"() : () -> tensor<32xf32>
// CHECK-NEXT:   %bn_b = "test.op"() : () -> tensor<32xf32>
// CHECK-NEXT:   %bn_mean = "test.op"() : () -> tensor<32xf32>
// CHECK-NEXT:   %bn_var = "test.op"() : () -> tensor<32xf32>
// CHECK-NEXT:   %bn = onnx.BatchNormalization %stem, %bn_scale, %bn_b, %bn_mean, %bn_var {epsilon = 1.000000e-03 : f32} : (tensor<1x32x112x112xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x112x112xf32>
// CHECK-NEXT:   %flat = "test.op"() : () -> tensor<8x32xf32>
// CHECK-NEXT:   %bn_2d = onnx.BatchNormalization %flat, %bn_scale, %bn_b, %bn_mean, %bn_var : (tensor<8x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<8x32xf32>

// LayerNorm over the last dim (a ViT token), and over dims 1.. with no bias.
%tokens = "test.op"() : () -> tensor<1x197x768xf32>
%ln_scale = "test.op"() : () -> tensor<768xf32>
%ln_b = "test.op"() : () -> tensor<768xf32>
%ln = onnx.LayerNormalization %tokens, %ln_scale, %ln_b {epsilon = 1.000000e-06 : f32} : (tensor<1x197x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x197x768xf32>
%x234 = "test.op"() : () -> tensor<2x3x4xf32>
%ln_scale2 = "test.op"() : () -> tensor<3x4xf32>
%ln_axis1 = onnx.LayerNormalization %x234, %ln_scale2, %n {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, none) -> tensor<2x3x4xf32>
// CHECK-NEXT:   %tokens = "test.op"() : () -> tensor<1x197x768xf32>
// CHECK-NEXT:   %ln_scale = "test.op"() : () -> tensor<768xf32>
// CHECK-NEXT:   %ln_b = "test.op"() : () -> tensor<768xf32>
// CHECK-NEXT:   %ln = onnx.LayerNormalization %tokens, %ln_scale, %ln_b {epsilon = 1.000000e-06 : f32} : (tensor<1x197x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x197x768xf32>
// CHECK-NEXT:   %x234 = "test.op"() : () -> tensor<2x3x4xf32>
// CHECK-NEXT:   %ln_scale2 = "test.op"() : () -> tensor<3x4xf32>
// CHECK-NEXT:   %ln_axis1 = onnx.LayerNormalization %x234, %ln_scale2, %n {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, none) -> tensor<2x3x4xf32>

// --- Softmax and Dropout -------------------------------------------------------

%logits = "test.op"() : () -> tensor<1x1000xf32>
%attn = "test.op"() : () -> tensor<1x12x197x197xf32>
%softmax = onnx.Softmax %logits : (tensor<1x1000xf32>) -> tensor<1x1000xf32>
%softmax_attn = onnx.Softmax %attn {axis = 3 : i64} : (tensor<1x12x197x197xf32>) -> tensor<1x12x197x197xf32>
%log_softmax = onnx.LogSoftmax %logits {axis = 0 : i64} : (tensor<1x1000xf32>) -> tensor<1x1000xf32>
// CHECK-NEXT:   %logits = "test.op"() : () -> tensor<1x1000xf32>
// CHECK-NEXT:   %attn = "test.op"() : () -> tensor<1x12x197x197xf32>
// CHECK-NEXT:   %softmax = onnx.Softmax %logits : (tensor<1x1000xf32>) -> tensor<1x1000xf32>
// CHECK-NEXT:   %softmax_attn = onnx.Softmax %attn {axis = 3 : i64} : (tensor<1x12x197x197xf32>) -> tensor<1x12x197x197xf32>
// CHECK-NEXT:   %log_softmax = onnx.LogSoftmax %logits {axis = 0 : i64} : (tensor<1x1000xf32>) -> tensor<1x1000xf32>

%ratio = onnx.Constant {value = dense<2.000000e-01> : tensor<f32>} : tensor<f32>
%dropout = onnx.Dropout %feat, %n, %n : (tensor<1x1280xf32>, none, none) -> tensor<1x1280xf32>
%dropout_r = onnx.Dropout %feat, %ratio, %n {seed = 42 : i64} : (tensor<1x1280xf32>, tensor<f32>, none) -> tensor<1x1280xf32>
// CHECK-NEXT:   %ratio = onnx.Constant {value = dense<2.000000e-01> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:   %dropout = onnx.Dropout %feat, %n, %n : (tensor<1x1280xf32>, none, none) -> tensor<1x1280xf32>
// CHECK-NEXT:   %dropout_r = onnx.Dropout %feat, %ratio, %n {seed = 42 : i64} : (tensor<1x1280xf32>, tensor<f32>, none) -> tensor<1x1280xf32>

// --- Reductions ----------------------------------------------------------------

%hw = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : tensor<2xi64>
%last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : tensor<1xi64>
%one = onnx.Constant {value = dense<1> : tensor<1xi64>} : tensor<1xi64>
%no_axes = onnx.Constant {value = dense<> : tensor<0xi64>} : tensor<0xi64>
// CHECK-NEXT:   %hw = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %one = onnx.Constant {value = dense<1> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %no_axes = onnx.Constant {value = dense<> : tensor<0xi64>} : tensor<0xi64>

// keepdims (default 1) keeps reduced dims as 1s; absent axes reduce every dim,
// unless noop_with_empty_axes; negative axes count from the end.
%mean_hw = onnx.ReduceMean %x7c, %hw : (tensor<1x1024x7x7xf32>, tensor<2xi64>) -> tensor<1x1024x1x1xf32>
%mean_flat = onnx.ReduceMean %x7c, %hw {keepdims = 0 : i64} : (tensor<1x1024x7x7xf32>, tensor<2xi64>) -> tensor<1x1024xf32>
%sum_all = onnx.ReduceSum %x234, %n : (tensor<2x3x4xf32>, none) -> tensor<1x1x1xf32>
%sum_noop = onnx.ReduceSum %x234, %n {noop_with_empty_axes = 1 : i64} : (tensor<2x3x4xf32>, none) -> tensor<2x3x4xf32>
%sum_last = onnx.ReduceSum %x234, %last {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x3xf32>
%max_c = onnx.ReduceMax %x234, %one : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x1x4xf32>
%max_empty = onnx.ReduceMax %x234, %no_axes {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<0xi64>) -> tensor<f32>
// CHECK-NEXT:   %mean_hw = onnx.ReduceMean %x7c, %hw : (tensor<1x1024x7x7xf32>, tensor<2xi64>) -> tensor<1x1024x1x1xf32>
// CHECK-NEXT:   %mean_flat = onnx.ReduceMean %x7c, %hw {keepdims = 0 : i64} : (tensor<1x1024x7x7xf32>, tensor<2xi64>) -> tensor<1x1024xf32>
// CHECK-NEXT:   %sum_all = onnx.ReduceSum %x234, %n : (tensor<2x3x4xf32>, none) -> tensor<1x1x1xf32>
// CHECK-NEXT:   %sum_noop = onnx.ReduceSum %x234, %n {noop_with_empty_axes = 1 : i64} : (tensor<2x3x4xf32>, none) -> tensor<2x3x4xf32>
// CHECK-NEXT:   %sum_last = onnx.ReduceSum %x234, %last {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x3xf32>
// CHECK-NEXT:   %max_c = onnx.ReduceMax %x234, %one : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x1x4xf32>
// CHECK-NEXT:   %max_empty = onnx.ReduceMax %x234, %no_axes {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<0xi64>) -> tensor<f32>

// CHECK-NEXT: }
