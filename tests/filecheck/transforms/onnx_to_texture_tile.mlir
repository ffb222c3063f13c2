// RUN: mobile-opt %s -p onnx-to-texture | filecheck %s
// RUN: sed 's/group = array<i64: 4, 2>/group = array<i64: 5, 2>/' %s | not mobile-opt -p onnx-to-texture 2>&1 | filecheck %s --check-prefix=UNTILED

// A configuration from texture-tile: 8 rows a work-item (64 rows: a range of 8 along y) in
// work groups of 4x2.
// CHECK: ocl.launch @matmul_0({{.*}}) {global_size = array<i64: 12, 8>, local_size = array<i64: 4, 2>}

// UNTILED: mobile-opt: error: {{.*}}work group [5, 2] does not tile the range [12, 8]

builtin.module {
  func.func @main_graph(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
    %y = onnx.MatMul %a, %b {texture.tile = {tile = array<i64: 1, 8>, group = array<i64: 4, 2>}} : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
    func.return %y : tensor<64x48xf32>
  }
}
