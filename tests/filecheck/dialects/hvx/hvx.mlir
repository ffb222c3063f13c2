// RUN: mobile-opt %s | filecheck %s
// RUN: mobile-opt %s | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s

// One of every hvx instruction, over virtual registers, inside a kernel.

hvx.buffer @buf {size = 256 : i64}
hvx.buffer @weights {size = 128 : i64, store = "w.npy", key = "w"}
hvx.buffer @image {size = 128 : i64, file = "image.bin"}

hvx.func @every_instruction {
  %r = hvx.tfri {value = 7 : i64} : !hvx.reg
  %v = hvx.vzero : !hvx.vec
  %w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
  %q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
  %d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
  %add_0 = hvx.add %r, %r : (!hvx.reg, !hvx.reg) -> !hvx.reg
  %addi_0 = hvx.addi %r {value = 128 : i64} : (!hvx.reg) -> !hvx.reg
  %address_0 = hvx.address {symbol = @buf} : !hvx.reg
  %hi_0 = hvx.hi %w : (!hvx.vecpair) -> !hvx.vec
  %hi_r_0 = hvx.hi_r %d : (!hvx.regpair) -> !hvx.reg
  %lo_0 = hvx.lo %w : (!hvx.vecpair) -> !hvx.vec
  %lo_r_0 = hvx.lo_r %d : (!hvx.regpair) -> !hvx.reg
  hvx.memb_store_rr %r, %r, %r {region = "buf"} : !hvx.reg, !hvx.reg, !hvx.reg
  %memd_load_pi_0, %memd_load_pi_1 = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
  %memub_load_rr_0 = hvx.memub_load_rr %r, %r {region = "buf"} : (!hvx.reg, !hvx.reg) -> !hvx.reg
  %memw_load_0 = hvx.memw_load %r {offset = 4 : i64} : (!hvx.reg) -> !hvx.reg
  %memw_load_pi_0, %memw_load_pi_1 = hvx.memw_load_pi %r {offset = 4 : i64} : (!hvx.reg) -> (!hvx.reg, !hvx.reg)
  hvx.memw_store %r, %r {offset = 4 : i64} : !hvx.reg, !hvx.reg
  %min_0 = hvx.min %r, %r : (!hvx.reg, !hvx.reg) -> !hvx.reg
  %pair_0 = hvx.pair %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vecpair
  %tfri_0 = hvx.tfri {value = 42 : i64} : !hvx.reg
  %vadd_b_if_0 = hvx.vadd_b_if %q, %v, %v : (!hvx.pred, !hvx.vec, !hvx.vec) -> !hvx.vec
  %vadd_h_0 = hvx.vadd_h %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vadd_w_0 = hvx.vadd_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vadd_w_if_0 = hvx.vadd_w_if %q, %v, %v : (!hvx.pred, !hvx.vec, !hvx.vec) -> !hvx.vec
  %vadd_widen_acc_0 = hvx.vadd_widen_acc %w, %v, %v : (!hvx.vecpair, !hvx.vec, !hvx.vec) -> !hvx.vecpair
  %valign_0 = hvx.valign %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
  %vasl_w_0 = hvx.vasl_w %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vec
  %vasl_w_acc_0 = hvx.vasl_w_acc %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
  %vasr_w_0 = hvx.vasr_w %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vec
  %vcmp_eq_b_0 = hvx.vcmp_eq_b %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
  %vcmp_eq_b_and_0 = hvx.vcmp_eq_b_and %q, %v, %v : (!hvx.pred, !hvx.vec, !hvx.vec) -> !hvx.pred
  %vcmp_eq_w_0 = hvx.vcmp_eq_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
  %vcmp_gt_w_0 = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
  %vcmp_gt_w_and_0 = hvx.vcmp_gt_w_and %q, %v, %v : (!hvx.pred, !hvx.vec, !hvx.vec) -> !hvx.pred
  %vcombine_0 = hvx.vcombine %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vecpair
  %vdeal_0 = hvx.vdeal %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vecpair
  %vmax_ub_0 = hvx.vmax_ub %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vmax_w_0 = hvx.vmax_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vmem_load_0 = hvx.vmem_load %r {offset = 1 : i64, region = "buf"} : (!hvx.reg) -> !hvx.vec
  %vmem_load_pi_0, %vmem_load_pi_1 = hvx.vmem_load_pi %r {offset = 1 : i64, region = "buf"} : (!hvx.reg) -> (!hvx.vec, !hvx.reg)
  hvx.vmem_store %r, %v {offset = 1 : i64, region = "buf"} : !hvx.reg, !hvx.vec
  hvx.vmem_store_if %q, %r, %v {offset = 1 : i64, region = "buf"} : !hvx.pred, !hvx.reg, !hvx.vec
  %vmem_store_pi_0 = hvx.vmem_store_pi %r, %v {offset = 1 : i64, region = "buf"} : (!hvx.reg, !hvx.vec) -> !hvx.reg
  %vmemu_load_0 = hvx.vmemu_load %r {offset = 1 : i64, region = "buf"} : (!hvx.reg) -> !hvx.vec
  %vmin_ub_0 = hvx.vmin_ub %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vmin_w_0 = hvx.vmin_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vmpa_0 = hvx.vmpa %w, %r : (!hvx.vecpair, !hvx.reg) -> !hvx.vecpair
  %vmpa_acc_0 = hvx.vmpa_acc %w, %w, %r : (!hvx.vecpair, !hvx.vecpair, !hvx.reg) -> !hvx.vecpair
  %vmpy_0 = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
  %vmpy_acc_0 = hvx.vmpy_acc %w, %v, %r : (!hvx.vecpair, !hvx.vec, !hvx.reg) -> !hvx.vecpair
  %vmpy_h_acc_0 = hvx.vmpy_h_acc %w, %v, %r : (!hvx.vecpair, !hvx.vec, !hvx.reg) -> !hvx.vecpair
  %vmpye_0 = hvx.vmpye %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vmpyi_w_0 = hvx.vmpyi_w %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vec
  %vmpyi_w_acc_0 = hvx.vmpyi_w_acc %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
  %vmpyi_wh_acc_0 = hvx.vmpyi_wh_acc %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
  %vmpyie_0 = hvx.vmpyie %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vmpyie_acc_0 = hvx.vmpyie_acc %v, %v, %v : (!hvx.vec, !hvx.vec, !hvx.vec) -> !hvx.vec
  %vmpyo_acc_0 = hvx.vmpyo_acc %v, %v, %v : (!hvx.vec, !hvx.vec, !hvx.vec) -> !hvx.vec
  %vmux_0 = hvx.vmux %q, %v, %v : (!hvx.pred, !hvx.vec, !hvx.vec) -> !hvx.vec
  %vrmpy_0 = hvx.vrmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vec
  %vrmpy_acc_0 = hvx.vrmpy_acc %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
  %vsat_h_0 = hvx.vsat_h %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vsat_ub_0 = hvx.vsat_ub %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vsetq2_0 = hvx.vsetq2 %r : (!hvx.reg) -> !hvx.pred
  %vshuff_0 = hvx.vshuff %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vecpair
  %vsplat_0 = hvx.vsplat %r : (!hvx.reg) -> !hvx.vec
  hvx.vmemu_store %r, %v {offset = 1 : i64, region = "buf"} : !hvx.reg, !hvx.vec
  %vround_h_0 = hvx.vround_h %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vsub_w_0 = hvx.vsub_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vtmpy_0 = hvx.vtmpy %w, %r : (!hvx.vecpair, !hvx.reg) -> !hvx.vecpair
  %vxor_0 = hvx.vxor %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
  %vzero_0 = hvx.vzero : !hvx.vec
  %vzxt_b_0 = hvx.vzxt_b %v : (!hvx.vec) -> !hvx.vecpair
  %vzxt_h_0 = hvx.vzxt_h %v : (!hvx.vec) -> !hvx.vecpair
  %i = hvx.tfri {value = 4 : i64} : !hvx.reg
  %left, %acc = hvx.loop iter(%i, %v : !hvx.reg, !hvx.vec) {
  ^bb0(%count: !hvx.reg, %a: !hvx.vec):
    %next = hvx.addi %count {value = -1 : i64} : (!hvx.reg) -> !hvx.reg
    %sum = hvx.vrmpy_acc %a, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
    hvx.yield %next, %sum : !hvx.reg, !hvx.vec
  } {kind = "counted", trip = 4 : i64} -> !hvx.reg, !hvx.vec
  hvx.loop {
    hvx.yield
  } {kind = "loop0", trip = 3 : i64}
  hvx.call @every_instruction
}

func.func @layouts(%t: tensor<1x8x4x4xui8> {hvx.layout = #hvx.layout<col1>}) -> tensor<1x8x4x4xui8> attributes {hvx.implementations = [#hvx.implementation<col4, vrmpy, 120 packets, 150 cycles>, #hvx.implementation<col1, vmpy, 300 packets, 320 cycles>], hvx.implementation = #hvx.implementation<col4, vrmpy, 120 packets, 150 cycles>} {
  %a = hvx.relayout %t from <col1> to <col4> : tensor<1x8x4x4xui8> -> tensor<1x8x4x4xui8>
  func.return %a : tensor<1x8x4x4xui8>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   hvx.buffer @buf {size = 256 : i64}
// CHECK-NEXT:   hvx.buffer @weights {size = 128 : i64, store = "w.npy", key = "w"}
// CHECK-NEXT:   hvx.buffer @image {size = 128 : i64, file = "image.bin"}
// CHECK-NEXT:   hvx.func @every_instruction {
// CHECK-NEXT:     %r = hvx.tfri {value = 7 : i64} : !hvx.reg
// CHECK-NEXT:     %v = hvx.vzero : !hvx.vec
// CHECK-NEXT:     %w = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
// CHECK-NEXT:     %q = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
// CHECK-NEXT:     %d, %dp = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
// CHECK-NEXT:     %add = hvx.add %r, %r : (!hvx.reg, !hvx.reg) -> !hvx.reg
// CHECK-NEXT:     %addi = hvx.addi %r {value = 128 : i64} : (!hvx.reg) -> !hvx.reg
// CHECK-NEXT:     %address = hvx.address {symbol = @buf} : !hvx.reg
// CHECK-NEXT:     %hi = hvx.hi %w : (!hvx.vecpair) -> !hvx.vec
// CHECK-NEXT:     %hi_r = hvx.hi_r %d : (!hvx.regpair) -> !hvx.reg
// CHECK-NEXT:     %lo = hvx.lo %w : (!hvx.vecpair) -> !hvx.vec
// CHECK-NEXT:     %lo_r = hvx.lo_r %d : (!hvx.regpair) -> !hvx.reg
// CHECK-NEXT:     hvx.memb_store_rr %r, %r, %r {region = "buf"} : !hvx.reg, !hvx.reg, !hvx.reg
// CHECK-NEXT:     %memd_load_pi, %memd_load_pi_1 = hvx.memd_load_pi %r {offset = 8 : i64} : (!hvx.reg) -> (!hvx.regpair, !hvx.reg)
// CHECK-NEXT:     %memub_load_rr = hvx.memub_load_rr %r, %r {region = "buf"} : (!hvx.reg, !hvx.reg) -> !hvx.reg
// CHECK-NEXT:     %memw_load = hvx.memw_load %r {offset = 4 : i64} : (!hvx.reg) -> !hvx.reg
// CHECK-NEXT:     %memw_load_pi, %memw_load_pi_1 = hvx.memw_load_pi %r {offset = 4 : i64} : (!hvx.reg) -> (!hvx.reg, !hvx.reg)
// CHECK-NEXT:     hvx.memw_store %r, %r {offset = 4 : i64} : !hvx.reg, !hvx.reg
// CHECK-NEXT:     %min = hvx.min %r, %r : (!hvx.reg, !hvx.reg) -> !hvx.reg
// CHECK-NEXT:     %pair = hvx.pair %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vecpair
// CHECK-NEXT:     %tfri = hvx.tfri {value = 42 : i64} : !hvx.reg
// CHECK-NEXT:     %vadd_b_if = hvx.vadd_b_if %q, %v, %v : (!hvx.pred, !hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vadd_h = hvx.vadd_h %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vadd_w = hvx.vadd_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vadd_w_if = hvx.vadd_w_if %q, %v, %v : (!hvx.pred, !hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vadd_widen_acc = hvx.vadd_widen_acc %w, %v, %v : (!hvx.vecpair, !hvx.vec, !hvx.vec) -> !hvx.vecpair
// CHECK-NEXT:     %valign = hvx.valign %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
// CHECK-NEXT:     %vasl_w = hvx.vasl_w %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vec
// CHECK-NEXT:     %vasl_w_acc = hvx.vasl_w_acc %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
// CHECK-NEXT:     %vasr_w = hvx.vasr_w %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vec
// CHECK-NEXT:     %vcmp_eq_b = hvx.vcmp_eq_b %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
// CHECK-NEXT:     %vcmp_eq_b_and = hvx.vcmp_eq_b_and %q, %v, %v : (!hvx.pred, !hvx.vec, !hvx.vec) -> !hvx.pred
// CHECK-NEXT:     %vcmp_eq_w = hvx.vcmp_eq_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
// CHECK-NEXT:     %vcmp_gt_w = hvx.vcmp_gt_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.pred
// CHECK-NEXT:     %vcmp_gt_w_and = hvx.vcmp_gt_w_and %q, %v, %v : (!hvx.pred, !hvx.vec, !hvx.vec) -> !hvx.pred
// CHECK-NEXT:     %vcombine = hvx.vcombine %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vecpair
// CHECK-NEXT:     %vdeal = hvx.vdeal %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vecpair
// CHECK-NEXT:     %vmax_ub = hvx.vmax_ub %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vmax_w = hvx.vmax_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vmem_load = hvx.vmem_load %r {offset = 1 : i64, region = "buf"} : (!hvx.reg) -> !hvx.vec
// CHECK-NEXT:     %vmem_load_pi, %vmem_load_pi_1 = hvx.vmem_load_pi %r {offset = 1 : i64, region = "buf"} : (!hvx.reg) -> (!hvx.vec, !hvx.reg)
// CHECK-NEXT:     hvx.vmem_store %r, %v {offset = 1 : i64, region = "buf"} : !hvx.reg, !hvx.vec
// CHECK-NEXT:     hvx.vmem_store_if %q, %r, %v {offset = 1 : i64, region = "buf"} : !hvx.pred, !hvx.reg, !hvx.vec
// CHECK-NEXT:     %vmem_store_pi = hvx.vmem_store_pi %r, %v {offset = 1 : i64, region = "buf"} : (!hvx.reg, !hvx.vec) -> !hvx.reg
// CHECK-NEXT:     %vmemu_load = hvx.vmemu_load %r {offset = 1 : i64, region = "buf"} : (!hvx.reg) -> !hvx.vec
// CHECK-NEXT:     %vmin_ub = hvx.vmin_ub %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vmin_w = hvx.vmin_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vmpa = hvx.vmpa %w, %r : (!hvx.vecpair, !hvx.reg) -> !hvx.vecpair
// CHECK-NEXT:     %vmpa_acc = hvx.vmpa_acc %w, %w, %r : (!hvx.vecpair, !hvx.vecpair, !hvx.reg) -> !hvx.vecpair
// CHECK-NEXT:     %vmpy = hvx.vmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vecpair
// CHECK-NEXT:     %vmpy_acc = hvx.vmpy_acc %w, %v, %r : (!hvx.vecpair, !hvx.vec, !hvx.reg) -> !hvx.vecpair
// CHECK-NEXT:     %vmpy_h_acc = hvx.vmpy_h_acc %w, %v, %r : (!hvx.vecpair, !hvx.vec, !hvx.reg) -> !hvx.vecpair
// CHECK-NEXT:     %vmpye = hvx.vmpye %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vmpyi_w = hvx.vmpyi_w %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vec
// CHECK-NEXT:     %vmpyi_w_acc = hvx.vmpyi_w_acc %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
// CHECK-NEXT:     %vmpyi_wh_acc = hvx.vmpyi_wh_acc %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
// CHECK-NEXT:     %vmpyie = hvx.vmpyie %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vmpyie_acc = hvx.vmpyie_acc %v, %v, %v : (!hvx.vec, !hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vmpyo_acc = hvx.vmpyo_acc %v, %v, %v : (!hvx.vec, !hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vmux = hvx.vmux %q, %v, %v : (!hvx.pred, !hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vrmpy = hvx.vrmpy %v, %r : (!hvx.vec, !hvx.reg) -> !hvx.vec
// CHECK-NEXT:     %vrmpy_acc = hvx.vrmpy_acc %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
// CHECK-NEXT:     %vsat_h = hvx.vsat_h %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vsat_ub = hvx.vsat_ub %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vsetq2 = hvx.vsetq2 %r : (!hvx.reg) -> !hvx.pred
// CHECK-NEXT:     %vshuff = hvx.vshuff %v, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vecpair
// CHECK-NEXT:     %vsplat = hvx.vsplat %r : (!hvx.reg) -> !hvx.vec
// CHECK-NEXT:     hvx.vmemu_store %r, %v {offset = 1 : i64, region = "buf"} : !hvx.reg, !hvx.vec
// CHECK-NEXT:     %vround_h = hvx.vround_h %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vsub_w = hvx.vsub_w %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vtmpy = hvx.vtmpy %w, %r : (!hvx.vecpair, !hvx.reg) -> !hvx.vecpair
// CHECK-NEXT:     %vxor = hvx.vxor %v, %v : (!hvx.vec, !hvx.vec) -> !hvx.vec
// CHECK-NEXT:     %vzero = hvx.vzero : !hvx.vec
// CHECK-NEXT:     %vzxt_b = hvx.vzxt_b %v : (!hvx.vec) -> !hvx.vecpair
// CHECK-NEXT:     %vzxt_h = hvx.vzxt_h %v : (!hvx.vec) -> !hvx.vecpair
// CHECK-NEXT:     %i = hvx.tfri {value = 4 : i64} : !hvx.reg
// CHECK-NEXT:     %left, %acc = hvx.loop iter(%i, %v : !hvx.reg, !hvx.vec) {
// CHECK-NEXT:     ^bb0(%count: !hvx.reg, %a: !hvx.vec):
// CHECK-NEXT:       %next = hvx.addi %count {value = -1 : i64} : (!hvx.reg) -> !hvx.reg
// CHECK-NEXT:       %sum = hvx.vrmpy_acc %a, %v, %r : (!hvx.vec, !hvx.vec, !hvx.reg) -> !hvx.vec
// CHECK-NEXT:       hvx.yield %next, %sum : !hvx.reg, !hvx.vec
// CHECK-NEXT:     } {kind = "counted", trip = 4 : i64} -> !hvx.reg, !hvx.vec
// CHECK-NEXT:     hvx.loop {
// CHECK-NEXT:       hvx.yield
// CHECK-NEXT:     } {kind = "loop0", trip = 3 : i64}
// CHECK-NEXT:     hvx.call @every_instruction
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @layouts(%t: tensor<1x8x4x4xui8> {hvx.layout = #hvx.layout<col1>}) -> tensor<1x8x4x4xui8> attributes {hvx.implementations = [#hvx.implementation<col4, vrmpy, 120 packets, 150 cycles>, #hvx.implementation<col1, vmpy, 300 packets, 320 cycles>], hvx.implementation = #hvx.implementation<col4, vrmpy, 120 packets, 150 cycles>} {
// CHECK-NEXT:     %a_1 = hvx.relayout %t from <col1> to <col4> : tensor<1x8x4x4xui8> -> tensor<1x8x4x4xui8>
// CHECK-NEXT:     func.return %a_1 : tensor<1x8x4x4xui8>
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
