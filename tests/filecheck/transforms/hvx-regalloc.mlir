// RUN: mobile-opt %s -p hvx-regalloc | filecheck %s

// Accumulators, post-incremented pointers and loop values keep one register;
// pair views are the halves of their pair; valign's shift lives in r0..r7; a
// new value takes the register free longest (v2, not the v1 just freed).

hvx.func @kernel {
  %base = hvx.address {symbol = @buf} : !hvx.reg
  %w = hvx.tfri {value = 16909060 : i64} : !hvx.reg
  %shift = hvx.tfri {value = 4 : i64} : !hvx.reg
  %zero = hvx.vzero : !hvx.vec
  %ptr, %acc = hvx.loop iter(%base, %zero : !hvx.reg, !hvx.vec) {
  ^bb0(%p: !hvx.reg, %a: !hvx.vec):
    %x, %next = hvx.vmem_load_pi %p {offset = 1 : i64} : (!hvx.reg) -> (!hvx.vec, !hvx.reg)
    %y = hvx.valign %x, %a, %shift : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
    %s = hvx.vrmpy_acc %a, %y, %w : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
    hvx.yield %next, %s : !hvx.reg, !hvx.vec
  } {kind = "loop0", trip = 8 : i64} -> !hvx.reg, !hvx.vec
  %prod = hvx.vmpy %acc, %w : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
  %lo = hvx.lo %prod : (!hvx.vecpair) -> !hvx.vec
  %hi = hvx.hi %prod : (!hvx.vecpair) -> !hvx.vec
  %sum = hvx.vadd_w %lo, %hi : (!hvx.vec, !hvx.vec) -> !hvx.vec
  hvx.vmem_store %ptr, %sum : !hvx.reg, !hvx.vec
}

// CHECK:      %base = hvx.address {symbol = @buf} : !hvx.reg<r8>
// CHECK-NEXT: %w = hvx.tfri {value = 16909060 : i64} : !hvx.reg<r9>
// CHECK-NEXT: %shift = hvx.tfri {value = 4 : i64} : !hvx.reg<r0>
// CHECK-NEXT: %zero = hvx.vzero : !hvx.vec<v0>
// CHECK-NEXT: %ptr, %acc = hvx.loop iter(%base, %zero : !hvx.reg<r8>, !hvx.vec<v0>) {
// CHECK-NEXT: ^bb0(%p: !hvx.reg<r8>, %a: !hvx.vec<v0>):
// CHECK-NEXT:   %x, %next = hvx.vmem_load_pi %p {offset = 1 : i64} : (!hvx.reg<r8>) -> (!hvx.vec<v1>, !hvx.reg<r8>)
// CHECK-NEXT:   %y = hvx.valign %x, %a, %shift : (!hvx.vec<v1>, !hvx.vec<v0>, !hvx.reg<r0>) -> !hvx.vec<v2>
// CHECK-NEXT:   %s = hvx.vrmpy_acc %a, %y, %w : (!hvx.vec<v0>, !hvx.vec<v2>, !hvx.reg<r9>) -> !hvx.vec<v0>
// CHECK-NEXT:   hvx.yield %next, %s : !hvx.reg<r8>, !hvx.vec<v0>
// CHECK-NEXT: } {kind = "loop0", trip = 8 : i64} -> !hvx.reg<r8>, !hvx.vec<v0>
// CHECK-NEXT: %prod = hvx.vmpy %acc, %w : (!hvx.vec<v0>, !hvx.reg<r9>) -> !hvx.vecpair<w{{[0-9]+}}>
// CHECK-NEXT: %lo = hvx.lo %prod : (!hvx.vecpair<w[[PAIR:[0-9]+]]>) -> !hvx.vec<v[[LO:[0-9]+]]>
// CHECK-NEXT: %hi = hvx.hi %prod : (!hvx.vecpair<w[[PAIR]]>) -> !hvx.vec<v[[HI:[0-9]+]]>
// CHECK-NEXT: %sum = hvx.vadd_w %lo, %hi : (!hvx.vec<v[[LO]]>, !hvx.vec<v[[HI]]>) -> !hvx.vec<v{{[0-9]+}}>
