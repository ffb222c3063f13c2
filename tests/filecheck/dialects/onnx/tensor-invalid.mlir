// RUN: mobile-opt %s --split-input-file --verify-diagnostics | filecheck %s

// --- Reshape -------------------------------------------------------------------

%x = "test.op"() : () -> tensor<2x3x4xf32>
%s = onnx.Constant {value = dense<[-1, -1]> : tensor<2xi64>} : tensor<2xi64>
%y = onnx.Reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>

// CHECK: onnx.Reshape: shape = [-1, -1], must have at most one -1

// -----

%x = "test.op"() : () -> tensor<2x3x4xf32>
%s = onnx.Constant {value = dense<[5, -1]> : tensor<2xi64>} : tensor<2xi64>
%y = onnx.Reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<5x5xf32>

// CHECK: onnx.Reshape: cannot reshape [2, 3, 4] into [5, -1]

// -----

// 0 copies dim 0 (2), so -1 is 12.
%x = "test.op"() : () -> tensor<2x3x4xf32>
%s = onnx.Constant {value = dense<[0, -1]> : tensor<2xi64>} : tensor<2xi64>
%y = onnx.Reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>

// CHECK: onnx.Reshape: result #0 has type tensor<6x4xf32>, but the operands give tensor<2x12xf32>

// -----

%x = "test.op"() : () -> tensor<2x3xf32>
%s = onnx.Constant {value = dense<[6, 1, 0]> : tensor<3xi64>} : tensor<3xi64>
%y = onnx.Reshape %x, %s : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<6x1x1xf32>

// CHECK: onnx.Reshape: 0 in Reshape shape has no input dimension to copy

// -----

%x = "test.op"() : () -> tensor<2x3xf32>
%s = "test.op"() : () -> tensor<2xf32>
%y = "onnx.Reshape"(%x, %s) : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<3x2xf32>

// CHECK:      operand 'shape' at position 1 does not verify:
// CHECK-NEXT: f32 should be of base attribute integer_type

// -----

// --- Transpose and Flatten -----------------------------------------------------

%x = "test.op"() : () -> tensor<1x3x224x224xf32>
%y = onnx.Transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<1x3x224x224xf32>) -> tensor<1x224x3xf32>

// CHECK: onnx.Transpose: perm = [0, 2, 1], must have 4 values for rank 4

// -----

%x = "test.op"() : () -> tensor<1x3x224x224xf32>
%y = onnx.Transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x3x224x224xf32>) -> tensor<1x3x224x224xf32>

// CHECK: onnx.Transpose: result #0 has type tensor<1x3x224x224xf32>, but the operands give tensor<1x224x224x3xf32>

// -----

// axis -1 on rank 4 is axis 3: (2 * 3 * 4, 5).
%x = "test.op"() : () -> tensor<2x3x4x5xf32>
%y = onnx.Flatten %x {axis = -1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<120x1xf32>

// CHECK: onnx.Flatten: result #0 has type tensor<120x1xf32>, but the operands give tensor<24x5xf32>

// -----

%x = "test.op"() : () -> tensor<2x3x4xf32>
%y = onnx.Flatten %x {axis = 4 : i64} : (tensor<2x3x4xf32>) -> tensor<24x1xf32>

// CHECK: onnx.Flatten: axis = 4, must be in [-3, 3] for rank 3

// -----

// --- Squeeze and Unsqueeze -----------------------------------------------------

%x = "test.op"() : () -> tensor<1x3x1x5xf32>
%a = onnx.Constant {value = dense<[0, 1]> : tensor<2xi64>} : tensor<2xi64>
%y = onnx.Squeeze %x, %a : (tensor<1x3x1x5xf32>, tensor<2xi64>) -> tensor<1x5xf32>

// CHECK: onnx.Squeeze: cannot squeeze axis 1 of size 3

// -----

// Without axes every dim of size 1 goes.
%x = "test.op"() : () -> tensor<1x3x1x5xf32>
%n = onnx.None
%y = onnx.Squeeze %x, %n : (tensor<1x3x1x5xf32>, none) -> tensor<3x1x5xf32>

// CHECK: onnx.Squeeze: result #0 has type tensor<3x1x5xf32>, but the operands give tensor<3x5xf32>

// -----

%x = "test.op"() : () -> tensor<3x4xf32>
%a = onnx.Constant {value = dense<[1, -3]> : tensor<2xi64>} : tensor<2xi64>
%y = onnx.Unsqueeze %x, %a : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x1x1x4xf32>

// CHECK: onnx.Unsqueeze: axes = [1, -3], must name each axis once

// -----

%x = "test.op"() : () -> tensor<3x4xf32>
%a = onnx.Constant {value = dense<4> : tensor<1xi64>} : tensor<1xi64>
%y = onnx.Unsqueeze %x, %a : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<3x4x1xf32>

// CHECK: onnx.Unsqueeze: axes[0] = 4, must be in [-3, 2] for output rank 3

// -----

// --- Concat and Split ----------------------------------------------------------

%a = "test.op"() : () -> tensor<1x64x28x28xf32>
%b = "test.op"() : () -> tensor<1x32x14x14xf32>
%y = onnx.Concat %a, %b {axis = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<1x32x14x14xf32>) -> tensor<1x96x28x28xf32>

// CHECK: onnx.Concat: Concat inputs [[1, 64, 28, 28], [1, 32, 14, 14]] differ off axis 1

// -----

%a = "test.op"() : () -> tensor<3x4xf32>
%y = onnx.Concat %a, %a : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>

// CHECK: property 'axis' expected in operation 'onnx.Concat'

// -----

%a = "test.op"() : () -> tensor<1xi64>
%b = "test.op"() : () -> tensor<3xi32>
%y = onnx.Concat %a, %b {axis = 0 : i64} : (tensor<1xi64>, tensor<3xi32>) -> tensor<4xi64>

// CHECK: onnx.Concat: operands mix element types i32, i64

// -----

%x = "test.op"() : () -> tensor<1x12x4xf32>
%s = onnx.Constant {value = dense<[2, 4, 4]> : tensor<3xi64>} : tensor<3xi64>
%a, %b, %c = onnx.Split %x, %s {axis = 1 : i64} : (tensor<1x12x4xf32>, tensor<3xi64>) -> (tensor<1x2x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>)

// CHECK: onnx.Split: split = [2, 4, 4], must sum to 12, the size of axis 1

// -----

%x = "test.op"() : () -> tensor<1x12x4xf32>
%n = onnx.None
%a, %b = onnx.Split %x, %n {axis = 1 : i64, num_outputs = 3 : i64} : (tensor<1x12x4xf32>, none) -> (tensor<1x6x4xf32>, tensor<1x6x4xf32>)

// CHECK: onnx.Split: expected 3 results, got 2

// -----

// Parts of ceil(4 / 3) = 2 cover 4 in two parts, not three.
%x = "test.op"() : () -> tensor<4xf32>
%n = onnx.None
%a, %b, %c = onnx.Split %x, %n {num_outputs = 3 : i64} : (tensor<4xf32>, none) -> (tensor<2xf32>, tensor<1xf32>, tensor<1xf32>)

// CHECK: onnx.Split: cannot split 4 into 3 parts

// -----

%x = "test.op"() : () -> tensor<1x12x4xf32>
%s = onnx.Constant {value = dense<[6, 6]> : tensor<2xi64>} : tensor<2xi64>
%a, %b = onnx.Split %x, %s {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<1x12x4xf32>, tensor<2xi64>) -> (tensor<1x6x4xf32>, tensor<1x6x4xf32>)

// CHECK: onnx.Split: split and num_outputs cannot both be given

// -----

// A negative part would read as a dynamic dim and match any declared size.
%x = "test.op"() : () -> tensor<5xf32>
%s = onnx.Constant {value = dense<[6, -1]> : tensor<2xi64>} : tensor<2xi64>
%a, %b = onnx.Split %x, %s : (tensor<5xf32>, tensor<2xi64>) -> (tensor<6xf32>, tensor<3xf32>)

// CHECK: onnx.Split: split[1] = -1, must be >= 0

// -----

// --- Slice ---------------------------------------------------------------------

%x = "test.op"() : () -> tensor<10xf32>
%s = onnx.Constant {value = dense<0> : tensor<1xi64>} : tensor<1xi64>
%e = onnx.Constant {value = dense<10> : tensor<1xi64>} : tensor<1xi64>
%st = onnx.Constant {value = dense<0> : tensor<1xi64>} : tensor<1xi64>
%n = onnx.None
%y = onnx.Slice %x, %s, %e, %n, %st : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, none, tensor<1xi64>) -> tensor<10xf32>

// CHECK: onnx.Slice: steps[0] = 0, must not be 0

// -----

%x = "test.op"() : () -> tensor<4x4xf32>
%s = onnx.Constant {value = dense<0> : tensor<2xi64>} : tensor<2xi64>
%e = onnx.Constant {value = dense<2> : tensor<2xi64>} : tensor<2xi64>
%a = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : tensor<2xi64>
%n = onnx.None
%y = onnx.Slice %x, %s, %e, %a, %n : (tensor<4x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, none) -> tensor<4x2xf32>

// CHECK: onnx.Slice: axes = [1, -1], must name each axis once

// -----

%x = "test.op"() : () -> tensor<4x4xf32>
%s = onnx.Constant {value = dense<0> : tensor<2xi64>} : tensor<2xi64>
%e = onnx.Constant {value = dense<2> : tensor<1xi64>} : tensor<1xi64>
%n = onnx.None
%y = onnx.Slice %x, %s, %e, %n, %n : (tensor<4x4xf32>, tensor<2xi64>, tensor<1xi64>, none, none) -> tensor<2x2xf32>

// CHECK: onnx.Slice: starts, ends, axes and steps differ in length

// -----

// 8, 6, 4, 2: four elements.
%x = "test.op"() : () -> tensor<10xf32>
%s = onnx.Constant {value = dense<8> : tensor<1xi64>} : tensor<1xi64>
%e = onnx.Constant {value = dense<1> : tensor<1xi64>} : tensor<1xi64>
%st = onnx.Constant {value = dense<-2> : tensor<1xi64>} : tensor<1xi64>
%n = onnx.None
%y = onnx.Slice %x, %s, %e, %n, %st : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, none, tensor<1xi64>) -> tensor<3xf32>

// CHECK: onnx.Slice: result #0 has type tensor<3xf32>, but the operands give tensor<4xf32>

// -----

// --- Gather and Pad ------------------------------------------------------------

%x = "test.op"() : () -> tensor<2x3x4xf32>
%i = "test.op"() : () -> tensor<2xi64>
%y = onnx.Gather %x, %i {axis = 3 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x3x4x2xf32>

// CHECK: onnx.Gather: axis = 3, must be in [-3, 2] for rank 3

// -----

// A scalar index removes the gathered axis.
%x = "test.op"() : () -> tensor<1x197x768xf32>
%i = "test.op"() : () -> tensor<i64>
%y = onnx.Gather %x, %i {axis = 1 : i64} : (tensor<1x197x768xf32>, tensor<i64>) -> tensor<1x1x768xf32>

// CHECK: onnx.Gather: result #0 has type tensor<1x1x768xf32>, but the operands give tensor<1x768xf32>

// -----

%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%p = onnx.Constant {value = dense<1> : tensor<8xi64>} : tensor<8xi64>
%n = onnx.None
%y = onnx.Pad %x, %p, %n, %n {mode = "symmetric"} : (tensor<1x3x8x8xf32>, tensor<8xi64>, none, none) -> tensor<3x5x10x10xf32>

// CHECK: onnx.Pad: mode = 'symmetric', must be one of constant, reflect, edge, wrap

// -----

%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%p = onnx.Constant {value = dense<1> : tensor<4xi64>} : tensor<4xi64>
%n = onnx.None
%y = onnx.Pad %x, %p, %n, %n : (tensor<1x3x8x8xf32>, tensor<4xi64>, none, none) -> tensor<1x3x10x10xf32>

// CHECK: onnx.Pad: pads has 4 values for 4 axes

// -----

// Begins come first: [0, 0, 1, 1, 0, 0, 1, 1] pads H and W, not C.
%x = "test.op"() : () -> tensor<1x3x8x8xf32>
%p = onnx.Constant {value = dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>} : tensor<8xi64>
%n = onnx.None
%y = onnx.Pad %x, %p, %n, %n : (tensor<1x3x8x8xf32>, tensor<8xi64>, none, none) -> tensor<1x5x8x10xf32>

// CHECK: onnx.Pad: result #0 has type tensor<1x5x8x10xf32>, but the operands give tensor<1x3x10x10xf32>

// -----

%x = "test.op"() : () -> tensor<4xf32>
%p = onnx.Constant {value = dense<[-2, -3]> : tensor<2xi64>} : tensor<2xi64>
%n = onnx.None
%y = onnx.Pad %x, %p, %n, %n : (tensor<4xf32>, tensor<2xi64>, none, none) -> tensor<0xf32>

// CHECK: onnx.Pad: negative pads remove all of axis 0

// -----

// --- Resize --------------------------------------------------------------------

%x = "test.op"() : () -> tensor<1x3x10x10xf32>
%s = onnx.Constant {value = dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>} : tensor<4xf32>
%n = onnx.None
%y = onnx.Resize %x, %n, %s, %n {mode = "linear"} : (tensor<1x3x10x10xf32>, none, tensor<4xf32>, none) -> tensor<1x3x20x20xf32>

// CHECK: onnx.Resize: mode 'linear' is not supported, only 'nearest'

// -----

%x = "test.op"() : () -> tensor<1x3x10x10xf32>
%s = onnx.Constant {value = dense<[1.000000e+00, 1.000000e+00, 5.000000e-01, 5.000000e-01]> : tensor<4xf32>} : tensor<4xf32>
%n = onnx.None
%y = onnx.Resize %x, %n, %s, %n {antialias = 1 : i64} : (tensor<1x3x10x10xf32>, none, tensor<4xf32>, none) -> tensor<1x3x5x5xf32>

// CHECK: onnx.Resize: antialias is not supported

// -----

%x = "test.op"() : () -> tensor<1x3x10x10xf32>
%n = onnx.None
%y = onnx.Resize %x, %n, %n, %n : (tensor<1x3x10x10xf32>, none, none, none) -> tensor<1x3x10x10xf32>

// CHECK: onnx.Resize: one of scales and sizes is required

// -----

%x = "test.op"() : () -> tensor<1x3x10x10xf32>
%s = onnx.Constant {value = dense<2.000000e+00> : tensor<2xf32>} : tensor<2xf32>
%n = onnx.None
%y = onnx.Resize %x, %n, %s, %n : (tensor<1x3x10x10xf32>, none, tensor<2xf32>, none) -> tensor<1x3x20x20xf32>

// CHECK: onnx.Resize: scales has 2 values for 4 axes

// -----

// Scales round down: floor(10 * 1.5) = 15.
%x = "test.op"() : () -> tensor<1x3x10x10xf32>
%s = onnx.Constant {value = dense<[1.000000e+00, 1.000000e+00, 1.500000e+00, 1.500000e+00]> : tensor<4xf32>} : tensor<4xf32>
%n = onnx.None
%y = onnx.Resize %x, %n, %s, %n : (tensor<1x3x10x10xf32>, none, tensor<4xf32>, none) -> tensor<1x3x16x16xf32>

// CHECK: onnx.Resize: result #0 has type tensor<1x3x16x16xf32>, but the operands give tensor<1x3x15x15xf32>

// -----

%x = "test.op"() : () -> tensor<1x3x10x10xf32>
%sz = onnx.Constant {value = dense<[20, 20]> : tensor<2xi64>} : tensor<2xi64>
%n = onnx.None
%y = onnx.Resize %x, %n, %n, %sz : (tensor<1x3x10x10xf32>, none, none, tensor<2xi64>) -> tensor<1x3x20x20xf32>

// CHECK: onnx.Resize: sizes has 2 values for 4 axes

// -----

%x = "test.op"() : () -> tensor<1x3x10x10xf32>
%sz = onnx.Constant {value = dense<[1, 3, -1, 20]> : tensor<4xi64>} : tensor<4xi64>
%n = onnx.None
%y = onnx.Resize %x, %n, %n, %sz : (tensor<1x3x10x10xf32>, none, none, tensor<4xi64>) -> tensor<1x3x20x20xf32>

// CHECK: onnx.Resize: sizes[2] = -1, must be >= 1

// -----

// --- Expand and Shape ----------------------------------------------------------

%x = "test.op"() : () -> tensor<3x2xf32>
%s = onnx.Constant {value = dense<[3, 4]> : tensor<2xi64>} : tensor<2xi64>
%y = onnx.Expand %x, %s : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<3x4xf32>

// CHECK: onnx.Expand: shapes [3, 2] and [3, 4] do not broadcast

// -----

%x = "test.op"() : () -> tensor<1x3x224x224xf32>
%y = onnx.Shape %x {start = 2 : i64} : (tensor<1x3x224x224xf32>) -> tensor<4xi64>

// CHECK: onnx.Shape: result #0 has type tensor<4xi64>, but the operands give tensor<2xi64>

// -----

%x = "test.op"() : () -> tensor<1x3x224x224xf32>
%y = "onnx.Shape"(%x) : (tensor<1x3x224x224xf32>) -> tensor<4xi32>

// CHECK:      result 'shape' at position 0 does not verify:
// CHECK-NEXT: Expected attribute i64 but got i32

// -----

// Range: scalar operands of one element type, a nonzero delta, the length they give.
%s = onnx.Constant {value = dense<0> : tensor<i64>} : tensor<i64>
%d = onnx.Constant {value = dense<3> : tensor<i64>} : tensor<i64>
%y = onnx.Range %s, %d, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>

// CHECK: onnx.Range: result #0 has type tensor<3xi64>, but the operands give tensor<1xi64>

// -----

%s = onnx.Constant {value = dense<0> : tensor<i64>} : tensor<i64>
%l = onnx.Constant {value = dense<5> : tensor<i64>} : tensor<i64>
%d = onnx.Constant {value = dense<0> : tensor<i64>} : tensor<i64>
%y = onnx.Range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<5xi64>

// CHECK: onnx.Range: delta = 0, must not be 0

// -----

%s = "test.op"() : () -> tensor<2xi64>
%y = onnx.Range %s, %s, %s : (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>

// CHECK: onnx.Range: start, limit and delta must be scalars

// -----

%s = "test.op"() : () -> tensor<i64>
%l = "test.op"() : () -> tensor<i32>
%y = onnx.Range %s, %l, %s : (tensor<i64>, tensor<i32>, tensor<i64>) -> tensor<4xi64>

// CHECK: onnx.Range: operands mix element types i32, i64

// -----

// Trilu: a matrix (or a batch of them), a scalar i64 k, upper 0 or 1.
%n = onnx.None
%x = "test.op"() : () -> tensor<5xf32>
%y = onnx.Trilu %x, %n : (tensor<5xf32>, none) -> tensor<5xf32>

// CHECK: onnx.Trilu: input of rank 1 has no matrix axes

// -----

%x = "test.op"() : () -> tensor<3x5xf32>
%k = "test.op"() : () -> tensor<2xi64>
%y = onnx.Trilu %x, %k : (tensor<3x5xf32>, tensor<2xi64>) -> tensor<3x5xf32>

// CHECK: onnx.Trilu: k must be a scalar

// -----

%n = onnx.None
%x = "test.op"() : () -> tensor<3x5xf32>
%y = onnx.Trilu %x, %n {upper = 2 : i64} : (tensor<3x5xf32>, none) -> tensor<3x5xf32>

// CHECK: onnx.Trilu: upper is 0 or 1, not 2

// -----

%x = "test.op"() : () -> tensor<3x5xf32>
%k = "test.op"() : () -> tensor<i32>
%y = "onnx.Trilu"(%x, %k) : (tensor<3x5xf32>, tensor<i32>) -> tensor<3x5xf32>

// CHECK:      operand 'k' at position 1 does not verify:

// -----

%x = "test.op"() : () -> tensor<1x2x4x4xf32>
%i = onnx.Constant {value = dense<[0, 99]> : tensor<2xi64>} : tensor<2xi64>
%y = onnx.Gather %x, %i {axis = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> tensor<1x2x2x4xf32>

// CHECK: onnx.Gather: indices[1] = 99, must be in [-4, 3] for axis 2 of size 4

// -----

%x = "test.op"() : () -> tensor<1x2x4x4xf32>
%s = onnx.Constant {value = dense<0> : tensor<1xi64>} : tensor<1xi64>
%e = onnx.Constant {value = dense<2> : tensor<1xi64>} : tensor<1xi64>
%a = onnx.Constant {value = dense<5> : tensor<1xi64>} : tensor<1xi64>
%n = onnx.None
%y = onnx.Slice %x, %s, %e, %a, %n : (tensor<1x2x4x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x2x4x4xf32>

// CHECK: onnx.Slice: axes[0] = 5, must be in [-4, 3] for rank 4

// -----

// A step of 0 is caught even where the data's shape is dynamic.
%x = "test.op"() : () -> tensor<?x8xf32>
%s = onnx.Constant {value = dense<0> : tensor<1xi64>} : tensor<1xi64>
%e = onnx.Constant {value = dense<4> : tensor<1xi64>} : tensor<1xi64>
%a = onnx.Constant {value = dense<1> : tensor<1xi64>} : tensor<1xi64>
%st = onnx.Constant {value = dense<0> : tensor<1xi64>} : tensor<1xi64>
%y = onnx.Slice %x, %s, %e, %a, %st : (tensor<?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4xf32>

// CHECK: onnx.Slice: steps[0] = 0, must not be 0

// -----

%x = "test.op"() : () -> tensor<1x2x4x4xf32>
%s = onnx.Constant {value = dense<[-2, 16]> : tensor<2xi64>} : tensor<2xi64>
%y = onnx.Reshape %x, %s : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> tensor<2x16xf32>

// CHECK: onnx.Reshape: shape[0] = -2, must be >= -1

// -----

// With allowzero a 0 is a size of 0, and no -1 can be inferred beside it.
%x = "test.op"() : () -> tensor<0x4xf32>
%s = onnx.Constant {value = dense<[0, -1]> : tensor<2xi64>} : tensor<2xi64>
%y = onnx.Reshape %x, %s {allowzero = 1 : i64} : (tensor<0x4xf32>, tensor<2xi64>) -> tensor<0x4xf32>

// CHECK: onnx.Reshape: shape = [0, -1], must not have both 0 and -1 with allowzero

// -----

%x = "test.op"() : () -> tensor<1x2x4x4xf32>
%y = onnx.Transpose %x {perm = array<i64: 0, 0, 1, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x1x2x4xf32>

// CHECK: onnx.Transpose: perm = [0, 0, 1, 2], must be a permutation of 0..3

// -----

%x = "test.op"() : () -> tensor<1x2x1x4xf32>
%a = onnx.Constant {value = dense<[2, -5]> : tensor<2xi64>} : tensor<2xi64>
%y = onnx.Squeeze %x, %a : (tensor<1x2x1x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>

// CHECK: onnx.Squeeze: axes[1] = -5, must be in [-4, 3] for rank 4

// -----

%x = "test.op"() : () -> tensor<1x2x?x4xf32>
%y = onnx.Concat %x, %x {axis = 9 : i64} : (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) -> tensor<1x2x?x8xf32>

// CHECK: onnx.Concat: axis = 9, must be in [-4, 3] for rank 4

// -----

%x = "test.op"() : () -> tensor<1x2x4x4xf32>
%n = onnx.None
onnx.Split %x, %n {axis = 1 : i64, num_outputs = 0 : i64} : (tensor<1x2x4x4xf32>, none) -> ()

// CHECK: onnx.Split: num_outputs = 0, must be >= 1

// -----

%x = "test.op"() : () -> tensor<1x2x4x4xf32>
%n = onnx.None
%sc = onnx.Constant {value = dense<[1.0, 1.0, 0.0, 2.0]> : tensor<4xf32>} : tensor<4xf32>
%y = onnx.Resize %x, %n, %sc, %n : (tensor<1x2x4x4xf32>, none, tensor<4xf32>, none) -> tensor<1x2x0x8xf32>

// CHECK: onnx.Resize: scales[2] = 0, must be > 0

// -----

// Pads may be negative (they crop), within the 32-bit range.
%x = "test.op"() : () -> tensor<4xf32>
%p = onnx.Constant {value = dense<[-4294967296, 0]> : tensor<2xi64>} : tensor<2xi64>
%n = onnx.None
%y = onnx.Pad %x, %p, %n, %n : (tensor<4xf32>, tensor<2xi64>, none, none) -> tensor<4xf32>

// CHECK: onnx.Pad: pads[0] = -4294967296, must be in (-2147483648, 2147483648)

// -----

// A Range delta of 0 is caught before the length needs the other operands.
%s = "test.op"() : () -> tensor<i64>
%l = onnx.Constant {value = dense<5> : tensor<i64>} : tensor<i64>
%d = onnx.Constant {value = dense<0> : tensor<i64>} : tensor<i64>
%y = onnx.Range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>

// CHECK: onnx.Range: delta = 0, must not be 0
