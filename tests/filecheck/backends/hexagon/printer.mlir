// RUN: mobile-opt %s -p hvx-regalloc -t hexagon-asm | filecheck %s
// RUN: mobile-opt %s -p hvx-regalloc -t 'hexagon-asm{packing=single}' | filecheck %s --check-prefix=SINGLE
// Every printed packet is legal: llvm-mc assembles both forms.
// RUN: mobile-opt %s -p hvx-regalloc -t hexagon-asm > %t.s
// RUN: llvm-mc-19 -arch=hexagon -mcpu=hexagonv66 -mhvx -mattr=+hvx-length128b -filetype=obj %t.s -o %t.o
// RUN: mobile-opt %s -p hvx-regalloc -t 'hexagon-asm{packing=single}' > %t.single.s
// RUN: llvm-mc-19 -arch=hexagon -mcpu=hexagonv66 -mhvx -mattr=+hvx-length128b -filetype=obj %t.single.s -o %t.single.o

hvx.buffer @buf {size = 1024 : i64}

hvx.func @kernel {
  %base = hvx.address {symbol = @buf} : !hvx.reg
  %w = hvx.tfri {value = 16909060 : i64} : !hvx.reg
  %shift = hvx.tfri {value = 4 : i64} : !hvx.reg
  %count = hvx.tfri {value = 3 : i64} : !hvx.reg
  %left, %out = hvx.loop iter(%count, %base : !hvx.reg, !hvx.reg) {
  ^bb0(%n: !hvx.reg, %q: !hvx.reg):
    %zero = hvx.vzero : !hvx.vec
    %ptr, %acc = hvx.loop iter(%q, %zero : !hvx.reg, !hvx.vec) {
    ^bb1(%p: !hvx.reg, %a: !hvx.vec):
      %x, %next = hvx.vmem_load_pi %p {offset = 1 : i64} : (!hvx.reg) -> (!hvx.vec, !hvx.reg)
      %y = hvx.valign %x, %a, %shift : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
      %s = hvx.vrmpy_acc %a, %y, %w : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
      hvx.yield %next, %s : !hvx.reg, !hvx.vec
    } {kind = "loop0", trip = 2 : i64} -> !hvx.reg, !hvx.vec
    hvx.vmem_store %ptr, %acc {region = "buf"} : !hvx.reg, !hvx.vec
    %m = hvx.addi %n {value = -1 : i64} : (!hvx.reg) -> !hvx.reg
    hvx.yield %m, %ptr : !hvx.reg, !hvx.reg
  } {kind = "counted", trip = 3 : i64} -> !hvx.reg, !hvx.reg
}

// CHECK:      .text
// CHECK:      kernel:
// CHECK-NEXT:     { r{{[0-9]+}} = ##buf; r{{[0-9]+}} = ##16909060 }
// CHECK:      .Lloop0:
// CHECK:          { loop0(.Lloop1,#2) }
// CHECK-NEXT: .Lloop1:
// CHECK-NEXT:     { v{{[0-9]+}} = vmem(r{{[0-9]+}}++#1) }
// CHECK-NEXT:     { v{{[0-9]+}} = valign(v{{[0-9]+}},v{{[0-9]+}},r{{[0-7]}}) }
// CHECK-NEXT:     { v[[A:[0-9]+]].w += vrmpy(v{{[0-9]+}}.ub,r{{[0-9]+}}.b) }:endloop0
// CHECK-NEXT:     { vmem(r{{[0-9]+}}+#0) = v[[A]]; r[[N:[0-9]+]] = add(r[[N]],#-1) }
// CHECK-NEXT:     { p0 = cmp.gt(r[[N]],#0); if (p0.new) jump:t .Lloop0 }
// CHECK-NEXT:     { jumpr r31 }
// CHECK:      .bss
// CHECK-NEXT:     .p2align 7
// CHECK-NEXT:     .globl buf
// CHECK-NEXT: buf:
// CHECK-NEXT:     .space 1024

// SINGLE:      kernel:
// SINGLE-NEXT:     { r{{[0-9]+}} = ##buf }
// SINGLE-NEXT:     { r{{[0-9]+}} = ##16909060 }
