// select-layouts{target=dsp solver=chain}: eq. 2's dynamic program, on graphs that are
// chains; any other graph is refused in one line.

// A global average pool is a chain: reshape, product, reshape. The product runs in its
// cheapest layout, col4, and the reshape before it writes col4: nothing moves.
// RUN: %python %inputs/make_model.py qdq_gap %t.gap.onnx
// RUN: mobile-opt %t.gap.onnx -p 'select-layouts{target=dsp solver=chain}' | filecheck %s
// CHECK:      func.func @main_graph(%x: tensor<1x9x7x7xui8> {onnx.name = "x", hvx.layout = #hvx.layout<{{col[124]}}>})
// CHECK:      onnx.GlobalAveragePool %xf {hvx.layout = #hvx.layout<{{col[124]}}>, hvx.implementations = [#hvx.implementation<col1, vmpy, {{.*}}>, #hvx.implementation<col2, vmpa, {{.*}}>, #hvx.implementation<col4, vrmpy, {{.*}}>], hvx.implementation = #hvx.implementation<col4, vrmpy,
// CHECK-NOT:  hvx.relayout

// A single conv: its cheapest implementation, the input written in its layout.
// RUN: %python %inputs/make_model.py qdq_conv %t.conv.onnx
// RUN: mobile-opt %t.conv.onnx -p 'select-layouts{target=dsp solver=chain}' | filecheck %s --check-prefix=CONV
// CONV:      func.func @main_graph(%x: tensor<1x3x6x6xf32> {onnx.name = "x", hvx.layout = #hvx.layout<col4>})
// CONV:      onnx.Conv %xf, %wf, %bf {{.*}} hvx.implementation = #hvx.implementation<col4, vrmpy,
// CONV-NOT:  hvx.relayout

// x feeds two products, so its copies give it three neighbours: not a chain.
// RUN: %python %inputs/make_model.py qdq_mixed_layouts %t.mixed.onnx
// RUN: not mobile-opt %t.mixed.onnx -p 'select-layouts{target=dsp solver=chain}' 2>&1 | filecheck %s --check-prefix=NOT-CHAIN
// NOT-CHAIN:     mobile-opt: error: {{.*}}mixed.onnx: select-layouts: solver=chain: not a chain: node 0 (x) has 3 neighbours
// NOT-CHAIN-NOT: {{.}}
