// RUN: mobile-opt %s | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s

// Data-movement ops. Operands that give a shape (Reshape's shape, Slice's starts,
// ...) are onnx.Constant so that the verifier can check the result shape.

// CHECK: builtin.module {

%n = onnx.None
%x = "test.op"() : () -> tensor<1x3x224x224xf32>
%x234 = "test.op"() : () -> tensor<2x3x4xf32>
// CHECK-NEXT:   %n = onnx.None
// CHECK-NEXT:   %x = "test.op"() : () -> tensor<1x3x224x224xf32>
// CHECK-NEXT:   %x234 = "test.op"() : () -> tensor<2x3x4xf32>

// --- Reshape: 0 copies the input dim, -1 takes what is left -------------------

%pooled = "test.op"() : () -> tensor<1x2048x1x1xf32>
%s_flat = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : tensor<2xi64>
%flat = onnx.Reshape %pooled, %s_flat : (tensor<1x2048x1x1xf32>, tensor<2xi64>) -> tensor<1x2048xf32>
%s_keep = onnx.Constant {value = dense<[0, -1]> : tensor<2xi64>} : tensor<2xi64>
%keep0 = onnx.Reshape %x234, %s_keep : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
%tokens = "test.op"() : () -> tensor<1x197x768xf32>
%s_heads = onnx.Constant {value = dense<[0, 0, 12, 64]> : tensor<4xi64>} : tensor<4xi64>
%heads = onnx.Reshape %tokens, %s_heads : (tensor<1x197x768xf32>, tensor<4xi64>) -> tensor<1x197x12x64xf32>
%one = "test.op"() : () -> tensor<1x1xf32>
%s_scalar = onnx.Constant {value = dense<> : tensor<0xi64>} : tensor<0xi64>
%to_scalar = onnx.Reshape %one, %s_scalar : (tensor<1x1xf32>, tensor<0xi64>) -> tensor<f32>
%empty = "test.op"() : () -> tensor<0x8xf32>
%s_zero = onnx.Constant {value = dense<[0, 2, 4]> : tensor<3xi64>} : tensor<3xi64>
%allowzero = onnx.Reshape %empty, %s_zero {allowzero = 1 : i64} : (tensor<0x8xf32>, tensor<3xi64>) -> tensor<0x2x4xf32>
// CHECK-NEXT:   %pooled = "test.op"() : () -> tensor<1x2048x1x1xf32>
// CHECK-NEXT:   %s_flat = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %flat = onnx.Reshape %pooled, %s_flat : (tensor<1x2048x1x1xf32>, tensor<2xi64>) -> tensor<1x2048xf32>
// CHECK-NEXT:   %s_keep = onnx.Constant {value = dense<[0, -1]> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %keep0 = onnx.Reshape %x234, %s_keep : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
// CHECK-NEXT:   %tokens = "test.op"() : () -> tensor<1x197x768xf32>
// CHECK-NEXT:   %s_heads = onnx.Constant {value = dense<[0, 0, 12, 64]> : tensor<4xi64>} : tensor<4xi64>
// CHECK-NEXT:   %heads = onnx.Reshape %tokens, %s_heads : (tensor<1x197x768xf32>, tensor<4xi64>) -> tensor<1x197x12x64xf32>
// CHECK-NEXT:   %one = "test.op"() : () -> tensor<1x1xf32>
// CHECK-NEXT:   %s_scalar = onnx.Constant {value = dense<> : tensor<0xi64>} : tensor<0xi64>
// CHECK-NEXT:   %to_scalar = onnx.Reshape %one, %s_scalar : (tensor<1x1xf32>, tensor<0xi64>) -> tensor<f32>
// CHECK-NEXT:   %empty = "test.op"() : () -> tensor<0x8xf32>
// CHECK-NEXT:   %s_zero = onnx.Constant {value = dense<[0, 2, 4]> : tensor<3xi64>} : tensor<3xi64>
// CHECK-NEXT:   %allowzero = onnx.Reshape %empty, %s_zero {allowzero = 1 : i64} : (tensor<0x8xf32>, tensor<3xi64>) -> tensor<0x2x4xf32>

// A shape computed at run time is not checked.
%dyn_shape = "test.op"() : () -> tensor<3xi64>
%reshape_dyn = onnx.Reshape %x234, %dyn_shape : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT:   %dyn_shape = "test.op"() : () -> tensor<3xi64>
// CHECK-NEXT:   %reshape_dyn = onnx.Reshape %x234, %dyn_shape : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>

// --- Transpose and Flatten -----------------------------------------------------

%nhwc = onnx.Transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x3x224x224xf32>) -> tensor<1x224x224x3xf32>
%reversed = onnx.Transpose %x234 : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT:   %nhwc = onnx.Transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x3x224x224xf32>) -> tensor<1x224x224x3xf32>
// CHECK-NEXT:   %reversed = onnx.Transpose %x234 : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>

// Flatten: dims before `axis` are rows, the rest columns; a negative axis counts
// from the end (-1 on rank 4 is axis 3).
%x512 = "test.op"() : () -> tensor<1x512x7x7xf32>
%x2345 = "test.op"() : () -> tensor<2x3x4x5xf32>
%flatten = onnx.Flatten %x512 : (tensor<1x512x7x7xf32>) -> tensor<1x25088xf32>
%flatten_ax0 = onnx.Flatten %x234 {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<1x24xf32>
%flatten_neg = onnx.Flatten %x2345 {axis = -1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<24x5xf32>
%flatten_rank = onnx.Flatten %x234 {axis = 3 : i64} : (tensor<2x3x4xf32>) -> tensor<24x1xf32>
// CHECK-NEXT:   %x512 = "test.op"() : () -> tensor<1x512x7x7xf32>
// CHECK-NEXT:   %x2345 = "test.op"() : () -> tensor<2x3x4x5xf32>
// CHECK-NEXT:   %flatten = onnx.Flatten %x512 : (tensor<1x512x7x7xf32>) -> tensor<1x25088xf32>
// CHECK-NEXT:   %flatten_ax0 = onnx.Flatten %x234 {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<1x24xf32>
// CHECK-NEXT:   %flatten_neg = onnx.Flatten %x2345 {axis = -1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<24x5xf32>
// CHECK-NEXT:   %flatten_rank = onnx.Flatten %x234 {axis = 3 : i64} : (tensor<2x3x4xf32>) -> tensor<24x1xf32>

// --- Squeeze and Unsqueeze -----------------------------------------------------

%gap = "test.op"() : () -> tensor<1x1280x1x1xf32>
%ax23 = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : tensor<2xi64>
%squeeze = onnx.Squeeze %gap, %ax23 : (tensor<1x1280x1x1xf32>, tensor<2xi64>) -> tensor<1x1280xf32>
%ones = "test.op"() : () -> tensor<1x3x1x5xf32>
%squeeze_all = onnx.Squeeze %ones, %n : (tensor<1x3x1x5xf32>, none) -> tensor<3x5xf32>
%col = "test.op"() : () -> tensor<4x1xf32>
%ax_last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : tensor<1xi64>
%squeeze_neg = onnx.Squeeze %col, %ax_last : (tensor<4x1xf32>, tensor<1xi64>) -> tensor<4xf32>
// CHECK-NEXT:   %gap = "test.op"() : () -> tensor<1x1280x1x1xf32>
// CHECK-NEXT:   %ax23 = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %squeeze = onnx.Squeeze %gap, %ax23 : (tensor<1x1280x1x1xf32>, tensor<2xi64>) -> tensor<1x1280xf32>
// CHECK-NEXT:   %ones = "test.op"() : () -> tensor<1x3x1x5xf32>
// CHECK-NEXT:   %squeeze_all = onnx.Squeeze %ones, %n : (tensor<1x3x1x5xf32>, none) -> tensor<3x5xf32>
// CHECK-NEXT:   %col = "test.op"() : () -> tensor<4x1xf32>
// CHECK-NEXT:   %ax_last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %squeeze_neg = onnx.Squeeze %col, %ax_last : (tensor<4x1xf32>, tensor<1xi64>) -> tensor<4xf32>

// Unsqueeze axes index the output; negative ones count from the output's end.
%m34 = "test.op"() : () -> tensor<3x4xf32>
%ax0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : tensor<1xi64>
%ax1_neg = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : tensor<2xi64>
%ax04 = onnx.Constant {value = dense<[0, 4]> : tensor<2xi64>} : tensor<2xi64>
%t123 = "test.op"() : () -> tensor<1x2x3xf32>
%s = "test.op"() : () -> tensor<f32>
%unsqueeze = onnx.Unsqueeze %m34, %ax0 : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<1x3x4xf32>
%unsqueeze_neg = onnx.Unsqueeze %m34, %ax1_neg : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x1x4x1xf32>
%unsqueeze_ends = onnx.Unsqueeze %t123, %ax04 : (tensor<1x2x3xf32>, tensor<2xi64>) -> tensor<1x1x2x3x1xf32>
%unsqueeze_scalar = onnx.Unsqueeze %s, %ax0 : (tensor<f32>, tensor<1xi64>) -> tensor<1xf32>
// CHECK-NEXT:   %m34 = "test.op"() : () -> tensor<3x4xf32>
// CHECK-NEXT:   %ax0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %ax1_neg = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %ax04 = onnx.Constant {value = dense<[0, 4]> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %t123 = "test.op"() : () -> tensor<1x2x3xf32>
// CHECK-NEXT:   %s = "test.op"() : () -> tensor<f32>
// CHECK-NEXT:   %unsqueeze = onnx.Unsqueeze %m34, %ax0 : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<1x3x4xf32>
// CHECK-NEXT:   %unsqueeze_neg = onnx.Unsqueeze %m34, %ax1_neg : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x1x4x1xf32>
// CHECK-NEXT:   %unsqueeze_ends = onnx.Unsqueeze %t123, %ax04 : (tensor<1x2x3xf32>, tensor<2xi64>) -> tensor<1x1x2x3x1xf32>
// CHECK-NEXT:   %unsqueeze_scalar = onnx.Unsqueeze %s, %ax0 : (tensor<f32>, tensor<1xi64>) -> tensor<1xf32>

// --- Concat and Split ----------------------------------------------------------

%c64 = "test.op"() : () -> tensor<1x64x28x28xf32>
%c32 = "test.op"() : () -> tensor<1x32x28x28xf32>
%concat = onnx.Concat %c64, %c32, %c32 {axis = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>, tensor<1x32x28x28xf32>) -> tensor<1x128x28x28xf32>
%m25 = "test.op"() : () -> tensor<3x5xf32>
%concat_neg = onnx.Concat %m34, %m25 {axis = -1 : i64} : (tensor<3x4xf32>, tensor<3x5xf32>) -> tensor<3x9xf32>
%dim0 = "test.op"() : () -> tensor<1xi64>
%dims = "test.op"() : () -> tensor<3xi64>
%concat_shape = onnx.Concat %dim0, %dims {axis = 0 : i64} : (tensor<1xi64>, tensor<3xi64>) -> tensor<4xi64>
%concat_one = onnx.Concat %m34 {axis = 0 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:   %c64 = "test.op"() : () -> tensor<1x64x28x28xf32>
// CHECK-NEXT:   %c32 = "test.op"() : () -> tensor<1x32x28x28xf32>
// CHECK-NEXT:   %concat = onnx.Concat %c64, %c32, %c32 {axis = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>, tensor<1x32x28x28xf32>) -> tensor<1x128x28x28xf32>
// CHECK-NEXT:   %m25 = "test.op"() : () -> tensor<3x5xf32>
// CHECK-NEXT:   %concat_neg = onnx.Concat %m34, %m25 {axis = -1 : i64} : (tensor<3x4xf32>, tensor<3x5xf32>) -> tensor<3x9xf32>
// CHECK-NEXT:   %dim0 = "test.op"() : () -> tensor<1xi64>
// CHECK-NEXT:   %dims = "test.op"() : () -> tensor<3xi64>
// CHECK-NEXT:   %concat_shape = onnx.Concat %dim0, %dims {axis = 0 : i64} : (tensor<1xi64>, tensor<3xi64>) -> tensor<4xi64>
// CHECK-NEXT:   %concat_one = onnx.Concat %m34 {axis = 0 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>

// Split by explicit sizes, into num_outputs equal parts, and unevenly (the last
// part is smaller: 7 = 3 + 3 + 1).
%x12 = "test.op"() : () -> tensor<1x12x4xf32>
%sizes = onnx.Constant {value = dense<[2, 4, 6]> : tensor<3xi64>} : tensor<3xi64>
%p0, %p1, %p2 = onnx.Split %x12, %sizes {axis = 1 : i64} : (tensor<1x12x4xf32>, tensor<3xi64>) -> (tensor<1x2x4xf32>, tensor<1x4x4xf32>, tensor<1x6x4xf32>)
%q0, %q1, %q2 = onnx.Split %x12, %n {axis = 1 : i64, num_outputs = 3 : i64} : (tensor<1x12x4xf32>, none) -> (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>)
%x7 = "test.op"() : () -> tensor<2x7xf32>
%r0, %r1, %r2 = onnx.Split %x7, %n {axis = -1 : i64, num_outputs = 3 : i64} : (tensor<2x7xf32>, none) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>)
// CHECK-NEXT:   %x12 = "test.op"() : () -> tensor<1x12x4xf32>
// CHECK-NEXT:   %sizes = onnx.Constant {value = dense<[2, 4, 6]> : tensor<3xi64>} : tensor<3xi64>
// CHECK-NEXT:   %p0, %p1, %p2 = onnx.Split %x12, %sizes {axis = 1 : i64} : (tensor<1x12x4xf32>, tensor<3xi64>) -> (tensor<1x2x4xf32>, tensor<1x4x4xf32>, tensor<1x6x4xf32>)
// CHECK-NEXT:   %q0, %q1, %q2 = onnx.Split %x12, %n {axis = 1 : i64, num_outputs = 3 : i64} : (tensor<1x12x4xf32>, none) -> (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>)
// CHECK-NEXT:   %x7 = "test.op"() : () -> tensor<2x7xf32>
// CHECK-NEXT:   %r0, %r1, %r2 = onnx.Split %x7, %n {axis = -1 : i64, num_outputs = 3 : i64} : (tensor<2x7xf32>, none) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>)

// --- Slice ---------------------------------------------------------------------

// Channels 0..2 of NCHW.
%st0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : tensor<1xi64>
%en2 = onnx.Constant {value = dense<2> : tensor<1xi64>} : tensor<1xi64>
%ax1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : tensor<1xi64>
%slice = onnx.Slice %x, %st0, %en2, %ax1, %n : (tensor<1x3x224x224xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x2x224x224xf32>
// CHECK-NEXT:   %st0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %en2 = onnx.Constant {value = dense<2> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %ax1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %slice = onnx.Slice %x, %st0, %en2, %ax1, %n : (tensor<1x3x224x224xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x2x224x224xf32>

// Exporters write INT64_MAX for "to the end": 224 - 1 = 223 along the last axis.
%st1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : tensor<1xi64>
%int_max = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>} : tensor<1xi64>
%ax_neg = onnx.Constant {value = dense<-1> : tensor<1xi64>} : tensor<1xi64>
%slice_end = onnx.Slice %x, %st1, %int_max, %ax_neg, %n : (tensor<1x3x224x224xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x3x224x223xf32>
// CHECK-NEXT:   %st1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %int_max = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %ax_neg = onnx.Constant {value = dense<-1> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %slice_end = onnx.Slice %x, %st1, %int_max, %ax_neg, %n : (tensor<1x3x224x224xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<1x3x224x223xf32>

// Every other row and column (space-to-depth): 224 / 2 = 112.
%st00 = onnx.Constant {value = dense<0> : tensor<2xi64>} : tensor<2xi64>
%en_max = onnx.Constant {value = dense<9223372036854775807> : tensor<2xi64>} : tensor<2xi64>
%ax_hw = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : tensor<2xi64>
%step2 = onnx.Constant {value = dense<2> : tensor<2xi64>} : tensor<2xi64>
%slice_step = onnx.Slice %x, %st00, %en_max, %ax_hw, %step2 : (tensor<1x3x224x224xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x3x112x112xf32>
// CHECK-NEXT:   %st00 = onnx.Constant {value = dense<0> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %en_max = onnx.Constant {value = dense<9223372036854775807> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %ax_hw = onnx.Constant {value = dense<[2, 3]> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %step2 = onnx.Constant {value = dense<2> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %slice_step = onnx.Slice %x, %st00, %en_max, %ax_hw, %step2 : (tensor<1x3x224x224xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x3x112x112xf32>

// Negative steps: reverse all 10 (start -1, end INT64_MIN), and 8, 6, 4, 2 (start 8,
// end 1, step -2).
%v10 = "test.op"() : () -> tensor<10xf32>
%st_last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : tensor<1xi64>
%int_min = onnx.Constant {value = dense<-9223372036854775808> : tensor<1xi64>} : tensor<1xi64>
%step_back = onnx.Constant {value = dense<-1> : tensor<1xi64>} : tensor<1xi64>
%reverse = onnx.Slice %v10, %st_last, %int_min, %n, %step_back : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, none, tensor<1xi64>) -> tensor<10xf32>
%st8 = onnx.Constant {value = dense<8> : tensor<1xi64>} : tensor<1xi64>
%en1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : tensor<1xi64>
%step_m2 = onnx.Constant {value = dense<-2> : tensor<1xi64>} : tensor<1xi64>
%back2 = onnx.Slice %v10, %st8, %en1, %n, %step_m2 : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, none, tensor<1xi64>) -> tensor<4xf32>
// CHECK-NEXT:   %v10 = "test.op"() : () -> tensor<10xf32>
// CHECK-NEXT:   %st_last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %int_min = onnx.Constant {value = dense<-9223372036854775808> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %step_back = onnx.Constant {value = dense<-1> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %reverse = onnx.Slice %v10, %st_last, %int_min, %n, %step_back : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, none, tensor<1xi64>) -> tensor<10xf32>
// CHECK-NEXT:   %st8 = onnx.Constant {value = dense<8> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %en1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %step_m2 = onnx.Constant {value = dense<-2> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %back2 = onnx.Slice %v10, %st8, %en1, %n, %step_m2 : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, none, tensor<1xi64>) -> tensor<4xf32>

// Clamping: with a negative step a start before the first element clamps to
// element 0 (one element is taken); start past end with a positive step is empty.
%st_far = onnx.Constant {value = dense<-100> : tensor<1xi64>} : tensor<1xi64>
%en_far = onnx.Constant {value = dense<-200> : tensor<1xi64>} : tensor<1xi64>
%first = onnx.Slice %v10, %st_far, %en_far, %n, %step_back : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, none, tensor<1xi64>) -> tensor<1xf32>
%st5 = onnx.Constant {value = dense<5> : tensor<1xi64>} : tensor<1xi64>
%none_taken = onnx.Slice %v10, %st5, %en2, %n, %n : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<0xf32>
// CHECK-NEXT:   %st_far = onnx.Constant {value = dense<-100> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %en_far = onnx.Constant {value = dense<-200> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %first = onnx.Slice %v10, %st_far, %en_far, %n, %step_back : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, none, tensor<1xi64>) -> tensor<1xf32>
// CHECK-NEXT:   %st5 = onnx.Constant {value = dense<5> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %none_taken = onnx.Slice %v10, %st5, %en2, %n, %n : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<0xf32>

// --- Gather --------------------------------------------------------------------

// Embedding lookup, the CLS token (a scalar index removes the axis), axis -1.
%table = "test.op"() : () -> tensor<30522x768xf32>
%ids = "test.op"() : () -> tensor<1x128xi64>
%embed = onnx.Gather %table, %ids : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
%cls_idx = onnx.Constant {value = dense<0> : tensor<i64>} : tensor<i64>
%cls = onnx.Gather %tokens, %cls_idx {axis = 1 : i64} : (tensor<1x197x768xf32>, tensor<i64>) -> tensor<1x768xf32>
%idx2 = "test.op"() : () -> tensor<2xi32>
%gather_neg = onnx.Gather %x234, %idx2 {axis = -1 : i64} : (tensor<2x3x4xf32>, tensor<2xi32>) -> tensor<2x3x2xf32>
// CHECK-NEXT:   %table = "test.op"() : () -> tensor<30522x768xf32>
// CHECK-NEXT:   %ids = "test.op"() : () -> tensor<1x128xi64>
// CHECK-NEXT:   %embed = onnx.Gather %table, %ids : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
// CHECK-NEXT:   %cls_idx = onnx.Constant {value = dense<0> : tensor<i64>} : tensor<i64>
// CHECK-NEXT:   %cls = onnx.Gather %tokens, %cls_idx {axis = 1 : i64} : (tensor<1x197x768xf32>, tensor<i64>) -> tensor<1x768xf32>
// CHECK-NEXT:   %idx2 = "test.op"() : () -> tensor<2xi32>
// CHECK-NEXT:   %gather_neg = onnx.Gather %x234, %idx2 {axis = -1 : i64} : (tensor<2x3x4xf32>, tensor<2xi32>) -> tensor<2x3x2xf32>

// --- Pad -----------------------------------------------------------------------

// pads are all begins, then all ends; `axes` restricts them; negative pads crop.
%pads_hw = onnx.Constant {value = dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>} : tensor<8xi64>
%pad_value = onnx.Constant {value = dense<-1.000000e+00> : tensor<f32>} : tensor<f32>
%pad = onnx.Pad %x, %pads_hw, %pad_value, %n : (tensor<1x3x224x224xf32>, tensor<8xi64>, tensor<f32>, none) -> tensor<1x3x226x226xf32>
%pads_axes = onnx.Constant {value = dense<[1, 2, 1, 2]> : tensor<4xi64>} : tensor<4xi64>
%pad_reflect = onnx.Pad %x, %pads_axes, %n, %ax_hw {mode = "reflect"} : (tensor<1x3x224x224xf32>, tensor<4xi64>, none, tensor<2xi64>) -> tensor<1x3x226x228xf32>
%pads_crop = onnx.Constant {value = dense<[0, 0, -1, -1, 0, 0, -1, -1]> : tensor<8xi64>} : tensor<8xi64>
%pad_crop = onnx.Pad %x, %pads_crop, %n, %n : (tensor<1x3x224x224xf32>, tensor<8xi64>, none, none) -> tensor<1x3x222x222xf32>
%pads_1d = onnx.Constant {value = dense<[3, 2]> : tensor<2xi64>} : tensor<2xi64>
%pad_edge = onnx.Pad %v10, %pads_1d, %n, %n {mode = "edge"} : (tensor<10xf32>, tensor<2xi64>, none, none) -> tensor<15xf32>
%pad_wrap = onnx.Pad %v10, %pads_1d, %n, %n {mode = "wrap"} : (tensor<10xf32>, tensor<2xi64>, none, none) -> tensor<15xf32>
// CHECK-NEXT:   %pads_hw = onnx.Constant {value = dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>} : tensor<8xi64>
// CHECK-NEXT:   %pad_value = onnx.Constant {value = dense<-1.000000e+00> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:   %pad = onnx.Pad %x, %pads_hw, %pad_value, %n : (tensor<1x3x224x224xf32>, tensor<8xi64>, tensor<f32>, none) -> tensor<1x3x226x226xf32>
// CHECK-NEXT:   %pads_axes = onnx.Constant {value = dense<[1, 2, 1, 2]> : tensor<4xi64>} : tensor<4xi64>
// CHECK-NEXT:   %pad_reflect = onnx.Pad %x, %pads_axes, %n, %ax_hw {mode = "reflect"} : (tensor<1x3x224x224xf32>, tensor<4xi64>, none, tensor<2xi64>) -> tensor<1x3x226x228xf32>
// CHECK-NEXT:   %pads_crop = onnx.Constant {value = dense<[0, 0, -1, -1, 0, 0, -1, -1]> : tensor<8xi64>} : tensor<8xi64>
// CHECK-NEXT:   %pad_crop = onnx.Pad %x, %pads_crop, %n, %n : (tensor<1x3x224x224xf32>, tensor<8xi64>, none, none) -> tensor<1x3x222x222xf32>
// CHECK-NEXT:   %pads_1d = onnx.Constant {value = dense<[3, 2]> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %pad_edge = onnx.Pad %v10, %pads_1d, %n, %n {mode = "edge"} : (tensor<10xf32>, tensor<2xi64>, none, none) -> tensor<15xf32>
// CHECK-NEXT:   %pad_wrap = onnx.Pad %v10, %pads_1d, %n, %n {mode = "wrap"} : (tensor<10xf32>, tensor<2xi64>, none, none) -> tensor<15xf32>

// --- Resize (nearest) ----------------------------------------------------------

// By scales: floor(13 * 2) = 26; floor(10 * 1.5) = 15 and floor(10 * 0.75) = 7.
%x13 = "test.op"() : () -> tensor<1x256x13x13xf32>
%scales2 = onnx.Constant {value = dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>} : tensor<4xf32>
%upsample = onnx.Resize %x13, %n, %scales2, %n {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x256x13x13xf32>, none, tensor<4xf32>, none) -> tensor<1x256x26x26xf32>
%x10 = "test.op"() : () -> tensor<1x3x10x10xf32>
%scales_frac = onnx.Constant {value = dense<[1.000000e+00, 1.000000e+00, 1.500000e+00, 7.500000e-01]> : tensor<4xf32>} : tensor<4xf32>
%resize_frac = onnx.Resize %x10, %n, %scales_frac, %n : (tensor<1x3x10x10xf32>, none, tensor<4xf32>, none) -> tensor<1x3x15x7xf32>
// CHECK-NEXT:   %x13 = "test.op"() : () -> tensor<1x256x13x13xf32>
// CHECK-NEXT:   %scales2 = onnx.Constant {value = dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT:   %upsample = onnx.Resize %x13, %n, %scales2, %n {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x256x13x13xf32>, none, tensor<4xf32>, none) -> tensor<1x256x26x26xf32>
// CHECK-NEXT:   %x10 = "test.op"() : () -> tensor<1x3x10x10xf32>
// CHECK-NEXT:   %scales_frac = onnx.Constant {value = dense<[1.000000e+00, 1.000000e+00, 1.500000e+00, 7.500000e-01]> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT:   %resize_frac = onnx.Resize %x10, %n, %scales_frac, %n : (tensor<1x3x10x10xf32>, none, tensor<4xf32>, none) -> tensor<1x3x15x7xf32>

// By sizes, over all dims or over `axes` only; keep_aspect_ratio_policy
// "not_larger" scales both axes by min(30 / 10, 30 / 20) = 1.5.
%sizes4 = onnx.Constant {value = dense<[1, 256, 26, 26]> : tensor<4xi64>} : tensor<4xi64>
%resize_sizes = onnx.Resize %x13, %n, %n, %sizes4 : (tensor<1x256x13x13xf32>, none, none, tensor<4xi64>) -> tensor<1x256x26x26xf32>
%sizes_hw = onnx.Constant {value = dense<[20, 30]> : tensor<2xi64>} : tensor<2xi64>
%resize_axes = onnx.Resize %x10, %n, %n, %sizes_hw {axes = array<i64: 2, 3>} : (tensor<1x3x10x10xf32>, none, none, tensor<2xi64>) -> tensor<1x3x20x30xf32>
%x1020 = "test.op"() : () -> tensor<1x3x10x20xf32>
%sizes_sq = onnx.Constant {value = dense<30> : tensor<2xi64>} : tensor<2xi64>
%resize_aspect = onnx.Resize %x1020, %n, %n, %sizes_sq {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_larger"} : (tensor<1x3x10x20xf32>, none, none, tensor<2xi64>) -> tensor<1x3x15x30xf32>
// CHECK-NEXT:   %sizes4 = onnx.Constant {value = dense<[1, 256, 26, 26]> : tensor<4xi64>} : tensor<4xi64>
// CHECK-NEXT:   %resize_sizes = onnx.Resize %x13, %n, %n, %sizes4 : (tensor<1x256x13x13xf32>, none, none, tensor<4xi64>) -> tensor<1x256x26x26xf32>
// CHECK-NEXT:   %sizes_hw = onnx.Constant {value = dense<[20, 30]> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %resize_axes = onnx.Resize %x10, %n, %n, %sizes_hw {axes = array<i64: 2, 3>} : (tensor<1x3x10x10xf32>, none, none, tensor<2xi64>) -> tensor<1x3x20x30xf32>
// CHECK-NEXT:   %x1020 = "test.op"() : () -> tensor<1x3x10x20xf32>
// CHECK-NEXT:   %sizes_sq = onnx.Constant {value = dense<30> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT:   %resize_aspect = onnx.Resize %x1020, %n, %n, %sizes_sq {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_larger"} : (tensor<1x3x10x20xf32>, none, none, tensor<2xi64>) -> tensor<1x3x15x30xf32>

// --- Expand and Shape ----------------------------------------------------------

// Expand broadcasts both ways: a target dim of 1 keeps the input's dim.
%c31 = "test.op"() : () -> tensor<3x1xf32>
%target216 = onnx.Constant {value = dense<[2, 1, 6]> : tensor<3xi64>} : tensor<3xi64>
%expand = onnx.Expand %c31, %target216 : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x6xf32>
%target4 = onnx.Constant {value = dense<4> : tensor<1xi64>} : tensor<1xi64>
%expand_low = onnx.Expand %x234, %target4 : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x3x4xf32>
// CHECK-NEXT:   %c31 = "test.op"() : () -> tensor<3x1xf32>
// CHECK-NEXT:   %target216 = onnx.Constant {value = dense<[2, 1, 6]> : tensor<3xi64>} : tensor<3xi64>
// CHECK-NEXT:   %expand = onnx.Expand %c31, %target216 : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x6xf32>
// CHECK-NEXT:   %target4 = onnx.Constant {value = dense<4> : tensor<1xi64>} : tensor<1xi64>
// CHECK-NEXT:   %expand_low = onnx.Expand %x234, %target4 : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x3x4xf32>

// Shape of dims start..end (python-style clamping); only the rank must be known.
%shape = onnx.Shape %x : (tensor<1x3x224x224xf32>) -> tensor<4xi64>
%shape_hw = onnx.Shape %x {start = 2 : i64} : (tensor<1x3x224x224xf32>) -> tensor<2xi64>
%shape_mid = onnx.Shape %x {end = -1 : i64, start = 1 : i64} : (tensor<1x3x224x224xf32>) -> tensor<2xi64>
%shape_clamp = onnx.Shape %x {end = 10 : i64, start = -1 : i64} : (tensor<1x3x224x224xf32>) -> tensor<1xi64>
%d = "test.op"() : () -> tensor<?x3xf32>
%shape_dyn = onnx.Shape %d : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK-NEXT:   %shape = onnx.Shape %x : (tensor<1x3x224x224xf32>) -> tensor<4xi64>
// CHECK-NEXT:   %shape_hw = onnx.Shape %x {start = 2 : i64} : (tensor<1x3x224x224xf32>) -> tensor<2xi64>
// CHECK-NEXT:   %shape_mid = onnx.Shape %x {end = -1 : i64, start = 1 : i64} : (tensor<1x3x224x224xf32>) -> tensor<2xi64>
// CHECK-NEXT:   %shape_clamp = onnx.Shape %x {end = 10 : i64, start = -1 : i64} : (tensor<1x3x224x224xf32>) -> tensor<1xi64>
// CHECK-NEXT:   %d = "test.op"() : () -> tensor<?x3xf32>
// CHECK-NEXT:   %shape_dyn = onnx.Shape %d : (tensor<?x3xf32>) -> tensor<2xi64>

// --- Range and Trilu ----------------------------------------------------------

// Range's length is ceil((limit - start) / delta) when its operands are constants;
// from run-time scalars only the declared type says it.
%r_start = onnx.Constant {value = dense<-3> : tensor<i64>} : tensor<i64>
%r_limit = onnx.Constant {value = dense<17> : tensor<i64>} : tensor<i64>
%r_delta = onnx.Constant {value = dense<4> : tensor<i64>} : tensor<i64>
%range = onnx.Range %r_start, %r_limit, %r_delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<5xi64>
%r_run = "test.op"() : () -> tensor<f32>
%range_run = onnx.Range %r_run, %r_run, %r_run : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
// CHECK-NEXT:   %r_start = onnx.Constant {value = dense<-3> : tensor<i64>} : tensor<i64>
// CHECK-NEXT:   %r_limit = onnx.Constant {value = dense<17> : tensor<i64>} : tensor<i64>
// CHECK-NEXT:   %r_delta = onnx.Constant {value = dense<4> : tensor<i64>} : tensor<i64>
// CHECK-NEXT:   %range = onnx.Range %r_start, %r_limit, %r_delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<5xi64>
// CHECK-NEXT:   %r_run = "test.op"() : () -> tensor<f32>
// CHECK-NEXT:   %range_run = onnx.Range %r_run, %r_run, %r_run : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>

// Trilu keeps the shape; k is optional, upper = 1 by default.
%k = "test.op"() : () -> tensor<i64>
%triu = onnx.Trilu %x234, %n : (tensor<2x3x4xf32>, none) -> tensor<2x3x4xf32>
%tril_k = onnx.Trilu %x234, %k {upper = 0 : i64} : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x3x4xf32>
// CHECK-NEXT:   %k = "test.op"() : () -> tensor<i64>
// CHECK-NEXT:   %triu = onnx.Trilu %x234, %n : (tensor<2x3x4xf32>, none) -> tensor<2x3x4xf32>
// CHECK-NEXT:   %tril_k = onnx.Trilu %x234, %k {upper = 0 : i64} : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x3x4xf32>

// CHECK-NEXT: }
