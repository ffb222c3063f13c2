// mobile-translate --import-onnx writes the imported module to -o (or standard
// output), whole or not at all.

// RUN: rm -rf %t && mkdir -p %t/out && cd %t
// RUN: %python %inputs/make_model.py conv conv.onnx
// RUN: %python %inputs/make_model.py topk topk.onnx
// RUN: %python %inputs/make_model.py truncated truncated.onnx

// RUN: mobile-translate --import-onnx conv.onnx -o out/conv.mlir
// RUN: filecheck %s --input-file out/conv.mlir
// RUN: mobile-translate --import-onnx conv.onnx | filecheck %s
// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main_graph(%x: tensor<1x3x8x8xf32> {onnx.name = "x"}) -> (tensor<1x8x8x8xf32> {onnx.name = "y"}) {
// CHECK:          %y = onnx.Relu %c : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>

// On error the existing output stays as it was, and nothing else is left behind.
// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx topk.onnx -o out/conv.mlir | filecheck %s --check-prefix=TOPK
// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx truncated.onnx -o out/conv.mlir | filecheck %s --check-prefix=TRUNCATED
// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx topk.onnx -o out/topk.mlir | filecheck %s --check-prefix=TOPK
// RUN: filecheck %s --input-file out/conv.mlir
// RUN: %python %inputs/list_dir.py out | filecheck %s --check-prefix=FILES
// TOPK:      [output]
// TOPK-NEXT: mobile-translate: error: topk.onnx: node 'topk_0' (TopK): unsupported op
// TOPK-NEXT: [exit status 1]
// TRUNCATED:      [output]
// TRUNCATED-NEXT: mobile-translate: error: truncated.onnx: truncated or corrupt protobuf ({{.+}})
// TRUNCATED-NEXT: [exit status 1]
// FILES:      [entries]
// FILES-NEXT: conv.mlir
// FILES-NEXT: [end]

// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx conv.onnx -o no/such/folder/conv.mlir | filecheck %s --check-prefix=FOLDER
// FOLDER:      [output]
// FOLDER-NEXT: mobile-translate: error: no/such/folder/conv.mlir: folder no/such/folder does not exist
// FOLDER-NEXT: [exit status 1]
