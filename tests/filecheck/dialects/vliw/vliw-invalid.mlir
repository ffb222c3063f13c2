// RUN: mobile-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// RUN: mobile-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s --check-prefix=NOPASS

// Every chunk fails: no module is printed in custom form.
// NOPASS-NOT: {{^}}builtin.module

// A slot for each instruction: two instructions, one slot.
hvx.func @f {
  %base = hvx.arg : !hvx.reg<r0>
  %a = hvx.arg : !hvx.vec<v0>
  %x, %y = vliw.packet slots [0] {
    %x0 = hvx.vmem_load %base : (!hvx.reg<r0>) -> !hvx.vec<v1>
    %y0 = hvx.vadd_w %a, %a : (!hvx.vec<v0>, !hvx.vec<v0>) -> !hvx.vec<v2>
    vliw.end %x0, %y0 : !hvx.vec<v1>, !hvx.vec<v2>
  } : !hvx.vec<v1>, !hvx.vec<v2>
}

// CHECK: {{^}}vliw.packet: slots [0] are not a legal assignment for hvx.vmem_load, hvx.vadd_w

// -----

// A multiply issues in slot 2 or 3 only.
hvx.func @f {
  %r = hvx.arg : !hvx.reg<r0>
  %a = hvx.arg : !hvx.vec<v0>
  %p = vliw.packet slots [0] {
    %p0 = hvx.vmpy %a, %r : (!hvx.vec<v0>, !hvx.reg<r0>) -> !hvx.vecpair<w2>
    vliw.end %p0 : !hvx.vecpair<w2>
  } : !hvx.vecpair<w2>
}

// CHECK: {{^}}vliw.packet: slots [0] are not a legal assignment for hvx.vmpy

// -----

// Two instructions in one slot.
hvx.func @f {
  %a = hvx.arg : !hvx.vec<v0>
  %x, %y = vliw.packet slots [1, 1] {
    %x0 = hvx.vadd_w %a, %a : (!hvx.vec<v0>, !hvx.vec<v0>) -> !hvx.vec<v1>
    %y0 = hvx.vsub_w %a, %a : (!hvx.vec<v0>, !hvx.vec<v0>) -> !hvx.vec<v2>
    vliw.end %x0, %y0 : !hvx.vec<v1>, !hvx.vec<v2>
  } : !hvx.vec<v1>, !hvx.vec<v2>
}

// CHECK: {{^}}vliw.packet: slots [1, 1] are not a legal assignment for hvx.vadd_w, hvx.vsub_w

// -----

// An unaligned load keeps slot 1 free.
hvx.func @f {
  %base = hvx.arg : !hvx.reg<r0>
  %x, %n = vliw.packet slots [0, 1] {
    %x0 = hvx.vmemu_load %base : (!hvx.reg<r0>) -> !hvx.vec<v1>
    %n0 = hvx.tfri {value = 1 : i64} : !hvx.reg<r1>
    vliw.end %x0, %n0 : !hvx.vec<v1>, !hvx.reg<r1>
  } : !hvx.vec<v1>, !hvx.reg<r1>
}

// CHECK: {{^}}vliw.packet: slots [0, 1] are not a legal assignment for hvx.vmemu_load, hvx.tfri

// -----

// Five instructions: a packet has four slots.
hvx.func @f {
  %a, %b, %c, %d, %e = vliw.packet slots [0, 1, 2, 3, 0] {
    %a0 = hvx.tfri {value = 1 : i64} : !hvx.reg<r1>
    %b0 = hvx.tfri {value = 2 : i64} : !hvx.reg<r2>
    %c0 = hvx.tfri {value = 3 : i64} : !hvx.reg<r3>
    %d0 = hvx.tfri {value = 4 : i64} : !hvx.reg<r4>
    %e0 = hvx.tfri {value = 5 : i64} : !hvx.reg<r5>
    vliw.end %a0, %b0, %c0, %d0, %e0 : !hvx.reg<r1>, !hvx.reg<r2>, !hvx.reg<r3>, !hvx.reg<r4>, !hvx.reg<r5>
  } : !hvx.reg<r1>, !hvx.reg<r2>, !hvx.reg<r3>, !hvx.reg<r4>, !hvx.reg<r5>
}

// CHECK: {{^}}vliw.packet: the instructions do not fit the slots and HVX resources of one packet

// -----

// A constant extender is a word of the packet: three instructions and a `##` make four
// words, and a fourth instruction does not fit.
hvx.func @f {
  %a, %b, %c, %d = vliw.packet slots [0, 1, 2, 3] {
    %a0 = hvx.address {symbol = @buf} : !hvx.reg<r1>
    %b0 = hvx.tfri {value = 2 : i64} : !hvx.reg<r2>
    %c0 = hvx.tfri {value = 3 : i64} : !hvx.reg<r3>
    %d0 = hvx.tfri {value = 4 : i64} : !hvx.reg<r4>
    vliw.end %a0, %b0, %c0, %d0 : !hvx.reg<r1>, !hvx.reg<r2>, !hvx.reg<r3>, !hvx.reg<r4>
  } : !hvx.reg<r1>, !hvx.reg<r2>, !hvx.reg<r3>, !hvx.reg<r4>
}

// CHECK: {{^}}vliw.packet: the instructions do not fit the slots and HVX resources of one packet

// -----

// Two double-vector multiplies both need the two multiply units.
hvx.func @f {
  %r = hvx.arg : !hvx.reg<r0>
  %a = hvx.arg : !hvx.vec<v0>
  %p, %q = vliw.packet slots [2, 3] {
    %p0 = hvx.vmpy %a, %r : (!hvx.vec<v0>, !hvx.reg<r0>) -> !hvx.vecpair<w1>
    %q0 = hvx.vmpy %a, %r : (!hvx.vec<v0>, !hvx.reg<r0>) -> !hvx.vecpair<w2>
    vliw.end %p0, %q0 : !hvx.vecpair<w1>, !hvx.vecpair<w2>
  } : !hvx.vecpair<w1>, !hvx.vecpair<w2>
}

// CHECK: {{^}}vliw.packet: the instructions do not fit the slots and HVX resources of one packet

// -----

// One write per register: v1 twice.
hvx.func @f {
  %a = hvx.arg : !hvx.vec<v0>
  %x, %y = vliw.packet slots [0, 1] {
    %x0 = hvx.vadd_w %a, %a : (!hvx.vec<v0>, !hvx.vec<v0>) -> !hvx.vec<v1>
    %y0 = hvx.vsub_w %a, %a : (!hvx.vec<v0>, !hvx.vec<v0>) -> !hvx.vec<v1>
    vliw.end %x0, %y0 : !hvx.vec<v1>, !hvx.vec<v1>
  } : !hvx.vec<v1>, !hvx.vec<v1>
}

// CHECK: {{^}}vliw.packet: hvx.vsub_w writes a register another instruction of the packet writes

// -----

// A pair overlaps its halves: w1 is v3:2.
hvx.func @f {
  %r = hvx.arg : !hvx.reg<r0>
  %a = hvx.arg : !hvx.vec<v0>
  %x, %p = vliw.packet slots [0, 2] {
    %x0 = hvx.vadd_w %a, %a : (!hvx.vec<v0>, !hvx.vec<v0>) -> !hvx.vec<v3>
    %p0 = hvx.vmpy %a, %r : (!hvx.vec<v0>, !hvx.reg<r0>) -> !hvx.vecpair<w1>
    vliw.end %x0, %p0 : !hvx.vec<v3>, !hvx.vecpair<w1>
  } : !hvx.vec<v3>, !hvx.vecpair<w1>
}

// CHECK: {{^}}vliw.packet: hvx.vmpy writes a register another instruction of the packet writes

// -----

// An ALU result is ready only in the next packet: no forwarding from vadd to vsub.
hvx.func @f {
  %a = hvx.arg : !hvx.vec<v0>
  %x, %y = vliw.packet slots [0, 1] {
    %x0 = hvx.vadd_w %a, %a : (!hvx.vec<v0>, !hvx.vec<v0>) -> !hvx.vec<v1>
    %y0 = hvx.vsub_w %x0, %a : (!hvx.vec<v1>, !hvx.vec<v0>) -> !hvx.vec<v2>
    vliw.end %x0, %y0 : !hvx.vec<v1>, !hvx.vec<v2>
  } : !hvx.vec<v1>, !hvx.vec<v2>
}

// CHECK: {{^}}vliw.packet: hvx.vsub_w reads the result of hvx.vadd_w in the same packet, which the machine cannot forward

// -----

// A store's address is never `.new`: only its data may be.
hvx.func @f {
  %base = hvx.arg : !hvx.reg<r0>
  %a = hvx.arg : !hvx.vec<v0>
  %n = vliw.packet slots [1, 0] {
    %n0 = hvx.addi %base {value = 128 : i64} : (!hvx.reg<r0>) -> !hvx.reg<r1>
    hvx.vmem_store %n0, %a : !hvx.reg<r1>, !hvx.vec<v0>
    vliw.end %n0 : !hvx.reg<r1>
  } : !hvx.reg<r1>
}

// CHECK: {{^}}vliw.packet: hvx.vmem_store reads the result of hvx.addi in the same packet, which the machine cannot forward

// -----

// `.cur` forwards a load's vector, not its incremented base: in one packet the store
// would address through r0 as it was before the packet.
hvx.func @f {
  %p = hvx.arg : !hvx.reg<r0>
  %a = hvx.arg : !hvx.vec<v0>
  %x, %next = vliw.packet slots [1, 0] {
    %x0, %n0 = hvx.vmem_load_pi %p {offset = 1 : i64} : (!hvx.reg<r0>) -> (!hvx.vec<v1>, !hvx.reg<r0>)
    hvx.vmem_store %n0, %a : !hvx.reg<r0>, !hvx.vec<v0>
    vliw.end %x0, %n0 : !hvx.vec<v1>, !hvx.reg<r0>
  } : !hvx.vec<v1>, !hvx.reg<r0>
}

// CHECK: {{^}}vliw.packet: hvx.vmem_store reads the result of hvx.vmem_load_pi in the same packet, which the machine cannot forward

// -----

// The `.cur` load overwrites v1, which vmax_w reads as it was before the packet.
hvx.func @f {
  %base = hvx.arg : !hvx.reg<r0>
  %old = hvx.arg : !hvx.vec<v1>
  %x, %y, %m = vliw.packet slots [0, 1, 2] {
    %x0 = hvx.vmem_load %base : (!hvx.reg<r0>) -> !hvx.vec<v1>
    %y0 = hvx.vadd_w %x0, %x0 : (!hvx.vec<v1>, !hvx.vec<v1>) -> !hvx.vec<v2>
    %m0 = hvx.vmax_w %old, %old : (!hvx.vec<v1>, !hvx.vec<v1>) -> !hvx.vec<v3>
    vliw.end %x0, %y0, %m0 : !hvx.vec<v1>, !hvx.vec<v2>, !hvx.vec<v3>
  } : !hvx.vec<v1>, !hvx.vec<v2>, !hvx.vec<v3>
}

// CHECK: {{^}}vliw.packet: hvx.vmax_w reads the old value of a register that a .cur load of the same packet overwrites

// -----

// A packet's ops are in program order: the add reads the load's vector before the load
// (the tools' dominance check reports it before the packet's own verifier does).
hvx.func @f {
  %base = hvx.arg : !hvx.reg<r0>
  %a = hvx.arg : !hvx.vec<v0>
  %y, %x = vliw.packet slots [1, 0] {
    %y0 = hvx.vadd_w %x0, %a : (!hvx.vec<v1>, !hvx.vec<v0>) -> !hvx.vec<v2>
    %x0 = hvx.vmem_load %base : (!hvx.reg<r0>) -> !hvx.vec<v1>
    vliw.end %y0, %x0 : !hvx.vec<v2>, !hvx.vec<v1>
  } : !hvx.vec<v2>, !hvx.vec<v1>
}

// CHECK: {{^}}%x0 is used before it is defined (hvx.vadd_w)

// -----

// A scalar new-value store takes the packet's store slots: no vector store beside it.
hvx.func @f {
  %base = hvx.arg : !hvx.reg<r0>
  %a = hvx.arg : !hvx.vec<v0>
  %t = vliw.packet slots [2, 1, 0] {
    %t0 = hvx.tfri {value = 5 : i64} : !hvx.reg<r1>
    hvx.memw_store %base, %t0 {offset = 4 : i64} : !hvx.reg<r0>, !hvx.reg<r1>
    hvx.vmem_store %base, %a {offset = 1 : i64} : !hvx.reg<r0>, !hvx.vec<v0>
    vliw.end %t0 : !hvx.reg<r1>
  } : !hvx.reg<r1>
}

// CHECK: {{^}}vliw.packet: a scalar new-value store shares its packet with another store

// -----

// vliw.end ends a packet and nothing else.
hvx.func @f {
  %a = hvx.arg : !hvx.vec<v0>
  vliw.end %a : !hvx.vec<v0>
}

// CHECK: {{^}}'vliw.end' expects parent op 'vliw.packet'

// -----

// A packet holds instructions: not a loop.
hvx.func @f {
  vliw.packet slots [] {
    hvx.loop {
      hvx.yield
    } {kind = "loop0", trip = 2 : i64}
    vliw.end
  }
}

// CHECK: {{^}}vliw.packet: hvx.loop is not an instruction

// -----

// Nor an op of another dialect.
hvx.func @f {
  vliw.packet slots [] {
    "test.op"() : () -> ()
    vliw.end
  }
}

// CHECK: {{^}}vliw.packet: test.op is not an instruction

// -----

// An empty packet.
hvx.func @f {
  vliw.packet slots [] {
    vliw.end
  }
}

// CHECK: {{^}}vliw.packet: a packet holds at least one instruction

// -----

// vliw.end gives every inner result.
hvx.func @f {
  %a = hvx.arg : !hvx.vec<v0>
  %x = vliw.packet slots [0, 1] {
    %x0 = hvx.vadd_w %a, %a : (!hvx.vec<v0>, !hvx.vec<v0>) -> !hvx.vec<v1>
    %y0 = hvx.vsub_w %a, %a : (!hvx.vec<v0>, !hvx.vec<v0>) -> !hvx.vec<v2>
    vliw.end %x0 : !hvx.vec<v1>
  } : !hvx.vec<v1>
}

// CHECK: {{^}}vliw.packet: vliw.end must give every inner result, in order
