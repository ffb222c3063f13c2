// RUN: mobile-opt %s -p onnx-to-hvx | filecheck %s
// RUN: mobile-opt %s -p 'select-layouts{target=dsp layout=col4},onnx-to-hvx' | filecheck %s
// RUN: mobile-opt %s -p 'select-layouts{target=dsp},onnx-to-hvx' | filecheck %s

// onnx-to-hvx realises what is recorded, here by hand: the first product in col1
// (vmpy), a gather kernel that moves its result to col4, the second product in col4
// (vrmpy). select-layouts, in a forced layout or not, keeps a relayout it finds: the
// first product must produce the relayout's source layout.

builtin.module {
  func.func @main_graph(%a: tensor<8x4xui8> {onnx.name = "a", hvx.layout = #hvx.layout<col1>}) -> (tensor<8x4xui8> {onnx.name = "y"}) {
    %s = onnx.Constant {value = dense<2.000000e-02> : tensor<f32>} : tensor<f32>
    %z = onnx.Constant {value = dense<128> : tensor<ui8>} : tensor<ui8>
    %ws = onnx.Constant {value = dense<5.000000e-03> : tensor<f32>} : tensor<f32>
    %wz = onnx.Constant {value = dense<0> : tensor<i8>} : tensor<i8>
    %w1 = onnx.Constant {value = dense<[[44, 17, 1, -30], [-25, -59, -55, -62], [-42, 40, 19, 52], [0, 13, 60, 29]]> : tensor<4x4xi8>} : tensor<4x4xi8>
    %w2 = onnx.Constant {value = dense<[[16, 5, 7, 55], [-29, 40, 21, -64], [-14, 45, 6, -60], [33, 29, 44, -42]]> : tensor<4x4xi8>} : tensor<4x4xi8>
    %h = onnx.QLinearMatMul %a, %s, %z, %w1, %ws, %wz, %s, %z {hvx.implementation = #hvx.implementation<col1, vmpy, 1614 packets, 6392 cycles>} : (tensor<8x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<8x4xui8>
    %r = hvx.relayout %h from <col1> to <col4> : tensor<8x4xui8> -> tensor<8x4xui8>
    %y = onnx.QLinearMatMul %r, %s, %z, %w2, %ws, %wz, %s, %z {hvx.implementation = #hvx.implementation<col4, vrmpy, 409 packets, 1565 cycles>} : (tensor<8x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<8x4xui8>
    func.return %y : tensor<8x4xui8>
  }
}

// CHECK:      builtin.module attributes {hvx.io = [{role = "input", name = "a", buffer = "a", layout = "col1"
// CHECK-SAME:   {role = "output", name = "y", buffer = "y", layout = "col4"
// CHECK:        hvx.buffer @r {size = 2176 : i64}
// CHECK-NEXT:   hvx.buffer @relayout_r_table
// CHECK:        hvx.call @k0_op
// CHECK-NEXT:   hvx.call @relayout_r
// CHECK-NEXT:   hvx.call @k1_op
// CHECK:      hvx.func @k0_op {
// CHECK:        hvx.vmpy
// CHECK:      hvx.func @relayout_r {
// CHECK:        hvx.memub_load_rr {{.*}} {region = "h"}
// CHECK:        hvx.memb_store_rr {{.*}} {region = "r"}
// CHECK:      } {hvx.node = "op hvx.relayout"}
// CHECK:      hvx.func @k1_op {
// CHECK:        hvx.vrmpy_acc
