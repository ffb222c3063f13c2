// RUN: mobile-opt %s -p 'texture-tile{device=pocl}' | filecheck %s
// RUN: mobile-opt %s -p 'prune-configs{device=pocl}' | filecheck %s --check-prefix=PRUNE

// The access pattern of a product's B is a storage layout the host packs B in: the
// model may choose one for a graph input or weight; PoCL's profile takes block-8 strips.
// CHECK:      %y = onnx.MatMul %a, %b {texture.tile = {tile = array<i64: 1, {{[1248]}}>{{.*}}, layout = "block8"}}
// An activation keeps the layout its producer wrote, so its product has no pattern.
// CHECK:      %w = onnx.MatMul %a, %r {texture.tile = {tile = array<i64: 1, {{[1248]}}>{{(, group = array<i64: [0-9]+, [0-9]+>)?}}}}

// Every pattern is a candidate where B can take it, none where it cannot.
// PRUNE:      %y = onnx.MatMul %a, %b {texture.candidates = [{tile = array<i64: 1, 1>},
// PRUNE-SAME: layout = "block2"
// PRUNE-SAME: layout = "block4"
// PRUNE-SAME: layout = "block8"
// PRUNE-SAME: layout = "cols4"
// PRUNE:      %w = onnx.MatMul %a, %r {texture.candidates =
// PRUNE-NOT:  layout =
// PRUNE-SAME: texture.space

builtin.module {
  func.func @main_graph(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> (tensor<64x48xf32>, tensor<64x48xf32>) {
    %y = onnx.MatMul %a, %b : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
    %r = onnx.Relu %b : (tensor<32x48xf32>) -> tensor<32x48xf32>
    %w = onnx.MatMul %a, %r : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
    func.return %y, %w : tensor<64x48xf32>, tensor<64x48xf32>
  }
}
