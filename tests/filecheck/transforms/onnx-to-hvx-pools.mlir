// Pools on the DSP path: a max pool is its own kernel, in its input's layout; a global
// average pool is a reshape, a matrix product with ones and a reshape; an average
// pool a depthwise convolution with unit weights. Every program assembles.

// RUN: %python %inputs/make_model.py qdq_maxpool %t.max.onnx
// RUN: mobile-opt %t.max.onnx -p 'select-layouts{target=dsp layout=col4},onnx-to-hvx' | filecheck %s --check-prefix=MAX
// RUN: mobile-opt %t.max.onnx -p 'select-layouts{target=dsp layout=col1},onnx-to-hvx' -o %t.max.mlir
// RUN: %python %inputs/hvx_input_files.py %t.max.mlir %t.max.build
// RUN: mobile-opt %t.max.mlir -p hvx-regalloc -t hexagon-asm -o %t.max.build/program.s
// RUN: cd %t.max.build && llvm-mc-19 -arch=hexagon -mcpu=hexagonv66 -mhvx -mattr=+hvx-length128b -filetype=obj program.s -o program.o

// The padded max pool reads a copy of the model input whose halo holds 0, not the
// input's zero point (110): padding never wins.
// MAX:        hvx.buffer @x {size = {{[0-9]+}} : i64, file = "x.bin"}
// MAX:        hvx.call @fill_x_pool_input
// MAX:        hvx.call @k0_pool_input
// MAX-NEXT:   hvx.call @k0_pool
// MAX:        hvx.func @fill_x_pool_input {
// MAX-NOT:      hvx.vsplat
// MAX:          hvx.vzero
// MAX:        hvx.func @fill_y {
// MAX:        hvx.func @k0_pool_input {
// MAX:          hvx.memub_load_rr
// MAX:          hvx.memb_store_rr
// MAX:        } {hvx.node = "node 'pool' (MaxPool)"}
// MAX:        hvx.func @k0_pool {
// Stride 2: the even pixels of two shifted windows, then the maximum of the taps.
// MAX:          hvx.vdeal
// MAX:          hvx.vmax_ub
// MAX:          hvx.vmem_store_if
// MAX:        {hvx.output = [30 : i64, 5 : i64], hvx.node = "node 'pool' (MaxPool)"}

// RUN: %python %inputs/make_model.py qdq_gap %t.gap.onnx
// RUN: mobile-opt %t.gap.onnx -p 'select-layouts{target=dsp layout=col4},onnx-to-hvx' | filecheck %s --check-prefix=GAP
// GAP:        hvx.buffer @x_rows
// GAP:        hvx.buffer @y_column
// GAP:        hvx.call @k0_pool
// GAP-NEXT:   hvx.call @k1_pool
// GAP-NEXT:   hvx.call @k2_pool
// GAP:        hvx.func @k0_pool {
// GAP:          hvx.memub_load_rr
// GAP:        } {hvx.node = "node 'pool' (GlobalAveragePool)"}
// GAP:        hvx.func @k1_pool {
// GAP:          hvx.vrmpy_acc
// GAP:        } {hvx.output = [9 : i64, 1 : i64], hvx.node = "node 'pool' (GlobalAveragePool)"}
// GAP:        hvx.func @k2_pool {

// RUN: %python %inputs/make_model.py qdq_avgpool %t.avg.onnx
// RUN: mobile-opt %t.avg.onnx -p 'select-layouts{target=dsp layout=col2},onnx-to-hvx' | filecheck %s --check-prefix=AVG
// AVG:        hvx.func @k0_pool {
// AVG:          hvx.vmpy
// AVG:          hvx.vadd_widen_acc
// AVG:        } {hvx.output = [30 : i64, 5 : i64], hvx.node = "node 'pool' (AveragePool)"}
