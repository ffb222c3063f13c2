// RUN: mobile-opt %s -p 'select-layouts{target=gpu solver=local}' | filecheck %s
// RUN: mobile-opt %s -p select-layouts | filecheck %s
// RUN: mobile-opt %s -p select-layouts,onnx-to-texture | filecheck %s --check-prefix=LOWERED
// RUN: not mobile-opt %s -p 'select-layouts{target=npu}' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not mobile-opt %s -p 'select-layouts{solver=magic}' 2>&1 | filecheck %s --check-prefix=SOLVER
// RUN: not mobile-opt %s -p 'select-layouts{layout=col2}' 2>&1 | filecheck %s --check-prefix=LAYOUT
// RUN: not mobile-opt %s -p 'select-layouts{solver=gcd2 device=nonesuch}' 2>&1 | filecheck %s --check-prefix=PROFILE
// PROFILE: mobile-opt: error: {{.*}}: select-layouts: nonesuch: no such device profile (shipped: {{.*}})

// select-layouts{target=gpu solver=local} records the texture layout of every value: on
// each graph argument (`texture.layout`) and on each op, one per result (`texture.layouts`).
// Rank-4 values are nc4hw4 unless they meet a matrix product, softmax or layernorm; other
// ranks are rows4; constants are recorded too (the layout they are packed in for a
// consumer that asks for none).
// CHECK:      func.func @main_graph(%x: tensor<1x8x6x6xf32> {texture.layout = #texture.layout<nc4hw4>}, %a: tensor<1x4x6x8xf32> {texture.layout = #texture.layout<rows4>})
// CHECK-NEXT:   %none = onnx.None{{$}}
// CHECK-NEXT:   %w = onnx.Constant {texture.layouts = [#texture.layout<nc4hw4>]
// CHECK-NEXT:   %c = onnx.Conv %x, %w, %none {texture.layouts = [#texture.layout<nc4hw4>]}
// CHECK-NEXT:   %r = onnx.Relu %c {texture.layouts = [#texture.layout<nc4hw4>]}
// CHECK-NEXT:   %b = onnx.Constant {texture.layouts = [#texture.layout<rows4>]
// CHECK-NEXT:   %m = onnx.MatMul %a, %b {texture.layouts = [#texture.layout<rows4>]}
// The Sigmoid runs in the MatMul's kernel (its only user, elementwise), so it takes the
// kernel's rows4, though by itself (a rank-4 value that meets no row op) it would be nc4hw4.
// CHECK-NEXT:   %s = onnx.Sigmoid %m {texture.layouts = [#texture.layout<rows4>]}
// CHECK-NEXT:   %t = onnx.Transpose %s {texture.layouts = [#texture.layout<nc4hw4>]
// CHECK-NEXT:   %shape = onnx.Constant {texture.layouts = [#texture.layout<rows4>]
// CHECK-NEXT:   %f = onnx.Reshape %t, %shape {texture.layouts = [#texture.layout<rows4>]}
// A recorded layout change stays as it is; the Exp after it takes its layout alone.
// CHECK-NEXT:   %n = texture.relayout %a {layout = #texture.layout<nc4hw4>} : tensor<1x4x6x8xf32> -> tensor<1x4x6x8xf32>
// CHECK-NEXT:   %e = onnx.Exp %n {texture.layouts = [#texture.layout<nc4hw4>]}
// A Sigmoid whose operand has another user runs alone, in its own layout.
// CHECK-NEXT:   %m2 = onnx.MatMul %a, %b {texture.layouts = [#texture.layout<rows4>]}
// CHECK-NEXT:   %q = onnx.Sigmoid %m2 {texture.layouts = [#texture.layout<nc4hw4>]}

// onnx-to-texture realises them (and leaves no record behind): the conv + relu kernel
// writes nc4hw4, the MatMul + Sigmoid kernel rows4, the relayout is a copy kernel.
// LOWERED-NOT:  texture.layout =
// LOWERED-NOT:  texture.layouts
// LOWERED:      ocl.kernel @conv_0({{.*}}"node 'conv' (Conv) + node 'relu' (Relu)"
// LOWERED:      ocl.kernel @matmul_1({{.*}}"node 'mm' (MatMul) + node 'sig' (Sigmoid)"
// LOWERED:      ocl.kernel @relayout_3({{.*}}"node 'n' (relayout) + node 'exp' (Exp)"
// LOWERED:      %r = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 8, 6, 6>}
// LOWERED:      %s = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 1, 4, 6, 8>}
// LOWERED:      %e = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 4, 6, 8>}
// LOWERED-NEXT: ocl.launch @relayout_3
// LOWERED-NOT:  texture.layouts

// TARGET: mobile-opt: error: {{.*}}select-layouts: target must be one of gpu, dsp, not 'npu'
// SOLVER: mobile-opt: error: {{.*}}select-layouts: solver must be one of local, chain, pbqp, gcd2, exact, not 'magic'
// LAYOUT: mobile-opt: error: {{.*}}select-layouts: layout is an option of target=dsp

builtin.module {
  func.func @main_graph(%x: tensor<1x8x6x6xf32>, %a: tensor<1x4x6x8xf32>) -> (tensor<1x8x6x6xf32>, tensor<24x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) {
    %none = onnx.None
    %w = onnx.Constant {value = dense<0.5> : tensor<8x8x1x1xf32>} : tensor<8x8x1x1xf32>
    %c = onnx.Conv %x, %w, %none : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>, none) -> tensor<1x8x6x6xf32> loc("conv")
    %r = onnx.Relu %c : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> loc("relu")
    %b = onnx.Constant {value = dense<0.25> : tensor<8x8xf32>} : tensor<8x8xf32>
    %m = onnx.MatMul %a, %b : (tensor<1x4x6x8xf32>, tensor<8x8xf32>) -> tensor<1x4x6x8xf32> loc("mm")
    %s = onnx.Sigmoid %m : (tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32> loc("sig")
    %t = onnx.Transpose %s {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x6x8xf32>) -> tensor<1x6x4x8xf32> loc("tr")
    %shape = onnx.Constant {value = dense<[24, 8]> : tensor<2xi64>} : tensor<2xi64>
    %f = onnx.Reshape %t, %shape : (tensor<1x6x4x8xf32>, tensor<2xi64>) -> tensor<24x8xf32> loc("flat")
    %n = texture.relayout %a {layout = #texture.layout<nc4hw4>} : tensor<1x4x6x8xf32> -> tensor<1x4x6x8xf32> loc("n")
    %e = onnx.Exp %n : (tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32> loc("exp")
    %m2 = onnx.MatMul %a, %b : (tensor<1x4x6x8xf32>, tensor<8x8xf32>) -> tensor<1x4x6x8xf32> loc("mm2")
    %q = onnx.Sigmoid %m2 : (tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32> loc("sig2")
    func.return %r, %f, %e, %q, %m2 : tensor<1x8x6x6xf32>, tensor<24x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>
  }
}
