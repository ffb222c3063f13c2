// RUN: mobile-opt %s -p 'texture-tile{device=nvidia-h100}' | filecheck %s
// RUN: mobile-opt %s -p 'texture-tile{device=pocl},select-layouts,onnx-to-texture' | filecheck %s --check-prefix=LOWERED

// Convolutions take a thread tile of 1, 2, 4 or 8 output pixels along w; Softmax and
// LayerNormalization over the last axis take T pixels of a row (up to the whole row).
// CHECK:      %c = onnx.Conv %x, %w, %b {texture.tile = {tile = array<i64: {{[1248]}}, 1>, group = array<i64: {{[0-9]+}}, {{[0-9]+}}>}, pads
// CHECK-NEXT: %d = onnx.Conv %c, %dw, %db {texture.tile = {tile = array<i64: {{[1248]}}, 1>, group = array<i64: {{[0-9]+}}, {{[0-9]+}}>}, group = 8
// CHECK-NEXT: %s = onnx.Softmax %r {texture.tile = {tile = array<i64: {{[0-9]+}}, 1>, group
// CHECK-NEXT: %l = onnx.LayerNormalization %r, %g, %h {texture.tile = {tile = array<i64: {{[0-9]+}}, 1>, group
// A Softmax over another axis keeps the lowering's defaults.
// CHECK-NEXT: %o = onnx.Softmax %r {axis = 0 : i64} :

// The lowering realises the tiles: a conv's range is (tiles of w) x (channel blocks) by h,
// a row kernel's (tiles of the row's 16 pixels) by rows; the other Softmax keeps a
// work-item per pixel and the driver's group.
// LOWERED:      ocl.launch @conv_0({{.*}}) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: {{4|8|16|32}}, 16>, local_size = array<i64: {{[0-9]+}}, {{[0-9]+}}>}
// LOWERED:      ocl.launch @conv_1({{.*}}) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: {{4|8|16|32}}, 16>, local_size
// LOWERED:      ocl.launch @softmax_2({{.*}}) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: {{1|2|4|8|16}}, 32>, local_size
// LOWERED:      ocl.launch @layernorm_3({{.*}}) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: {{1|2|4|8|16}}, 32>, local_size
// LOWERED:      ocl.launch @softmax_4({{.*}}) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 16, 32>} :

builtin.module {
  func.func @main_graph(%x: tensor<1x8x16x16xf32>, %r: tensor<32x64xf32>) -> (tensor<1x8x16x16xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>) {
    %w = onnx.Constant {value = dense<0.5> : tensor<8x8x3x3xf32>} : tensor<8x8x3x3xf32>
    %b = onnx.Constant {value = dense<0.1> : tensor<8xf32>} : tensor<8xf32>
    %dw = onnx.Constant {value = dense<0.5> : tensor<8x1x3x3xf32>} : tensor<8x1x3x3xf32>
    %db = onnx.Constant {value = dense<0.1> : tensor<8xf32>} : tensor<8xf32>
    %g = onnx.Constant {value = dense<1.5> : tensor<64xf32>} : tensor<64xf32>
    %h = onnx.Constant {value = dense<0.5> : tensor<64xf32>} : tensor<64xf32>
    %c = onnx.Conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
    %d = onnx.Conv %c, %dw, %db {group = 8 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
    %s = onnx.Softmax %r : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %l = onnx.LayerNormalization %r, %g, %h : (tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<32x64xf32>
    %o = onnx.Softmax %r {axis = 0 : i64} : (tensor<32x64xf32>) -> tensor<32x64xf32>
    func.return %d, %s, %l, %o : tensor<1x8x16x16xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>
  }
}
