// select-layouts{target=dsp solver=gcd2 partition=N}: GCD²'s partitions, each solved
// exactly and stitched; every partition size finds the same optimum here. The default
// DSP pipeline selects this way.

// x feeds a depthwise conv (fastest alone in col2) and a conv; the depthwise result two
// more convs. gcd2 runs all four in col4: nothing moves.
// RUN: %python %inputs/make_model.py qdq_mixed_layouts %t.mixed.onnx
// RUN: mobile-opt %t.mixed.onnx -p 'select-layouts{target=dsp solver=gcd2}' | filecheck %s
// RUN: mobile-opt %t.mixed.onnx -p 'select-layouts{target=dsp solver=gcd2 partition=1}' | filecheck %s
// RUN: mobile-opt %t.mixed.onnx -p 'select-layouts{target=dsp solver=gcd2 partition=3}' | filecheck %s
// CHECK:      func.func @main_graph(%x: tensor<1x32x8x64xui8> {onnx.name = "x", hvx.layout = #hvx.layout<col4>})
// CHECK-NOT:  hvx.relayout
// CHECK:      %dw_out = onnx.Conv %xf, {{.*}} hvx.implementation = #hvx.implementation<col4, vmpy,
// CHECK:      %conv1_out = onnx.Conv %hf, {{.*}} hvx.implementation = #hvx.implementation<col4, vrmpy,
// CHECK:      %conv2_out = onnx.Conv %hf, {{.*}} hvx.implementation = #hvx.implementation<col4, vrmpy,
// CHECK:      %conv3_out = onnx.Conv %xf, {{.*}} hvx.implementation = #hvx.implementation<col4, vrmpy,
// CHECK-NOT:  hvx.relayout

// explain=true prints each op's choice and runner-up, the transforms kept and every
// solver's total (the local rules keep every op in col2: 292,136 cycles more), to
// stderr; the IR is gcd2's.
// RUN: mobile-opt %t.mixed.onnx -p 'select-layouts{target=dsp solver=gcd2 explain=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=EXPLAIN
// EXPLAIN:      select-layouts{target=dsp solver=gcd2}: 11 nodes, costs in cycles
// EXPLAIN-NEXT: op                           chosen                   cost   runner-up                cost
// EXPLAIN-NEXT: x                            col4                        0   col1                   229385
// EXPLAIN-NEXT: node 'dw' (Conv)             col4/vmpy               24228   col2/vmpy              482622
// EXPLAIN:      transforms kept: 0
// EXPLAIN-NEXT: total cycles: local 583410, chain - (not a chain: node 0 (x) has 3 neighbours), pbqp {{[0-9]+}} (heuristic), gcd2 291274 (optimal), exact 291274 (optimal)
// EXPLAIN-NEXT: solve time: local {{.*}} s, chain {{.*}} s, pbqp {{.*}} s, gcd2 {{.*}} s, exact {{.*}} s

// explain with the local rules chosen: nothing moves, and the IR is local's.
// RUN: mobile-opt %t.mixed.onnx -p 'select-layouts{target=dsp explain=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=LOCAL-EXPLAIN
// RUN: mobile-opt %t.mixed.onnx -p 'select-layouts{target=dsp explain=true}' 2>/dev/null | filecheck %s --check-prefix=LOCAL
// LOCAL-EXPLAIN: node 'dw' (Conv)             col2/vmpy
// LOCAL-EXPLAIN: transforms kept: 0
// LOCAL: %dw_out = onnx.Conv %xf, {{.*}} hvx.implementation = #hvx.implementation<col2, vmpy,
// LOCAL-NOT: hvx.relayout
