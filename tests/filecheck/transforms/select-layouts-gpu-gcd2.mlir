// RUN: mobile-opt %s -p 'select-layouts{target=gpu solver=gcd2}' | filecheck %s
// RUN: mobile-opt %s -p 'select-layouts{target=gpu solver=exact explain=true}' 2>&1 | filecheck %s --check-prefix=EXPLAIN
// RUN: mobile-opt %s -p 'select-layouts{target=gpu solver=local}' | filecheck %s --check-prefix=LOCAL
// RUN: mobile-opt %s -p 'select-layouts{target=gpu solver=gcd2},onnx-to-texture' | filecheck %s --check-prefix=LOWERED

// %r is read by a 3x3 conv (which reads nc4hw4 by channel block) and by a MatMul with a
// 64-wide inner axis (which reads rows4 along it). The local rules store it rows4 (it
// meets a MatMul), and the conv gathers the lanes of each of its 18 taps per pixel. The
// global solvers store it nc4hw4 for the conv and pay one relayout copy to rows4 for the
// MatMul, which is cheaper than either reader gathering.
// CHECK:      func.func @main_graph(%x: tensor<1x8x8x64xf32> {texture.layout = #texture.layout<nc4hw4>})
// CHECK:        %r = onnx.Relu %x {texture.layouts = [#texture.layout<nc4hw4>]}
// CHECK-NEXT:   %r_rows4 = texture.relayout %r {layout = #texture.layout<rows4>}
// CHECK-NEXT:   %c = onnx.Conv %r, %w, %none {{.*}}texture.layouts = [#texture.layout<nc4hw4>]
// The Sigmoid runs in the conv's kernel, in its layout.
// CHECK-NEXT:   %s = onnx.Sigmoid %c {texture.layouts = [#texture.layout<nc4hw4>]}
// CHECK-NEXT:   %m = onnx.MatMul %r_rows4, %b {texture.layouts = [#texture.layout<rows4>]}

// Every solver finds the same cost (storing %r rows4 and copying it to nc4hw4 for the
// conv ties with the choice above), one transform, and local's cost above it.
// EXPLAIN:      select-layouts{target=gpu solver=exact}: 6 nodes, costs in ns
// EXPLAIN:      transforms kept: 1
// EXPLAIN:      total ns: local {{[0-9]+}}, {{.*}}, pbqp [[BEST:[0-9]+]] (optimal), gcd2 [[BEST]] (optimal), exact [[BEST]] (optimal)
// EXPLAIN:      texture.relayout

// LOCAL:        %r = onnx.Relu %x {texture.layouts = [#texture.layout<rows4>]}
// LOCAL-NOT:    texture.relayout

// The relayout is a copy kernel of its own, from %r's nc4hw4 image into a rows4 one; the
// conv (with the Sigmoid) reads %r as it is stored, the MatMul reads the copy.
// LOWERED:      ocl.kernel @eltwise_0({{.*}}"node 'relu' (Relu)"
// LOWERED:      ocl.kernel @relayout_1(%out: !texture.image2d<16x64xf32>, %in: !texture.image2d<128x8xf32>)
// LOWERED:      ocl.kernel @conv_2({{.*}}"node 'conv' (Conv) + node 'sig' (Sigmoid)"
// LOWERED:      ocl.kernel @matmul_3(
// LOWERED:      %r = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 8, 8, 64>}
// LOWERED:      %r_rows4 = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 1, 8, 8, 64>}
// LOWERED-NEXT: ocl.launch @relayout_1(%r_rows4, %r)
// LOWERED:      ocl.launch @conv_2(%s, %r,
// LOWERED:      ocl.launch @matmul_3(%m, %r_rows4,

builtin.module {
  func.func @main_graph(%x: tensor<1x8x8x64xf32>) -> (tensor<1x8x8x64xf32>, tensor<1x8x8x64xf32>) {
    %none = onnx.None
    %w = onnx.Constant {value = dense<0.5> : tensor<8x8x3x3xf32>} : tensor<8x8x3x3xf32>
    %b = onnx.Constant {value = dense<0.25> : tensor<64x64xf32>} : tensor<64x64xf32>
    %r = onnx.Relu %x : (tensor<1x8x8x64xf32>) -> tensor<1x8x8x64xf32> loc("relu")
    %c = onnx.Conv %r, %w, %none {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x64xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x8x64xf32> loc("conv")
    %s = onnx.Sigmoid %c : (tensor<1x8x8x64xf32>) -> tensor<1x8x8x64xf32> loc("sig")
    %m = onnx.MatMul %r, %b : (tensor<1x8x8x64xf32>, tensor<64x64xf32>) -> tensor<1x8x8x64xf32> loc("mm")
    func.return %s, %m : tensor<1x8x8x64xf32>, tensor<1x8x8x64xf32>
  }
}
