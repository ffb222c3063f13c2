// Models the DSP path cannot run get one line naming the node, and exit 1.

// RUN: %python %inputs/make_model.py qdq_conv_per_channel %t.per_channel.onnx
// RUN: not mobile-opt %t.per_channel.onnx -p onnx-to-hvx 2>&1 | filecheck %s --check-prefix=PER-CHANNEL
// PER-CHANNEL: mobile-opt: error: {{.*}}: node 'conv' (Conv): per-channel quantisation (the weight scale has 8 values) is not supported on the DSP path

// A float model has no quantized operator to run.
// RUN: %python %inputs/make_model.py conv %t.float.onnx
// RUN: not mobile-opt %t.float.onnx -p onnx-to-hvx 2>&1 | filecheck %s --check-prefix=FLOAT
// FLOAT: mobile-opt: error: {{.*}}: node 'conv1' (Conv): input is not a dequantized 8-bit activation

// RUN: %python %inputs/make_model.py qdq_conv %t.onnx
// RUN: not mobile-opt %t.onnx -p 'onnx-to-hvx{layout=col3}' 2>&1 | filecheck %s --check-prefix=LAYOUT
// LAYOUT: mobile-opt: error: {{.*}}onnx-to-hvx: layout must be one of auto, col1, col2, col4, not 'col3'
