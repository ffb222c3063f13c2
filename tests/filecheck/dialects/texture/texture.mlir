// RUN: mobile-opt %s | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s

// The texture dialect: pixel storage types, the layout and limits attributes, and
// the host (pack, unpack, alloc), kernel (read, write) and graph (relayout) ops.

// CHECK:      builtin.module attributes {texture.limits = #texture.limits<64x32>} {
builtin.module attributes {texture.limits = #texture.limits<64x32>} {
  %act = "test.op"() : () -> tensor<1x6x2x3xf32>
  %half = "test.op"() : () -> tensor<1x6x2x3xf16>
  %rows = "test.op"() : () -> tensor<2x3x5xf32>
  %scalar = "test.op"() : () -> tensor<f32>
  %mat = "test.op"() : () -> tensor<2x5x3xf32>
  %a = "test.op"() : () -> tensor<5x6xf32>
  %w = "test.op"() : () -> tensor<8x3x3x3xf32>
  %dw = "test.op"() : () -> tensor<6x1x3x3xf32>
  %w20 = "test.op"() : () -> tensor<20x3x3x3xf32>
  // CHECK-NEXT:   %act = "test.op"() : () -> tensor<1x6x2x3xf32>
  // CHECK-NEXT:   %half = "test.op"() : () -> tensor<1x6x2x3xf16>
  // CHECK-NEXT:   %rows = "test.op"() : () -> tensor<2x3x5xf32>
  // CHECK-NEXT:   %scalar = "test.op"() : () -> tensor<f32>
  // CHECK-NEXT:   %mat = "test.op"() : () -> tensor<2x5x3xf32>
  // CHECK-NEXT:   %a = "test.op"() : () -> tensor<5x6xf32>
  // CHECK-NEXT:   %w = "test.op"() : () -> tensor<8x3x3x3xf32>
  // CHECK-NEXT:   %dw = "test.op"() : () -> tensor<6x1x3x3xf32>
  // CHECK-NEXT:   %w20 = "test.op"() : () -> tensor<20x3x3x3xf32>

  // Every layout, each image sized as layouts.image_size says:
  // nc4hw4 [1,6,2,3] -> W*ceil4(C) x N*H = 6x2, rows4 [2,3,5] -> ceil4(5) x 2*3 = 2x6,
  // rows4 of a scalar -> 1x1, cols4 [2,5,3] -> 3 x 2*ceil4(5) = 3x4,
  // blockB [5,6] -> ceil4(6)*B x ceil(5/B), oihw4o [8,3,3,3] -> 3*3*4 x 2, dw4 [6,1,3,3] -> 9x2,
  // hwio4 [20,3,3,3] -> ceil4(20) rounded up to 4 = 8 x 3*3*4.
  %p_nc4hw4 = texture.pack %act {layout = #texture.layout<nc4hw4>} : tensor<1x6x2x3xf32> -> !texture.image2d<6x2xf32>
  %p_f16 = texture.pack %half {layout = #texture.layout<nc4hw4>} : tensor<1x6x2x3xf16> -> !texture.image2d<6x2xf16>
  %p_rows4 = texture.pack %rows {layout = #texture.layout<rows4>} : tensor<2x3x5xf32> -> !texture.image2d<2x6xf32>
  %p_scalar = texture.pack %scalar {layout = #texture.layout<rows4>} : tensor<f32> -> !texture.image2d<1x1xf32>
  %p_cols4 = texture.pack %mat {layout = #texture.layout<cols4>} : tensor<2x5x3xf32> -> !texture.image2d<3x4xf32>
  %p_block2 = texture.pack %a {layout = #texture.layout<block2>} : tensor<5x6xf32> -> !texture.image2d<4x3xf32>
  %p_block4 = texture.pack %a {layout = #texture.layout<block4>} : tensor<5x6xf32> -> !texture.image2d<8x2xf32>
  %p_block8 = texture.pack %a {layout = #texture.layout<block8>} : tensor<5x6xf32> -> !texture.image2d<16x1xf32>
  %p_oihw4o = texture.pack %w {layout = #texture.layout<oihw4o>} : tensor<8x3x3x3xf32> -> !texture.image2d<36x2xf32>
  %p_dw4 = texture.pack %dw {layout = #texture.layout<dw4>} : tensor<6x1x3x3xf32> -> !texture.image2d<9x2xf32>
  %p_hwio4 = texture.pack %w20 {layout = #texture.layout<hwio4>} : tensor<20x3x3x3xf32> -> !texture.buffer2d<8x36xf32>
  // CHECK-NEXT:   %p_nc4hw4 = texture.pack %act {layout = #texture.layout<nc4hw4>} : tensor<1x6x2x3xf32> -> !texture.image2d<6x2xf32>
  // CHECK-NEXT:   %p_f16 = texture.pack %half {layout = #texture.layout<nc4hw4>} : tensor<1x6x2x3xf16> -> !texture.image2d<6x2xf16>
  // CHECK-NEXT:   %p_rows4 = texture.pack %rows {layout = #texture.layout<rows4>} : tensor<2x3x5xf32> -> !texture.image2d<2x6xf32>
  // CHECK-NEXT:   %p_scalar = texture.pack %scalar {layout = #texture.layout<rows4>} : tensor<f32> -> !texture.image2d<1x1xf32>
  // CHECK-NEXT:   %p_cols4 = texture.pack %mat {layout = #texture.layout<cols4>} : tensor<2x5x3xf32> -> !texture.image2d<3x4xf32>
  // CHECK-NEXT:   %p_block2 = texture.pack %a {layout = #texture.layout<block2>} : tensor<5x6xf32> -> !texture.image2d<4x3xf32>
  // CHECK-NEXT:   %p_block4 = texture.pack %a {layout = #texture.layout<block4>} : tensor<5x6xf32> -> !texture.image2d<8x2xf32>
  // CHECK-NEXT:   %p_block8 = texture.pack %a {layout = #texture.layout<block8>} : tensor<5x6xf32> -> !texture.image2d<16x1xf32>
  // CHECK-NEXT:   %p_oihw4o = texture.pack %w {layout = #texture.layout<oihw4o>} : tensor<8x3x3x3xf32> -> !texture.image2d<36x2xf32>
  // CHECK-NEXT:   %p_dw4 = texture.pack %dw {layout = #texture.layout<dw4>} : tensor<6x1x3x3xf32> -> !texture.image2d<9x2xf32>
  // CHECK-NEXT:   %p_hwio4 = texture.pack %w20 {layout = #texture.layout<hwio4>} : tensor<20x3x3x3xf32> -> !texture.buffer2d<8x36xf32>

  // The buffer fallback takes the same pixel grid; the device limit does not apply to it.
  %p_buffer = texture.pack %rows {layout = #texture.layout<rows4>} : tensor<2x3x5xf32> -> !texture.buffer2d<2x6xf16>
  %big = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 40, 300>, remark = "over the device limit"} : !texture.buffer2d<75x40xf32>
  %out = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 6, 2, 3>} : !texture.image2d<6x2xf32>
  %u = texture.unpack %out {layout = #texture.layout<nc4hw4>} : !texture.image2d<6x2xf32> -> tensor<1x6x2x3xf32>
  %ub = texture.unpack %big {layout = #texture.layout<rows4>} : !texture.buffer2d<75x40xf32> -> tensor<40x300xf32>
  // CHECK-NEXT:   %p_buffer = texture.pack %rows {layout = #texture.layout<rows4>} : tensor<2x3x5xf32> -> !texture.buffer2d<2x6xf16>
  // CHECK-NEXT:   %big = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 40, 300>, remark = "over the device limit"} : !texture.buffer2d<75x40xf32>
  // CHECK-NEXT:   %out = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 6, 2, 3>} : !texture.image2d<6x2xf32>
  // CHECK-NEXT:   %u = texture.unpack %out {layout = #texture.layout<nc4hw4>} : !texture.image2d<6x2xf32> -> tensor<1x6x2x3xf32>
  // CHECK-NEXT:   %ub = texture.unpack %big {layout = #texture.layout<rows4>} : !texture.buffer2d<75x40xf32> -> tensor<40x300xf32>

  // Integer and boolean tensors: exact integers in f32 pixels.
  %ids = "test.op"() : () -> tensor<2x5xi64>
  %p_ids = texture.pack %ids {layout = #texture.layout<rows4>} : tensor<2x5xi64> -> !texture.image2d<2x2xf32>
  %mask = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 5>} : !texture.image2d<2x2xf32>
  %u_mask = texture.unpack %mask {layout = #texture.layout<rows4>} : !texture.image2d<2x2xf32> -> tensor<2x5xi1>
  // CHECK-NEXT:   %ids = "test.op"() : () -> tensor<2x5xi64>
  // CHECK-NEXT:   %p_ids = texture.pack %ids {layout = #texture.layout<rows4>} : tensor<2x5xi64> -> !texture.image2d<2x2xf32>
  // CHECK-NEXT:   %mask = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 5>} : !texture.image2d<2x2xf32>
  // CHECK-NEXT:   %u_mask = texture.unpack %mask {layout = #texture.layout<rows4>} : !texture.image2d<2x2xf32> -> tensor<2x5xi1>

  // Pixel reads give float4 (four pixels of a row: float16) and writes take float4,
  // whatever the storage's element type.
  %x = "test.op"() : () -> i32
  %y = "test.op"() : () -> i32
  %px = texture.read %p_nc4hw4[%x, %y] : !texture.image2d<6x2xf32>
  %ph = texture.read %p_f16[%x, %y] : !texture.image2d<6x2xf16>
  %pb = texture.read %p_buffer[%x, %y] : !texture.buffer2d<2x6xf16>
  texture.write %px, %out[%x, %y] : !texture.image2d<6x2xf32>
  texture.write %ph, %big[%x, %y] : !texture.buffer2d<75x40xf32>
  "test.op"(%pb) : (vector<4xf32>) -> ()
  %row = texture.read16 %p_buffer[%x, %y] : !texture.buffer2d<2x6xf16>
  %row_image = texture.read16 %p_nc4hw4[%x, %y] : !texture.image2d<6x2xf32>
  // CHECK-NEXT:   %x = "test.op"() : () -> i32
  // CHECK-NEXT:   %y = "test.op"() : () -> i32
  // CHECK-NEXT:   %px = texture.read %p_nc4hw4[%x, %y] : !texture.image2d<6x2xf32>
  // CHECK-NEXT:   %ph = texture.read %p_f16[%x, %y] : !texture.image2d<6x2xf16>
  // CHECK-NEXT:   %pb = texture.read %p_buffer[%x, %y] : !texture.buffer2d<2x6xf16>
  // CHECK-NEXT:   texture.write %px, %out[%x, %y] : !texture.image2d<6x2xf32>
  // CHECK-NEXT:   texture.write %ph, %big[%x, %y] : !texture.buffer2d<75x40xf32>
  // CHECK-NEXT:   "test.op"(%pb) : (vector<4xf32>) -> ()
  // CHECK-NEXT:   %row = texture.read16 %p_buffer[%x, %y] : !texture.buffer2d<2x6xf16>
  // CHECK-NEXT:   %row_image = texture.read16 %p_nc4hw4[%x, %y] : !texture.image2d<6x2xf32>

  // A layout change between two ops of a graph: the same tensor, in another activation layout.
  %to_rows = texture.relayout %act {layout = #texture.layout<rows4>} : tensor<1x6x2x3xf32> -> tensor<1x6x2x3xf32>
  %to_nc4hw4 = texture.relayout %to_rows {layout = #texture.layout<nc4hw4>} : tensor<1x6x2x3xf32> -> tensor<1x6x2x3xf32>
  %mask_rows = texture.relayout %rows {layout = #texture.layout<rows4>} : tensor<2x3x5xf32> -> tensor<2x3x5xf32>
  // CHECK-NEXT:   %to_rows = texture.relayout %act {layout = #texture.layout<rows4>} : tensor<1x6x2x3xf32> -> tensor<1x6x2x3xf32>
  // CHECK-NEXT:   %to_nc4hw4 = texture.relayout %to_rows {layout = #texture.layout<nc4hw4>} : tensor<1x6x2x3xf32> -> tensor<1x6x2x3xf32>
  // CHECK-NEXT:   %mask_rows = texture.relayout %rows {layout = #texture.layout<rows4>} : tensor<2x3x5xf32> -> tensor<2x3x5xf32>

  // The attributes on their own.
  "test.op"() {layouts = [#texture.layout<nc4hw4>, #texture.layout<rows4>, #texture.layout<cols4>, #texture.layout<block2>, #texture.layout<block4>, #texture.layout<block8>, #texture.layout<oihw4o>, #texture.layout<dw4>, #texture.layout<hwio4>], limits = #texture.limits<16384x8192>} : () -> ()
  // CHECK-NEXT:   "test.op"() {layouts = [#texture.layout<nc4hw4>, #texture.layout<rows4>, #texture.layout<cols4>, #texture.layout<block2>, #texture.layout<block4>, #texture.layout<block8>, #texture.layout<oihw4o>, #texture.layout<dw4>, #texture.layout<hwio4>], limits = #texture.limits<16384x8192>} : () -> ()
}
// CHECK-NEXT: }
