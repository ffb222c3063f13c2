// RUN: mobile-opt %s --split-input-file --verify-diagnostics | filecheck %s

%x = "test.op"() : () -> tensor<1x3x32x32xf32>
%w = "test.op"() : () -> tensor<8x3x3x3xf32>
%n = onnx.None
%y = onnx.FusedConv %x, %w, %n {activation = "Swish"} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>, none) -> tensor<1x8x30x30xf32>

// CHECK: onnx.FusedConv: unknown activation 'Swish'

// -----

// LeakyRelu needs its alpha.
%x = "test.op"() : () -> tensor<1x3x32x32xf32>
%w = "test.op"() : () -> tensor<8x3x3x3xf32>
%n = onnx.None
%y = onnx.FusedConv %x, %w, %n {activation = "LeakyRelu"} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>, none) -> tensor<1x8x30x30xf32>

// CHECK: onnx.FusedConv: activation LeakyRelu takes 1 params, got 0

// -----

// The conv geometry is checked as for Conv.
%x = "test.op"() : () -> tensor<1x3x32x32xf32>
%w = "test.op"() : () -> tensor<8x3x3x3xf32>
%n = onnx.None
%y = onnx.FusedConv %x, %w, %n {activation = "Relu", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>, none) -> tensor<1x8x30x30xf32>

// CHECK: onnx.FusedConv: result #0 has type tensor<1x8x30x30xf32>, but the operands give tensor<1x8x32x32xf32>

// -----

%x = "test.op"() : () -> tensor<1x3x32x32xf32>
%w = "test.op"() : () -> tensor<8x3x3x3xf32>
%n = onnx.None
%y = "onnx.FusedConv"(%x, %w, %n) <{activation = "Clip", activation_params = array<i64: 0, 6>}> : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>, none) -> tensor<1x8x30x30xf32>

// CHECK: Expected attribute f32 but got i64

// -----

// Clip takes a min and a max.
%a = "test.op"() : () -> tensor<1x1280xf32>
%b = "test.op"() : () -> tensor<1000x1280xf32>
%n = onnx.None
%y = onnx.FusedGemm %a, %b, %n {activation = "Clip", activation_params = array<f32: 6.000000e+00>, transB = 1 : i64} : (tensor<1x1280xf32>, tensor<1000x1280xf32>, none) -> tensor<1x1000xf32>

// CHECK: onnx.FusedGemm: activation Clip takes 2 params, got 1

// -----

%a = "test.op"() : () -> tensor<1x1280xf32>
%b = "test.op"() : () -> tensor<1000x1280xf32>
%n = onnx.None
%y = onnx.FusedGemm %a, %b, %n {activation = "Relu"} : (tensor<1x1280xf32>, tensor<1000x1280xf32>, none) -> tensor<1x1000xf32>

// CHECK: onnx.FusedGemm: inner dimensions differ: 1280 vs 1000

// -----

// Activation names are ONNX op names, case and all.
%a = "test.op"() : () -> tensor<1x197x768xf32>
%b = "test.op"() : () -> tensor<768x3072xf32>
%n = onnx.None
%y = onnx.FusedMatMul %a, %b, %n {activation = "gelu"} : (tensor<1x197x768xf32>, tensor<768x3072xf32>, none) -> tensor<1x197x3072xf32>

// CHECK: onnx.FusedMatMul: unknown activation 'gelu'

// -----

// Sigmoid takes no params.
%a = "test.op"() : () -> tensor<1x197x768xf32>
%b = "test.op"() : () -> tensor<768x3072xf32>
%n = onnx.None
%y = onnx.FusedMatMul %a, %b, %n {activation = "Sigmoid", activation_params = array<f32: 1.000000e+00>} : (tensor<1x197x768xf32>, tensor<768x3072xf32>, none) -> tensor<1x197x3072xf32>

// CHECK: onnx.FusedMatMul: activation Sigmoid takes 0 params, got 1

// -----

%a = "test.op"() : () -> tensor<1x197x768xf32>
%b = "test.op"() : () -> tensor<768x3072xf32>
%bias = "test.op"() : () -> tensor<768xf32>
%y = onnx.FusedMatMul %a, %b, %bias {activation = "Gelu"} : (tensor<1x197x768xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x197x3072xf32>

// CHECK: onnx.FusedMatMul: shapes [1, 197, 3072] and [768] do not broadcast

// -----

// A bias that broadcasts both ways would grow the product: it must broadcast to it.
%a = "test.op"() : () -> tensor<197x768xf32>
%b = "test.op"() : () -> tensor<768x3072xf32>
%bias = "test.op"() : () -> tensor<2x1x3072xf32>
%y = onnx.FusedMatMul %a, %b, %bias : (tensor<197x768xf32>, tensor<768x3072xf32>, tensor<2x1x3072xf32>) -> tensor<197x3072xf32>

// CHECK: onnx.FusedMatMul: Bias [2, 1, 3072] does not broadcast to [197, 3072]
