func.func @main_graph(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %t = onnx.Add %x, %t : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %t : tensor<1x2x4x4xf32>
}
