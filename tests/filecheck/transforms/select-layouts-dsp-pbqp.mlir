// select-layouts{target=dsp solver=pbqp|gcd2|exact}: every layout chosen together (one PBQP
// problem, its shared tensors moved once per layout through transformed copies),
// recorded as solver=local records: implementations, the chosen one, layouts and
// relayouts.

// x is read by a depthwise conv (fastest alone in col2) and a conv (fastest in col4);
// the depthwise result by two more convs. Local takes col2 for the depthwise conv, and
// then, weighing each reader's relayout alone, col2 for the three convs too (twice as
// slow as col4); the global choice runs the depthwise conv in col4 (376 cycles slower),
// so nothing moves and the convs run in col4.
// RUN: %python %inputs/make_model.py qdq_mixed_layouts %t.mixed.onnx
// RUN: mobile-opt %t.mixed.onnx -p 'select-layouts{target=dsp solver=gcd2}' | filecheck %s --check-prefix=GLOBAL
// RUN: mobile-opt %t.mixed.onnx -p 'select-layouts{target=dsp solver=exact}' | filecheck %s --check-prefix=GLOBAL
// RUN: mobile-opt %t.mixed.onnx -p 'select-layouts{target=dsp solver=local}' | filecheck %s --check-prefix=LOCAL
// GLOBAL:      func.func @main_graph(%x: tensor<1x32x8x64xui8> {onnx.name = "x", hvx.layout = #hvx.layout<col4>})
// GLOBAL-NOT:  hvx.relayout
// GLOBAL:      %dw_out = onnx.Conv %xf, {{.*}} {hvx.implementations = [#hvx.implementation<col1, vmpy, {{.*}}>, #hvx.implementation<col2, vmpy, {{.*}}>, #hvx.implementation<col4, vmpy, {{.*}}>], hvx.implementation = #hvx.implementation<col4, vmpy,
// GLOBAL:      %conv1_out = onnx.Conv %hf, {{.*}} hvx.implementation = #hvx.implementation<col4, vrmpy,
// GLOBAL:      %conv2_out = onnx.Conv %hf, {{.*}} hvx.implementation = #hvx.implementation<col4, vrmpy,
// GLOBAL:      %conv3_out = onnx.Conv %xf, {{.*}} hvx.implementation = #hvx.implementation<col4, vrmpy,
// GLOBAL-NOT:  hvx.relayout
// LOCAL:     %dw_out = onnx.Conv %xf, {{.*}} hvx.implementation = #hvx.implementation<col2, vmpy,
// LOCAL:     %conv1_out = onnx.Conv %hf, {{.*}} hvx.implementation = #hvx.implementation<col2, vmpa,
// LOCAL-NOT: hvx.relayout

// A residual block: the Add's layout and the relayouts are recorded as local records
// them; here both solvers agree with local.
// RUN: %python %inputs/make_model.py qdq_residual_dyadic %t.block.onnx
// RUN: mobile-opt %t.block.onnx -p 'select-layouts{target=dsp solver=pbqp}' | filecheck %s --check-prefix=BLOCK
// BLOCK:      %conv1_out = onnx.Conv {{.*}} {hvx.implementations = [#hvx.implementation<col1, vmpy, {{[0-9]+}} packets, {{[0-9]+}} cycles>, #hvx.implementation<col4, vrmpy, {{[0-9]+}} packets, {{[0-9]+}} cycles>], hvx.implementation = #hvx.implementation<col4,
// BLOCK:      %sum = onnx.Add %conv2_f, %xf {hvx.layout = #hvx.layout<col4>}
// BLOCK-NOT:  hvx.relayout

// A global solver chooses the layouts: it refuses a forced one.
// RUN: not mobile-opt %t.block.onnx -p 'select-layouts{target=dsp solver=pbqp layout=col1}' 2>&1 | filecheck %s --check-prefix=FORCED
// FORCED: solver=pbqp chooses the layouts: it needs layout=auto
