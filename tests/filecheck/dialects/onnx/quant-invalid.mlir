// RUN: mobile-opt %s --split-input-file --verify-diagnostics | filecheck %s

// --- QuantizeLinear ------------------------------------------------------------

// A per-axis scale has one entry per slice along `axis` (default 1: 3 channels).
%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%s = "test.op"() : () -> tensor<8xf32>
%n = onnx.None
%y = onnx.QuantizeLinear %x, %s, %n : (tensor<1x3x8x8xf32>, tensor<8xf32>, none) -> tensor<1x3x8x8xui8>

// CHECK: onnx.QuantizeLinear: scale [8] is neither per-tensor nor per-axis

// -----

// The zero point decides the result type.
%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<i8>
%y = onnx.QuantizeLinear %x, %s, %z : (tensor<1x3x8x8xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x8x8xui8>

// CHECK: onnx.QuantizeLinear: result #0 has type tensor<1x3x8x8xui8>, but the operands give tensor<1x3x8x8xi8>

// -----

%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<i32>
%y = onnx.QuantizeLinear %x, %s, %z : (tensor<1x3x8x8xf32>, tensor<f32>, tensor<i32>) -> tensor<1x3x8x8xi32>

// CHECK: onnx.QuantizeLinear: zero point must be int8 or uint8

// -----

%x = "test.op"() : () -> tensor<4x64xf32>
%s = "test.op"() : () -> tensor<4x2xf32>
%n = onnx.None
%y = onnx.QuantizeLinear %x, %s, %n {block_size = 32 : i64} : (tensor<4x64xf32>, tensor<4x2xf32>, none) -> tensor<4x64xui8>

// CHECK: onnx.QuantizeLinear: blocked quantisation is not supported

// -----

%x = "test.op"() : () -> tensor<32x3x3x3xf32>
%s = "test.op"() : () -> tensor<32xf32>
%z = "test.op"() : () -> tensor<i8>
%y = onnx.QuantizeLinear %x, %s, %z {axis = 0 : i64} : (tensor<32x3x3x3xf32>, tensor<32xf32>, tensor<i8>) -> tensor<32x3x3x3xi8>

// CHECK: onnx.QuantizeLinear: zero point and scale shapes differ

// -----

// --- DequantizeLinear ----------------------------------------------------------

%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%s = "test.op"() : () -> tensor<f32>
%n = onnx.None
%y = onnx.DequantizeLinear %x, %s, %n : (tensor<1x3x8x8xf32>, tensor<f32>, none) -> tensor<1x3x8x8xf32>

// CHECK: onnx.DequantizeLinear: x must be int8, uint8 or int32

// -----

// The result has the scale's element type.
%x = "test.op"() : () -> tensor<1x3x8x8xui8>
%s = "test.op"() : () -> tensor<f32>
%n = onnx.None
%y = onnx.DequantizeLinear %x, %s, %n : (tensor<1x3x8x8xui8>, tensor<f32>, none) -> tensor<1x3x8x8xf16>

// CHECK: onnx.DequantizeLinear: result #0 has type tensor<1x3x8x8xf16>, but the operands give tensor<1x3x8x8xf32>

// -----

%x = "test.op"() : () -> tensor<32x3x3x3xi8>
%s = "test.op"() : () -> tensor<32xf32>
%n = onnx.None
%y = onnx.DequantizeLinear %x, %s, %n {axis = 1 : i64} : (tensor<32x3x3x3xi8>, tensor<32xf32>, none) -> tensor<32x3x3x3xf32>

// CHECK: onnx.DequantizeLinear: scale [32] is neither per-tensor nor per-axis

// -----

// --- QLinearConv ---------------------------------------------------------------

%x = "test.op"() : () -> tensor<1x3x32x32xf32>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<ui8>
%w = "test.op"() : () -> tensor<8x3x3x3xui8>
%n = onnx.None
%y = onnx.QLinearConv %x, %s, %z, %w, %s, %z, %s, %z, %n : (tensor<1x3x32x32xf32>, tensor<f32>, tensor<ui8>, tensor<8x3x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>, none) -> tensor<1x8x30x30xui8>

// CHECK: onnx.QLinearConv: quantized operands must be int8 or uint8

// -----

%x = "test.op"() : () -> tensor<1x3x32x32xui8>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<ui8>
%w = "test.op"() : () -> tensor<8x3x3x3xui8>
%b = "test.op"() : () -> tensor<8xf32>
%y = "onnx.QLinearConv"(%x, %s, %z, %w, %s, %z, %s, %z, %b) : (tensor<1x3x32x32xui8>, tensor<f32>, tensor<ui8>, tensor<8x3x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>, tensor<8xf32>) -> tensor<1x8x30x30xui8>

// CHECK:      operand 'B' at position 8 does not verify:
// CHECK-NEXT: Expected attribute i32 but got f32

// -----

// Same geometry rules as Conv: stride 2 without padding gives 15, not 16.
%x = "test.op"() : () -> tensor<1x3x32x32xui8>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<ui8>
%w = "test.op"() : () -> tensor<8x3x3x3xui8>
%n = onnx.None
%y = onnx.QLinearConv %x, %s, %z, %w, %s, %z, %s, %z, %n {strides = array<i64: 2, 2>} : (tensor<1x3x32x32xui8>, tensor<f32>, tensor<ui8>, tensor<8x3x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>, none) -> tensor<1x8x16x16xui8>

// CHECK: onnx.QLinearConv: result #0 has type tensor<1x8x16x16xui8>, but the operands give tensor<1x8x15x15xui8>

// -----

// Per-channel weight scales run along the output channels (8), not the inputs.
%x = "test.op"() : () -> tensor<1x3x32x32xui8>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<ui8>
%w = "test.op"() : () -> tensor<8x3x3x3xi8>
%ws = "test.op"() : () -> tensor<3xf32>
%wz = "test.op"() : () -> tensor<3xi8>
%n = onnx.None
%y = onnx.QLinearConv %x, %s, %z, %w, %ws, %wz, %s, %z, %n : (tensor<1x3x32x32xui8>, tensor<f32>, tensor<ui8>, tensor<8x3x3x3xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<ui8>, none) -> tensor<1x8x30x30xui8>

// CHECK: onnx.QLinearConv: scale [3] is neither per-tensor nor per-axis

// -----

// --- QLinearMatMul -------------------------------------------------------------

%a = "test.op"() : () -> tensor<16x64xui8>
%b = "test.op"() : () -> tensor<32x64xui8>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<ui8>
%y = onnx.QLinearMatMul %a, %s, %z, %b, %s, %z, %s, %z : (tensor<16x64xui8>, tensor<f32>, tensor<ui8>, tensor<32x64xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<16x32xui8>

// CHECK: onnx.QLinearMatMul: inner dimensions differ: [16, 64] x [32, 64]

// -----

// b's scale is per column (32), not per row (64).
%a = "test.op"() : () -> tensor<16x64xui8>
%b = "test.op"() : () -> tensor<64x32xui8>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<ui8>
%bs = "test.op"() : () -> tensor<64xf32>
%bz = "test.op"() : () -> tensor<64xui8>
%y = onnx.QLinearMatMul %a, %s, %z, %b, %bs, %bz, %s, %z : (tensor<16x64xui8>, tensor<f32>, tensor<ui8>, tensor<64x32xui8>, tensor<64xf32>, tensor<64xui8>, tensor<f32>, tensor<ui8>) -> tensor<16x32xui8>

// CHECK: onnx.QLinearMatMul: scale [64] is neither per-tensor nor per-axis

// -----

// The result type is y_zero_point's.
%a = "test.op"() : () -> tensor<16x64xi8>
%b = "test.op"() : () -> tensor<64x32xi8>
%s = "test.op"() : () -> tensor<f32>
%z = "test.op"() : () -> tensor<i8>
%y = onnx.QLinearMatMul %a, %s, %z, %b, %s, %z, %s, %z : (tensor<16x64xi8>, tensor<f32>, tensor<i8>, tensor<64x32xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<16x32xui8>

// CHECK: onnx.QLinearMatMul: result #0 has type tensor<16x32xui8>, but the operands give tensor<16x32xi8>
