// RUN: mobile-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// RUN: mobile-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s --check-prefix=NOPASS

// Every chunk fails: no module is printed in custom form.
// NOPASS-NOT: {{^}}builtin.module

// A register of the wrong class as the first operand of hvx.add.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%add_0 = hvx.add %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.reg

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.addi.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%addi_0 = hvx.addi %v {value = 128 : i64} : (!hvx.vec) -> !hvx.reg

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first result of hvx.address.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%address_0 = hvx.address {symbol = @buf} : !hvx.vec

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.hi.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%hi_0 = hvx.hi %v : (!hvx.vec) -> !hvx.vec

// CHECK: !hvx.vec should be of base attribute hvx.vecpair

// -----

// A register of the wrong class as the first operand of hvx.hi_r.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%hi_r_0 = hvx.hi_r %r : (!hvx.reg) -> !hvx.reg

// CHECK: !hvx.reg should be of base attribute hvx.regpair

// -----

// A register of the wrong class as the first operand of hvx.lo.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%lo_0 = hvx.lo %v : (!hvx.vec) -> !hvx.vec

// CHECK: !hvx.vec should be of base attribute hvx.vecpair

// -----

// A register of the wrong class as the first operand of hvx.lo_r.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%lo_r_0 = hvx.lo_r %r : (!hvx.reg) -> !hvx.reg

// CHECK: !hvx.reg should be of base attribute hvx.regpair

// -----

// A register of the wrong class as the first operand of hvx.memb_store_rr.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
hvx.memb_store_rr %v, %r, %r {region = "buf"} : !hvx.vec, !hvx.reg, !hvx.reg

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.memd_load_pi.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%memd_load_pi_0, %memd_load_pi_1 = hvx.memd_load_pi %v {offset = 8 : i64} : (!hvx.vec) -> (!hvx.regpair, !hvx.reg)

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.memub_load_rr.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%memub_load_rr_0 = hvx.memub_load_rr %v, %r {region = "buf"} : (!hvx.vec, !hvx.reg) -> !hvx.reg

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.memw_load.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%memw_load_0 = hvx.memw_load %v {offset = 4 : i64} : (!hvx.vec) -> !hvx.reg

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.memw_load_pi.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%memw_load_pi_0, %memw_load_pi_1 = hvx.memw_load_pi %v {offset = 4 : i64} : (!hvx.vec) -> (!hvx.reg, !hvx.reg)

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.memw_store.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
hvx.memw_store %v, %r {offset = 4 : i64} : !hvx.vec, !hvx.reg

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.min.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%min_0 = hvx.min %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.reg

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.pair.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%pair_0 = hvx.pair %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vecpair

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first result of hvx.tfri.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%tfri_0 = hvx.tfri {value = 42 : i64} : !hvx.vec

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.vadd_b_if.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vadd_b_if_0 = hvx.vadd_b_if %v, %v, %v : (!hvx.vec, !hvx.vec, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.vec should be of base attribute hvx.pred

// -----

// A register of the wrong class as the first operand of hvx.vadd_h.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vadd_h_0 = hvx.vadd_h %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vadd_w.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vadd_w_0 = hvx.vadd_w %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vadd_w_if.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vadd_w_if_0 = hvx.vadd_w_if %v, %v, %v : (!hvx.vec, !hvx.vec, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.vec should be of base attribute hvx.pred

// -----

// A register of the wrong class as the first operand of hvx.vadd_widen_acc.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vadd_widen_acc_0 = hvx.vadd_widen_acc %v, %v, %v : (!hvx.vec, !hvx.vec, !hvx.vec) -> !hvx.vecpair

// CHECK: !hvx.vec should be of base attribute hvx.vecpair

// -----

// A register of the wrong class as the first operand of hvx.valign.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%valign_0 = hvx.valign %r, %v, %r : (!hvx.reg, !hvx.vec, !hvx.reg) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vasl_w.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vasl_w_0 = hvx.vasl_w %r, %r : (!hvx.reg, !hvx.reg) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vasl_w_acc.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vasl_w_acc_0 = hvx.vasl_w_acc %r, %v, %r : (!hvx.reg, !hvx.vec, !hvx.reg) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vasr_w.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vasr_w_0 = hvx.vasr_w %r, %r : (!hvx.reg, !hvx.reg) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vcmp_eq_b.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vcmp_eq_b_0 = hvx.vcmp_eq_b %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.pred

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vcmp_eq_b_and.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vcmp_eq_b_and_0 = hvx.vcmp_eq_b_and %v, %v, %v : (!hvx.vec, !hvx.vec, !hvx.vec) -> !hvx.pred

// CHECK: !hvx.vec should be of base attribute hvx.pred

// -----

// A register of the wrong class as the first operand of hvx.vcmp_eq_w.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vcmp_eq_w_0 = hvx.vcmp_eq_w %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.pred

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vcmp_gt_w.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vcmp_gt_w_0 = hvx.vcmp_gt_w %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.pred

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vcmp_gt_w_and.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vcmp_gt_w_and_0 = hvx.vcmp_gt_w_and %v, %v, %v : (!hvx.vec, !hvx.vec, !hvx.vec) -> !hvx.pred

// CHECK: !hvx.vec should be of base attribute hvx.pred

// -----

// A register of the wrong class as the first operand of hvx.vcombine.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vcombine_0 = hvx.vcombine %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vecpair

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vdeal.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vdeal_0 = hvx.vdeal %r, %v, %r : (!hvx.reg, !hvx.vec, !hvx.reg) -> !hvx.vecpair

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmax_ub.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmax_ub_0 = hvx.vmax_ub %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmax_w.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmax_w_0 = hvx.vmax_w %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmem_load.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmem_load_0 = hvx.vmem_load %v {offset = 1 : i64, region = "buf"} : (!hvx.vec) -> !hvx.vec

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.vmem_load_pi.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmem_load_pi_0, %vmem_load_pi_1 = hvx.vmem_load_pi %v {offset = 1 : i64, region = "buf"} : (!hvx.vec) -> (!hvx.vec, !hvx.reg)

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.vmem_store.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
hvx.vmem_store %v, %v {offset = 1 : i64, region = "buf"} : !hvx.vec, !hvx.vec

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.vmem_store_if.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
hvx.vmem_store_if %v, %r, %v {offset = 1 : i64, region = "buf"} : !hvx.vec, !hvx.reg, !hvx.vec

// CHECK: !hvx.vec should be of base attribute hvx.pred

// -----

// A register of the wrong class as the first operand of hvx.vmem_store_pi.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmem_store_pi_0 = hvx.vmem_store_pi %v, %v {offset = 1 : i64, region = "buf"} : (!hvx.vec, !hvx.vec) -> !hvx.reg

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.vmemu_load.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmemu_load_0 = hvx.vmemu_load %v {offset = 1 : i64, region = "buf"} : (!hvx.vec) -> !hvx.vec

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.vmin_ub.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmin_ub_0 = hvx.vmin_ub %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmin_w.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmin_w_0 = hvx.vmin_w %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmpa.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmpa_0 = hvx.vmpa %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair

// CHECK: !hvx.vec should be of base attribute hvx.vecpair

// -----

// A register of the wrong class as the first operand of hvx.vmpa_acc.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmpa_acc_0 = hvx.vmpa_acc %v, %w, %r : (!hvx.vec, !hvx.vecpair, !hvx.reg) -> !hvx.vecpair

// CHECK: !hvx.vec should be of base attribute hvx.vecpair

// -----

// A register of the wrong class as the first operand of hvx.vmpy.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmpy_0 = hvx.vmpy %r, %r : (!hvx.reg, !hvx.reg) -> !hvx.vecpair

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmpy_acc.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmpy_acc_0 = hvx.vmpy_acc %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vecpair

// CHECK: !hvx.vec should be of base attribute hvx.vecpair

// -----

// A register of the wrong class as the first operand of hvx.vmpy_h_acc.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmpy_h_acc_0 = hvx.vmpy_h_acc %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vecpair

// CHECK: !hvx.vec should be of base attribute hvx.vecpair

// -----

// A register of the wrong class as the first operand of hvx.vmpye.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmpye_0 = hvx.vmpye %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmpyi_w.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmpyi_w_0 = hvx.vmpyi_w %r, %r : (!hvx.reg, !hvx.reg) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmpyi_w_acc.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmpyi_w_acc_0 = hvx.vmpyi_w_acc %r, %v, %r : (!hvx.reg, !hvx.vec, !hvx.reg) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmpyi_wh_acc.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmpyi_wh_acc_0 = hvx.vmpyi_wh_acc %r, %v, %r : (!hvx.reg, !hvx.vec, !hvx.reg) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmpyie.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmpyie_0 = hvx.vmpyie %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmpyie_acc.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmpyie_acc_0 = hvx.vmpyie_acc %r, %v, %v : (!hvx.reg, !hvx.vec, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmpyo_acc.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmpyo_acc_0 = hvx.vmpyo_acc %r, %v, %v : (!hvx.reg, !hvx.vec, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vmux.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vmux_0 = hvx.vmux %v, %v, %v : (!hvx.vec, !hvx.vec, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.vec should be of base attribute hvx.pred

// -----

// A register of the wrong class as the first operand of hvx.vrmpy.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vrmpy_0 = hvx.vrmpy %r, %r : (!hvx.reg, !hvx.reg) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vrmpy_acc.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vrmpy_acc_0 = hvx.vrmpy_acc %r, %v, %r : (!hvx.reg, !hvx.vec, !hvx.reg) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vsat_h.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vsat_h_0 = hvx.vsat_h %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vsat_ub.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vsat_ub_0 = hvx.vsat_ub %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vsetq2.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vsetq2_0 = hvx.vsetq2 %v : (!hvx.vec) -> !hvx.pred

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.vshuff.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vshuff_0 = hvx.vshuff %r, %v, %r : (!hvx.reg, !hvx.vec, !hvx.reg) -> !hvx.vecpair

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vsplat.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vsplat_0 = hvx.vsplat %v : (!hvx.vec) -> !hvx.vec

// CHECK: !hvx.vec should be of base attribute hvx.reg

// -----

// A register of the wrong class as the first operand of hvx.vsub_w.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vsub_w_0 = hvx.vsub_w %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vtmpy.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vtmpy_0 = hvx.vtmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair

// CHECK: !hvx.vec should be of base attribute hvx.vecpair

// -----

// A register of the wrong class as the first operand of hvx.vxor.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vxor_0 = hvx.vxor %r, %v : (!hvx.reg, !hvx.vec) -> !hvx.vec

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first result of hvx.vzero.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vzero_0 = hvx.vzero : !hvx.reg

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vzxt_b.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vzxt_b_0 = hvx.vzxt_b %r : (!hvx.reg) -> !hvx.vecpair

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// A register of the wrong class as the first operand of hvx.vzxt_h.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec
%w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
%q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
%d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
%vzxt_h_0 = hvx.vzxt_h %r : (!hvx.reg) -> !hvx.vecpair

// CHECK: !hvx.reg should be of base attribute hvx.vec

// -----

// Hardware loops run 1..1023 times.
hvx.func @k {
  hvx.loop {
    hvx.yield
  } {kind = "loop0", trip = 1024 : i64}
}

// CHECK: hvx.loop: a hardware loop runs at most 1023 times, not 1024

// -----

hvx.func @k {
  hvx.loop {
    hvx.yield
  } {kind = "loop0", trip = 0 : i64}
}

// CHECK: hvx.loop: trip count must be at least 1

// -----

hvx.func @k {
  hvx.loop {
    hvx.yield
  } {kind = "loop2", trip = 4 : i64}
}

// CHECK: hvx.loop: kind must be one of loop0, loop1, counted

// -----

// A counted loop's first iteration value is its counter.
hvx.func @k {
  %v = hvx.vzero : !hvx.vec
  %r = hvx.loop iter(%v : !hvx.vec) {
  ^bb0(%a: !hvx.vec):
    hvx.yield %a : !hvx.vec
  } {kind = "counted", trip = 4 : i64} -> !hvx.vec
}

// CHECK: hvx.loop: a counted loop's first iteration value is its counter

// -----

hvx.func @k {
  %v = hvx.vzero : !hvx.vec
  %r = hvx.loop iter(%v : !hvx.vec) {
  ^bb0(%a: !hvx.vec):
    %s = hvx.tfri {value = 1 : i64} : !hvx.reg
    hvx.yield %s : !hvx.reg
  } {kind = "loop0", trip = 4 : i64} -> !hvx.vec
}

// CHECK: hvx.loop: yielded values must match the iteration values

// -----

// Hexagon has two hardware loops: loop1 around loop0.
hvx.func @k {
  hvx.loop {
    hvx.loop {
      hvx.yield
    } {kind = "loop0", trip = 2 : i64}
    hvx.yield
  } {kind = "loop0", trip = 4 : i64}
}

// CHECK: hvx.loop: a loop0 body holds no loops

// -----

hvx.func @k {
  hvx.loop {
    hvx.loop {
      hvx.yield
    } {kind = "loop1", trip = 2 : i64}
    hvx.yield
  } {kind = "loop1", trip = 4 : i64}
}

// CHECK: hvx.loop: a loop1 body holds no loop1

// -----

// vmem offsets count vectors: -8..7 (post-increment -4..3).
%r = hvx.tfri {value = 0 : i64} : !hvx.reg
%v = hvx.vmem_load %r {offset = 8 : i64} : (!hvx.reg) -> !hvx.vec

// CHECK: hvx.vmem_load: offset 8 outside [-8, 7]

// -----

%r = hvx.tfri {value = 0 : i64} : !hvx.reg
%v, %n = hvx.vmem_load_pi %r {offset = 4 : i64} : (!hvx.reg) -> (!hvx.vec, !hvx.reg)

// CHECK: hvx.vmem_load_pi: offset 4 outside [-4, 3]

// -----

// Scalar memory offsets are aligned to the access.
%r = hvx.tfri {value = 0 : i64} : !hvx.reg
%w = hvx.memw_load %r {offset = 6 : i64} : (!hvx.reg) -> !hvx.reg

// CHECK: hvx.memw_load: offset must be a multiple of 4

// -----

%r = hvx.tfri {value = 4294967296 : i64} : !hvx.reg

// CHECK: hvx.tfri: 4294967296 does not fit 32 bits

// -----

hvx.buffer @b {size = 0 : i64}

// CHECK: hvx.buffer @b: size must be positive

// -----

hvx.buffer @b {size = 128 : i64, store = "w.npy"}

// CHECK: hvx.buffer @b: store and key go together

// -----

hvx.buffer @b {size = 128 : i64, store = "w.npy", key = "w", file = "x.bin"}

// CHECK: hvx.buffer @b: data comes from a store or a file

// -----

func.func @f(%t: tensor<4x4xui8>) {
  %a = hvx.relayout %t from <col4> to <col4> : tensor<4x4xui8> -> tensor<4x4xui8>
  func.return
}

// CHECK: hvx.relayout: source and target layouts are the same

// -----

func.func @f(%t: tensor<4x4xf32>) {
  %a = hvx.relayout %t from <col1> to <col4> : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return
}

// CHECK: hvx.relayout: moves 8-bit quantized tensors only

// -----

func.func @f(%t: tensor<4x4xui8>) {
  %a = hvx.relayout %t from <row> to <col4> : tensor<4x4xui8> -> tensor<4x4xui8>
  func.return
}

// CHECK: hvx.relayout: moves between col1, col2 and col4

// -----

func.func @f() attributes {p = #hvx.implementation<col4, vrmpy, 10 packets, 5 cycles>} {
  func.return
}

// CHECK: hvx.implementation: needs 0 <= packets <= cycles

// -----

func.func @f() attributes {p = #hvx.implementation<col3, vrmpy, 10 packets, 20 cycles>} {
  func.return
}

// CHECK: Expected `row`, `col1`, `col2`, or `col4`.

// -----

func.func @f() attributes {p = #hvx.implementation<col4, vrmpy, 10 packets>} {
  func.return
}

// CHECK: Expected ','

// -----

// An accumulator keeps its register type.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg
%v = hvx.vzero : !hvx.vec<v1>
%s = "hvx.vrmpy_acc"(%v, %v, %r) : (!hvx.vec<v1>, !hvx.vec<v1>, !hvx.reg) -> !hvx.vec<v2>

// CHECK: hvx.vrmpy_acc: tied operand and result types differ (!hvx.vec<v1> vs !hvx.vec<v2>)

// -----

%v = hvx.vzero : !hvx.vec<v40>

// CHECK: Invalid register name v40 for register type hvx.vec.

// -----

// A register live on entry is a named register.
hvx.func @f {
  %r = hvx.arg : !hvx.reg
}

// CHECK: hvx.arg: the register must be allocated, not !hvx.reg

// -----

// Only a function has registers live on entry.
%r = hvx.arg : !hvx.reg<r0>

// CHECK: hvx.arg: must be in the body of an hvx.func

// -----

// Registers live on entry come before the function's code.
hvx.func @f {
  %v = hvx.vzero : !hvx.vec<v0>
  %r = hvx.arg : !hvx.reg<r0>
}

// CHECK: hvx.arg: must come before the other ops of its function

// -----

// hvx.arg gives a register, nothing else.
hvx.func @f {
  %r = hvx.arg : i32
}

// CHECK: i32 should be of attribute subclassing `HexagonRegisterType`

// -----

// An immediate vector alignment shifts by 0..7 bytes.
%v = hvx.vzero : !hvx.vec<v0>
%a = hvx.valign_i %v, %v {shift = 8 : i64} : (!hvx.vec<v0>, !hvx.vec<v0>) -> !hvx.vec<v1>

// CHECK: hvx.valign_i: shift 8 outside [0, 7]

// -----

// memd reads 8-byte aligned double words.
%r = hvx.tfri {value = 7 : i64} : !hvx.reg<r0>
%d = hvx.memd_load %r {offset = 4 : i64} : (!hvx.reg<r0>) -> !hvx.regpair<d1>

// CHECK: hvx.memd_load: offset must be a multiple of 8
