// RUN: mobile-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// RUN: mobile-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s --check-prefix=NOPASS

// Every chunk fails: no module is printed in custom form.
// NOPASS-NOT: {{^}}builtin.module

// Storage ops: the image must be exactly the size the layout gives the tensor.
%x = "test.op"() : () -> tensor<1x6x2x3xf32>
%p = texture.pack %x {layout = #texture.layout<nc4hw4>} : tensor<1x6x2x3xf32> -> !texture.image2d<3x2xf32>

// CHECK: texture.pack: a [1, 6, 2, 3] tensor in nc4hw4 takes 6x2 pixels, not 3x2

// -----

%p = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 9>} : !texture.buffer2d<2x2xf32>

// CHECK: texture.alloc: a [2, 9] tensor in rows4 takes 3x2 pixels, not 2x2

// -----

%s = "test.op"() : () -> !texture.image2d<8x2xf32>
%u = texture.unpack %s {layout = #texture.layout<block2>} : !texture.image2d<8x2xf32> -> tensor<5x6xf32>

// CHECK: texture.unpack: a [5, 6] tensor in block2 takes 4x3 pixels, not 8x2

// -----

// Layouts that need a given rank.
%x = "test.op"() : () -> tensor<6x2x3xf32>
%p = texture.pack %x {layout = #texture.layout<nc4hw4>} : tensor<6x2x3xf32> -> !texture.image2d<3x2xf32>

// CHECK: texture.pack: layout nc4hw4 needs a rank-4 tensor, got rank 3

// -----

%p = texture.alloc {layout = #texture.layout<block4>, shape = array<i64: 2, 3, 4>} : !texture.image2d<2x2xf32>

// CHECK: texture.alloc: layout block4 needs a rank-2 tensor, got rank 3

// -----

%p = texture.alloc {layout = #texture.layout<cols4>, shape = array<i64: 7>} : !texture.image2d<2x1xf32>

// CHECK: texture.alloc: layout cols4 needs rank 2 or more, got rank 1

// -----

%p = texture.alloc {layout = #texture.layout<oihw4o>, shape = array<i64: 8, 3>} : !texture.image2d<2x1xf32>

// CHECK: texture.alloc: layout oihw4o needs a rank-4 tensor, got rank 2

// -----

%s = "test.op"() : () -> !texture.image2d<2x1xf32>
%u = texture.unpack %s {layout = #texture.layout<dw4>} : !texture.image2d<2x1xf32> -> tensor<8x3xf32>

// CHECK: texture.unpack: layout dw4 needs a rank-4 tensor, got rank 2

// -----

// An image beyond the module's texture.limits; a buffer2d of that size is fine.
builtin.module attributes {texture.limits = #texture.limits<64x32>} {
  %b = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 40, 300>} : !texture.buffer2d<75x40xf32>
  %p = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 40, 300>} : !texture.image2d<75x40xf32>
}

// CHECK: texture.alloc: image 75x40 exceeds the device limit 64x32; use a texture.buffer2d

// -----

builtin.module attributes {texture.limits = #texture.limits<64x32>} {
  %x = "test.op"() : () -> tensor<1x4x1x65xf32>
  %p = texture.pack %x {layout = #texture.layout<nc4hw4>} : tensor<1x4x1x65xf32> -> !texture.image2d<65x1xf32>
}

// CHECK: texture.pack: image 65x1 exceeds the device limit 64x32; use a texture.buffer2d

// -----

builtin.module attributes {texture.limits = #texture.limits<64x32>} {
  %s = "test.op"() : () -> !texture.image2d<1x33xf32>
  %u = texture.unpack %s {layout = #texture.layout<rows4>} : !texture.image2d<1x33xf32> -> tensor<33x4xf32>
}

// CHECK: texture.unpack: image 1x33 exceeds the device limit 64x32; use a texture.buffer2d

// -----

// Float32, float16, integer and boolean tensors go into pixels; integers into f32 ones.
%x = "test.op"() : () -> tensor<4xf64>
%p = texture.pack %x {layout = #texture.layout<rows4>} : tensor<4xf64> -> !texture.image2d<1x1xf32>

// CHECK: texture.pack: only float, integer and boolean tensors go into images

// -----

%x = "test.op"() : () -> tensor<4xi32>
%p = texture.pack %x {layout = #texture.layout<rows4>} : tensor<4xi32> -> !texture.image2d<1x1xf16>

// CHECK: texture.pack: integer tensors live in f32 pixels

// -----

%s = "test.op"() : () -> !texture.image2d<1x1xf16>
%u = texture.unpack %s {layout = #texture.layout<rows4>} : !texture.image2d<1x1xf16> -> tensor<4xi1>

// CHECK: texture.unpack: integer tensors live in f32 pixels

// -----

%s = "test.op"() : () -> !texture.image2d<1x1xf32>
%u = texture.unpack %s {layout = #texture.layout<rows4>} : !texture.image2d<1x1xf32> -> tensor<4xf64>

// CHECK: texture.unpack: only float, integer and boolean tensors go into images

// -----

%p = "test.op"() : () -> tensor<4xf32>
%q = "texture.pack"(%p) <{layout = #texture.layout<rows4>}> : (tensor<4xf32>) -> tensor<4xf32>

// CHECK:      result 'result' at position 0 does not verify:
// CHECK-NEXT: Unexpected attribute tensor<4xf32>

// -----

%p = "texture.alloc"() <{shape = array<i64: 8>}> : () -> !texture.image2d<2x1xf32>

// CHECK: property 'layout' expected in operation 'texture.alloc'

// -----

%p = texture.alloc {layout = #texture.layout<rows4>, shape = array<i32: 2, 9>} : !texture.image2d<3x2xf32>

// CHECK: Expected attribute i64 but got i32

// -----

// Pixel storage types: f32 or f16 pixels, a non-empty 2-D grid.
%p = "test.op"() : () -> !texture.image2d<1x1xf64>

// CHECK: texture.image2d: pixels hold f32 or f16, not f64

// -----

%p = "test.op"() : () -> !texture.buffer2d<1x1xbf16>

// CHECK: texture.buffer2d: pixels hold f32 or f16, not bf16

// -----

%p = "test.op"() : () -> !texture.image2d<0x1xf32>

// CHECK: texture.image2d: size 0x1 is empty

// -----

%p = "test.op"() : () -> !texture.buffer2d<4x0xf16>

// CHECK: texture.buffer2d: size 4x0 is empty

// -----

%p = "test.op"() : () -> !texture.image2d<4xf32>

// CHECK: texture.image2d takes <width x height x type>

// -----

%p = "test.op"() : () -> !texture.buffer2d<4x4x4xf32>

// CHECK: texture.buffer2d takes <width x height x type>

// -----

"test.op"() {l = #texture.layout<nhwc>} : () -> ()

// CHECK: Expected `nc4hw4`, `rows4`, `cols4`, `block2`, `block4`, `block8`, `oihw4o`, `dw4`, or `hwio4`.

// -----

"test.op"() {l = #texture.limits<4>} : () -> ()

// CHECK: texture.limits takes <max-width x max-height>

// -----

// Pixel access: i32 coordinates, float4 pixels whatever the storage's element type.
%s = "test.op"() : () -> !texture.image2d<4x4xf32>
%x = "test.op"() : () -> i64
%p = "texture.read"(%s, %x, %x) : (!texture.image2d<4x4xf32>, i64, i64) -> vector<4xf32>

// CHECK:      operand 'x' at position 1 does not verify:
// CHECK-NEXT: Expected attribute i32 but got i64

// -----

%s = "test.op"() : () -> !texture.image2d<4x4xf16>
%x = "test.op"() : () -> i32
%p = "texture.read"(%s, %x, %x) : (!texture.image2d<4x4xf16>, i32, i32) -> vector<4xf16>

// CHECK:      result 'result' at position 0 does not verify:
// CHECK-NEXT: Expected attribute vector<4xf32> but got vector<4xf16>

// -----

%s = "test.op"() : () -> tensor<4xf32>
%x = "test.op"() : () -> i32
%p = "texture.read"(%s, %x, %x) : (tensor<4xf32>, i32, i32) -> vector<4xf32>

// CHECK:      operand 'storage' at position 0 does not verify:
// CHECK-NEXT: Unexpected attribute tensor<4xf32>

// -----

// Four pixels of a row: a float16.
%s = "test.op"() : () -> !texture.buffer2d<4x4xf32>
%x = "test.op"() : () -> i32
%p = "texture.read16"(%s, %x, %x) : (!texture.buffer2d<4x4xf32>, i32, i32) -> vector<4xf32>

// CHECK:      result 'result' at position 0 does not verify:
// CHECK-NEXT: Expected attribute vector<16xf32> but got vector<4xf32>

// -----

%s = "test.op"() : () -> tensor<4xf32>
%x = "test.op"() : () -> i32
%p = "texture.read16"(%s, %x, %x) : (tensor<4xf32>, i32, i32) -> vector<16xf32>

// CHECK:      operand 'storage' at position 0 does not verify:
// CHECK-NEXT: Unexpected attribute tensor<4xf32>

// -----

%s = "test.op"() : () -> !texture.buffer2d<4x4xf16>
%x = "test.op"() : () -> i32
%v = "test.op"() : () -> vector<4xf16>
"texture.write"(%v, %s, %x, %x) : (vector<4xf16>, !texture.buffer2d<4x4xf16>, i32, i32) -> ()

// CHECK:      operand 'value' at position 0 does not verify:
// CHECK-NEXT: Expected attribute vector<4xf32> but got vector<4xf16>

// -----

// A relayout keeps the tensor: its result has the source's type.
%x = "test.op"() : () -> tensor<2x8xf32>
%y = texture.relayout %x {layout = #texture.layout<rows4>} : tensor<2x8xf32> -> tensor<8x2xf32>

// CHECK: texture.relayout: the result is the source's type tensor<2x8xf32>, not tensor<8x2xf32>

// -----

// It changes to a layout a kernel writes (nc4hw4, rows4), not to a host packing.
%x = "test.op"() : () -> tensor<8x4x3x3xf32>
%y = texture.relayout %x {layout = #texture.layout<oihw4o>} : tensor<8x4x3x3xf32> -> tensor<8x4x3x3xf32>

// CHECK: texture.relayout: a kernel writes nc4hw4 or rows4, not oihw4o

// -----

%x = "test.op"() : () -> tensor<6x8xf32>
%y = texture.relayout %x {layout = #texture.layout<nc4hw4>} : tensor<6x8xf32> -> tensor<6x8xf32>

// CHECK: texture.relayout: layout nc4hw4 needs a rank-4 tensor, got rank 2

// -----

%x = "test.op"() : () -> tensor<6x8xf32>
%y = texture.relayout %x : tensor<6x8xf32> -> tensor<6x8xf32>

// CHECK: property 'layout' expected in operation 'texture.relayout'

// -----

// hwio4 sizes the grid with each 16 outputs one aligned float16: 20 outputs take 8 pixels.
%w = "test.op"() : () -> tensor<20x3x3x3xf32>
%p = texture.pack %w {layout = #texture.layout<hwio4>} : tensor<20x3x3x3xf32> -> !texture.buffer2d<5x36xf32>

// CHECK: texture.pack: a [20, 3, 3, 3] tensor in hwio4 takes 8x36 pixels, not 5x36
