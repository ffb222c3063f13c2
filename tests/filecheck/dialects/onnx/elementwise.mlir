// RUN: mobile-opt %s | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s

// Elementwise ops: activations, unary math, broadcasting binaries, Clip, Cast,
// comparisons and boolean logic, Where and Mod.

// CHECK:      builtin.module {

%x = "test.op"() : () -> tensor<1x3x4x4xf32>
%h = "test.op"() : () -> tensor<2x8xf16>
%i = "test.op"() : () -> tensor<2x3xi32>
%n = onnx.None
// CHECK-NEXT:   %x = "test.op"() : () -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %h = "test.op"() : () -> tensor<2x8xf16>
// CHECK-NEXT:   %i = "test.op"() : () -> tensor<2x3xi32>
// CHECK-NEXT:   %n = onnx.None

// Float activations; non-default attributes print, defaults (HardSigmoid's beta
// 0.5) do not.
%relu = onnx.Relu %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%relu_h = onnx.Relu %h : (tensor<2x8xf16>) -> tensor<2x8xf16>
%leaky = onnx.LeakyRelu %x {alpha = 1.000000e-01 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%leaky_default = onnx.LeakyRelu %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%sigmoid = onnx.Sigmoid %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%tanh = onnx.Tanh %h : (tensor<2x8xf16>) -> tensor<2x8xf16>
%erf = onnx.Erf %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%gelu = onnx.Gelu %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%gelu_tanh = onnx.Gelu %x {approximate = "tanh"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%hsig = onnx.HardSigmoid %x {alpha = 1.666670e-01 : f32, beta = 5.000000e-01 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%hswish = onnx.HardSwish %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %relu = onnx.Relu %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %relu_h = onnx.Relu %h : (tensor<2x8xf16>) -> tensor<2x8xf16>
// CHECK-NEXT:   %leaky = onnx.LeakyRelu %x {alpha = 1.000000e-01 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %leaky_default = onnx.LeakyRelu %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %sigmoid = onnx.Sigmoid %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %tanh = onnx.Tanh %h : (tensor<2x8xf16>) -> tensor<2x8xf16>
// CHECK-NEXT:   %erf = onnx.Erf %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %gelu = onnx.Gelu %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %gelu_tanh = onnx.Gelu %x {approximate = "tanh"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %hsig = onnx.HardSigmoid %x {alpha = 1.666670e-01 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %hswish = onnx.HardSwish %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>

// Unary math; Sign, Abs, Neg and Identity also take integers, Shrink any number.
%shrink = onnx.Shrink %x {bias = 5.000000e-01 : f32, lambd = 1.000000e+00 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%sign = onnx.Sign %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
%abs = onnx.Abs %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
%neg = onnx.Neg %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%exp = onnx.Exp %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%log = onnx.Log %h : (tensor<2x8xf16>) -> tensor<2x8xf16>
%sqrt = onnx.Sqrt %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%recip = onnx.Reciprocal %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%ident = onnx.Identity %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:   %shrink = onnx.Shrink %x {bias = 5.000000e-01 : f32, lambd = 1.000000e+00 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %sign = onnx.Sign %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:   %abs = onnx.Abs %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:   %neg = onnx.Neg %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %exp = onnx.Exp %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %log = onnx.Log %h : (tensor<2x8xf16>) -> tensor<2x8xf16>
// CHECK-NEXT:   %sqrt = onnx.Sqrt %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %recip = onnx.Reciprocal %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %ident = onnx.Identity %i : (tensor<2x3xi32>) -> tensor<2x3xi32>

// Multidirectional broadcasting: per-channel bias, rank promotion on both sides,
// a scalar operand, and Pow's exponent of another element type.
%bias = "test.op"() : () -> tensor<3x1x1xf32>
%row = "test.op"() : () -> tensor<4xf32>
%col = "test.op"() : () -> tensor<2x1xf32>
%s = "test.op"() : () -> tensor<f32>
%irow = "test.op"() : () -> tensor<3xi32>
%e = "test.op"() : () -> tensor<i64>
// CHECK-NEXT:   %bias = "test.op"() : () -> tensor<3x1x1xf32>
// CHECK-NEXT:   %row = "test.op"() : () -> tensor<4xf32>
// CHECK-NEXT:   %col = "test.op"() : () -> tensor<2x1xf32>
// CHECK-NEXT:   %s = "test.op"() : () -> tensor<f32>
// CHECK-NEXT:   %irow = "test.op"() : () -> tensor<3xi32>
// CHECK-NEXT:   %e = "test.op"() : () -> tensor<i64>

%add = onnx.Add %x, %bias : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
%sub = onnx.Sub %row, %col : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
%mul = onnx.Mul %s, %x : (tensor<f32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
%div = onnx.Div %i, %irow : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
%pow = onnx.Pow %x, %e : (tensor<1x3x4x4xf32>, tensor<i64>) -> tensor<1x3x4x4xf32>
%pow_b = onnx.Pow %s, %row : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:   %add = onnx.Add %x, %bias : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %sub = onnx.Sub %row, %col : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:   %mul = onnx.Mul %s, %x : (tensor<f32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %div = onnx.Div %i, %irow : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:   %pow = onnx.Pow %x, %e : (tensor<1x3x4x4xf32>, tensor<i64>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %pow_b = onnx.Pow %s, %row : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>

// Variadic ops broadcast all their inputs; one input is allowed.
%a3 = "test.op"() : () -> tensor<2x1x4xf32>
%b3 = "test.op"() : () -> tensor<3x1xf32>
%sum1 = onnx.Sum %row : (tensor<4xf32>) -> tensor<4xf32>
%sum3 = onnx.Sum %a3, %b3, %row : (tensor<2x1x4xf32>, tensor<3x1xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
%max = onnx.Max %x, %bias : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
%min = onnx.Min %i, %irow, %i : (tensor<2x3xi32>, tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:   %a3 = "test.op"() : () -> tensor<2x1x4xf32>
// CHECK-NEXT:   %b3 = "test.op"() : () -> tensor<3x1xf32>
// CHECK-NEXT:   %sum1 = onnx.Sum %row : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:   %sum3 = onnx.Sum %a3, %b3, %row : (tensor<2x1x4xf32>, tensor<3x1xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:   %max = onnx.Max %x, %bias : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %min = onnx.Min %i, %irow, %i : (tensor<2x3xi32>, tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>

// Clip (ReLU6 and one-sided), its bounds scalars or absent.
%zero = onnx.Constant {value = dense<0.000000e+00> : tensor<f32>} : tensor<f32>
%six = onnx.Constant {value = dense<6.000000e+00> : tensor<f32>} : tensor<f32>
%relu6 = onnx.Clip %x, %zero, %six : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x3x4x4xf32>
%clip_max = onnx.Clip %x, %n, %six : (tensor<1x3x4x4xf32>, none, tensor<f32>) -> tensor<1x3x4x4xf32>
%clip_none = onnx.Clip %i, %n, %n : (tensor<2x3xi32>, none, none) -> tensor<2x3xi32>
// CHECK-NEXT:   %zero = onnx.Constant {value = dense<0.000000e+00> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:   %six = onnx.Constant {value = dense<6.000000e+00> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:   %relu6 = onnx.Clip %x, %zero, %six : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %clip_max = onnx.Clip %x, %n, %six : (tensor<1x3x4x4xf32>, none, tensor<f32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:   %clip_none = onnx.Clip %i, %n, %n : (tensor<2x3xi32>, none, none) -> tensor<2x3xi32>

// Cast keeps the shape and takes `to`'s element type.
%to_f16 = onnx.Cast %x {to = f16} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf16>
%to_i64 = onnx.Cast %x {to = i64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xi64>
%to_f32 = onnx.Cast %i {to = f32} : (tensor<2x3xi32>) -> tensor<2x3xf32>
%to_bool = onnx.Cast %i {to = i1} : (tensor<2x3xi32>) -> tensor<2x3xi1>
%to_u8 = onnx.Cast %h {to = ui8} : (tensor<2x8xf16>) -> tensor<2x8xui8>
// CHECK-NEXT:   %to_f16 = onnx.Cast %x {to = f16} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf16>
// CHECK-NEXT:   %to_i64 = onnx.Cast %x {to = i64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xi64>
// CHECK-NEXT:   %to_f32 = onnx.Cast %i {to = f32} : (tensor<2x3xi32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %to_bool = onnx.Cast %i {to = i1} : (tensor<2x3xi32>) -> tensor<2x3xi1>
// CHECK-NEXT:   %to_u8 = onnx.Cast %h {to = ui8} : (tensor<2x8xf16>) -> tensor<2x8xui8>

// Comparisons give booleans; And/Or/Xor/Not take booleans; IsNaN/IsInf test floats.
%b = "test.op"() : () -> tensor<2x3xi1>
%brow = "test.op"() : () -> tensor<3xi1>
// CHECK-NEXT:   %b = "test.op"() : () -> tensor<2x3xi1>
// CHECK-NEXT:   %brow = "test.op"() : () -> tensor<3xi1>
%eq = onnx.Equal %i, %irow : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi1>
%eq_b = onnx.Equal %b, %brow : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
%lt = onnx.Less %row, %col : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xi1>
%le = onnx.LessOrEqual %x, %s : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xi1>
%gt = onnx.Greater %h, %h : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x8xi1>
%ge = onnx.GreaterOrEqual %i, %i : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
%and = onnx.And %b, %brow : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
%or = onnx.Or %b, %b : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
%xor = onnx.Xor %brow, %b : (tensor<3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
%not = onnx.Not %b : (tensor<2x3xi1>) -> tensor<2x3xi1>
%isnan = onnx.IsNaN %h : (tensor<2x8xf16>) -> tensor<2x8xi1>
%isinf = onnx.IsInf %x {detect_negative = 0 : i64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xi1>
// CHECK-NEXT:   %eq = onnx.Equal %i, %irow : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi1>
// CHECK-NEXT:   %eq_b = onnx.Equal %b, %brow : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT:   %lt = onnx.Less %row, %col : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xi1>
// CHECK-NEXT:   %le = onnx.LessOrEqual %x, %s : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xi1>
// CHECK-NEXT:   %gt = onnx.Greater %h, %h : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x8xi1>
// CHECK-NEXT:   %ge = onnx.GreaterOrEqual %i, %i : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
// CHECK-NEXT:   %and = onnx.And %b, %brow : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT:   %or = onnx.Or %b, %b : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT:   %xor = onnx.Xor %brow, %b : (tensor<3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT:   %not = onnx.Not %b : (tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT:   %isnan = onnx.IsNaN %h : (tensor<2x8xf16>) -> tensor<2x8xi1>
// CHECK-NEXT:   %isinf = onnx.IsInf %x {detect_negative = 0 : i64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xi1>

// Where broadcasts its three operands; Mod's fmod = 0 (the default) takes integers.
%where = onnx.Where %brow, %col, %s : (tensor<3xi1>, tensor<2x1xf32>, tensor<f32>) -> tensor<2x3xf32>
%where_i = onnx.Where %b, %i, %irow : (tensor<2x3xi1>, tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
%mod = onnx.Mod %i, %irow : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
%fmod = onnx.Mod %row, %col {fmod = 1 : i64} : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:   %where = onnx.Where %brow, %col, %s : (tensor<3xi1>, tensor<2x1xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %where_i = onnx.Where %b, %i, %irow : (tensor<2x3xi1>, tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:   %mod = onnx.Mod %i, %irow : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:   %fmod = onnx.Mod %row, %col {fmod = 1 : i64} : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>

// A dynamic dim matches any size.
%d = "test.op"() : () -> tensor<?x3xf32>
%r3 = "test.op"() : () -> tensor<3xf32>
%add_dyn = onnx.Add %d, %r3 : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %d = "test.op"() : () -> tensor<?x3xf32>
// CHECK-NEXT:   %r3 = "test.op"() : () -> tensor<3xf32>
// CHECK-NEXT:   %add_dyn = onnx.Add %d, %r3 : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>

// CHECK-NEXT: }
