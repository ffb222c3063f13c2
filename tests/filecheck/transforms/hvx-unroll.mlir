// RUN: mobile-opt %s -p hvx-unroll | filecheck %s
// RUN: mobile-opt %s -p 'hvx-unroll{factor=0}' | filecheck %s
// RUN: mobile-opt %s -p 'hvx-unroll{factor=2}' | filecheck %s --check-prefix=TWO
// RUN: mobile-opt %s -p 'hvx-unroll{factor=8}' | filecheck %s --check-prefix=EIGHT
// The unrolled kernels still allocate.
// RUN: mobile-opt %s -p 'hvx-unroll,hvx-regalloc' > /dev/null
// RUN: %python %inputs/exit_status.py mobile-opt %s -p 'hvx-unroll{factor=-1}' | filecheck %s --check-prefix=NEGATIVE
// RUN: %python %inputs/exit_status.py mobile-opt %s -p 'hvx-regalloc,hvx-unroll' | filecheck %s --check-prefix=ALLOCATED

// factor=0 (the default) unrolls by the kernel's output shape, `hvx.output = [pixels,
// channels]`; a loop is unrolled by the largest divisor of its trip count within that
// bound. The loop bodies access no memory, so the copies are all that changes.

// Skinny output (64 pixels, 16 channels): four copies.
hvx.func @skinny {
  %w = hvx.tfri {value = 16843009 : i64} : !hvx.reg
  %x = hvx.vsplat %w : (!hvx.reg) -> !hvx.vec
  %zero = hvx.vzero : !hvx.vec
  %acc = hvx.loop iter(%zero : !hvx.vec) {
  ^bb0(%a: !hvx.vec):
    %s = hvx.vrmpy_acc %a, %x, %w : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
    hvx.yield %s : !hvx.vec
  } {kind = "loop0", trip = 8 : i64} -> !hvx.vec
} {hvx.output = [64, 16]}

// Fat output (16 pixels, 64 channels): two copies.
hvx.func @fat {
  %w = hvx.tfri {value = 16843009 : i64} : !hvx.reg
  %x = hvx.vsplat %w : (!hvx.reg) -> !hvx.vec
  %zero = hvx.vzero : !hvx.vec
  %acc = hvx.loop iter(%zero : !hvx.vec) {
  ^bb0(%a: !hvx.vec):
    %s = hvx.vrmpy_acc %a, %x, %w : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
    hvx.yield %s : !hvx.vec
  } {kind = "loop0", trip = 8 : i64} -> !hvx.vec
} {hvx.output = [16, 64]}

// Near-square output: four copies, of the innermost loop only; the outer counted
// loop keeps its trip count and its counter step.
hvx.func @square_nested {
  %w = hvx.tfri {value = 16843009 : i64} : !hvx.reg
  %x = hvx.vsplat %w : (!hvx.reg) -> !hvx.vec
  %count = hvx.tfri {value = 3 : i64} : !hvx.reg
  %left = hvx.loop iter(%count : !hvx.reg) {
  ^bb0(%n: !hvx.reg):
    %zero = hvx.vzero : !hvx.vec
    %acc = hvx.loop iter(%zero : !hvx.vec) {
    ^bb1(%a: !hvx.vec):
      %s = hvx.vrmpy_acc %a, %x, %w : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
      hvx.yield %s : !hvx.vec
    } {kind = "loop0", trip = 8 : i64} -> !hvx.vec
    %m = hvx.addi %n {value = -1 : i64} : (!hvx.reg) -> !hvx.reg
    hvx.yield %m : !hvx.reg
  } {kind = "counted", trip = 3 : i64} -> !hvx.reg
} {hvx.output = [32, 32]}

// Six iterations do not split in fours: three copies, the largest divisor within
// the bound.
hvx.func @six {
  %x = hvx.vzero : !hvx.vec
  %zero = hvx.vzero : !hvx.vec
  %sum = hvx.loop iter(%zero : !hvx.vec) {
  ^bb0(%a: !hvx.vec):
    %s = hvx.vadd_w %a, %x : (!hvx.vec, !hvx.vec) -> !hvx.vec
    hvx.yield %s : !hvx.vec
  } {kind = "loop0", trip = 6 : i64} -> !hvx.vec
} {hvx.output = [64, 16]}

// Seven iterations split in no way within the bound: the loop stays as it was.
hvx.func @prime {
  %x = hvx.vzero : !hvx.vec
  %zero = hvx.vzero : !hvx.vec
  %sum = hvx.loop iter(%zero : !hvx.vec) {
  ^bb0(%a: !hvx.vec):
    %s = hvx.vadd_w %a, %x : (!hvx.vec, !hvx.vec) -> !hvx.vec
    hvx.yield %s : !hvx.vec
  } {kind = "loop0", trip = 7 : i64} -> !hvx.vec
  %after = hvx.vsub_w %sum, %x : (!hvx.vec, !hvx.vec) -> !hvx.vec
} {hvx.output = [64, 16]}

// No `hvx.output`: the kernel's shape is unknown, and auto unrolls nothing.
hvx.func @unmarked {
  %x = hvx.vzero : !hvx.vec
  %zero = hvx.vzero : !hvx.vec
  %sum = hvx.loop iter(%zero : !hvx.vec) {
  ^bb0(%a: !hvx.vec):
    %s = hvx.vadd_w %a, %x : (!hvx.vec, !hvx.vec) -> !hvx.vec
    hvx.yield %s : !hvx.vec
  } {kind = "loop0", trip = 8 : i64} -> !hvx.vec
}

// CHECK-LABEL: hvx.func @skinny {
// CHECK:         hvx.loop iter(%{{[^ ]+}} : !hvx.vec) {
// CHECK-NEXT:    ^bb0(%[[A:[^ :]+]]: !hvx.vec):
// CHECK-NEXT:      %[[S0:[^ ]+]] = hvx.vrmpy_acc %[[A]], %[[X:[^ ,]+]], %[[W:[^ ]+]] :
// CHECK-NEXT:      %[[S1:[^ ]+]] = hvx.vrmpy_acc %[[S0]], %[[X]], %[[W]] :
// CHECK-NEXT:      %[[S2:[^ ]+]] = hvx.vrmpy_acc %[[S1]], %[[X]], %[[W]] :
// CHECK-NEXT:      %[[S3:[^ ]+]] = hvx.vrmpy_acc %[[S2]], %[[X]], %[[W]] :
// CHECK-NEXT:      hvx.yield %[[S3]] : !hvx.vec
// CHECK-NEXT:    } {kind = "loop0", trip = 2 : i64} -> !hvx.vec
// CHECK-NEXT:  } {hvx.output = [64 : i64, 16 : i64]}

// CHECK-LABEL: hvx.func @fat {
// CHECK:         ^bb0(%[[A:[^ :]+]]: !hvx.vec):
// CHECK-NEXT:      %[[S0:[^ ]+]] = hvx.vrmpy_acc %[[A]],
// CHECK-NEXT:      %[[S1:[^ ]+]] = hvx.vrmpy_acc %[[S0]],
// CHECK-NEXT:      hvx.yield %[[S1]] : !hvx.vec
// CHECK-NEXT:    } {kind = "loop0", trip = 4 : i64} -> !hvx.vec
// CHECK-NEXT:  } {hvx.output = [16 : i64, 64 : i64]}

// CHECK-LABEL: hvx.func @square_nested {
// CHECK:         ^bb0(%[[N:[^ :]+]]: !hvx.reg):
// CHECK-NEXT:      hvx.vzero
// CHECK-NEXT:      hvx.loop
// CHECK-NEXT:      ^bb{{[0-9]+}}(%[[A:[^ :]+]]: !hvx.vec):
// CHECK-NEXT:        %[[S0:[^ ]+]] = hvx.vrmpy_acc %[[A]],
// CHECK-NEXT:        %[[S1:[^ ]+]] = hvx.vrmpy_acc %[[S0]],
// CHECK-NEXT:        %[[S2:[^ ]+]] = hvx.vrmpy_acc %[[S1]],
// CHECK-NEXT:        %[[S3:[^ ]+]] = hvx.vrmpy_acc %[[S2]],
// CHECK-NEXT:        hvx.yield %[[S3]] : !hvx.vec
// CHECK-NEXT:      } {kind = "loop0", trip = 2 : i64} -> !hvx.vec
// CHECK-NEXT:      %[[M:[^ ]+]] = hvx.addi %[[N]] {value = -1 : i64}
// CHECK-NEXT:      hvx.yield %[[M]] : !hvx.reg
// CHECK-NEXT:    } {kind = "counted", trip = 3 : i64} -> !hvx.reg
// CHECK-NEXT:  } {hvx.output = [32 : i64, 32 : i64]}

// CHECK-LABEL: hvx.func @six {
// CHECK:         ^bb0(%[[A:[^ :]+]]: !hvx.vec):
// CHECK-NEXT:      %[[S0:[^ ]+]] = hvx.vadd_w %[[A]],
// CHECK-NEXT:      %[[S1:[^ ]+]] = hvx.vadd_w %[[S0]],
// CHECK-NEXT:      %[[S2:[^ ]+]] = hvx.vadd_w %[[S1]],
// CHECK-NEXT:      hvx.yield %[[S2]] : !hvx.vec
// CHECK-NEXT:    } {kind = "loop0", trip = 2 : i64} -> !hvx.vec

// CHECK-LABEL: hvx.func @prime {
// CHECK:         ^bb0(%[[A:[^ :]+]]: !hvx.vec):
// CHECK-NEXT:      %[[S0:[^ ]+]] = hvx.vadd_w %[[A]],
// CHECK-NEXT:      hvx.yield %[[S0]] : !hvx.vec
// CHECK-NEXT:    } {kind = "loop0", trip = 7 : i64} -> !hvx.vec

// CHECK-LABEL: hvx.func @unmarked {
// CHECK:         ^bb0(%[[A:[^ :]+]]: !hvx.vec):
// CHECK-NEXT:      %[[S0:[^ ]+]] = hvx.vadd_w %[[A]],
// CHECK-NEXT:      hvx.yield %[[S0]] : !hvx.vec
// CHECK-NEXT:    } {kind = "loop0", trip = 8 : i64} -> !hvx.vec
// CHECK-NEXT:  }

// An explicit factor is the bound for every kernel, whatever its shape, marked or not.
// TWO-LABEL: hvx.func @skinny {
// TWO-COUNT-2: hvx.vrmpy_acc
// TWO-NEXT:      hvx.yield
// TWO-NEXT:    } {kind = "loop0", trip = 4 : i64}
// TWO-LABEL: hvx.func @fat {
// TWO-COUNT-2: hvx.vrmpy_acc
// TWO-NEXT:      hvx.yield
// TWO-NEXT:    } {kind = "loop0", trip = 4 : i64}
// TWO-LABEL: hvx.func @square_nested {
// TWO-COUNT-2: hvx.vrmpy_acc
// TWO-NEXT:        hvx.yield
// TWO-NEXT:      } {kind = "loop0", trip = 4 : i64}
// TWO-LABEL: hvx.func @six {
// TWO-COUNT-2: hvx.vadd_w
// TWO-NEXT:      hvx.yield
// TWO-NEXT:    } {kind = "loop0", trip = 3 : i64}
// TWO-LABEL: hvx.func @prime {
// TWO:           hvx.vadd_w
// TWO-NEXT:      hvx.yield
// TWO-NEXT:    } {kind = "loop0", trip = 7 : i64}
// TWO-LABEL: hvx.func @unmarked {
// TWO-COUNT-2: hvx.vadd_w
// TWO-NEXT:      hvx.yield
// TWO-NEXT:    } {kind = "loop0", trip = 4 : i64}

// A loop left with one iteration is inlined: its uses read the last copy.
// EIGHT-LABEL: hvx.func @skinny {
// EIGHT-NOT:     hvx.loop
// EIGHT-COUNT-8: hvx.vrmpy_acc
// EIGHT-NEXT:  } {hvx.output = [64 : i64, 16 : i64]}
// EIGHT-LABEL: hvx.func @prime {
// EIGHT-NEXT:    %[[X:[^ ]+]] = hvx.vzero
// EIGHT-NEXT:    %[[ZERO:[^ ]+]] = hvx.vzero
// EIGHT-NEXT:    %[[S0:[^ ]+]] = hvx.vadd_w %[[ZERO]], %[[X]]
// EIGHT-COUNT-5: hvx.vadd_w
// EIGHT-NEXT:    %[[S6:[^ ]+]] = hvx.vadd_w %{{[^ ]+}}, %[[X]]
// EIGHT-NEXT:    hvx.vsub_w %[[S6]], %[[X]]
// EIGHT-NEXT:  }

// NEGATIVE:      [output]
// NEGATIVE-NEXT: mobile-opt: error: {{.*}}hvx-unroll.mlir: hvx-unroll: factor must be 0 (auto) or more, not -1
// NEGATIVE-NEXT: [exit status 1]

// Unrolling comes before allocation.
// ALLOCATED:      [output]
// ALLOCATED-NEXT: mobile-opt: error: {{.*}}hvx-unroll.mlir: hvx-unroll: @skinny is already allocated (unroll before hvx-regalloc)
// ALLOCATED-NEXT: [exit status 1]

// A body that is long already is copied only within max-body instructions.
// RUN: mobile-opt %s -p 'hvx-unroll{max-body=5}' | filecheck %s --check-prefix=LONG
// LONG-LABEL: hvx.func @skinny {
// LONG:         ^bb0(%[[A:[^ :]+]]: !hvx.vec):
// LONG-NEXT:      %[[S0:[^ ]+]] = hvx.vrmpy_acc %[[A]]
// LONG-NEXT:      %[[S1:[^ ]+]] = hvx.vrmpy_acc %[[S0]]
// LONG-NEXT:      hvx.yield %[[S1]] : !hvx.vec
// LONG-NEXT:    } {kind = "loop0", trip = 4 : i64} -> !hvx.vec
