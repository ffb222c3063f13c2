// RUN: mobile-opt %s -p 'texture-tile{device=pocl cost-model=cdmpp}' | filecheck %s
// RUN: mobile-opt %s -p 'texture-tile{device=nvidia-h200 cost-model=cdmpp}' | filecheck %s
// RUN: mobile-opt %s -p 'texture-tile{device=pocl cost-model=cdmpp},select-layouts,onnx-to-texture' | filecheck %s --check-prefix=LOWERED
// RUN: not mobile-opt %s -p 'texture-tile{device=nvidia-h100 cost-model=cdmpp}' 2>&1 | filecheck %s --check-prefix=NOWEIGHTS

// The learned predictor picks a configuration of the same space as TMModel: a thread
// tile of 1, 2, 4 or 8 rows and maybe a work group, or a blocked plan; the softmax a
// work group over its rows.
// CHECK:      %y = onnx.MatMul %a, %w {texture.tile = {{{.*}}}}
// CHECK-NEXT: %z = onnx.Softmax %y {{{.*}}texture.tile = {{{.*}}}}
// CHECK-NOT:  texture.candidates

// The lowering obeys it.
// LOWERED: ocl.launch @matmul_0
// LOWERED: ocl.launch @softmax_1

// NOWEIGHTS: mobile-opt: error: {{.*}}texture-tile: no CDMPP predictor for device 'nvidia-h100' (models/weights/cdmpp-nvidia-h100.npz): train one with mobile-learn train

builtin.module {
  func.func @main_graph(%a: tensor<64x32xf32>) -> tensor<64x48xf32> {
    %w = onnx.Constant {value = dense<0.5> : tensor<32x48xf32>} : tensor<32x48xf32>
    %y = onnx.MatMul %a, %w : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
    %z = onnx.Softmax %y {axis = -1 : i64} : (tensor<64x48xf32>) -> tensor<64x48xf32>
    func.return %z : tensor<64x48xf32>
  }
}
