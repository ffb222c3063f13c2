// RUN: mobile-opt %s --split-input-file --verify-diagnostics | filecheck %s

%x = "test.op"() : () -> tensor<1x3x4x4xf32>
%y = onnx.Relu %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x5xf32>

// CHECK: onnx.Relu: result #0 has type tensor<1x3x4x5xf32>, but the operands give tensor<1x3x4x4xf32>

// -----

%x = "test.op"() : () -> tensor<8xf32>
%y = onnx.LeakyRelu %x {alpha = 1 : i64} : (tensor<8xf32>) -> tensor<8xf32>

// CHECK: 1 : i64 should be of base attribute float

// -----

// Float-only activations reject integer tensors.
%x = "test.op"() : () -> tensor<8xi32>
%y = "onnx.Sigmoid"(%x) : (tensor<8xi32>) -> tensor<8xi32>

// CHECK:      operand 'X' at position 0 does not verify:
// CHECK-NEXT: Unexpected attribute i32

// -----

%x = "test.op"() : () -> tensor<2x8xf16>
%y = onnx.Tanh %x : (tensor<2x8xf16>) -> tensor<2x8xf32>

// CHECK: onnx.Tanh: result #0 has type tensor<2x8xf32>, but the operands give tensor<2x8xf16>

// -----

%x = "test.op"() : () -> tensor<2x8xf32>
%y = onnx.Erf %x : (tensor<2x8xf32>) -> tensor<16xf32>

// CHECK: onnx.Erf: result #0 has type tensor<16xf32>, but the operands give tensor<2x8xf32>

// -----

%x = "test.op"() : () -> tensor<2x8xf32>
%y = onnx.Gelu %x {approximate = "fast"} : (tensor<2x8xf32>) -> tensor<2x8xf32>

// CHECK: onnx.Gelu: unknown approximate 'fast'

// -----

%x = "test.op"() : () -> tensor<2x8xf64>
%y = onnx.HardSigmoid %x {alpha = 2.000000e-01 : f32} : (tensor<2x8xf64>) -> tensor<2x8xf32>

// CHECK: onnx.HardSigmoid: result #0 has type tensor<2x8xf32>, but the operands give tensor<2x8xf64>

// -----

%x = "test.op"() : () -> tensor<1x16x8x8xf32>
%y = onnx.HardSwish %x : (tensor<1x16x8x8xf32>) -> tensor<1x16x8xf32>

// CHECK: onnx.HardSwish: result #0 has type tensor<1x16x8xf32>, but the operands give tensor<1x16x8x8xf32>

// -----

%x = "test.op"() : () -> tensor<8xf32>
%y = onnx.Shrink %x {lambd = "0.5"} : (tensor<8xf32>) -> tensor<8xf32>

// CHECK: "0.5" should be of base attribute float

// -----

%x = "test.op"() : () -> tensor<8xi32>
%y = onnx.Sign %x : (tensor<8xi32>) -> tensor<8xi64>

// CHECK: onnx.Sign: result #0 has type tensor<8xi64>, but the operands give tensor<8xi32>

// -----

%x = "test.op"() : () -> tensor<4x5xi64>
%y = onnx.Abs %x : (tensor<4x5xi64>) -> tensor<5x4xi64>

// CHECK: onnx.Abs: result #0 has type tensor<5x4xi64>, but the operands give tensor<4x5xi64>

// -----

%x = "test.op"() : () -> tensor<3xf32>
%y = onnx.Neg %x : (tensor<3xf32>) -> tensor<f32>

// CHECK: onnx.Neg: result #0 has type tensor<f32>, but the operands give tensor<3xf32>

// -----

%x = "test.op"() : () -> tensor<3xi64>
%y = "onnx.Exp"(%x) : (tensor<3xi64>) -> tensor<3xi64>

// CHECK:      operand 'X' at position 0 does not verify:
// CHECK-NEXT: Unexpected attribute i64

// -----

%x = "test.op"() : () -> tensor<3x7xf32>
%y = onnx.Log %x : (tensor<3x7xf32>) -> tensor<3x1xf32>

// CHECK: onnx.Log: result #0 has type tensor<3x1xf32>, but the operands give tensor<3x7xf32>

// -----

%x = "test.op"() : () -> tensor<3x7xf32>
%y = onnx.Sqrt %x : (tensor<3x7xf32>) -> tensor<3x7xf16>

// CHECK: onnx.Sqrt: result #0 has type tensor<3x7xf16>, but the operands give tensor<3x7xf32>

// -----

%x = "test.op"() : () -> tensor<3xi32>
%y = "onnx.Reciprocal"(%x) : (tensor<3xi32>) -> tensor<3xi32>

// CHECK:      operand 'X' at position 0 does not verify:
// CHECK-NEXT: Unexpected attribute i32

// -----

%x = "test.op"() : () -> tensor<3xi1>
%y = onnx.Identity %x : (tensor<3xi1>) -> tensor<3xi8>

// CHECK: onnx.Identity: result #0 has type tensor<3xi8>, but the operands give tensor<3xi1>

// -----

// Broadcasting aligns trailing dims: 4 against 3 does not broadcast.
%x = "test.op"() : () -> tensor<1x3x4x4xf32>
%b = "test.op"() : () -> tensor<4x1x1xf32>
%y = onnx.Add %x, %b : (tensor<1x3x4x4xf32>, tensor<4x1x1xf32>) -> tensor<1x3x4x4xf32>

// CHECK: onnx.Add: shapes [1, 3, 4, 4] and [4, 1, 1] do not broadcast

// -----

%a = "test.op"() : () -> tensor<4xf16>
%b = "test.op"() : () -> tensor<4xf32>
%y = onnx.Sub %a, %b : (tensor<4xf16>, tensor<4xf32>) -> tensor<4xf16>

// CHECK: onnx.Sub: operands mix element types f16, f32

// -----

// [2, 1] * [1, 3] broadcasts both ways to [2, 3].
%a = "test.op"() : () -> tensor<2x1xf32>
%b = "test.op"() : () -> tensor<1x3xf32>
%y = onnx.Mul %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x1xf32>

// CHECK: onnx.Mul: result #0 has type tensor<2x1xf32>, but the operands give tensor<2x3xf32>

// -----

%a = "test.op"() : () -> tensor<6xi32>
%b = "test.op"() : () -> tensor<i32>
%y = onnx.Div %a, %b : (tensor<6xi32>, tensor<i32>) -> tensor<i32>

// CHECK: onnx.Div: result #0 has type tensor<i32>, but the operands give tensor<6xi32>

// -----

// The result of Pow has the base's element type, not the exponent's.
%a = "test.op"() : () -> tensor<2x3xf32>
%b = "test.op"() : () -> tensor<i64>
%y = onnx.Pow %a, %b : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xi64>

// CHECK: onnx.Pow: result #0 has type tensor<2x3xi64>, but the operands give tensor<2x3xf32>

// -----

%y = onnx.Sum : () -> tensor<f32>

// CHECK: onnx.Sum: needs at least one input

// -----

%a = "test.op"() : () -> tensor<2x1xf32>
%b = "test.op"() : () -> tensor<1x3xf32>
%c = "test.op"() : () -> tensor<2xf32>
%y = onnx.Max %a, %b, %c : (tensor<2x1xf32>, tensor<1x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>

// CHECK: onnx.Max: shapes [2, 1] and [1, 3] and [2] do not broadcast

// -----

%a = "test.op"() : () -> tensor<4xi32>
%b = "test.op"() : () -> tensor<4xi64>
%y = onnx.Min %a, %b : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi32>

// CHECK: onnx.Min: operands mix element types i32, i64

// -----

// Clip's bounds are scalars, not per-channel tensors.
%x = "test.op"() : () -> tensor<1x3x4x4xf32>
%lo = "test.op"() : () -> tensor<3xf32>
%n = onnx.None
%y = onnx.Clip %x, %lo, %n : (tensor<1x3x4x4xf32>, tensor<3xf32>, none) -> tensor<1x3x4x4xf32>

// CHECK: onnx.Clip: min and max must be scalars

// -----

%x = "test.op"() : () -> tensor<1x3x4x4xf32>
%lo = "test.op"() : () -> tensor<f16>
%n = onnx.None
%y = onnx.Clip %x, %lo, %n : (tensor<1x3x4x4xf32>, tensor<f16>, none) -> tensor<1x3x4x4xf32>

// CHECK: onnx.Clip: operands mix element types f16, f32

// -----

%x = "test.op"() : () -> tensor<2x3xf32>
%y = onnx.Cast %x {to = i64} : (tensor<2x3xf32>) -> tensor<2x3xi32>

// CHECK: onnx.Cast: result #0 has type tensor<2x3xi32>, but the operands give tensor<2x3xi64>

// -----

%x = "test.op"() : () -> tensor<2x3xf32>
%y = onnx.Cast %x {to = "f16"} : (tensor<2x3xf32>) -> tensor<2x3xf16>

// CHECK: onnx.Cast: 'to' must be a supported element type, got "f16"

// -----

%x = "test.op"() : () -> tensor<2x3xf32>
%y = onnx.Cast %x {to = index} : (tensor<2x3xf32>) -> tensor<2x3xindex>

// CHECK: onnx.Cast: 'to' must be a supported element type, got index

// -----

// Comparisons give booleans.
%a = "test.op"() : () -> tensor<2x3xf32>
%y = "onnx.Equal"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>

// CHECK:      result 'C' at position 0 does not verify:
// CHECK-NEXT: Expected attribute i1 but got f32

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%b = "test.op"() : () -> tensor<2x3xi32>
%y = onnx.Less %a, %b : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x3xi1>

// CHECK: onnx.Less: operands mix element types f32, i32

// -----

%a = "test.op"() : () -> tensor<2x3xf32>
%b = "test.op"() : () -> tensor<4xf32>
%y = onnx.LessOrEqual %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xi1>

// CHECK: onnx.LessOrEqual: shapes [2, 3] and [4] do not broadcast

// -----

%a = "test.op"() : () -> tensor<2x3xi64>
%y = onnx.Greater %a, %a : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<3xi1>

// CHECK: onnx.Greater: result #0 has type tensor<3xi1>, but the operands give tensor<2x3xi1>

// -----

%a = "test.op"() : () -> tensor<2x3xi64>
%b = "test.op"() : () -> tensor<3x1xi64>
%y = onnx.GreaterOrEqual %a, %b : (tensor<2x3xi64>, tensor<3x1xi64>) -> tensor<2x3xi1>

// CHECK: onnx.GreaterOrEqual: shapes [2, 3] and [3, 1] do not broadcast

// -----

// Boolean logic takes booleans only.
%a = "test.op"() : () -> tensor<4xi32>
%y = "onnx.And"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>

// CHECK:      operand 'A' at position 0 does not verify:
// CHECK-NEXT: Expected attribute i1 but got i32

// -----

%a = "test.op"() : () -> tensor<4xi1>
%b = "test.op"() : () -> tensor<4xf32>
%y = "onnx.Or"(%a, %b) : (tensor<4xi1>, tensor<4xf32>) -> tensor<4xi1>

// CHECK:      operand 'B' at position 1 does not verify:
// CHECK-NEXT: Expected attribute i1 but got f32

// -----

%a = "test.op"() : () -> tensor<2x4xi1>
%b = "test.op"() : () -> tensor<3x1xi1>
%y = onnx.Xor %a, %b : (tensor<2x4xi1>, tensor<3x1xi1>) -> tensor<3x4xi1>

// CHECK: onnx.Xor: shapes [2, 4] and [3, 1] do not broadcast

// -----

%a = "test.op"() : () -> tensor<4xi1>
%y = onnx.Not %a : (tensor<4xi1>) -> tensor<5xi1>

// CHECK: onnx.Not: result #0 has type tensor<5xi1>, but the operands give tensor<4xi1>

// -----

%a = "test.op"() : () -> tensor<4xi32>
%y = "onnx.IsNaN"(%a) : (tensor<4xi32>) -> tensor<4xi1>

// CHECK:      operand 'X' at position 0 does not verify:
// CHECK-NEXT: Unexpected attribute i32

// -----

%a = "test.op"() : () -> tensor<4xf32>
%y = onnx.IsInf %a : (tensor<4xf32>) -> tensor<2x2xi1>

// CHECK: onnx.IsInf: result #0 has type tensor<2x2xi1>, but the operands give tensor<4xi1>

// -----

// Where: a boolean condition, X and Y of one element type, all three broadcast.
%c = "test.op"() : () -> tensor<4xf32>
%x = "test.op"() : () -> tensor<4xf32>
%y = "onnx.Where"(%c, %x, %x) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

// CHECK:      operand 'condition' at position 0 does not verify:
// CHECK-NEXT: Expected attribute i1 but got f32

// -----

%c = "test.op"() : () -> tensor<4xi1>
%x = "test.op"() : () -> tensor<4xf32>
%z = "test.op"() : () -> tensor<4xi64>
%y = onnx.Where %c, %x, %z : (tensor<4xi1>, tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>

// CHECK: onnx.Where: operands mix element types f32, i64

// -----

%c = "test.op"() : () -> tensor<3x1xi1>
%x = "test.op"() : () -> tensor<4xf32>
%y = onnx.Where %c, %x, %x : (tensor<3x1xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

// CHECK: onnx.Where: result #0 has type tensor<4xf32>, but the operands give tensor<3x4xf32>

// -----

// Mod: floats need fmod = 1 (until opset 28); fmod is 0 or 1.
%a = "test.op"() : () -> tensor<4xf32>
%y = onnx.Mod %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

// CHECK: onnx.Mod: floating-point operands need fmod = 1 (fmod = 0 on floats is opset 28's)

// -----

%a = "test.op"() : () -> tensor<4xi64>
%y = onnx.Mod %a, %a {fmod = 2 : i64} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>

// CHECK: onnx.Mod: fmod is 0 or 1, not 2
