// RUN: mobile-opt %s --split-input-file --verify-diagnostics | filecheck %s

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
