// RUN: mobile-opt %s -p select-layouts,onnx-to-texture | filecheck %s

// A Clip fused into a producer's kernel takes its constant bounds as literals:
// they are neither packed nor passed to the kernel.

// CHECK:      ocl.kernel @eltwise_0(%out: !texture.image2d<2x2xf32>, %in0: !texture.image2d<2x2xf32>) attributes {onnx.node = "node 'sigmoid' (Sigmoid) + node 'clip' (Clip)"}
// CHECK-NOT:  texture.pack %lo
// CHECK-NOT:  texture.pack %hi
// CHECK:      ocl.launch @eltwise_0(%c, %{{.*}}) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 2, 2>} : !texture.image2d<2x2xf32>, !texture.image2d<2x2xf32>

builtin.module {
  func.func @main_graph(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
    %lo = onnx.Constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
    %hi = onnx.Constant {value = dense<6.0> : tensor<f32>} : tensor<f32>
    %s = onnx.Sigmoid %x : (tensor<2x5xf32>) -> tensor<2x5xf32> loc("sigmoid")
    %c = onnx.Clip %s, %lo, %hi : (tensor<2x5xf32>, tensor<f32>, tensor<f32>) -> tensor<2x5xf32> loc("clip")
    func.return %c : tensor<2x5xf32>
  }
}
