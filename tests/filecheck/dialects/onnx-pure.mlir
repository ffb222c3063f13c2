// RUN: mobile-opt %s -p dce | filecheck %s

// onnx ops are Pure: stock dead-code elimination drops the unused ones and
// keeps what the return needs.

// CHECK-LABEL: func.func @dead_ops
func.func @dead_ops(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %a = onnx.Relu %x
  // CHECK-NEXT: func.return %a
  %n = onnx.None
  %a = onnx.Relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = onnx.Sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = onnx.Clip %b, %n, %n : (tensor<2x3xf32>, none, none) -> tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}
