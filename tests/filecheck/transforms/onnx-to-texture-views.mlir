// RUN: mobile-opt %s --split-input-file --verify-diagnostics -p onnx-to-texture | filecheck %s

// A data-movement op marked `texture.view` (a choice of the layout selection) gets no
// kernel and no storage: its readers read its source through its index map, and a chain
// of views composes into one map.

// Attention's Q and K^T: a Split, two Reshapes and two Transposes, all views. One
// kernel, the product's, reading the packed input alone (Q in rows4 and K^T in cols4,
// both whole pixels of %x); no copy kernel, no storage for any of the five results.
// CHECK-NOT:  ocl.kernel @split
// CHECK-NOT:  ocl.kernel @transpose
// CHECK:      ocl.kernel @matmul_0(%out: !texture.image2d<2x12xf32>, %a: !texture.image2d<4x6xf32>) attributes {onnx.node = "node 'mm' (MatMul)"}
// CHECK-NOT:  ocl.kernel
// CHECK:      func.func @main_graph(%x: tensor<1x6x16xf32>) -> tensor<1x2x6x6xf32> {
// CHECK-NEXT:   %[[X:.*]] = texture.pack %x {layout = #texture.layout<rows4>}
// CHECK-NEXT:   %y = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 1, 2, 6, 6>}
// CHECK-NEXT:   ocl.launch @matmul_0(%y, %[[X]])
// CHECK-NEXT:   texture.unpack %y
builtin.module {
  func.func @main_graph(%x: tensor<1x6x16xf32> {texture.layout = #texture.layout<rows4>}) -> tensor<1x2x6x6xf32> {
    %0 = onnx.None
    %s = onnx.Constant {texture.layouts = [#texture.layout<rows4>], value = dense<[1, 6, 2, 4]> : tensor<4xi64>} : tensor<4xi64>
    %q, %k = onnx.Split %x, %0 {texture.layouts = [#texture.layout<rows4>, #texture.layout<rows4>], texture.view, axis = -1 : i64, num_outputs = 2 : i64} : (tensor<1x6x16xf32>, none) -> (tensor<1x6x8xf32>, tensor<1x6x8xf32>) loc("split")
    %qr = onnx.Reshape %q, %s {texture.layouts = [#texture.layout<nc4hw4>], texture.view} : (tensor<1x6x8xf32>, tensor<4xi64>) -> tensor<1x6x2x4xf32> loc("rq")
    %qt = onnx.Transpose %qr {texture.layouts = [#texture.layout<rows4>], texture.view, perm = array<i64: 0, 2, 1, 3>} : (tensor<1x6x2x4xf32>) -> tensor<1x2x6x4xf32> loc("tq")
    %kr = onnx.Reshape %k, %s {texture.layouts = [#texture.layout<nc4hw4>], texture.view} : (tensor<1x6x8xf32>, tensor<4xi64>) -> tensor<1x6x2x4xf32> loc("rk")
    %kt = onnx.Transpose %kr {texture.layouts = [#texture.layout<rows4>], texture.view, perm = array<i64: 0, 2, 3, 1>} : (tensor<1x6x2x4xf32>) -> tensor<1x2x4x6xf32> loc("tk")
    %y = onnx.MatMul %qt, %kt {texture.layouts = [#texture.layout<rows4>]} : (tensor<1x2x6x4xf32>, tensor<1x2x4x6xf32>) -> tensor<1x2x6x6xf32> loc("mm")
    func.return %y : tensor<1x2x6x6xf32>
  }
}

// -----

// The same chain without the marks: a copy kernel per Split result (each with its
// Reshape and Transpose folded in), then the product.
// CHECK:      ocl.kernel @split_0({{.*}}) attributes {onnx.node = "node 'split' (Split)"}
// CHECK:      ocl.kernel @split_1({{.*}}) attributes {onnx.node = "node 'split' (Split)"}
// CHECK:      ocl.kernel @matmul_2(
builtin.module {
  func.func @main_graph(%x: tensor<1x6x16xf32> {texture.layout = #texture.layout<rows4>}) -> tensor<1x2x6x6xf32> {
    %0 = onnx.None
    %s = onnx.Constant {texture.layouts = [#texture.layout<rows4>], value = dense<[1, 6, 2, 4]> : tensor<4xi64>} : tensor<4xi64>
    %q, %k = onnx.Split %x, %0 {texture.layouts = [#texture.layout<rows4>, #texture.layout<rows4>], axis = -1 : i64, num_outputs = 2 : i64} : (tensor<1x6x16xf32>, none) -> (tensor<1x6x8xf32>, tensor<1x6x8xf32>) loc("split")
    %qr = onnx.Reshape %q, %s {texture.layouts = [#texture.layout<nc4hw4>]} : (tensor<1x6x8xf32>, tensor<4xi64>) -> tensor<1x6x2x4xf32> loc("rq")
    %qt = onnx.Transpose %qr {texture.layouts = [#texture.layout<rows4>], perm = array<i64: 0, 2, 1, 3>} : (tensor<1x6x2x4xf32>) -> tensor<1x2x6x4xf32> loc("tq")
    %kr = onnx.Reshape %k, %s {texture.layouts = [#texture.layout<nc4hw4>]} : (tensor<1x6x8xf32>, tensor<4xi64>) -> tensor<1x6x2x4xf32> loc("rk")
    %kt = onnx.Transpose %kr {texture.layouts = [#texture.layout<rows4>], perm = array<i64: 0, 2, 3, 1>} : (tensor<1x6x2x4xf32>) -> tensor<1x2x4x6xf32> loc("tk")
    %y = onnx.MatMul %qt, %kt {texture.layouts = [#texture.layout<rows4>]} : (tensor<1x2x6x4xf32>, tensor<1x2x4x6xf32>) -> tensor<1x2x6x6xf32> loc("mm")
    func.return %y : tensor<1x2x6x6xf32>
  }
}

// -----

// A copy that reads a view (the Pad after a Transpose view) composes the two maps: one
// kernel reading %x; the Transpose's result has no storage.
// CHECK:      ocl.kernel @pad_0(%out: !texture.image2d<{{.*}}>, %in: !texture.image2d<2x5xf32>) attributes {onnx.node = "node 'pad' (Pad)"}
// CHECK-NOT:  ocl.kernel
// CHECK:      func.func @main_graph
// CHECK-NEXT:   %[[X:.*]] = texture.pack %x {layout = #texture.layout<rows4>}
// CHECK-NEXT:   %y = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 8, 8>}
// CHECK-NEXT:   ocl.launch @pad_0(%y, %[[X]])
builtin.module {
  func.func @main_graph(%x: tensor<5x6xf32> {texture.layout = #texture.layout<rows4>}) -> tensor<8x8xf32> {
    %p = onnx.Constant {texture.layouts = [#texture.layout<rows4>], value = dense<[1, 2, 1, 1]> : tensor<4xi64>} : tensor<4xi64>
    %0 = onnx.None
    %t = onnx.Transpose %x {texture.layouts = [#texture.layout<rows4>], texture.view, perm = array<i64: 1, 0>} : (tensor<5x6xf32>) -> tensor<6x5xf32> loc("t")
    %y = onnx.Pad %t, %p, %0, %0 {texture.layouts = [#texture.layout<rows4>]} : (tensor<6x5xf32>, tensor<4xi64>, none, none) -> tensor<8x8xf32> loc("pad")
    func.return %y : tensor<8x8xf32>
  }
}

// -----

// A view has no storage, so a graph output cannot be one: one line naming the node.
// CHECK: node 't' (Transpose): marked texture.view but cannot be a view: a graph output needs storage
builtin.module {
  func.func @main_graph(%x: tensor<5x6xf32> {texture.layout = #texture.layout<rows4>}) -> tensor<6x5xf32> {
    %t = onnx.Transpose %x {texture.layouts = [#texture.layout<rows4>], texture.view, perm = array<i64: 1, 0>} : (tensor<5x6xf32>) -> tensor<6x5xf32> loc("t")
    func.return %t : tensor<6x5xf32>
  }
}

// -----

// Only reshapes, transposes, slices, splits and concats can be views.
// CHECK: node 'pad' (Pad): marked texture.view but cannot be a view: only reshapes, transposes, slices, splits and concats can be views
builtin.module {
  func.func @main_graph(%x: tensor<5x6xf32> {texture.layout = #texture.layout<rows4>}) -> tensor<8x8xf32> {
    %p = onnx.Constant {texture.layouts = [#texture.layout<rows4>], value = dense<[1, 2, 2, 0]> : tensor<4xi64>} : tensor<4xi64>
    %0 = onnx.None
    %y = onnx.Pad %x, %p, %0, %0 {texture.layouts = [#texture.layout<rows4>], texture.view} : (tensor<5x6xf32>, tensor<4xi64>, none, none) -> tensor<8x8xf32> loc("pad")
    %r = onnx.Relu %y {texture.layouts = [#texture.layout<rows4>]} : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("relu")
    func.return %r : tensor<8x8xf32>
  }
}

// -----

// A conv's weight is packed by the host: a Reshape it reads cannot be a view.
// CHECK: node 'r' (Reshape): marked texture.view but cannot be a view: its reader node 'conv' (Conv) reads it as a weight or constant
builtin.module {
  func.func @main_graph(%x: tensor<1x4x5x5xf32> {texture.layout = #texture.layout<nc4hw4>}, %w: tensor<2x36xf32> {texture.layout = #texture.layout<rows4>}) -> tensor<1x2x3x3xf32> {
    %s = onnx.Constant {texture.layouts = [#texture.layout<rows4>], value = dense<[2, 4, 3, 3]> : tensor<4xi64>} : tensor<4xi64>
    %0 = onnx.None
    %r = onnx.Reshape %w, %s {texture.layouts = [#texture.layout<nc4hw4>], texture.view} : (tensor<2x36xf32>, tensor<4xi64>) -> tensor<2x4x3x3xf32> loc("r")
    %y = onnx.Conv %x, %r, %0 {texture.layouts = [#texture.layout<nc4hw4>]} : (tensor<1x4x5x5xf32>, tensor<2x4x3x3xf32>, none) -> tensor<1x2x3x3xf32> loc("conv")
    func.return %y : tensor<1x2x3x3xf32>
  }
}

// -----

// A Concat view: its reader (the Add) branches to the operand holding each pixel; no
// concat kernel, no storage for %c.
// CHECK:      ocl.kernel @eltwise_0(%out: !texture.image2d<2x6xf32>, %in00: !texture.image2d<2x1xf32>, %in01: !texture.image2d<2x5xf32>, %in1: !texture.image2d<2x6xf32>) attributes {onnx.node = "node 'add' (Add)"}
// CHECK:        scf.if
// CHECK-NOT:  ocl.kernel
// CHECK:      func.func @main_graph
// CHECK-NOT:    texture.alloc {{.*}}shape = array<i64: 1, 6, 8>} {{.*}}
// CHECK:        %y = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 1, 6, 8>}
// CHECK-NEXT:   ocl.launch @eltwise_0(%y,
builtin.module {
  func.func @main_graph(%x: tensor<1x1x8xf32> {texture.layout = #texture.layout<rows4>}, %z: tensor<1x5x8xf32> {texture.layout = #texture.layout<rows4>}, %b: tensor<1x6x8xf32> {texture.layout = #texture.layout<rows4>}) -> tensor<1x6x8xf32> {
    %c = onnx.Concat %x, %z {texture.layouts = [#texture.layout<rows4>], texture.view, axis = 1 : i64} : (tensor<1x1x8xf32>, tensor<1x5x8xf32>) -> tensor<1x6x8xf32> loc("concat")
    %y = onnx.Add %c, %b {texture.layouts = [#texture.layout<rows4>]} : (tensor<1x6x8xf32>, tensor<1x6x8xf32>) -> tensor<1x6x8xf32> loc("add")
    func.return %y : tensor<1x6x8xf32>
  }
}
