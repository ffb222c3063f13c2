// mobile-translate --import-hexagon-asm reads what `-t hexagon-asm` prints back into
// hvx/vliw IR: registers read before anything writes them are hvx.arg, packets are
// vliw.packets in SSA form (`.cur`/`.new` reads take the value made in the packet),
// loops are hvx.loops whose iteration values are the registers they carry.

// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: mobile-translate --import-hexagon-asm %inputs/hexagon_kernel.s | filecheck %s
// CHECK:      builtin.module {
// CHECK-NEXT:   hvx.buffer @buf {size = 1024 : i64}
// CHECK-NEXT:   hvx.func @scale {
// CHECK-NEXT:     %[[V0:.+]] = hvx.arg : !hvx.vec<v0>
// CHECK-NEXT:     %[[R5:.+]] = hvx.arg : !hvx.reg<r5>
// CHECK-NEXT:     %[[BUF:.+]], %[[N:.+]] = vliw.packet slots [0, 1] {
// CHECK-NEXT:       %{{.+}} = hvx.address {symbol = @buf} : !hvx.reg<r1>
// CHECK-NEXT:       %{{.+}} = hvx.tfri {value = 4 : i64} : !hvx.reg<r2>
// CHECK:          hvx.loop iter(%[[N]], %[[BUF]] : !hvx.reg<r2>, !hvx.reg<r1>) {
// CHECK-NEXT:     ^{{.+}}(%[[COUNT:.+]]: !hvx.reg<r2>, %[[P:.+]]: !hvx.reg<r1>):
// CHECK-NEXT:       %[[END:.+]] = hvx.loop iter(%[[P]] : !hvx.reg<r1>) {
// CHECK-NEXT:       ^{{.+}}(%[[Q:.+]]: !hvx.reg<r1>):
// CHECK-NEXT:         %{{.+}}, %[[SUM:.+]] = vliw.packet slots [0, 1] {
// The .cur load feeds the add in its packet.
// CHECK-NEXT:           %[[X:.+]] = hvx.vmem_load %[[Q]] : (!hvx.reg<r1>) -> !hvx.vec<v1>
// CHECK-NEXT:           %{{.+}} = hvx.vadd_w %[[X]], %[[V0]] : (!hvx.vec<v1>, !hvx.vec<v0>) -> !hvx.vec<v2>
// CHECK:              %{{.+}}, %[[NEXT:.+]] = vliw.packet slots [1, 0] {
// The .new store takes the shift of its packet.
// CHECK-NEXT:           %[[Y:.+]] = hvx.vasr_w %[[SUM]], %[[R5]] : (!hvx.vec<v2>, !hvx.reg<r5>) -> !hvx.vec<v3>
// CHECK-NEXT:           %{{.+}} = hvx.vmem_store_pi %[[Q]], %[[Y]] {offset = 1 : i64} : (!hvx.reg<r1>, !hvx.vec<v3>) -> !hvx.reg<r1>
// CHECK:              hvx.yield %[[NEXT]] : !hvx.reg<r1>
// CHECK-NEXT:       } {trip = 2 : i64, kind = "loop0"} -> !hvx.reg<r1>
// CHECK-NEXT:       %[[LEFT:.+]] = vliw.packet slots [0] {
// CHECK-NEXT:         %{{.+}} = hvx.addi %[[COUNT]] {value = -1 : i64} : (!hvx.reg<r2>) -> !hvx.reg<r2>
// CHECK:            hvx.yield %[[LEFT]], %[[END]] : !hvx.reg<r2>, !hvx.reg<r1>
// CHECK-NEXT:     } {trip = 4 : i64, kind = "counted"} -> !hvx.reg<r2>, !hvx.reg<r1>

// Printed again, it is the same text.
// RUN: mobile-translate --import-hexagon-asm %inputs/hexagon_kernel.s -o kernel.mlir
// RUN: mobile-opt kernel.mlir -t hexagon-asm -o kernel.s
// RUN: diff kernel.s %inputs/hexagon_kernel.s

// Errors are one line naming the file and line, exit status 1.
// RUN: echo "kernel:" > bad.s
// RUN: echo "    { r0 = add(r1,#2) " >> bad.s
// RUN: %python %inputs/exit_status.py mobile-translate --import-hexagon-asm bad.s | filecheck %s --check-prefix=SYNTAX
// SYNTAX:      [output]
// SYNTAX-NEXT: mobile-translate: error: bad.s:2:23: syntax error: unexpected end of input in '{ r0 = add(r1,#2)'
// SYNTAX-NEXT: [exit status 1]

// RUN: echo "kernel:" > unsupported.s
// RUN: echo "    { p0 = cmp.eq(r1,#0) }" >> unsupported.s
// RUN: %python %inputs/exit_status.py mobile-translate --import-hexagon-asm unsupported.s | filecheck %s --check-prefix=NOHVX
// NOHVX:      [output]
// NOHVX-NEXT: mobile-translate: error: unsupported.s:2: 'p0 = cmp.eq(r1,#0)' is not supported (no hvx op has its syntax)
// NOHVX-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-translate --import-hexagon-asm missing.s | filecheck %s --check-prefix=MISSING
// MISSING:      [output]
// MISSING-NEXT: mobile-translate: error: missing.s: no such file
// MISSING-NEXT: [exit status 1]
