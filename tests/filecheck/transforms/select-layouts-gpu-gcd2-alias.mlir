// RUN: mobile-opt %s -p 'select-layouts{target=gpu solver=gcd2}' | filecheck %s
// RUN: mobile-opt %s -p 'select-layouts{target=gpu solver=gcd2},onnx-to-texture' | filecheck %s --check-prefix=LOWERED
// RUN: mobile-opt %s -p 'select-layouts{target=gpu solver=local},onnx-to-texture' | filecheck %s --check-prefix=LOCAL

// A data-movement op's copy kernel is costed on the edge from its source, for both layouts:
// stored rows4, %x [1, 3, 1, 5] has the pixels of %s [3, 5], so the Squeeze is a free alias
// and its copy kernel goes (the local rules store %x nc4hw4, and copy).
// CHECK:      func.func @main_graph(%x: tensor<1x3x1x5xf32> {texture.layout = #texture.layout<rows4>}, %z: tensor<1x3x1x5xf32> {texture.layout = #texture.layout<nc4hw4>})
// CHECK:        %s = onnx.Squeeze %x, %none {texture.layouts = [#texture.layout<rows4>]}
// An Exp fused into the copy would need a kernel of its own after an alias: no gain, so
// %z keeps the local layout and the copy kernel runs the Exp.
// CHECK-NEXT:   %t = onnx.Squeeze %z, %none {texture.layouts = [#texture.layout<rows4>]}
// CHECK-NEXT:   %e = onnx.Exp %t {texture.layouts = [#texture.layout<rows4>]}

// LOWERED-NOT:  ocl.kernel @squeeze{{.*}}"node 'squeeze' (Squeeze)"
// LOWERED:      ocl.kernel @squeeze_0({{.*}}"node 'squeeze2' (Squeeze) + node 'exp' (Exp)"
// LOWERED-NOT:  ocl.kernel

// LOCAL:        ocl.kernel @squeeze_0({{.*}}"node 'squeeze' (Squeeze)"
// LOCAL:        ocl.kernel @squeeze_1({{.*}}"node 'squeeze2' (Squeeze) + node 'exp' (Exp)"

builtin.module {
  func.func @main_graph(%x: tensor<1x3x1x5xf32>, %z: tensor<1x3x1x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
    %none = onnx.None
    %s = onnx.Squeeze %x, %none : (tensor<1x3x1x5xf32>, none) -> tensor<3x5xf32> loc("squeeze")
    %t = onnx.Squeeze %z, %none : (tensor<1x3x1x5xf32>, none) -> tensor<3x5xf32> loc("squeeze2")
    %e = onnx.Exp %t : (tensor<3x5xf32>) -> tensor<3x5xf32> loc("exp")
    func.return %s, %e : tensor<3x5xf32>, tensor<3x5xf32>
  }
}
