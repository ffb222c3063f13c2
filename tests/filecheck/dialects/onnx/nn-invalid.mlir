// RUN: mobile-opt %s --split-input-file --verify-diagnostics | filecheck %s

// --- Conv ----------------------------------------------------------------------

// Grouped conv: each group of 64 / 4 = 16 channels needs a weight of 16 channels.
%x = "test.op"() : () -> tensor<1x64x56x56xf32>
%w = "test.op"() : () -> tensor<128x32x3x3xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n {group = 4 : i64} : (tensor<1x64x56x56xf32>, tensor<128x32x3x3xf32>, none) -> tensor<1x128x54x54xf32>

// CHECK: onnx.Conv: channels do not match: input 64, weight [128, 32, 3, 3], group 4

// -----

// Depthwise weight without `group`.
%x = "test.op"() : () -> tensor<1x32x112x112xf32>
%w = "test.op"() : () -> tensor<32x1x3x3xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>, none) -> tensor<1x32x112x112xf32>

// CHECK: onnx.Conv: channels do not match: input 32, weight [32, 1, 3, 3], group 1

// -----

// Stride 2 without padding: (224 - 3) / 2 + 1 = 111, not 112.
%x = "test.op"() : () -> tensor<1x3x224x224xf32>
%w = "test.op"() : () -> tensor<32x3x3x3xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n {strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>, none) -> tensor<1x32x112x112xf32>

// CHECK: onnx.Conv: result #0 has type tensor<1x32x112x112xf32>, but the operands give tensor<1x32x111x111xf32>

// -----

// Dilation 2 widens the kernel to 5: 56 + 2 - 5 + 1 = 54.
%x = "test.op"() : () -> tensor<1x64x56x56xf32>
%w = "test.op"() : () -> tensor<64x64x3x3xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n {dilations = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x56x56xf32>

// CHECK: onnx.Conv: result #0 has type tensor<1x64x56x56xf32>, but the operands give tensor<1x64x54x54xf32>

// -----

// SAME_UPPER gives ceil(15 / 2) = 8.
%x = "test.op"() : () -> tensor<1x16x15x15xf32>
%w = "test.op"() : () -> tensor<8x16x3x3xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>} : (tensor<1x16x15x15xf32>, tensor<8x16x3x3xf32>, none) -> tensor<1x8x7x7xf32>

// CHECK: onnx.Conv: result #0 has type tensor<1x8x7x7xf32>, but the operands give tensor<1x8x8x8xf32>

// -----

%x = "test.op"() : () -> tensor<1x16x15x15xf32>
%w = "test.op"() : () -> tensor<8x16x3x3xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n {auto_pad = "SAME"} : (tensor<1x16x15x15xf32>, tensor<8x16x3x3xf32>, none) -> tensor<1x8x15x15xf32>

// CHECK: onnx.Conv: auto_pad = 'SAME', must be one of NOTSET, SAME_UPPER, SAME_LOWER, VALID

// -----

%x = "test.op"() : () -> tensor<1x16x15x15xf32>
%w = "test.op"() : () -> tensor<8x16x3x3xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n {auto_pad = "VALID", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x15x15xf32>, tensor<8x16x3x3xf32>, none) -> tensor<1x8x15x15xf32>

// CHECK: onnx.Conv: pads and auto_pad cannot both be set

// -----

%x = "test.op"() : () -> tensor<1x16x15x15xf32>
%w = "test.op"() : () -> tensor<8x16x3x3xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n {pads = array<i64: 1, 1>} : (tensor<1x16x15x15xf32>, tensor<8x16x3x3xf32>, none) -> tensor<1x8x15x15xf32>

// CHECK: onnx.Conv: kernel/strides/dilations/pads do not match 2 spatial dimensions

// -----

%x = "test.op"() : () -> tensor<1x16x15x15xf32>
%w = "test.op"() : () -> tensor<8x16x3x3xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n {kernel_shape = array<i64: 5, 5>} : (tensor<1x16x15x15xf32>, tensor<8x16x3x3xf32>, none) -> tensor<1x8x13x13xf32>

// CHECK: onnx.Conv: kernel_shape [5, 5] differs from weight [3, 3]

// -----

%x = "test.op"() : () -> tensor<1x16x15x15xf32>
%w = "test.op"() : () -> tensor<8x16x3x3xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n {strides = array<i64: 0, 1>} : (tensor<1x16x15x15xf32>, tensor<8x16x3x3xf32>, none) -> tensor<1x8x13x13xf32>

// CHECK: onnx.Conv: strides[0] = 0, must be >= 1

// -----

%x = "test.op"() : () -> tensor<1x3x4x4xf32>
%w = "test.op"() : () -> tensor<8x3x5x5xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n : (tensor<1x3x4x4xf32>, tensor<8x3x5x5xf32>, none) -> tensor<1x8x1x1xf32>

// CHECK: onnx.Conv: window 5 is larger than padded input 4

// -----

%x = "test.op"() : () -> tensor<1x3x32x32xf32>
%w = "test.op"() : () -> tensor<8x3x3x3xf32>
%b = "test.op"() : () -> tensor<3xf32>
%y = onnx.Conv %x, %w, %b : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>, tensor<3xf32>) -> tensor<1x8x30x30xf32>

// CHECK: onnx.Conv: bias shape [3] should be [8]

// -----

%x = "test.op"() : () -> tensor<1x3x32x32xf32>
%w = "test.op"() : () -> tensor<8x3x3xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n : (tensor<1x3x32x32xf32>, tensor<8x3x3xf32>, none) -> tensor<1x8x30x30xf32>

// CHECK: onnx.Conv: input [1, 3, 32, 32] and weight [8, 3, 3] ranks do not fit a conv

// -----

%x = "test.op"() : () -> tensor<1x3x32x32xf32>
%w = "test.op"() : () -> tensor<8x3x3x3xf16>
%n = onnx.None
%y = onnx.Conv %x, %w, %n : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf16>, none) -> tensor<1x8x30x30xf32>

// CHECK: onnx.Conv: operands mix element types f16, f32

// -----

// --- ConvTranspose -------------------------------------------------------------

// Without output_padding: 2 * 6 + 3 - 2 = 13.
%x = "test.op"() : () -> tensor<1x16x7x7xf32>
%w = "test.op"() : () -> tensor<16x8x3x3xf32>
%n = onnx.None
%y = onnx.ConvTranspose %x, %w, %n {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x7x7xf32>, tensor<16x8x3x3xf32>, none) -> tensor<1x8x14x14xf32>

// CHECK: onnx.ConvTranspose: result #0 has type tensor<1x8x14x14xf32>, but the operands give tensor<1x8x13x13xf32>

// -----

// The weight of a transposed conv is (C_in, C_out / group, ...), not (C_out, C_in, ...).
%x = "test.op"() : () -> tensor<1x16x7x7xf32>
%w = "test.op"() : () -> tensor<8x16x3x3xf32>
%n = onnx.None
%y = onnx.ConvTranspose %x, %w, %n : (tensor<1x16x7x7xf32>, tensor<8x16x3x3xf32>, none) -> tensor<1x8x9x9xf32>

// CHECK: onnx.ConvTranspose: input [1, 16, 7, 7] and weight [8, 16, 3, 3] do not fit a transposed conv

// -----

// With group 4 there are 4 * 4 = 16 output channels.
%x = "test.op"() : () -> tensor<1x32x8x8xf32>
%w = "test.op"() : () -> tensor<32x4x3x3xf32>
%b = "test.op"() : () -> tensor<4xf32>
%y = onnx.ConvTranspose %x, %w, %b {group = 4 : i64} : (tensor<1x32x8x8xf32>, tensor<32x4x3x3xf32>, tensor<4xf32>) -> tensor<1x16x10x10xf32>

// CHECK: onnx.ConvTranspose: bias should be [16]

// -----

%x = "test.op"() : () -> tensor<1x16x7x7xf32>
%w = "test.op"() : () -> tensor<16x8x3x3xf32>
%n = onnx.None
%y = onnx.ConvTranspose %x, %w, %n {output_shape = array<i64: 14, 14>, strides = array<i64: 2, 2>} : (tensor<1x16x7x7xf32>, tensor<16x8x3x3xf32>, none) -> tensor<1x8x15x15xf32>

// CHECK: onnx.ConvTranspose: result #0 has type tensor<1x8x15x15xf32>, but the operands give tensor<1x8x14x14xf32>

// -----

// --- MatMul and Gemm -----------------------------------------------------------

%a = "test.op"() : () -> tensor<4x8xf32>
%b = "test.op"() : () -> tensor<16x8xf32>
%y = onnx.MatMul %a, %b : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>

// CHECK: onnx.MatMul: inner dimensions differ: [4, 8] x [16, 8]

// -----

%a = "test.op"() : () -> tensor<2x4x8xf32>
%b = "test.op"() : () -> tensor<3x8x5xf32>
%y = onnx.MatMul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x4x5xf32>

// CHECK: onnx.MatMul: shapes [2] and [3] do not broadcast

// -----

// A 1-D right operand is a column that is removed again: the result is [4], not [4, 1].
%a = "test.op"() : () -> tensor<4x8xf32>
%b = "test.op"() : () -> tensor<8xf32>
%y = onnx.MatMul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x1xf32>

// CHECK: onnx.MatMul: result #0 has type tensor<4x1xf32>, but the operands give tensor<4xf32>

// -----

%a = "test.op"() : () -> tensor<f32>
%b = "test.op"() : () -> tensor<8xf32>
%y = onnx.MatMul %a, %b : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>

// CHECK: onnx.MatMul: MatMul operands must have rank >= 1

// -----

// A classifier weight stored (N, K) needs transB.
%a = "test.op"() : () -> tensor<1x1280xf32>
%b = "test.op"() : () -> tensor<1000x1280xf32>
%c = "test.op"() : () -> tensor<1000xf32>
%y = onnx.Gemm %a, %b, %c : (tensor<1x1280xf32>, tensor<1000x1280xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>

// CHECK: onnx.Gemm: inner dimensions differ: 1280 vs 1000

// -----

// C broadcasts one way only, to (M, N).
%a = "test.op"() : () -> tensor<1x64xf32>
%b = "test.op"() : () -> tensor<64x10xf32>
%c = "test.op"() : () -> tensor<4x10xf32>
%y = onnx.Gemm %a, %b, %c : (tensor<1x64xf32>, tensor<64x10xf32>, tensor<4x10xf32>) -> tensor<1x10xf32>

// CHECK: onnx.Gemm: C [4, 10] does not broadcast to [1, 10]

// -----

%a = "test.op"() : () -> tensor<64x4xf32>
%b = "test.op"() : () -> tensor<64x10xf32>
%n = onnx.None
%y = onnx.Gemm %a, %b, %n {transA = 1 : i64} : (tensor<64x4xf32>, tensor<64x10xf32>, none) -> tensor<64x10xf32>

// CHECK: onnx.Gemm: result #0 has type tensor<64x10xf32>, but the operands give tensor<4x10xf32>

// -----

%a = "test.op"() : () -> tensor<2x4x8xf32>
%b = "test.op"() : () -> tensor<8x16xf32>
%n = onnx.None
%y = onnx.Gemm %a, %b, %n : (tensor<2x4x8xf32>, tensor<8x16xf32>, none) -> tensor<2x4x16xf32>

// CHECK: onnx.Gemm: Gemm operands must be 2-D

// -----

// --- Pools ---------------------------------------------------------------------

%x = "test.op"() : () -> tensor<1x64x112x112xf32>
%y = onnx.MaxPool %x {strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>

// CHECK: onnx.MaxPool: kernel_shape is required

// -----

// ceil_mode: ceil((56 - 3) / 2) + 1 = 28 windows, not 27.
%x = "test.op"() : () -> tensor<1x64x56x56xf32>
%y = onnx.MaxPool %x {ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x64x56x56xf32>) -> tensor<1x64x27x27xf32>

// CHECK: onnx.MaxPool: result #0 has type tensor<1x64x27x27xf32>, but the operands give tensor<1x64x28x28xf32>

// -----

// A window starting in the trailing padding is dropped: 2 windows, not 3.
%x = "test.op"() : () -> tensor<1x8x4x4xf32>
%y = onnx.MaxPool %x {ceil_mode = 1 : i64, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x3x3xf32>

// CHECK: onnx.MaxPool: result #0 has type tensor<1x8x3x3xf32>, but the operands give tensor<1x8x2x2xf32>

// -----

%x = "test.op"() : () -> tensor<1x64xf32>
%y = onnx.MaxPool %x {kernel_shape = array<i64: 3>} : (tensor<1x64xf32>) -> tensor<1x62xf32>

// CHECK: onnx.MaxPool: input [1, 64] has no spatial dimensions

// -----

%x = "test.op"() : () -> tensor<1x32x28x28xf32>
%y = onnx.AveragePool %x {kernel_shape = array<i64: 3>} : (tensor<1x32x28x28xf32>) -> tensor<1x32x26x26xf32>

// CHECK: onnx.AveragePool: kernel/strides/dilations/pads do not match 2 spatial dimensions

// -----

%x = "test.op"() : () -> tensor<1x1024x7x7xf32>
%y = onnx.GlobalAveragePool %x : (tensor<1x1024x7x7xf32>) -> tensor<1x1024xf32>

// CHECK: onnx.GlobalAveragePool: result #0 has type tensor<1x1024xf32>, but the operands give tensor<1x1024x1x1xf32>

// -----

%x = "test.op"() : () -> tensor<1x1024xf32>
%y = onnx.GlobalMaxPool %x : (tensor<1x1024xf32>) -> tensor<1x1024xf32>

// CHECK: onnx.GlobalMaxPool: input [1, 1024] has no spatial dimensions

// -----

// --- Normalisation, Softmax, Dropout -------------------------------------------

%x = "test.op"() : () -> tensor<1x96x55x55xf32>
%y = onnx.LRN %x {size = 0 : i64} : (tensor<1x96x55x55xf32>) -> tensor<1x96x55x55xf32>

// CHECK: onnx.LRN: size = 0, must be >= 1

// -----

%x = "test.op"() : () -> tensor<1x32x8x8xf32>
%s = "test.op"() : () -> tensor<32xf32>
%m = "test.op"() : () -> tensor<64xf32>
%y = onnx.BatchNormalization %x, %s, %s, %m, %s : (tensor<1x32x8x8xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64xf32>, tensor<32xf32>) -> tensor<1x32x8x8xf32>

// CHECK: onnx.BatchNormalization: per-channel operands must be [32], got [64]

// -----

%x = "test.op"() : () -> tensor<1x32x8x8xf32>
%s = "test.op"() : () -> tensor<32xf32>
%y = onnx.BatchNormalization %x, %s, %s, %s, %s {training_mode = 1 : i64} : (tensor<1x32x8x8xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x8x8xf32>

// CHECK: onnx.BatchNormalization: training_mode is not supported

// -----

// Scale must broadcast to the normalised dims [768].
%x = "test.op"() : () -> tensor<1x197x768xf32>
%s = "test.op"() : () -> tensor<197x1xf32>
%n = onnx.None
%y = onnx.LayerNormalization %x, %s, %n : (tensor<1x197x768xf32>, tensor<197x1xf32>, none) -> tensor<1x197x768xf32>

// CHECK: onnx.LayerNormalization: [197, 1] does not broadcast to [768]

// -----

%x = "test.op"() : () -> tensor<1x197x768xf32>
%s = "test.op"() : () -> tensor<768xf32>
%n = onnx.None
%y = onnx.LayerNormalization %x, %s, %n {axis = 3 : i64} : (tensor<1x197x768xf32>, tensor<768xf32>, none) -> tensor<1x197x768xf32>

// CHECK: onnx.LayerNormalization: axis = 3, must be in [-3, 2] for rank 3

// -----

%x = "test.op"() : () -> tensor<1x1000xf32>
%y = onnx.Softmax %x {axis = 2 : i64} : (tensor<1x1000xf32>) -> tensor<1x1000xf32>

// CHECK: onnx.Softmax: axis = 2, must be in [-2, 1] for rank 2

// -----

%x = "test.op"() : () -> tensor<1x1000xf32>
%y = onnx.LogSoftmax %x {axis = -3 : i64} : (tensor<1x1000xf32>) -> tensor<1x1000xf32>

// CHECK: onnx.LogSoftmax: axis = -3, must be in [-2, 1] for rank 2

// -----

%x = "test.op"() : () -> tensor<1x1280xf32>
%r = "test.op"() : () -> tensor<f32>
%n = onnx.None
%y = onnx.Dropout %x, %r, %n : (tensor<1x1280xf32>, tensor<f32>, none) -> tensor<1x1000xf32>

// CHECK: onnx.Dropout: result #0 has type tensor<1x1000xf32>, but the operands give tensor<1x1280xf32>

// -----

// Training-mode dropout is not modelled; a run-time flag could turn it on.
%x = "test.op"() : () -> tensor<1x1280xf32>
%t = "test.op"() : () -> tensor<i1>
%n = onnx.None
%y = onnx.Dropout %x, %n, %t : (tensor<1x1280xf32>, none, tensor<i1>) -> tensor<1x1280xf32>

// CHECK: onnx.Dropout: training_mode is not supported (it must be absent or a constant false)

// -----

// MaxPool takes 8-bit integers, AveragePool does not.
%x = "test.op"() : () -> tensor<1x4x8x8xui8>
%y = onnx.AveragePool %x {kernel_shape = array<i64: 2, 2>} : (tensor<1x4x8x8xui8>) -> tensor<1x4x7x7xui8>

// CHECK: Unexpected attribute ui8

// -----

// --- Reductions ----------------------------------------------------------------

%x = "test.op"() : () -> tensor<1x1024x7x7xf32>
%axes = onnx.Constant {value = dense<[2, 4]> : tensor<2xi64>} : tensor<2xi64>
%y = onnx.ReduceMean %x, %axes : (tensor<1x1024x7x7xf32>, tensor<2xi64>) -> tensor<1x1024x1x1xf32>

// CHECK: onnx.ReduceMean: axes[1] = 4, must be in [-4, 3] for rank 4

// -----

// keepdims defaults to 1.
%x = "test.op"() : () -> tensor<1x1024x7x7xf32>
%axes = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : tensor<2xi64>
%y = onnx.ReduceSum %x, %axes : (tensor<1x1024x7x7xf32>, tensor<2xi64>) -> tensor<1x1024xf32>

// CHECK: onnx.ReduceSum: result #0 has type tensor<1x1024xf32>, but the operands give tensor<1x1024x1x1xf32>

// -----

%x = "test.op"() : () -> tensor<2x3x4xf32>
%axes = onnx.Constant {value = dense<1> : tensor<1x1xi64>} : tensor<1x1xi64>
%y = onnx.ReduceMax %x, %axes : (tensor<2x3x4xf32>, tensor<1x1xi64>) -> tensor<2x1x4xf32>

// CHECK: onnx.ReduceMax: axes must be 1-D

// -----

// Attribute ranges are checked whatever the shapes: here the batch is dynamic, so no
// shape rule runs, and a kernel of 0 is still caught.
%x = "test.op"() : () -> tensor<?x2x4x4xf32>
%y = onnx.MaxPool %x {kernel_shape = array<i64: 0, 2>} : (tensor<?x2x4x4xf32>) -> tensor<?x2x4x3xf32>

// CHECK: onnx.MaxPool: kernel_shape[0] = 0, must be >= 1

// -----

// Pads stay below 2^31: the device kernels index with 32-bit ints.
%x = "test.op"() : () -> tensor<1x2x4x4xf32>
%y = onnx.MaxPool %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: 1099511627776, 0, 0, 0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x3xf32>

// CHECK: onnx.MaxPool: pads[0] = 1099511627776, must be < 2147483648

// -----

%x = "test.op"() : () -> tensor<1x2x4x4xf32>
%y = onnx.AveragePool %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, -1, 0, 0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x2xf32>

// CHECK: onnx.AveragePool: pads[1] = -1, must be >= 0

// -----

// A pool's pad is narrower than its window, else whole windows read padding only.
%x = "test.op"() : () -> tensor<1x2x4x4xf32>
%y = onnx.MaxPool %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 2, 0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x5x3xf32>

// CHECK: onnx.MaxPool: pads[2] = 2, must be < 2, the extent of kernel_shape[0]

// -----

%x = "test.op"() : () -> tensor<1x2x4x4xf32>
%y = onnx.MaxPool %x {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x3xf32>

// CHECK: onnx.MaxPool: dilations[1] = 0, must be >= 1

// -----

%x = "test.op"() : () -> tensor<1x2x4x4xf32>
%w = "test.op"() : () -> tensor<2x2x1x1xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n {group = 0 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32>

// CHECK: onnx.Conv: group = 0, must be >= 1

// -----

// The channel count alone decides it, whatever the other dims.
%x = "test.op"() : () -> tensor<?x2x?x?xf32>
%w = "test.op"() : () -> tensor<3x1x1x1xf32>
%n = onnx.None
%y = onnx.Conv %x, %w, %n {group = 3 : i64} : (tensor<?x2x?x?xf32>, tensor<3x1x1x1xf32>, none) -> tensor<?x3x?x?xf32>

// CHECK: onnx.Conv: group = 3, must divide the 2 input channels

// -----

%x = "test.op"() : () -> tensor<1x2x4x4xf32>
%w = "test.op"() : () -> tensor<2x2x1x1xf32>
%n = onnx.None
%y = onnx.ConvTranspose %x, %w, %n {output_padding = array<i64: -1, 0>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x4xf32>

// CHECK: onnx.ConvTranspose: output_padding[0] = -1, must be >= 0
