// RUN: mobile-opt %s -p select-layouts,onnx-to-texture | filecheck %s
// RUN: sed 's/group = array<i64: 4, 2>/group = array<i64: 5, 2>/' %s | not mobile-opt -p select-layouts,onnx-to-texture 2>&1 | filecheck %s --check-prefix=UNTILED
// RUN: sed 's/group = array<i64: 4, 2>}/group = array<i64: 4, 2>, layout = "block4"}/' %s | mobile-opt -p select-layouts,onnx-to-texture | filecheck %s --check-prefix=PATTERN
// RUN: sed 's/group = array<i64: 4, 2>}/group = array<i64: 4, 2>, layout = "nc4hw4"}/' %s | not mobile-opt -p select-layouts,onnx-to-texture 2>&1 | filecheck %s --check-prefix=BADRANK
// RUN: sed 's/group = array<i64: 4, 2>}/group = array<i64: 4, 2>, layout = "zigzag"}/' %s | not mobile-opt -p select-layouts,onnx-to-texture 2>&1 | filecheck %s --check-prefix=NOLAYOUT

// A configuration from texture-tile: 8 rows a work-item (64 rows: a range of 8 along y) in
// work groups of 4x2.
// CHECK: ocl.launch @matmul_0({{.*}}) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 12, 8>, local_size = array<i64: 4, 2>}

// UNTILED: mobile-opt: error: {{.*}}work group [5, 2] does not tile the range [12, 8]

// An access pattern: the host packs B (a graph input) in block-4 strips, 48 pixels wide and
// 8 high, and the kernel reads that image.
// PATTERN:      %[[B:.*]] = texture.pack %b {layout = #texture.layout<block4>} : tensor<32x48xf32> -> !texture.image2d<48x8xf32>
// PATTERN:      ocl.launch @matmul_0(%y, %{{.*}}, %[[B]]) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 12, 8>, local_size = array<i64: 4, 2>}
// BADRANK:  mobile-opt: error: {{.*}}onnx.MatMul: B: layout nc4hw4 needs a rank-4 tensor, got rank 2
// NOLAYOUT: mobile-opt: error: {{.*}}texture.tile: no layout 'zigzag'

builtin.module {
  func.func @main_graph(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
    %y = onnx.MatMul %a, %b {texture.tile = {tile = array<i64: 1, 8>, group = array<i64: 4, 2>}} : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
    func.return %y : tensor<64x48xf32>
  }
}
