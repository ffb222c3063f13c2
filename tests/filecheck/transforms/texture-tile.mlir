// RUN: mobile-opt %s -p 'texture-tile{device=nvidia-h100}' | filecheck %s
// RUN: mobile-opt %s -p 'prune-configs{device=nvidia-h100}' | filecheck %s --check-prefix=PRUNE
// RUN: mobile-opt %s -p 'prune-configs{device=nvidia-h100},texture-tile{device=nvidia-h100}' | filecheck %s --check-prefix=BOTH
// RUN: mobile-opt %s -p 'texture-tile{device=pocl},select-layouts,onnx-to-texture' | filecheck %s --check-prefix=LOWERED
// RUN: not mobile-opt %s -p 'texture-tile{device=nonesuch}' 2>&1 | filecheck %s --check-prefix=NOPROFILE
// RUN: not mobile-opt %s -p 'texture-tile{cost-model=magic}' 2>&1 | filecheck %s --check-prefix=BADMODEL
// RUN: not mobile-opt %s -p 'texture-tile{device=adreno740}' 2>&1 | filecheck %s --check-prefix=PUBLISHED
// RUN: not mobile-opt %s -p 'texture-tile{cost-model=exhaustive}' 2>&1 | filecheck %s --check-prefix=MEASURED

// The model picks a thread tile of 1, 2, 4 or 8 rows, and maybe a work group.
// CHECK:      %y = onnx.MatMul %a, %b {texture.tile = {tile = array<i64: 1, {{[1248]}}>{{(, group = array<i64: [0-9]+, [0-9]+>)?}}}}
// CHECK-NEXT: %z = onnx.Relu %y

// prune-configs records what survives Table 1 (groups below a warp of 32 do not) and the
// size of the whole space; texture-tile chooses among them and drops both.
// PRUNE:     onnx.MatMul %a, %b {texture.candidates = [{tile = array<i64: 1, 1>}, {tile = array<i64: 1, 1>, group = array<i64: 1, 32>},
// PRUNE-SAME: texture.space = {{[0-9]+}} : i64
// PRUNE-NOT: group = array<i64: 1, 16>
// BOTH:      onnx.MatMul %a, %b {texture.tile =
// BOTH-NOT:  texture.candidates

// The lowering honours the choice: the range shrinks by the tile along y.
// LOWERED: ocl.launch @matmul_0({{.*}}) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 12, {{64|32|16|8}}>

// NOPROFILE: mobile-opt: error: {{.*}}nonesuch: no such device profile (shipped: {{.*}}pocl)
// BADMODEL: mobile-opt: error: {{.*}}texture-tile: cost-model must be one of tmmodel, cdmpp, not 'magic'{{$}}
// A pass measures nothing: the measured searches are mobile-tune's.
// MEASURED: mobile-opt: error: {{.*}}texture-tile: cost-model must be one of tmmodel, cdmpp, not 'exhaustive' (measured searches: mobile-tune --save-mlir)
// PUBLISHED: mobile-opt: error: {{.*}}Adreno 740: the profile has no tmmodel.beta, tmmodel.thrash_factor, tmmodel.cache_lines, compute.cores, compute.registers_per_core (run mobile-probe)

builtin.module {
  func.func @main_graph(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
    %y = onnx.MatMul %a, %b : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
    %z = onnx.Relu %y : (tensor<64x48xf32>) -> tensor<64x48xf32>
    func.return %z : tensor<64x48xf32>
  }
}
