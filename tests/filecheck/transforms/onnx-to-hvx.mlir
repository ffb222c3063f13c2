// RUN: %python %inputs/make_model.py qdq_conv %t.onnx
// RUN: mobile-opt %t.onnx -p 'select-layouts{target=dsp layout=col4},onnx-to-hvx' | filecheck %s
// RUN: mobile-opt %t.onnx -p 'select-layouts{target=dsp layout=col1},onnx-to-hvx' | filecheck %s --check-prefix=COL1
// The program assembles: lower, allocate, print, llvm-mc.
// RUN: mobile-opt %t.onnx -p 'select-layouts{target=dsp layout=col2},onnx-to-hvx' -o %t.lowered.mlir
// RUN: %python %inputs/hvx_input_files.py %t.lowered.mlir %t.build
// RUN: mobile-opt %t.lowered.mlir -p hvx-regalloc -t hexagon-asm -o %t.build/program.s
// RUN: cd %t.build && llvm-mc-19 -arch=hexagon -mcpu=hexagonv66 -mhvx -mattr=+hvx-length128b -filetype=obj program.s -o program.o

// The module becomes the program: the float input's quantized form comes from a
// file, the output is storage that _start writes out, weights are read-only data.

// CHECK:      builtin.module attributes {hvx.io = [{role = "input", name = "x", buffer = "xq", layout = "col4"
// CHECK-SAME:   halo = [#builtin.int<1>, #builtin.int<1>]
// CHECK-SAME:   host_conversion = #builtin.int<1>}, {role = "output", name = "y", buffer = "yq", layout = "col4"
// CHECK-NEXT:   hvx.buffer @xq {size = {{[0-9]+}} : i64, file = "xq.bin"}
// CHECK-NEXT:   hvx.buffer @yq {size = {{[0-9]+}} : i64}
// CHECK-NEXT:   hvx.buffer @k0_conv_weights {size = {{[0-9]+}} : i64, store = "{{.*}}.npy", key = "{{.*}}"}
// CHECK-NEXT:   hvx.func @_start {
// CHECK:          hvx.call @fill_yq
// CHECK-NEXT:     hvx.call @k0_conv
// CHECK:          hvx.syscall
// CHECK:        hvx.func @fill_yq {
// CHECK:        hvx.func @k0_conv {
// CHECK:          hvx.vrmpy_acc
// CHECK-NOT:      onnx.

// COL1:         hvx.func @k0_conv {
// COL1:           hvx.vmpy
// COL1:           hvx.vadd_widen_acc
