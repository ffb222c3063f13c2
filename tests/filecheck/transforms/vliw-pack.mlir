// RUN: mobile-opt %s -p 'hvx-regalloc,vliw-pack' | filecheck %s
// RUN: mobile-opt %s -p 'hvx-regalloc,vliw-pack{algorithm=sda}' -t hexagon-asm | filecheck %s --check-prefix=SDA
// RUN: mobile-opt %s -p 'hvx-regalloc,vliw-pack{algorithm=soft-to-hard}' -t hexagon-asm | filecheck %s --check-prefix=HARD
// RUN: mobile-opt %s -p 'hvx-regalloc,vliw-pack{algorithm=soft-to-none}' -t hexagon-asm | filecheck %s --check-prefix=NONE
// RUN: mobile-opt %s -p 'hvx-regalloc,vliw-pack{algorithm=list}' -t hexagon-asm | filecheck %s --check-prefix=LIST
// RUN: mobile-opt %s -p 'hvx-regalloc,vliw-pack{tune=true}' -t hexagon-asm | filecheck %s --check-prefix=NONE
// The packets read back verify (the vliw.packet verifier agrees with the packer), and
// llvm-mc assembles them.
// RUN: mobile-opt %s -p 'hvx-regalloc,vliw-pack{algorithm=soft-to-none}' | mobile-opt -t hexagon-asm > %t.s
// RUN: llvm-mc-19 -arch=hexagon -mcpu=hexagonv66 -mhvx -mattr=+hvx-length128b -filetype=obj %t.s -o %t.o
// Errors: one line, exit status 1.
// RUN: %python %inputs/exit_status.py mobile-opt %s -p vliw-pack | filecheck %s --check-prefix=UNALLOCATED
// RUN: %python %inputs/exit_status.py mobile-opt %s -p 'hvx-regalloc,vliw-pack{algorithm=greedy}' | filecheck %s --check-prefix=ALGORITHM
// RUN: %python %inputs/exit_status.py mobile-opt %s -p 'hvx-regalloc,vliw-pack{w=1.5}' | filecheck %s --check-prefix=WEIGHT

hvx.buffer @in {size = 4096 : i64}
hvx.buffer @out {size = 1024 : i64}

// Loads feed ALU ops that feed stores: soft dependences, which SDA packs with `.cur`
// and `.new`; soft-to-hard and list put every consumer in a later packet than its
// producer.
hvx.func @add_sub {
  %src = hvx.address {symbol = @in} : !hvx.reg
  %dst = hvx.address {symbol = @out} : !hvx.reg
  %a = hvx.vmem_load %src {offset = 0 : i64, region = "in"} : (!hvx.reg) -> !hvx.vec
  %b = hvx.vmem_load %src {offset = 1 : i64, region = "in"} : (!hvx.reg) -> !hvx.vec
  %s = hvx.vadd_w %a, %b : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %d = hvx.vsub_w %a, %b : (!hvx.vec, !hvx.vec) -> !hvx.vec
  hvx.vmem_store %dst, %s {offset = 0 : i64, region = "out"} : !hvx.reg, !hvx.vec
  hvx.vmem_store %dst, %d {offset = 1 : i64, region = "out"} : !hvx.reg, !hvx.vec
}

// A load feeding a multiply stalls the packet two cycles: SDA (p=1) keeps them
// apart, soft-to-none (and SDA tuned, by the cycle model) packs them with `.cur`.
hvx.func @multiply {
  %src = hvx.address {symbol = @in} : !hvx.reg
  %dst = hvx.address {symbol = @out} : !hvx.reg
  %w = hvx.tfri {value = 3 : i64} : !hvx.reg
  %a = hvx.vmem_load %src {offset = 0 : i64, region = "in"} : (!hvx.reg) -> !hvx.vec
  %b = hvx.vmem_load %src {offset = 1 : i64, region = "in"} : (!hvx.reg) -> !hvx.vec
  %c = hvx.vmem_load %src {offset = 2 : i64, region = "in"} : (!hvx.reg) -> !hvx.vec
  %ma = hvx.vmpyi_w %a, %w : (!hvx.vec, !hvx.reg) -> !hvx.vec
  %mb = hvx.vmpyi_w %b, %w : (!hvx.vec, !hvx.reg) -> !hvx.vec
  %mc = hvx.vmpyi_w %c, %w : (!hvx.vec, !hvx.reg) -> !hvx.vec
  %s = hvx.vadd_w %ma, %mb : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %t = hvx.vadd_w %s, %mc : (!hvx.vec, !hvx.vec) -> !hvx.vec
  hvx.vmem_store %dst, %t {offset = 0 : i64, region = "out"} : !hvx.reg, !hvx.vec
}

// A loop body is packed on its own; the second load reads the first one's incremented
// base, which does not forward, and one load port keeps them apart anyway.
hvx.func @dot {
  %src = hvx.address {symbol = @in} : !hvx.reg
  %dst = hvx.address {symbol = @out} : !hvx.reg
  %w = hvx.tfri {value = 16843009 : i64} : !hvx.reg
  %zero = hvx.vzero : !hvx.vec
  %ptr, %acc = hvx.loop iter(%src, %zero : !hvx.reg, !hvx.vec) {
  ^bb0(%p: !hvx.reg, %a: !hvx.vec):
    %x, %next = hvx.vmem_load_pi %p {offset = 1 : i64, region = "in"} : (!hvx.reg) -> (!hvx.vec, !hvx.reg)
    %s = hvx.vrmpy_acc %a, %x, %w : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
    %y, %next2 = hvx.vmem_load_pi %next {offset = 1 : i64, region = "in"} : (!hvx.reg) -> (!hvx.vec, !hvx.reg)
    %t = hvx.vrmpy_acc %s, %y, %w : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
    hvx.yield %next2, %t : !hvx.reg, !hvx.vec
  } {kind = "loop0", trip = 8 : i64} -> !hvx.reg, !hvx.vec
  hvx.vmem_store %dst, %acc {offset = 0 : i64, region = "out"} : !hvx.reg, !hvx.vec
}

// CHECK-LABEL: hvx.func @add_sub {
// CHECK-NEXT:    %{{.*}} = vliw.packet slots [0] {
// CHECK-NEXT:      hvx.address {symbol = @in}
// CHECK-NEXT:      vliw.end
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}}, %[[B:[^ ,]+]] = vliw.packet slots [0, 1] {
// CHECK-NEXT:      hvx.address {symbol = @out}
// CHECK-NEXT:      hvx.vmem_load %{{.*}} {offset = 1 : i64, region = "in"}
// CHECK-NEXT:      vliw.end
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[A:[^ ,]+]], %{{.*}} = vliw.packet slots [1, 2, 0] {
// CHECK-NEXT:      %[[A_IN:[^ ,]+]] = hvx.vmem_load %{{.*}} {region = "in"}
// CHECK-NEXT:      %[[D_IN:[^ ,]+]] = hvx.vsub_w %[[A_IN]], %[[B]]
// CHECK-NEXT:      hvx.vmem_store %{{.*}}, %[[D_IN]] {offset = 1 : i64, region = "out"}
// CHECK-NEXT:      vliw.end %[[A_IN]], %[[D_IN]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}} = vliw.packet slots [1, 0] {
// CHECK-NEXT:      %[[S_IN:[^ ,]+]] = hvx.vadd_w %[[A]], %[[B]]
// CHECK-NEXT:      hvx.vmem_store %{{.*}}, %[[S_IN]] {region = "out"}
// CHECK-NEXT:      vliw.end %[[S_IN]]
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-LABEL: hvx.func @dot {
// CHECK:         hvx.loop
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      vliw.packet slots [0, 2] {
// CHECK-NEXT:        hvx.vmem_load_pi
// CHECK-NEXT:        hvx.vrmpy_acc
// CHECK-NEXT:        vliw.end
// CHECK-NEXT:      }
// CHECK-NEXT:      vliw.packet slots [0, 2] {
// CHECK-NEXT:        hvx.vmem_load_pi
// CHECK-NEXT:        hvx.vrmpy_acc
// CHECK-NEXT:        vliw.end
// CHECK-NEXT:      }
// CHECK-NEXT:      hvx.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    vliw.packet slots [0] {
// CHECK-NEXT:      hvx.vmem_store
// CHECK-NEXT:      vliw.end
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// SDA (the default) and soft-to-none forward; soft-to-hard, list never do.
// SDA-LABEL: add_sub:
// SDA-NEXT:     { r8 = ##in }
// SDA-NEXT:     { r9 = ##out; v1 = vmem(r8+#1) }
// SDA-NEXT:     { v0.cur = vmem(r8+#0); v3.w = vsub(v0.w,v1.w); vmem(r9+#1) = v3.new }
// SDA-NEXT:     { v2.w = vadd(v0.w,v1.w); vmem(r9+#0) = v2.new }
// SDA-NEXT:     { jumpr r31 }
// SDA-LABEL: multiply:
// SDA-NEXT:     { r8 = ##in }
// SDA-NEXT:     { v1 = vmem(r8+#1) }
// SDA-NEXT:     { r10 = #3; v0 = vmem(r8+#0) }
// SDA-NEXT:     { v2 = vmem(r8+#2); v3.w = vmpyi(v0.w,r10.ub); v4.w = vmpyi(v1.w,r10.ub) }
// SDA-NEXT:     { r9 = ##out; v5.w = vmpyi(v2.w,r10.ub); v6.w = vadd(v3.w,v4.w) }
// SDA-NEXT:     { v7.w = vadd(v6.w,v5.w); vmem(r9+#0) = v7.new }
// SDA-NEXT:     { jumpr r31 }
// SDA-LABEL: dot:
// SDA-NEXT:     { r10 = ##16843009; v0 = vxor(v0,v0) }
// SDA-NEXT:     { r8 = ##in; r9 = ##out }
// SDA-NEXT:     { loop0(.Lloop0,#8) }
// SDA-NEXT: .Lloop0:
// SDA-NEXT:     { v1.cur = vmem(r8++#1); v0.w += vrmpy(v1.ub,r10.b) }
// SDA-NEXT:     { v2.cur = vmem(r8++#1); v0.w += vrmpy(v2.ub,r10.b) }:endloop0
// SDA-NEXT:     { vmem(r9+#0) = v0 }
// SDA-NEXT:     { jumpr r31 }

// HARD-LABEL: add_sub:
// HARD-NEXT:     { r8 = ##in }
// HARD-NEXT:     { v1 = vmem(r8+#1) }
// HARD-NEXT:     { v0 = vmem(r8+#0) }
// HARD-NEXT:     { r9 = ##out; v3.w = vsub(v0.w,v1.w) }
// HARD-NEXT:     { v2.w = vadd(v0.w,v1.w); vmem(r9+#1) = v3 }
// HARD-NEXT:     { vmem(r9+#0) = v2 }
// HARD-NEXT:     { jumpr r31 }
// HARD-LABEL: multiply:
// HARD-NEXT:     { r8 = ##in }
// HARD-NEXT:     { v1 = vmem(r8+#1) }
// HARD-NEXT:     { r10 = #3; v0 = vmem(r8+#0) }
// HARD-NEXT:     { v2 = vmem(r8+#2); v3.w = vmpyi(v0.w,r10.ub); v4.w = vmpyi(v1.w,r10.ub) }
// HARD-NEXT:     { v5.w = vmpyi(v2.w,r10.ub); v6.w = vadd(v3.w,v4.w) }
// HARD-NEXT:     { r9 = ##out; v7.w = vadd(v6.w,v5.w) }
// HARD-NEXT:     { vmem(r9+#0) = v7 }
// HARD-NEXT:     { jumpr r31 }
// HARD-LABEL: dot:
// HARD-NEXT:     { r10 = ##16843009; v0 = vxor(v0,v0) }
// HARD-NEXT:     { r8 = ##in; r9 = ##out }
// HARD-NEXT:     { loop0(.Lloop0,#8) }
// HARD-NEXT: .Lloop0:
// HARD-NEXT:     { v1 = vmem(r8++#1) }
// HARD-NEXT:     { v0.w += vrmpy(v1.ub,r10.b); v2 = vmem(r8++#1) }
// HARD-NEXT:     { v0.w += vrmpy(v2.ub,r10.b) }:endloop0
// HARD-NEXT:     { vmem(r9+#0) = v0 }
// HARD-NEXT:     { jumpr r31 }

// NONE-LABEL: add_sub:
// NONE-NEXT:     { r8 = ##in }
// NONE-NEXT:     { r9 = ##out; v1 = vmem(r8+#1) }
// NONE-NEXT:     { v0.cur = vmem(r8+#0); v3.w = vsub(v0.w,v1.w); vmem(r9+#1) = v3.new }
// NONE-NEXT:     { v2.w = vadd(v0.w,v1.w); vmem(r9+#0) = v2.new }
// NONE-NEXT:     { jumpr r31 }
// NONE-LABEL: multiply:
// NONE-NEXT:     { r8 = ##in }
// NONE-NEXT:     { r9 = ##out; r10 = #3; v1 = vmem(r8+#1) }
// NONE-NEXT:     { v0.cur = vmem(r8+#0); v3.w = vmpyi(v0.w,r10.ub); v4.w = vmpyi(v1.w,r10.ub) }
// NONE-NEXT:     { v2.cur = vmem(r8+#2); v5.w = vmpyi(v2.w,r10.ub); v6.w = vadd(v3.w,v4.w) }
// NONE-NEXT:     { v7.w = vadd(v6.w,v5.w); vmem(r9+#0) = v7.new }
// NONE-NEXT:     { jumpr r31 }
// NONE-LABEL: dot:
// NONE-NEXT:     { r10 = ##16843009; v0 = vxor(v0,v0) }
// NONE-NEXT:     { r8 = ##in; r9 = ##out }
// NONE-NEXT:     { loop0(.Lloop0,#8) }
// NONE-NEXT: .Lloop0:
// NONE-NEXT:     { v1.cur = vmem(r8++#1); v0.w += vrmpy(v1.ub,r10.b) }
// NONE-NEXT:     { v2.cur = vmem(r8++#1); v0.w += vrmpy(v2.ub,r10.b) }:endloop0
// NONE-NEXT:     { vmem(r9+#0) = v0 }
// NONE-NEXT:     { jumpr r31 }

// LIST-LABEL: add_sub:
// LIST-NEXT:     { r8 = ##in; r9 = ##out }
// LIST-NEXT:     { v0 = vmem(r8+#0) }
// LIST-NEXT:     { v1 = vmem(r8+#1) }
// LIST-NEXT:     { v2.w = vadd(v0.w,v1.w); v3.w = vsub(v0.w,v1.w) }
// LIST-NEXT:     { vmem(r9+#0) = v2 }
// LIST-NEXT:     { vmem(r9+#1) = v3 }
// LIST-NEXT:     { jumpr r31 }
// LIST-LABEL: multiply:
// LIST-NEXT:     { r8 = ##in; r10 = #3 }
// LIST-NEXT:     { r9 = ##out; v0 = vmem(r8+#0) }
// LIST-NEXT:     { v1 = vmem(r8+#1); v3.w = vmpyi(v0.w,r10.ub) }
// LIST-NEXT:     { v2 = vmem(r8+#2); v4.w = vmpyi(v1.w,r10.ub) }
// LIST-NEXT:     { v5.w = vmpyi(v2.w,r10.ub); v6.w = vadd(v3.w,v4.w) }
// LIST-NEXT:     { v7.w = vadd(v6.w,v5.w) }
// LIST-NEXT:     { vmem(r9+#0) = v7 }
// LIST-NEXT:     { jumpr r31 }
// LIST-LABEL: dot:
// LIST-NEXT:     { r8 = ##in; r9 = ##out }
// LIST-NEXT:     { r10 = ##16843009; v0 = vxor(v0,v0) }
// LIST-NEXT:     { loop0(.Lloop0,#8) }
// LIST-NEXT: .Lloop0:
// LIST-NEXT:     { v1 = vmem(r8++#1) }
// LIST-NEXT:     { v0.w += vrmpy(v1.ub,r10.b); v2 = vmem(r8++#1) }
// LIST-NEXT:     { v0.w += vrmpy(v2.ub,r10.b) }:endloop0
// LIST-NEXT:     { vmem(r9+#0) = v0 }
// LIST-NEXT:     { jumpr r31 }

// vliw-pack needs allocated registers.
// UNALLOCATED:      [output]
// UNALLOCATED-NEXT: mobile-opt: error: {{.*}}vliw-pack.mlir: vliw-pack: @add_sub has unallocated registers (run hvx-regalloc first)
// UNALLOCATED-NEXT: [exit status 1]

// ALGORITHM:      [output]
// ALGORITHM-NEXT: mobile-opt: error: {{.*}}vliw-pack.mlir: vliw-pack: algorithm must be one of sda, soft-to-hard, soft-to-none, list, not greedy
// ALGORITHM-NEXT: [exit status 1]

// WEIGHT:      [output]
// WEIGHT-NEXT: mobile-opt: error: {{.*}}vliw-pack.mlir: vliw-pack: w must be within [0, 1], not 1.5
// WEIGHT-NEXT: [exit status 1]
