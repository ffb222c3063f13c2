// RUN: mobile-opt %s --split-input-file --verify-diagnostics -p onnx-to-texture | filecheck %s

// onnx-to-texture chooses no layout: it realises the ones recorded on the values
// (`texture.layout` on graph arguments, `texture.layouts` on ops), here other than
// select-layouts' local rules would record.

// The input packed rows4 for the Sigmoid, which stores rows4; the conv reads that and
// stores rows4 too (its kernel reads and writes lane by lane); the Relu stores nc4hw4: a
// layout change ends a kernel, so the Relu is not fused into the conv. (A consumer that
// wants its own packing of a graph input or constant, like the conv's weight, still gets
// one: packing is the host's.)
// CHECK:      ocl.kernel @eltwise_0({{.*}}) attributes {onnx.node = "node 'sig' (Sigmoid)"}
// CHECK:      ocl.kernel @conv_1({{.*}}) attributes {onnx.node = "node 'conv' (Conv)"}
// CHECK:      ocl.kernel @eltwise_2({{.*}}) attributes {onnx.node = "node 'relu' (Relu)"}
// CHECK:      func.func @main_graph(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
// CHECK-NEXT:   %[[X:.*]] = texture.pack %x {layout = #texture.layout<rows4>}
// CHECK-NEXT:   %s = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 1, 8, 6, 6>}
// CHECK-NEXT:   ocl.launch @eltwise_0(%s, %[[X]])
// CHECK:        texture.pack %w {layout = #texture.layout<oihw4o>}
// CHECK-NEXT:   %c = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 1, 8, 6, 6>}
// CHECK-NEXT:   ocl.launch @conv_1(%c, %s,
// CHECK-NEXT:   %r = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 8, 6, 6>}
// CHECK-NEXT:   ocl.launch @eltwise_2(%r, %c)
// CHECK-NEXT:   texture.unpack %r {layout = #texture.layout<nc4hw4>}
builtin.module {
  func.func @main_graph(%x: tensor<1x8x6x6xf32> {texture.layout = #texture.layout<rows4>}) -> tensor<1x8x6x6xf32> {
    %none = onnx.None
    %s = onnx.Sigmoid %x {texture.layouts = [#texture.layout<rows4>]} : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> loc("sig")
    %w = onnx.Constant {texture.layouts = [#texture.layout<nc4hw4>], value = dense<0.5> : tensor<8x8x1x1xf32>} : tensor<8x8x1x1xf32>
    %c = onnx.Conv %s, %w, %none {texture.layouts = [#texture.layout<rows4>]} : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>, none) -> tensor<1x8x6x6xf32> loc("conv")
    %r = onnx.Relu %c {texture.layouts = [#texture.layout<nc4hw4>]} : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> loc("relu")
    func.return %r : tensor<1x8x6x6xf32>
  }
}

// -----

// A recorded layout the op's kernel cannot write is an error naming the node (a
// texture.relayout after the product is how a solver asks for nc4hw4 there).
// CHECK: node 'mm' (MatMul): the product must be stored in rows4, not nc4hw4
builtin.module {
  func.func @main_graph(%a: tensor<1x4x6x8xf32> {texture.layout = #texture.layout<rows4>}) -> tensor<1x4x6x8xf32> {
    %b = onnx.Constant {texture.layouts = [#texture.layout<rows4>], value = dense<0.25> : tensor<8x8xf32>} : tensor<8x8xf32>
    %m = onnx.MatMul %a, %b {texture.layouts = [#texture.layout<nc4hw4>]} : (tensor<1x4x6x8xf32>, tensor<8x8xf32>) -> tensor<1x4x6x8xf32> loc("mm")
    func.return %m : tensor<1x4x6x8xf32>
  }
}

// -----

// A value with no recorded layout is an error naming its node.
// CHECK: node 'relu' (Relu): no texture layout is recorded for it; run select-layouts{target=gpu} before onnx-to-texture
builtin.module {
  func.func @main_graph(%x: tensor<2x8xf32> {texture.layout = #texture.layout<rows4>}) -> tensor<2x8xf32> {
    %r = onnx.Relu %x : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("relu")
    func.return %r : tensor<2x8xf32>
  }
}

// -----

// CHECK: graph input 'x': no texture layout is recorded for it; run select-layouts{target=gpu} before onnx-to-texture
builtin.module {
  func.func @main_graph(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %r = onnx.Relu %x {texture.layouts = [#texture.layout<rows4>]} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("relu")
    func.return %r : tensor<2x8xf32>
  }
}
