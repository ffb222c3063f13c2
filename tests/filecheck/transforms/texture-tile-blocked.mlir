// RUN: mobile-opt %s -p 'texture-tile{device=nvidia-h100}' | filecheck %s
// RUN: mobile-opt %s -p 'texture-tile{device=nvidia-h100 blocked=false}' | filecheck %s --check-prefix=OFF
// RUN: mobile-opt %s -p 'texture-tile{device=nvidia-h100},select-layouts,onnx-to-texture' | filecheck %s --check-prefix=LOWERED
// RUN: mobile-opt %s -p 'texture-tile{device=nvidia-h100},select-layouts,onnx-to-texture{blocked=false}' | filecheck %s --check-prefix=UNBLOCKED
// RUN: sed 's/64, 64, 16, 4, 4/64, 64, 8, 4, 4/' %s | not mobile-opt -p 'select-layouts,onnx-to-texture' 2>&1 | filecheck %s --check-prefix=INVALID

// texture-tile chooses between the one-pixel kernels and the blocked product's plans
// (`models/texture_kernels.py`) by TMModel. With the H100's profile the 1100x20 by 20x2000
// product takes 128x128 blocks (its 256x128 block needs more registers than the profile's
// core holds for 256 work-items) and the 196-position conv, 256 channels of 9 taps x 128,
// 64x64 blocks with K in 8 slices; the 8x64x64 product has too few blocks for any plan and
// keeps a one-pixel tile. A recorded configuration stays.
// CHECK:      %c = onnx.MatMul %a, %b {texture.tile = {tile = array<i64: 2, 8>, group = array<i64: 16, 16>, block = array<i64: 128, 128, 8, 8, 8>}}
// CHECK-NEXT: %d = onnx.MatMul %a, %b {texture.tile = {block = array<i64: 64, 64, 16, 4, 4>}}
// CHECK:      %u = onnx.MatMul %s, %t {texture.tile = {tile = array<i64: 1, {{[1248]}}>{{(, group = array<i64: [0-9]+, [0-9]+>)?}}}}
// CHECK:      %y = onnx.Conv %x, %k, %none {texture.tile = {tile = array<i64: 1, 4>, group = array<i64: 16, 16>, block = array<i64: 64, 64, 16, 4, 4>, split = 8 : i64}, pads = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT: %z = onnx.Conv %x, %k, %none {texture.tile = {tile = array<i64: 2, 1>}, pads = array<i64: 1, 1, 1, 1>}

// blocked=false: no plan is a candidate.
// OFF:      %c = onnx.MatMul %a, %b {texture.tile = {tile = array<i64: 1, {{[1248]}}>{{(, group = array<i64: [0-9]+, [0-9]+>)?}}}}
// OFF-NOT:  block = array<i64: 128
// OFF:      %y = onnx.Conv %x, %k, %none {texture.tile = {tile = array<i64: {{[1248]}}, 1>{{(, group = array<i64: [0-9]+, [0-9]+>)?}}}, pads

// onnx-to-texture realises the recorded plans, not its fixed rule's: the recorded 64x64
// blocks of %d (18 x 32 groups of 16 x 16), and the one-pixel tile recorded on %z, a conv
// the fixed rule would block (its oihw4o weight, two pixels a work-item).
// LOWERED:      ocl.launch @matmul_0(%c, {{.*}}) {{{.*}}global_size = array<i64: 256, 144>, local_size = array<i64: 16, 16>}
// LOWERED:      ocl.launch @matmul_1(%d, {{.*}}) {{{.*}}global_size = array<i64: 512, 288>, local_size = array<i64: 16, 16>}
// LOWERED:      ocl.launch @conv_slices_4({{.*}}) {{{.*}}global_size = array<i64: 64, 64, 8>, local_size = array<i64: 16, 16, 1>}
// LOWERED-NEXT: ocl.launch @conv_3(%y, %partial)
// LOWERED:      ocl.launch @conv_5(%z, {{.*}}) {{{.*}}global_size = array<i64: 448, 14>}

// blocked=false switches the blocked kernels off, recorded plans included: those ops take
// the one-pixel kernels' defaults.
// UNBLOCKED-NOT: ocl.local_array
// UNBLOCKED:     ocl.launch @matmul_1(%d, {{.*}}) {{{.*}}global_size = array<i64: 500, 275>}

// A block the kernel cannot take is a one-line error.
// INVALID: mobile-opt: error: {{.*}}texture.tile: block [64, 64, 8, 4, 4] is invalid: its 256 work-items must stage whole pixels of A (128) and B (128)

builtin.module {
  func.func @main_graph(%a: tensor<1100x20xf32>, %s: tensor<8x64xf32>, %x: tensor<1x128x14x14xf32>) -> (tensor<1100x2000xf32>, tensor<1100x2000xf32>, tensor<8x64xf32>, tensor<1x256x14x14xf32>, tensor<1x256x14x14xf32>) {
    %b = onnx.Constant {value = dense<0.5> : tensor<20x2000xf32>} : tensor<20x2000xf32>
    %c = onnx.MatMul %a, %b : (tensor<1100x20xf32>, tensor<20x2000xf32>) -> tensor<1100x2000xf32> loc("mm")
    %d = onnx.MatMul %a, %b {texture.tile = {block = array<i64: 64, 64, 16, 4, 4>}} : (tensor<1100x20xf32>, tensor<20x2000xf32>) -> tensor<1100x2000xf32> loc("recorded")
    %t = onnx.Constant {value = dense<0.5> : tensor<64x64xf32>} : tensor<64x64xf32>
    %u = onnx.MatMul %s, %t : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("small")
    %k = onnx.Constant {value = dense<0.125> : tensor<256x128x3x3xf32>} : tensor<256x128x3x3xf32>
    %none = onnx.None
    %y = onnx.Conv %x, %k, %none {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x128x14x14xf32>, tensor<256x128x3x3xf32>, none) -> tensor<1x256x14x14xf32> loc("conv")
    %z = onnx.Conv %x, %k, %none {pads = array<i64: 1, 1, 1, 1>, texture.tile = {tile = array<i64: 2, 1>}} : (tensor<1x128x14x14xf32>, tensor<256x128x3x3xf32>, none) -> tensor<1x256x14x14xf32> loc("one_pixel")
    func.return %c, %d, %u, %y, %z : tensor<1100x2000xf32>, tensor<1100x2000xf32>, tensor<8x64xf32>, tensor<1x256x14x14xf32>, tensor<1x256x14x14xf32>
  }
}
