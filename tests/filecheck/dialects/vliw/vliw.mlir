// RUN: mobile-opt %s | filecheck %s
// RUN: mobile-opt %s | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: mobile-opt %s -t hexagon-asm | filecheck %s --check-prefix=ASM
// The printed packets are legal: llvm-mc assembles them.
// RUN: mobile-opt %s -t hexagon-asm > %t.s
// RUN: llvm-mc-19 -arch=hexagon -mcpu=hexagonv66 -mhvx -mattr=+hvx-length128b -filetype=obj %t.s -o %t.o

// Packets of one to four instructions, each with its slot; later code reads what a
// packet wrote through the packet's results.

hvx.buffer @buf {size = 1024 : i64}

hvx.func @packets {
  %base = hvx.address {symbol = @buf} : !hvx.reg<r0>
  %w = hvx.tfri {value = 16909060 : i64} : !hvx.reg<r1>
  // One instruction.
  %z = vliw.packet slots [2] {
    %z0 = hvx.vzero : !hvx.vec<v0>
    vliw.end %z0 : !hvx.vec<v0>
  } : !hvx.vec<v0>
  // A load feeding an add of its packet: the add reads the new vector (`.cur`).
  %x, %y = vliw.packet slots [1, 0] {
    %x0 = hvx.vmem_load %base {offset = 1 : i64, region = "buf"} : (!hvx.reg<r0>) -> !hvx.vec<v1>
    %y0 = hvx.vadd_w %x0, %z : (!hvx.vec<v1>, !hvx.vec<v0>) -> !hvx.vec<v2>
    vliw.end %x0, %y0 : !hvx.vec<v1>, !hvx.vec<v2>
  } : !hvx.vec<v1>, !hvx.vec<v2>
  // Three: a store of the vector its packet makes (`.new`), beside a scalar add.
  %s, %n = vliw.packet slots [1, 0, 3] {
    %s0 = hvx.vsub_w %y, %x : (!hvx.vec<v2>, !hvx.vec<v1>) -> !hvx.vec<v3>
    hvx.vmem_store %base, %s0 {offset = 2 : i64, region = "buf"} : !hvx.reg<r0>, !hvx.vec<v3>
    %n0 = hvx.addi %base {value = 256 : i64} : (!hvx.reg<r0>) -> !hvx.reg<r2>
    vliw.end %s0, %n0 : !hvx.vec<v3>, !hvx.reg<r2>
  } : !hvx.vec<v3>, !hvx.reg<r2>
  // Four, the multiply's pair views among them (they take no slot); the load does not
  // forward (nothing of the packet reads it), so it prints plain.
  %p, %lo, %hi, %l, %m, %c = vliw.packet slots [3, 0, 2, 1] {
    %p0 = hvx.vmpy %s, %w : (!hvx.vec<v3>, !hvx.reg<r1>) -> !hvx.vecpair<w2>
    %lo0 = hvx.lo %p0 : (!hvx.vecpair<w2>) -> !hvx.vec<v4>
    %hi0 = hvx.hi %p0 : (!hvx.vecpair<w2>) -> !hvx.vec<v5>
    %l0 = hvx.vmem_load %n {offset = 0 : i64, region = "buf"} : (!hvx.reg<r2>) -> !hvx.vec<v6>
    %m0 = hvx.vmax_w %x, %y : (!hvx.vec<v1>, !hvx.vec<v2>) -> !hvx.vec<v7>
    %c0 = hvx.tfri {value = 3 : i64} : !hvx.reg<r3>
    vliw.end %p0, %lo0, %hi0, %l0, %m0, %c0 : !hvx.vecpair<w2>, !hvx.vec<v4>, !hvx.vec<v5>, !hvx.vec<v6>, !hvx.vec<v7>, !hvx.reg<r3>
  } : !hvx.vecpair<w2>, !hvx.vec<v4>, !hvx.vec<v5>, !hvx.vec<v6>, !hvx.vec<v7>, !hvx.reg<r3>
  // A scalar new-value store.
  %k = vliw.packet slots [2, 0] {
    %k0 = hvx.add %c, %n : (!hvx.reg<r3>, !hvx.reg<r2>) -> !hvx.reg<r4>
    hvx.memw_store %base, %k0 {offset = 4 : i64} : !hvx.reg<r0>, !hvx.reg<r4>
    vliw.end %k0 : !hvx.reg<r4>
  } : !hvx.reg<r4>
  %sum = hvx.vadd_w %lo, %hi : (!hvx.vec<v4>, !hvx.vec<v5>) -> !hvx.vec<v8>
}

// CHECK:      hvx.func @packets {
// CHECK-NEXT:   %base = hvx.address {symbol = @buf} : !hvx.reg<r0>
// CHECK-NEXT:   %w = hvx.tfri {value = 16909060 : i64} : !hvx.reg<r1>
// CHECK-NEXT:   %z = vliw.packet slots [2] {
// CHECK-NEXT:     %z0 = hvx.vzero : !hvx.vec<v0>
// CHECK-NEXT:     vliw.end %z0 : !hvx.vec<v0>
// CHECK-NEXT:   } : !hvx.vec<v0>
// CHECK-NEXT:   %x, %y = vliw.packet slots [1, 0] {
// CHECK-NEXT:     %x0 = hvx.vmem_load %base {offset = 1 : i64, region = "buf"} : (!hvx.reg<r0>) -> !hvx.vec<v1>
// CHECK-NEXT:     %y0 = hvx.vadd_w %x0, %z : (!hvx.vec<v1>, !hvx.vec<v0>) -> !hvx.vec<v2>
// CHECK-NEXT:     vliw.end %x0, %y0 : !hvx.vec<v1>, !hvx.vec<v2>
// CHECK-NEXT:   } : !hvx.vec<v1>, !hvx.vec<v2>
// CHECK-NEXT:   %s, %n = vliw.packet slots [1, 0, 3] {
// CHECK-NEXT:     %s0 = hvx.vsub_w %y, %x : (!hvx.vec<v2>, !hvx.vec<v1>) -> !hvx.vec<v3>
// CHECK-NEXT:     hvx.vmem_store %base, %s0 {offset = 2 : i64, region = "buf"} : !hvx.reg<r0>, !hvx.vec<v3>
// CHECK-NEXT:     %n0 = hvx.addi %base {value = 256 : i64} : (!hvx.reg<r0>) -> !hvx.reg<r2>
// CHECK-NEXT:     vliw.end %s0, %n0 : !hvx.vec<v3>, !hvx.reg<r2>
// CHECK-NEXT:   } : !hvx.vec<v3>, !hvx.reg<r2>
// CHECK-NEXT:   %p, %lo, %hi, %l, %m, %c = vliw.packet slots [3, 0, 2, 1] {
// CHECK-NEXT:     %p0 = hvx.vmpy %s, %w : (!hvx.vec<v3>, !hvx.reg<r1>) -> !hvx.vecpair<w2>
// CHECK-NEXT:     %lo0 = hvx.lo %p0 : (!hvx.vecpair<w2>) -> !hvx.vec<v4>
// CHECK-NEXT:     %hi0 = hvx.hi %p0 : (!hvx.vecpair<w2>) -> !hvx.vec<v5>
// CHECK-NEXT:     %l0 = hvx.vmem_load %n {region = "buf"} : (!hvx.reg<r2>) -> !hvx.vec<v6>
// CHECK-NEXT:     %m0 = hvx.vmax_w %x, %y : (!hvx.vec<v1>, !hvx.vec<v2>) -> !hvx.vec<v7>
// CHECK-NEXT:     %c0 = hvx.tfri {value = 3 : i64} : !hvx.reg<r3>
// CHECK-NEXT:     vliw.end %p0, %lo0, %hi0, %l0, %m0, %c0 : !hvx.vecpair<w2>, !hvx.vec<v4>, !hvx.vec<v5>, !hvx.vec<v6>, !hvx.vec<v7>, !hvx.reg<r3>
// CHECK-NEXT:   } : !hvx.vecpair<w2>, !hvx.vec<v4>, !hvx.vec<v5>, !hvx.vec<v6>, !hvx.vec<v7>, !hvx.reg<r3>
// CHECK-NEXT:   %k = vliw.packet slots [2, 0] {
// CHECK-NEXT:     %k0 = hvx.add %c, %n : (!hvx.reg<r3>, !hvx.reg<r2>) -> !hvx.reg<r4>
// CHECK-NEXT:     hvx.memw_store %base, %k0 {offset = 4 : i64} : !hvx.reg<r0>, !hvx.reg<r4>
// CHECK-NEXT:     vliw.end %k0 : !hvx.reg<r4>
// CHECK-NEXT:   } : !hvx.reg<r4>
// CHECK-NEXT:   %sum = hvx.vadd_w %lo, %hi : (!hvx.vec<v4>, !hvx.vec<v5>) -> !hvx.vec<v8>
// CHECK-NEXT: }

// The slots are a property.
// GENERIC: "vliw.packet"() <{slots = array<i64: 2>}> ({
// GENERIC: "vliw.end"(%{{.*}}) : (!hvx.vec<v0>) -> ()
// GENERIC: }) : () -> !hvx.vec<v0>
// GENERIC: "vliw.packet"() <{slots = array<i64: 1, 0>}> ({

// Each packet prints as one `{ ... }`; the instruction after the last packet is formed
// into a packet of its own.
// ASM:      packets:
// ASM-NEXT:     { r0 = ##buf; r1 = ##16909060 }
// ASM-NEXT:     { v0 = vxor(v0,v0) }
// ASM-NEXT:     { v1.cur = vmem(r0+#1); v2.w = vadd(v1.w,v0.w) }
// ASM-NEXT:     { v3.w = vsub(v2.w,v1.w); vmem(r0+#2) = v3.new; r2 = add(r0,#256) }
// ASM-NEXT:     { v5:4.h = vmpy(v3.ub,r1.b); v6 = vmem(r2+#0); v7.w = vmax(v1.w,v2.w); r3 = #3 }
// ASM-NEXT:     { r4 = add(r3,r2); memw(r0+#4) = r4.new }
// ASM-NEXT:     { v8.w = vadd(v4.w,v5.w) }
// ASM-NEXT:     { jumpr r31 }
