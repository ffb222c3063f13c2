// A QDQ Add with round, uncalibrated scales. Dyadic ratios (0.05 / 0.1) put
// onnxruntime's float32 sums exactly on halves, which it rounds to even: the kernel
// rounds half to even too (the lowest bit of t >> F, from two shifts), with no
// correction. Ratios of 0.3 leave thousands of sums next to halves: the result is
// looked up in the Add's 64 KiB table (a vector kernel writes (256a + b, e) pairs, the
// gather kernel copies). Both programs assemble.

// RUN: %python %inputs/make_model.py qdq_residual_dyadic %t.dyadic.onnx
// RUN: mobile-opt %t.dyadic.onnx -p 'select-layouts{target=dsp layout=col4},onnx-to-hvx' | filecheck %s --check-prefix=EVEN
// EVEN:       hvx.func @k2_add {
// EVEN:         hvx.vasr_w
// EVEN-NEXT:    hvx.vasl_w
// EVEN-NEXT:    hvx.vasr_w
// EVEN-NEXT:    hvx.vadd_w
// EVEN-NEXT:    hvx.vsub_w
// EVEN-NOT:     hvx.vcmp_eq_b
// EVEN:       } {hvx.node = "node 'add' (Add)"}

// RUN: %python %inputs/make_model.py qdq_residual_table %t.table.onnx
// RUN: mobile-opt %t.table.onnx -p 'select-layouts{target=dsp layout=col4},onnx-to-hvx' | filecheck %s --check-prefix=TABLE
// TABLE:      hvx.buffer @k2_add_table {size = 67584 : i64
// TABLE:      hvx.buffer @k2_add_lanes
// TABLE:      hvx.buffer @k2_add_pairs
// TABLE:      hvx.call @k2_add_index
// TABLE-NEXT: hvx.call @k2_add
// TABLE:      hvx.func @k2_add_index {
// TABLE:        hvx.vzxt_b
// TABLE:        hvx.vasl_w
// TABLE:        hvx.vshuff
// TABLE:      } {hvx.node = "node 'add' (Add)"}
// TABLE:      hvx.func @k2_add {
// TABLE:        hvx.memd_load_pi {{.*}} {offset = 8 : i64, region = "k2_add_pairs"}
// TABLE:        hvx.memub_load_rr {{.*}} {region = "k2_add_table"}
// TABLE:      } {hvx.node = "node 'add' (Add)"}

// RUN: mobile-opt %t.table.onnx -p 'select-layouts{target=dsp layout=col1},onnx-to-hvx' -o %t.table.mlir
// RUN: %python %inputs/hvx_input_files.py %t.table.mlir %t.build
// RUN: mobile-opt %t.table.mlir -p hvx-regalloc -t hexagon-asm -o %t.build/program.s
// RUN: cd %t.build && llvm-mc-19 -arch=hexagon -mcpu=hexagonv66 -mhvx -mattr=+hvx-length128b -filetype=obj program.s -o program.o
