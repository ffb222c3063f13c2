// mobile-opt's diagnostics for bad .onnx inputs: exactly one line
// `mobile-opt: error: <file>: ...` naming the file (and, for a node, the node by
// name, or by its first output if unnamed, and its op type), exit status 1, no
// traceback. exit_status.py brackets everything the tool wrote between `[output]`
// and `[exit status N]`, so each check also shows that nothing else was written.

// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %inputs/make_model.py conv conv.onnx
// RUN: %python %inputs/make_model.py topk topk.onnx
// RUN: %python %inputs/make_model.py nms nms.onnx
// RUN: %python %inputs/make_model.py domain domain.onnx
// RUN: %python %inputs/make_model.py resize_linear resize.onnx
// RUN: %python %inputs/make_model.py opset7 opset7.onnx
// RUN: %python %inputs/make_model.py opset23 opset23.onnx
// RUN: %python %inputs/make_model.py dynamic dynamic.onnx
// RUN: %python %inputs/make_model.py truncated truncated.onnx
// RUN: %python %inputs/make_model.py garbage garbage.onnx

// RUN: %python %inputs/exit_status.py mobile-opt missing.onnx | filecheck %s --check-prefix=MISSING
// MISSING:      [output]
// MISSING-NEXT: mobile-opt: error: missing.onnx: no such file
// MISSING-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-opt garbage.onnx | filecheck %s --check-prefix=GARBAGE
// GARBAGE:      [output]
// GARBAGE-NEXT: mobile-opt: error: garbage.onnx: not an ONNX model ({{.+}})
// GARBAGE-NEXT: [exit status 1]

// The first half of conv.onnx, cut inside its weight.
// RUN: %python %inputs/exit_status.py mobile-opt truncated.onnx | filecheck %s --check-prefix=TRUNCATED
// TRUNCATED:      [output]
// TRUNCATED-NEXT: mobile-opt: error: truncated.onnx: truncated or corrupt protobuf ({{.+}})
// TRUNCATED-NEXT: [exit status 1]
// TRUNCATED-NOT:  Traceback

// RUN: %python %inputs/exit_status.py mobile-opt topk.onnx | filecheck %s --check-prefix=TOPK
// TOPK:      [output]
// TOPK-NEXT: mobile-opt: error: topk.onnx: node 'topk_0' (TopK): unsupported op
// TOPK-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-opt nms.onnx | filecheck %s --check-prefix=NMS
// NMS:      [output]
// NMS-NEXT: mobile-opt: error: nms.onnx: node 'selected' (NonMaxSuppression): unsupported op
// NMS-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-opt domain.onnx | filecheck %s --check-prefix=DOMAIN
// DOMAIN:      [output]
// DOMAIN-NEXT: mobile-opt: error: domain.onnx: node 'ms_conv' (FusedConv): unsupported op domain 'com.microsoft'
// DOMAIN-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-opt resize.onnx | filecheck %s --check-prefix=RESIZE
// RESIZE:      [output]
// RESIZE-NEXT: mobile-opt: error: resize.onnx: node 'up2x' (Resize): onnx.Resize: mode 'linear' is not supported, only 'nearest'
// RESIZE-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-opt opset7.onnx | filecheck %s --check-prefix=OPSET7
// OPSET7:      [output]
// OPSET7-NEXT: mobile-opt: error: opset7.onnx: opset 7 is not supported (supported: 9 to 21)
// OPSET7-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-opt opset23.onnx | filecheck %s --check-prefix=OPSET23
// OPSET23:      [output]
// OPSET23-NEXT: mobile-opt: error: opset23.onnx: opset 23 is not supported (supported: 9 to 21)
// OPSET23-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx | filecheck %s --check-prefix=DYNAMIC
// DYNAMIC:      [output]
// DYNAMIC-NEXT: mobile-opt: error: dynamic.onnx: input 'x' has dynamic dim 'N'; a static shape is needed (give it with --dim N=<size>)
// DYNAMIC-NEXT: [exit status 1]

// On error, -o leaves no output file (and no temporary file) behind...
// RUN: mkdir out
// RUN: %python %inputs/exit_status.py mobile-opt topk.onnx -o out/topk.mlir | filecheck %s --check-prefix=TOPK
// RUN: %python %inputs/exit_status.py mobile-opt truncated.onnx -o out/truncated.mlir | filecheck %s --check-prefix=TRUNCATED
// RUN: %python %inputs/list_dir.py out | filecheck %s --check-prefix=EMPTY
// EMPTY:      [entries]
// EMPTY-NEXT: [end]

// ...and does not touch an existing one.
// RUN: echo "earlier output" > out/model.mlir
// RUN: %python %inputs/exit_status.py mobile-opt topk.onnx -o out/model.mlir | filecheck %s --check-prefix=TOPK
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx -o out/model.mlir | filecheck %s --check-prefix=DYNAMIC
// RUN: %python %inputs/exit_status.py mobile-opt conv.onnx -p no-such-pass -o out/model.mlir | filecheck %s --check-prefix=PASS
// RUN: %python %inputs/list_dir.py out | filecheck %s --check-prefix=KEPT
// RUN: filecheck %s --check-prefix=OLD --input-file out/model.mlir
// PASS:      [output]
// PASS-NEXT: mobile-opt: error: pass pipeline 'no-such-pass': Unrecognized passes: ['no-such-pass']
// PASS-NEXT: [exit status 1]
// KEPT:      [entries]
// KEPT-NEXT: model.mlir
// KEPT-NEXT: [end]
// OLD: earlier output

// A successful run replaces it.
// RUN: mobile-opt conv.onnx -o out/model.mlir
// RUN: filecheck %s --check-prefix=NEW --input-file out/model.mlir
// RUN: %python %inputs/list_dir.py out | filecheck %s --check-prefix=KEPT
// NEW: func.func @main_graph

// An .mlir input that fails verification names the file, in one line.
// RUN: not mobile-opt %inputs/bad_relu.mlir -o %t.verify.mlir 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not ls %t.verify.mlir
// VERIFY: mobile-opt: error: {{.*}}bad_relu.mlir: onnx.Relu: result #0 has type tensor<2x4xf32>, but the operands give tensor<2x3xf32>
// VERIFY-NOT: Traceback
