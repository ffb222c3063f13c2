func.func @f(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %a = onnx.Relu %x : (tensor<2x3xf32>) -> tensor<2x4xf32>
  func.return %a : tensor<2x4xf32>
}
