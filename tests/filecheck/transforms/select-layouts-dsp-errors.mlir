// select-layouts{target=dsp} errors: one line, exit 1.

// RUN: %python %inputs/make_model.py qdq_conv %t.onnx
// RUN: not mobile-opt %t.onnx -p 'select-layouts{target=dsp layout=col3}' 2>&1 | filecheck %s --check-prefix=LAYOUT
// LAYOUT: mobile-opt: error: {{.*}}select-layouts: layout must be one of auto, col1, col2, col4, not 'col3'
// RUN: not mobile-opt %t.onnx -p 'select-layouts{target=dsp solver=gcd3}' 2>&1 | filecheck %s --check-prefix=SOLVER
// SOLVER: mobile-opt: error: {{.*}}select-layouts: solver must be one of local, chain, pbqp, gcd2, exact, not 'gcd3'
// RUN: not mobile-opt %t.onnx -p 'select-layouts{target=npu}' 2>&1 | filecheck %s --check-prefix=TARGET
// TARGET: mobile-opt: error: {{.*}}select-layouts: target must be one of gpu, dsp, not 'npu'

// Full-range int8 weights can overflow vmpa's 16-bit pair sums: a forced col2 says so.
// RUN: %python %inputs/make_model.py qdq_residual_dyadic %t.block.onnx
// RUN: not mobile-opt %t.block.onnx -p 'select-layouts{target=dsp layout=col2}' 2>&1 | filecheck %s --check-prefix=COL2
// COL2: mobile-opt: error: {{.*}}block.onnx: node 'conv1' (Conv): cannot run in layout col2 (vmpa: a single instruction's 16-bit sum can overflow with these weights)
