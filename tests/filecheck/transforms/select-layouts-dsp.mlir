// select-layouts{target=dsp}: each quantized operator's implementations (layout,
// instruction, the cycle model's packets and cycles for its kernel), the chosen one,
// the layout of each other result and of each graph input, and a relayout wherever a
// reader wants a tensor in another layout than it was written in.

// RUN: %python %inputs/make_model.py qdq_conv %t.conv.onnx
// RUN: mobile-opt %t.conv.onnx -p 'select-layouts{target=dsp}' | filecheck %s --check-prefix=AUTO
// RUN: mobile-opt %t.conv.onnx -p 'select-layouts{target=dsp solver=local layout=col1}' | filecheck %s --check-prefix=COL1

// Every layout has an implementation; the cheapest (col4, vrmpy) is chosen, and the
// host writes the input in its layout.
// AUTO:      func.func @main_graph(%x: tensor<1x3x6x6xf32> {onnx.name = "x", hvx.layout = #hvx.layout<col4>})
// AUTO:      onnx.Conv %xf, %wf, %bf {hvx.implementations = [#hvx.implementation<col1, vmpy, {{[0-9]+}} packets, {{[0-9]+}} cycles>, #hvx.implementation<col2, vmpa, {{[0-9]+}} packets, {{[0-9]+}} cycles>, #hvx.implementation<col4, vrmpy, [[P4:[0-9]+]] packets, [[C4:[0-9]+]] cycles>], hvx.implementation = #hvx.implementation<col4, vrmpy, [[P4]] packets, [[C4]] cycles>,
// AUTO-NOT:  hvx.relayout

// A forced layout builds that layout's implementation only.
// COL1:      func.func @main_graph(%x: tensor<1x3x6x6xf32> {onnx.name = "x", hvx.layout = #hvx.layout<col1>})
// COL1:      onnx.Conv %xf, %wf, %bf {hvx.implementations = [#hvx.implementation<col1, vmpy, [[P1:[0-9]+]] packets, [[C1:[0-9]+]] cycles>], hvx.implementation = #hvx.implementation<col1, vmpy, [[P1]] packets, [[C1]] cycles>,

// Full-range weights can overflow vmpa's 16-bit pair sums: col2 has no implementation.
// An Add runs where its first operand is.
// RUN: %python %inputs/make_model.py qdq_residual_dyadic %t.block.onnx
// RUN: mobile-opt %t.block.onnx -p 'select-layouts{target=dsp}' | filecheck %s --check-prefix=BLOCK
// BLOCK:      %conv1_out = onnx.Conv {{.*}} {hvx.implementations = [#hvx.implementation<col1, vmpy, {{[0-9]+}} packets, {{[0-9]+}} cycles>, #hvx.implementation<col4, vrmpy, {{[0-9]+}} packets, {{[0-9]+}} cycles>], hvx.implementation = #hvx.implementation<col4,
// BLOCK:      %sum = onnx.Add %conv2_f, %xf {hvx.layout = #hvx.layout<col4>}

// Pools: a max pool runs where its input is; a global average pool is a product with
// an implementation, and its result's layout.
// RUN: %python %inputs/make_model.py qdq_maxpool %t.max.onnx
// RUN: mobile-opt %t.max.onnx -p 'select-layouts{target=dsp layout=col2}' | filecheck %s --check-prefix=MAX
// MAX:        onnx.MaxPool %xf {hvx.layout = #hvx.layout<col2>,
// RUN: %python %inputs/make_model.py qdq_gap %t.gap.onnx
// RUN: mobile-opt %t.gap.onnx -p 'select-layouts{target=dsp}' | filecheck %s --check-prefix=GAP
// GAP:        onnx.GlobalAveragePool %xf {hvx.layout = #hvx.layout<col4>, hvx.implementations = [#hvx.implementation<col1, {{.*}}>, #hvx.implementation<col2, {{.*}}>, #hvx.implementation<col4, vrmpy, [[P:[0-9]+]] packets, [[C:[0-9]+]] cycles>], hvx.implementation = #hvx.implementation<col4, vrmpy, [[P]] packets, [[C]] cycles>}

// A depthwise conv runs fastest in col2. Each 3x3 conv that reads its result h, or the
// input x, would run faster in col4, but not by enough to pay for moving what it reads by
// itself, which is all the local rules weigh: every op stays in col2 and nothing is moved.
// (Moved once for all three readers, col4 pays: select-layouts-dsp-gcd2.mlir.)
// RUN: %python %inputs/make_model.py qdq_mixed_layouts %t.mixed.onnx
// RUN: mobile-opt %t.mixed.onnx -p 'select-layouts{target=dsp}' | filecheck %s --check-prefix=MIXED
// MIXED:      func.func @main_graph(%x: tensor<1x32x8x64xui8> {onnx.name = "x", hvx.layout = #hvx.layout<col2>})
// MIXED:      %dw_out = onnx.Conv %xf, {{.*}} hvx.implementation = #hvx.implementation<col2, vmpy,
// MIXED:      %conv1_out = onnx.Conv %hf, {{.*}} hvx.implementation = #hvx.implementation<col2, vmpa,
// MIXED:      %conv2_out = onnx.Conv %hf, {{.*}} hvx.implementation = #hvx.implementation<col2, vmpa,
// MIXED:      %conv3_out = onnx.Conv %xf, {{.*}} hvx.implementation = #hvx.implementation<col2, vmpa,
// MIXED-NOT:  hvx.relayout

// QLinear: the same choice.
// RUN: %python %inputs/make_model.py qlinear_mixed_layouts %t.qlinear.onnx
// RUN: mobile-opt %t.qlinear.onnx -p 'select-layouts{target=dsp}' | filecheck %s --check-prefix=QLINEAR
// QLINEAR:      %h = onnx.QLinearConv %x, {{.*}} hvx.implementation = #hvx.implementation<col2, vmpy,
// QLINEAR-NEXT: %y1 = onnx.QLinearConv %h, {{.*}} hvx.implementation = #hvx.implementation<col2, vmpa,
// QLINEAR-NEXT: %y2 = onnx.QLinearConv %h, {{.*}} hvx.implementation = #hvx.implementation<col2, vmpa,
// QLINEAR-NEXT: %y3 = onnx.QLinearConv %x, {{.*}} hvx.implementation = #hvx.implementation<col2, vmpa,

// In one forced layout nothing moves.
// RUN: mobile-opt %t.qlinear.onnx -p 'select-layouts{target=dsp layout=col4}' | filecheck %s --check-prefix=FORCED
// FORCED-NOT: hvx.relayout
// FORCED-NOT: #hvx.implementation<col2
