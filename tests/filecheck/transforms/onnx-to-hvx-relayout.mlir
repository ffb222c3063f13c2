// RUN: mobile-opt %s -p 'onnx-to-hvx{layout=col4}' | filecheck %s
// RUN: mobile-opt %s -p onnx-to-hvx | filecheck %s --check-prefix=AUTO

// A relayout that a layout selection placed is honoured: the first product writes col1,
// a gather kernel moves the tensor to col4, the second product reads col4.

builtin.module {
  func.func @main_graph(%a: tensor<8x4xui8> {onnx.name = "a"}) -> (tensor<8x4xui8> {onnx.name = "y"}) {
    %s = onnx.Constant {value = dense<2.000000e-02> : tensor<f32>} : tensor<f32>
    %z = onnx.Constant {value = dense<128> : tensor<ui8>} : tensor<ui8>
    %ws = onnx.Constant {value = dense<5.000000e-03> : tensor<f32>} : tensor<f32>
    %wz = onnx.Constant {value = dense<0> : tensor<i8>} : tensor<i8>
    %w1 = onnx.Constant {value = dense<[[44, 17, 1, -30], [-25, -59, -55, -62], [-42, 40, 19, 52], [0, 13, 60, 29]]> : tensor<4x4xi8>} : tensor<4x4xi8>
    %w2 = onnx.Constant {value = dense<[[16, 5, 7, 55], [-29, 40, 21, -64], [-14, 45, 6, -60], [33, 29, 44, -42]]> : tensor<4x4xi8>} : tensor<4x4xi8>
    %h = onnx.QLinearMatMul %a, %s, %z, %w1, %ws, %wz, %s, %z : (tensor<8x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<8x4xui8>
    %r = hvx.relayout %h from <col1> to <col4> : tensor<8x4xui8> -> tensor<8x4xui8>
    %y = onnx.QLinearMatMul %r, %s, %z, %w2, %ws, %wz, %s, %z : (tensor<8x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<8x4xui8>
    func.return %y : tensor<8x4xui8>
  }
}

// Both policies keep the first product in the relayout's source layout, col1 (vmpy),
// gather to col4 and run the second product in col4 (vrmpy).
// CHECK:      hvx.call @k0_op
// CHECK-NEXT: hvx.call @k1_op_1
// CHECK-NEXT: hvx.call @k2_op
// CHECK:      hvx.func @k0_op {
// CHECK:        hvx.vmpy
// CHECK:      hvx.func @k1_op_1 {
// CHECK:        hvx.memub_load_rr
// CHECK:        hvx.memb_store_rr
// CHECK:      hvx.func @k2_op {
// CHECK:        hvx.vrmpy_acc

// AUTO:      hvx.func @k0_op {
// AUTO:        hvx.vmpy
// AUTO:      hvx.func @k2_op {
// AUTO:        hvx.vrmpy_acc
