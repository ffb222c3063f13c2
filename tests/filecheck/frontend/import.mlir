// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %inputs/make_model.py conv conv.onnx
// RUN: mobile-translate --import-onnx conv.onnx -o conv.mlir
// RUN: filecheck %s --input-file conv.mlir
// RUN: mobile-translate --import-onnx conv.onnx | filecheck %s

// The printed IR parses again and prints the same.
// RUN: mobile-opt conv.mlir | filecheck %s

// The ONNX graph conv1: Conv(x, w[8x3x3x3], b[8], pads 1) -> relu1: Relu -> y.
// It becomes @main_graph, whose arguments and results keep the graph's input and
// output names; SSA values are named after ONNX values; the 216-element weight
// stays in the model file (an absolute path, so the IR can move), the 8-element
// bias is inline.

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main_graph(%x: tensor<1x3x8x8xf32> {onnx.name = "x"}) -> (tensor<1x8x8x8xf32> {onnx.name = "y"}) {
// CHECK-NEXT:     %w = onnx.Weight {store = "{{/.*}}/conv.onnx", key = "w"} : tensor<8x3x3x3xf32>
// CHECK-NEXT:     %b = onnx.Constant {value = dense<[0.000000e+00, 1.000000e-02, 2.000000e-02, 3.000000e-02, 4.000000e-02, 5.000000e-02, 6.000000e-02, 7.000000e-02]> : tensor<8xf32>} : tensor<8xf32>
// CHECK-NEXT:     %c = onnx.Conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:     %y = onnx.Relu %c : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:     func.return %y : tensor<1x8x8x8xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
