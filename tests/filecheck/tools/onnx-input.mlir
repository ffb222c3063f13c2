// mobile-opt reads an .onnx file by its extension, imports it, runs the
// pipeline, and prints or writes (-o) the result.

// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %inputs/make_model.py conv conv.onnx
// RUN: %python %inputs/make_model.py fold fold.onnx

// RUN: mobile-opt conv.onnx | filecheck %s
// RUN: mobile-opt conv.onnx -o out.mlir
// RUN: filecheck %s --input-file out.mlir
// The written IR is mobile-opt input in its turn.
// RUN: mobile-opt out.mlir | filecheck %s

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main_graph(%x: tensor<1x3x8x8xf32> {onnx.name = "x"}) -> (tensor<1x8x8x8xf32> {onnx.name = "y"}) {
// CHECK-NEXT:     %w = onnx.Weight {store = "{{/.*}}/conv.onnx", key = "w"} : tensor<8x3x3x3xf32>
// CHECK-NEXT:     %b = onnx.Constant {value = dense<{{.*}}> : tensor<8xf32>} : tensor<8xf32>
// CHECK-NEXT:     %c = onnx.Conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:     %y = onnx.Relu %c : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:     func.return %y : tensor<1x8x8x8xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// Passes run on the imported module: x + a * b with constant a = [1, 2, 3, 4],
// b = [2, 2, 2, 2] folds to x + [2, 4, 6, 8].
// RUN: mobile-opt fold.onnx --pass-pipeline='builtin.module(onnx-fold-constants)' | filecheck %s --check-prefix=FOLD
// RUN: mobile-opt fold.onnx -p onnx-fold-constants | filecheck %s --check-prefix=FOLD
// FOLD:      func.func @main_graph(%x: tensor<4xf32> {onnx.name = "x"}) -> (tensor<4xf32> {onnx.name = "y"}) {
// FOLD-NEXT:   %ab = onnx.Constant {value = dense<[2.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00]> : tensor<4xf32>} : tensor<4xf32>
// FOLD-NEXT:   %y = onnx.Add %x, %ab : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// FOLD-NEXT:   func.return %y : tensor<4xf32>
// FOLD-NEXT: }

// An .onnx input cannot come from standard input: the weights refer to the file.
// RUN: %python %inputs/exit_status.py mobile-opt --frontend onnx < conv.onnx | filecheck %s --check-prefix=STDIN
// STDIN:      [output]
// STDIN-NEXT: mobile-opt: error: an .onnx input must be a file, not standard input
// STDIN-NEXT: [exit status 1]
