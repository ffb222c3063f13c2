// RUN: mobile-opt %s | filecheck %s
// RUN: mobile-opt %s | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s
// RUN: mobile-opt %s -t hexagon-asm | filecheck %s --check-prefix=ASM

// Code imported from assembly (`mobile-translate --import-hexagon-asm`): registers live
// on entry are hvx.arg, and the instructions clang's kernel loops use beyond ours.

hvx.func @imported {
  %base = hvx.arg : !hvx.reg<r0>
  %count = hvx.arg : !hvx.reg<r1>
  %v = hvx.arg : !hvx.vec<v0>
  %w = hvx.arg : !hvx.vec<v1>
  %q = hvx.arg : !hvx.pred<q0>
  %words = hvx.memd_load %base {offset = 16 : i64} : (!hvx.reg<r0>) -> !hvx.regpair<d1>
  %copy = hvx.tfr %count : (!hvx.reg<r1>) -> !hvx.reg<r4>
  %right = hvx.valign_i %v, %w {shift = 4 : i64} : (!hvx.vec<v0>, !hvx.vec<v1>) -> !hvx.vec<v2>
  %left = hvx.vlalign_i %v, %w {shift = 3 : i64} : (!hvx.vec<v0>, !hvx.vec<v1>) -> !hvx.vec<v3>
  %same = hvx.vassign %right : (!hvx.vec<v2>) -> !hvx.vec<v4>
  %mask = hvx.vand_vr %same, %copy : (!hvx.vec<v4>, !hvx.reg<r4>) -> !hvx.pred<q1>
  %bytes = hvx.vand_qr %q, %copy : (!hvx.pred<q0>, !hvx.reg<r4>) -> !hvx.vec<v5>
  hvx.nop
}

// CHECK:      builtin.module {
// CHECK-NEXT:   hvx.func @imported {
// CHECK-NEXT:     %base = hvx.arg : !hvx.reg<r0>
// CHECK-NEXT:     %count = hvx.arg : !hvx.reg<r1>
// CHECK-NEXT:     %v = hvx.arg : !hvx.vec<v0>
// CHECK-NEXT:     %w = hvx.arg : !hvx.vec<v1>
// CHECK-NEXT:     %q = hvx.arg : !hvx.pred<q0>
// CHECK-NEXT:     %words = hvx.memd_load %base {offset = 16 : i64} : (!hvx.reg<r0>) -> !hvx.regpair<d1>
// CHECK-NEXT:     %copy = hvx.tfr %count : (!hvx.reg<r1>) -> !hvx.reg<r4>
// CHECK-NEXT:     %right = hvx.valign_i %v, %w {shift = 4 : i64} : (!hvx.vec<v0>, !hvx.vec<v1>) -> !hvx.vec<v2>
// CHECK-NEXT:     %left = hvx.vlalign_i %v, %w {shift = 3 : i64} : (!hvx.vec<v0>, !hvx.vec<v1>) -> !hvx.vec<v3>
// CHECK-NEXT:     %same = hvx.vassign %right : (!hvx.vec<v2>) -> !hvx.vec<v4>
// CHECK-NEXT:     %mask = hvx.vand_vr %same, %copy : (!hvx.vec<v4>, !hvx.reg<r4>) -> !hvx.pred<q1>
// CHECK-NEXT:     %bytes = hvx.vand_qr %q, %copy : (!hvx.pred<q0>, !hvx.reg<r4>) -> !hvx.vec<v5>
// CHECK-NEXT:     hvx.nop
// CHECK-NEXT:   }
// CHECK-NEXT: }

// hvx.arg prints nothing: the caller put the values there.
// ASM:      imported:
// ASM-NEXT:     { r3:2 = memd(r0+#16); r4 = r1; v2 = valign(v0,v1,#4); nop }
// ASM-NEXT:     { v3 = vlalign(v0,v1,#3); v4 = v2; v5 = vand(q0,r4) }
// ASM-NEXT:     { q1 = vand(v4,r4) }
// ASM-NEXT:     { jumpr r31 }
