// The importer's diagnostics, through mobile-translate: each is one line
// `mobile-translate: error: <file>: ...` naming the file (and, for a node, the
// node by name, or by its first output if unnamed, and its op type), with exit
// status 1 and no traceback: exit_status.py brackets what the tool wrote, so
// each check below also shows that nothing else was written.

// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %inputs/make_model.py topk topk.onnx
// RUN: %python %inputs/make_model.py nms nms.onnx
// RUN: %python %inputs/make_model.py domain domain.onnx
// RUN: %python %inputs/make_model.py resize_linear resize.onnx
// RUN: %python %inputs/make_model.py opset7 opset7.onnx
// RUN: %python %inputs/make_model.py opset23 opset23.onnx
// RUN: %python %inputs/make_model.py truncated truncated.onnx
// RUN: %python %inputs/make_model.py garbage garbage.onnx

// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx topk.onnx | filecheck %s --check-prefix=TOPK
// TOPK:      [output]
// TOPK-NEXT: mobile-translate: error: topk.onnx: node 'topk_0' (TopK): unsupported op
// TOPK-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx nms.onnx | filecheck %s --check-prefix=NMS
// NMS:      [output]
// NMS-NEXT: mobile-translate: error: nms.onnx: node 'selected' (NonMaxSuppression): unsupported op
// NMS-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx domain.onnx | filecheck %s --check-prefix=DOMAIN
// DOMAIN:      [output]
// DOMAIN-NEXT: mobile-translate: error: domain.onnx: node 'ms_conv' (FusedConv): unsupported op domain 'com.microsoft'
// DOMAIN-NEXT: [exit status 1]

// A valid ONNX node outside what the dialect supports fails its verifier.
// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx resize.onnx | filecheck %s --check-prefix=RESIZE
// RESIZE:      [output]
// RESIZE-NEXT: mobile-translate: error: resize.onnx: node 'up2x' (Resize): onnx.Resize: mode 'linear' is not supported, only 'nearest'
// RESIZE-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx opset7.onnx | filecheck %s --check-prefix=OPSET7
// OPSET7:      [output]
// OPSET7-NEXT: mobile-translate: error: opset7.onnx: opset 7 is not supported (supported: 9 to 21)
// OPSET7-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx opset23.onnx | filecheck %s --check-prefix=OPSET23
// OPSET23:      [output]
// OPSET23-NEXT: mobile-translate: error: opset23.onnx: opset 23 is not supported (supported: 9 to 21)
// OPSET23-NEXT: [exit status 1]

// The first half of a valid model.
// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx truncated.onnx | filecheck %s --check-prefix=TRUNCATED
// TRUNCATED:      [output]
// TRUNCATED-NEXT: mobile-translate: error: truncated.onnx: truncated or corrupt protobuf ({{.+}})
// TRUNCATED-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx garbage.onnx | filecheck %s --check-prefix=GARBAGE
// GARBAGE:      [output]
// GARBAGE-NEXT: mobile-translate: error: garbage.onnx: not an ONNX model ({{.+}})
// GARBAGE-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx missing.onnx | filecheck %s --check-prefix=MISSING
// MISSING:      [output]
// MISSING-NEXT: mobile-translate: error: missing.onnx: no such file
// MISSING-NEXT: [exit status 1]

