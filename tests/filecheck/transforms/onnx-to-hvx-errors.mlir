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

// An average pool over padding without count_include_pad divides border windows by
// fewer taps: one kernel cannot requantise them all.
// RUN: %python %inputs/make_model.py qdq_avgpool_exclude_pad %t.avg.onnx
// RUN: not mobile-opt %t.avg.onnx -p onnx-to-hvx 2>&1 | filecheck %s --check-prefix=AVG
// AVG: mobile-opt: error: {{.*}}avg.onnx: node 'pool' (AveragePool): AveragePool over padding without count_include_pad (windows with different divisors) is not supported on the DSP

// Full-range int8 weights can overflow vmpa's 16-bit pair sums: a forced col2 says so.
// RUN: %python %inputs/make_model.py qdq_residual_dyadic %t.block.onnx
// RUN: not mobile-opt %t.block.onnx -p 'onnx-to-hvx{layout=col2}' 2>&1 | filecheck %s --check-prefix=COL2
// COL2: mobile-opt: error: {{.*}}block.onnx: node 'conv1' (Conv): cannot run in layout col2 (vmpa: a single instruction's 16-bit sum can overflow with these weights)
