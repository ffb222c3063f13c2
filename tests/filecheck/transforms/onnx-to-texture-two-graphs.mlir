// RUN: mobile-opt %s -p select-layouts,onnx-to-texture | filecheck %s
// RUN: mobile-opt %s -p select-layouts,onnx-to-texture | mobile-opt | filecheck %s --check-prefix=REVERIFY

// Kernel names stay unique across the graph functions of one module.

// Each launch names its own graph's kernel, and the result verifies again.
// CHECK:     func.func @f(
// CHECK:       ocl.launch @[[F:[a-z_0-9]+]](
// CHECK:     func.func @g(
// CHECK-NOT:   ocl.launch @[[F]](
// CHECK:       ocl.launch @{{[a-z_0-9]+}}(
// REVERIFY-DAG: attributes {onnx.node = "node 'relu' (Relu)"}
// REVERIFY-DAG: attributes {onnx.node = "node 'sigmoid' (Sigmoid)"}

builtin.module {
  func.func @f(%x: tensor<1x6x2x3xf32>) -> tensor<1x6x2x3xf32> {
    %r = onnx.Relu %x : (tensor<1x6x2x3xf32>) -> tensor<1x6x2x3xf32> loc("relu")
    func.return %r : tensor<1x6x2x3xf32>
  }
  func.func @g(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
    %s = onnx.Sigmoid %x : (tensor<2x5xf32>) -> tensor<2x5xf32> loc("sigmoid")
    func.return %s : tensor<2x5xf32>
  }
}
