// RUN: mobile-opt %s -t hexagon-c | filecheck %s
// Registers play no part in the C: allocated code prints the same.
// RUN: mobile-opt %s -p hvx-regalloc -t hexagon-c | filecheck %s
// clang compiles it as the harness does (harness.py adds `-nostdinc -isystem` of
// clang's resource dir, whose headers these are).
// RUN: mobile-opt %s -t hexagon-c -o %t.c
// RUN: clang-19 --target=hexagon -O3 -mcpu=hexagonv66 -mhvx -mhvx-length=128b -ffreestanding -fno-builtin -c -x c %t.c -o %t.o

// Errors: one line, exit status 1.
// RUN: rm -rf %t.dir && mkdir -p %t.dir && cd %t.dir
// RUN: echo 'hvx.func @_start { hvx.call @_start }' > start_only.mlir
// RUN: %python %inputs/exit_status.py mobile-opt start_only.mlir -t hexagon-c | filecheck %s --check-prefix=NO-KERNEL
// RUN: echo 'hvx.func @f { %x = hvx.address {symbol = @nowhere} : !hvx.reg }' > unknown.mlir
// RUN: %python %inputs/exit_status.py mobile-opt unknown.mlir -t hexagon-c | filecheck %s --check-prefix=UNKNOWN
// RUN: echo 'hvx.func @f { %x = hvx.arg : !hvx.reg<r0> }' > arg.mlir
// RUN: %python %inputs/exit_status.py mobile-opt arg.mlir -t hexagon-c | filecheck %s --check-prefix=NO-C-FORM
// RUN: %python %inputs/exit_status.py mobile-opt %s -p hvx-regalloc,vliw-pack -t hexagon-c | filecheck %s --check-prefix=PACKED

hvx.buffer @in {size = 4096 : i64}
hvx.buffer @out {size = 1024 : i64}

// A loop with a post-incremented load and an accumulator, then vector ALU, multiply,
// compare, select and stores (aligned post-increment, unaligned).
hvx.func @kernel {
  %src = hvx.address {symbol = @in} : !hvx.reg
  %dst = hvx.address {symbol = @out} : !hvx.reg
  %w = hvx.tfri {value = 16843009 : i64} : !hvx.reg
  %zero = hvx.vzero : !hvx.vec
  %ptr, %acc = hvx.loop iter(%src, %zero : !hvx.reg, !hvx.vec) {
  ^bb0(%p: !hvx.reg, %a: !hvx.vec):
    %x, %next = hvx.vmem_load_pi %p {offset = 1 : i64, region = "in"} : (!hvx.reg) -> (!hvx.vec, !hvx.reg)
    %s = hvx.vrmpy_acc %a, %x, %w : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
    hvx.yield %next, %s : !hvx.reg, !hvx.vec
  } {kind = "loop0", trip = 8 : i64} -> !hvx.reg, !hvx.vec
  %y = hvx.vmem_load %dst {offset = 1 : i64, region = "out"} : (!hvx.reg) -> !hvx.vec
  %sum = hvx.vadd_w %acc, %y : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %prod = hvx.vmpy %sum, %w : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
  %lo = hvx.lo %prod : (!hvx.vecpair) -> !hvx.vec
  %q = hvx.vcmp_gt_w %sum, %y : (!hvx.vec, !hvx.vec) -> !hvx.pred
  %m = hvx.vmux %q, %sum, %lo : (!hvx.pred, !hvx.vec, !hvx.vec) -> !hvx.vec
  %after = hvx.vmem_store_pi %dst, %m {offset = 1 : i64, region = "out"} : (!hvx.reg, !hvx.vec) -> !hvx.reg
  hvx.vmemu_store %after, %sum {offset = 2 : i64, region = "out"} : !hvx.reg, !hvx.vec
}

// The entry calls the kernel: it is not a kernel itself, and prints no C.
hvx.func @_start {
  hvx.call @kernel
}

// CHECK:      #include <stdint.h>
// CHECK-NEXT: #include <hexagon_types.h>
// CHECK-NEXT: #include <hexagon_protos.h>
// CHECK-NEXT: extern uint8_t in[];
// CHECK-NEXT: extern uint8_t out[];
// CHECK-EMPTY:
// The buffers are restrict parameters of an always-inlined body: LLVM knows they
// never alias.
// CHECK-NEXT: static inline __attribute__((always_inline)) void kernel_body(uint8_t *restrict in, uint8_t *restrict out) {
// CHECK-NEXT:     uint8_t * [[SRC:t[0-9]+]] = in;
// CHECK-NEXT:     uint8_t * [[DST:t[0-9]+]] = out;
// CHECK-NEXT:     int32_t [[W:t[0-9]+]] = (int32_t)16843009;
// CHECK-NEXT:     HVX_Vector [[ZERO:t[0-9]+]] = Q6_V_vzero();
// Loop values are variables, set from the yielded values through temporaries; LLVM
// must not unroll the loop (our packer gets the body as it is).
// CHECK-NEXT:     uint8_t * [[P:t[0-9]+]] = [[SRC]];
// CHECK-NEXT:     HVX_Vector [[A:t[0-9]+]] = [[ZERO]];
// CHECK-NEXT:     #pragma clang loop unroll(disable)
// CHECK-NEXT:     for (int i0 = 0; i0 < 8; i0++) {
// A post-increment load reads at the pointer, then steps it by the offset's vectors.
// CHECK-NEXT:         HVX_Vector [[X:t[0-9]+]] = *(const HVX_Vector *)[[P]];
// CHECK-NEXT:         uint8_t * [[NEXT:t[0-9]+]] = ([[P]] + 128);
// CHECK-NEXT:         HVX_Vector [[S:t[0-9]+]] = Q6_Vw_vrmpyacc_VwVubRb([[A]], [[X]], [[W]]);
// CHECK-NEXT:         uint8_t * i0_next0 = [[NEXT]];
// CHECK-NEXT:         HVX_Vector i0_next1 = [[S]];
// CHECK-NEXT:         [[P]] = i0_next0;
// CHECK-NEXT:         [[A]] = i0_next1;
// CHECK-NEXT:     }
// The loop's results are its variables.
// CHECK-NEXT:     HVX_Vector [[Y:t[0-9]+]] = *(const HVX_Vector *)([[DST]] + 128);
// CHECK-NEXT:     HVX_Vector [[SUM:t[0-9]+]] = Q6_Vw_vadd_VwVw([[A]], [[Y]]);
// CHECK-NEXT:     HVX_VectorPair [[PROD:t[0-9]+]] = Q6_Wh_vmpy_VubRb([[SUM]], [[W]]);
// CHECK-NEXT:     HVX_Vector [[LO:t[0-9]+]] = Q6_V_lo_W([[PROD]]);
// CHECK-NEXT:     HVX_VectorPred [[Q:t[0-9]+]] = Q6_Q_vcmp_gt_VwVw([[SUM]], [[Y]]);
// CHECK-NEXT:     HVX_Vector [[M:t[0-9]+]] = Q6_V_vmux_QVV([[Q]], [[SUM]], [[LO]]);
// A post-increment store writes at the pointer, too.
// CHECK-NEXT:     *(HVX_Vector *)[[DST]] = [[M]];
// CHECK-NEXT:     uint8_t * [[AFTER:t[0-9]+]] = ([[DST]] + 128);
// CHECK-NEXT:     *(HVX_UVector *)([[AFTER]] + 256) = [[SUM]];
// CHECK-NEXT: }
// CHECK-NEXT: void kernel(void) { kernel_body(in, out); }
// CHECK-NOT:  _start

// NO-KERNEL:      [output]
// NO-KERNEL-NEXT: mobile-opt: error: start_only.mlir: hexagon-c: the module has no hvx kernel to print
// NO-KERNEL-NEXT: [exit status 1]

// UNKNOWN:      [output]
// UNKNOWN-NEXT: mobile-opt: error: unknown.mlir: hexagon-c: @f reads unknown buffers ['nowhere']
// UNKNOWN-NEXT: [exit status 1]

// Imported code (registers live on entry) has no C form.
// NO-C-FORM:      [output]
// NO-C-FORM-NEXT: mobile-opt: error: arg.mlir: hexagon-c: hvx.arg has no C form
// NO-C-FORM-NEXT: [exit status 1]

// C is printed from unpacked kernels: LLVM packs it itself.
// PACKED:      [output]
// PACKED-NEXT: mobile-opt: error: {{.*}}c_printer.mlir: hexagon-c: vliw.packet has no C form
// PACKED-NEXT: [exit status 1]
