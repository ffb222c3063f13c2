// Models the DSP path cannot run get one line naming the node, and exit 1: whichever
// of select-layouts and onnx-to-hvx reads the graph first says so.

// RUN: %python %inputs/make_model.py qdq_conv_per_channel %t.per_channel.onnx
// RUN: not mobile-opt %t.per_channel.onnx -p 'select-layouts{target=dsp}' 2>&1 | filecheck %s --check-prefix=PER-CHANNEL
// RUN: not mobile-opt %t.per_channel.onnx -p onnx-to-hvx 2>&1 | filecheck %s --check-prefix=PER-CHANNEL
// PER-CHANNEL: mobile-opt: error: {{.*}}: node 'conv' (Conv): per-channel quantisation (the weight scale has 8 values) is not supported on the DSP path

// A float model has no quantized operator to run.
// RUN: %python %inputs/make_model.py conv %t.float.onnx
// RUN: not mobile-opt %t.float.onnx -p 'select-layouts{target=dsp}' 2>&1 | filecheck %s --check-prefix=FLOAT
// FLOAT: mobile-opt: error: {{.*}}: node 'conv1' (Conv): input is not a dequantized 8-bit activation

// An average pool over padding without count_include_pad divides border windows by
// fewer taps: one kernel cannot requantise them all.
// RUN: %python %inputs/make_model.py qdq_avgpool_exclude_pad %t.avg.onnx
// RUN: not mobile-opt %t.avg.onnx -p 'select-layouts{target=dsp}' 2>&1 | filecheck %s --check-prefix=AVG
// AVG: mobile-opt: error: {{.*}}avg.onnx: node 'pool' (AveragePool): AveragePool over padding without count_include_pad (windows with different divisors) is not supported on the DSP

// The lowering chooses nothing: an operator without a recorded implementation is an
// error naming it.
// RUN: %python %inputs/make_model.py qdq_conv %t.onnx
// RUN: not mobile-opt %t.onnx -p onnx-to-hvx 2>&1 | filecheck %s --check-prefix=UNRECORDED
// UNRECORDED: mobile-opt: error: {{.*}}: graph input 'x': no layout recorded (run select-layouts{target=dsp} first)
