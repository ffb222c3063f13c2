// RUN: mobile-opt %s --split-input-file --verify-diagnostics -p hvx-regalloc | filecheck %s

// An accumulating instruction overwrites its accumulator: nothing may read it later.
hvx.func @reads_after_accumulation {
  %r = hvx.tfri {value = 1 : i64} : !hvx.reg
  %a = hvx.vzero : !hvx.vec
  %b = hvx.vrmpy_acc %a, %a, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
  %c = hvx.vadd_w %a, %b : (!hvx.vec, !hvx.vec) -> !hvx.vec
}

// CHECK: reads_after_accumulation: hvx.vrmpy_acc overwrites a value that is still read later by hvx.vadd_w

// -----

// Nor may a loop accumulate into a value defined outside it (the next iteration reads it).
hvx.func @clobbers_invariant {
  %r = hvx.tfri {value = 1 : i64} : !hvx.reg
  %a = hvx.vzero : !hvx.vec
  hvx.loop {
    %b = hvx.vrmpy_acc %a, %a, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
    hvx.yield
  } {kind = "loop0", trip = 4 : i64}
}

// CHECK: clobbers_invariant: hvx.vrmpy_acc overwrites, on every loop iteration, a value defined outside the loop

// -----

// No spilling: 33 vectors live at once do not fit.
hvx.func @too_many_vectors {
  %v0 = hvx.vzero : !hvx.vec
  %v1 = hvx.vzero : !hvx.vec
  %v2 = hvx.vzero : !hvx.vec
  %v3 = hvx.vzero : !hvx.vec
  %v4 = hvx.vzero : !hvx.vec
  %v5 = hvx.vzero : !hvx.vec
  %v6 = hvx.vzero : !hvx.vec
  %v7 = hvx.vzero : !hvx.vec
  %v8 = hvx.vzero : !hvx.vec
  %v9 = hvx.vzero : !hvx.vec
  %v10 = hvx.vzero : !hvx.vec
  %v11 = hvx.vzero : !hvx.vec
  %v12 = hvx.vzero : !hvx.vec
  %v13 = hvx.vzero : !hvx.vec
  %v14 = hvx.vzero : !hvx.vec
  %v15 = hvx.vzero : !hvx.vec
  %v16 = hvx.vzero : !hvx.vec
  %v17 = hvx.vzero : !hvx.vec
  %v18 = hvx.vzero : !hvx.vec
  %v19 = hvx.vzero : !hvx.vec
  %v20 = hvx.vzero : !hvx.vec
  %v21 = hvx.vzero : !hvx.vec
  %v22 = hvx.vzero : !hvx.vec
  %v23 = hvx.vzero : !hvx.vec
  %v24 = hvx.vzero : !hvx.vec
  %v25 = hvx.vzero : !hvx.vec
  %v26 = hvx.vzero : !hvx.vec
  %v27 = hvx.vzero : !hvx.vec
  %v28 = hvx.vzero : !hvx.vec
  %v29 = hvx.vzero : !hvx.vec
  %v30 = hvx.vzero : !hvx.vec
  %v31 = hvx.vzero : !hvx.vec
  %v32 = hvx.vzero : !hvx.vec
  %s1 = hvx.vadd_w %v0, %v1 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s2 = hvx.vadd_w %s1, %v2 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s3 = hvx.vadd_w %s2, %v3 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s4 = hvx.vadd_w %s3, %v4 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s5 = hvx.vadd_w %s4, %v5 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s6 = hvx.vadd_w %s5, %v6 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s7 = hvx.vadd_w %s6, %v7 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s8 = hvx.vadd_w %s7, %v8 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s9 = hvx.vadd_w %s8, %v9 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s10 = hvx.vadd_w %s9, %v10 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s11 = hvx.vadd_w %s10, %v11 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s12 = hvx.vadd_w %s11, %v12 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s13 = hvx.vadd_w %s12, %v13 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s14 = hvx.vadd_w %s13, %v14 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s15 = hvx.vadd_w %s14, %v15 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s16 = hvx.vadd_w %s15, %v16 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s17 = hvx.vadd_w %s16, %v17 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s18 = hvx.vadd_w %s17, %v18 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s19 = hvx.vadd_w %s18, %v19 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s20 = hvx.vadd_w %s19, %v20 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s21 = hvx.vadd_w %s20, %v21 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s22 = hvx.vadd_w %s21, %v22 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s23 = hvx.vadd_w %s22, %v23 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s24 = hvx.vadd_w %s23, %v24 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s25 = hvx.vadd_w %s24, %v25 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s26 = hvx.vadd_w %s25, %v26 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s27 = hvx.vadd_w %s26, %v27 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s28 = hvx.vadd_w %s27, %v28 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s29 = hvx.vadd_w %s28, %v29 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s30 = hvx.vadd_w %s29, %v30 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s31 = hvx.vadd_w %s30, %v31 : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %s32 = hvx.vadd_w %s31, %v32 : (!hvx.vec, !hvx.vec) -> !hvx.vec
}

// CHECK: too_many_vectors: kernel needs more hvx.vec registers than the machine has

// -----

// A lowered kernel names the ONNX node it computes, and so do its diagnostics.
hvx.func @k3_conv {
  %r = hvx.tfri {value = 1 : i64} : !hvx.reg
  %a = hvx.vzero : !hvx.vec
  %b = hvx.vrmpy_acc %a, %a, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
  %c = hvx.vadd_w %a, %b : (!hvx.vec, !hvx.vec) -> !hvx.vec
} {hvx.node = "node 'layer3/conv' (Conv)"}

// CHECK: node 'layer3/conv' (Conv), kernel k3_conv: hvx.vrmpy_acc overwrites a value that is still read later by hvx.vadd_w
