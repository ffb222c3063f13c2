// RUN: mobile-opt %s | mobile-opt | filecheck %s
// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s

// The ocl dialect: kernels (image and buffer arguments, an onnx.node attribute),
// work-item ids in each dimension, image reads and writes of f32 and f16 pixels,
// buffer loads and stores, vector literals and run-time lanes, the wide kernels' float16
// (four pixels joined, one pixel taken out), local arrays and barriers, and the
// host-side launch with and without a local size.

// CHECK:      builtin.module {
builtin.module {
  // Image access: read_imagef/write_imagef on f32 images, read_imageh/write_imageh
  // (half4) on f16 images.
  // CHECK-NEXT: ocl.kernel @images(%out: !texture.image2d<4x2xf32>, %in: !texture.image2d<4x2xf32>, %h: !texture.image2d<4x2xf16>, %hout: !texture.image2d<4x2xf16>) attributes {onnx.node = "node 'relu' (Relu)"} {
  // CHECK-NEXT:   %gx = ocl.global_id 0
  // CHECK-NEXT:   %gy = ocl.global_id 1
  // CHECK-NEXT:   %gz = ocl.global_id 2
  // CHECK-NEXT:   %lx = ocl.local_id 0
  // CHECK-NEXT:   %gr = ocl.group_id 1
  // CHECK-NEXT:   %p = ocl.read_imagef %in[%gx, %gy] : !texture.image2d<4x2xf32>
  // CHECK-NEXT:   %q = ocl.read_imageh %h[%gx, %gy] : !texture.image2d<4x2xf16>
  // CHECK-NEXT:   %a = ocl.lane %p[%lx]
  // CHECK-NEXT:   %v = ocl.vec4 %a, %a, %a, %a
  // CHECK-NEXT:   ocl.barrier
  // CHECK-NEXT:   ocl.write_imagef %v, %out[%gx, %gy] : !texture.image2d<4x2xf32>
  // CHECK-NEXT:   ocl.write_imageh %q, %hout[%gx, %gr] : !texture.image2d<4x2xf16>
  // CHECK-NEXT:   ocl.return
  // CHECK-NEXT: }
  ocl.kernel @images(%out: !texture.image2d<4x2xf32>, %in: !texture.image2d<4x2xf32>, %h: !texture.image2d<4x2xf16>, %hout: !texture.image2d<4x2xf16>) attributes {onnx.node = "node 'relu' (Relu)"} {
    %gx = ocl.global_id 0
    %gy = ocl.global_id 1
    %gz = ocl.global_id 2
    %lx = ocl.local_id 0
    %gr = ocl.group_id 1
    %p = ocl.read_imagef %in[%gx, %gy] : !texture.image2d<4x2xf32>
    %q = ocl.read_imageh %h[%gx, %gy] : !texture.image2d<4x2xf16>
    %a = ocl.lane %p[%lx]
    %v = ocl.vec4 %a, %a, %a, %a
    ocl.barrier
    ocl.write_imagef %v, %out[%gx, %gy] : !texture.image2d<4x2xf32>
    ocl.write_imageh %q, %hout[%gx, %gr] : !texture.image2d<4x2xf16>
    ocl.return
  }
  // Local memory (in a kernel that runs only in groups of 64 x 1): a float4 array the
  // work group shares, stored (a pixel, or one float by its index among floats), fenced
  // and loaded.
  // CHECK-NEXT: ocl.kernel @shared(%in: !texture.image2d<4x2xf32>) attributes {group_size = array<i64: 64, 1>} {
  // CHECK-NEXT:   %tile = ocl.local_array : !ocl.local<64>
  // CHECK-NEXT:   %lx = ocl.local_id 0
  // CHECK-NEXT:   %p = ocl.read_imagef %in[%lx, %lx] : !texture.image2d<4x2xf32>
  // CHECK-NEXT:   ocl.local_store %p, %tile[%lx] : vector<4xf32>, !ocl.local<64>
  // CHECK-NEXT:   %x = vector.extract %p[0] : f32 from vector<4xf32>
  // CHECK-NEXT:   ocl.local_store %x, %tile[%lx] : f32, !ocl.local<64>
  // CHECK-NEXT:   ocl.barrier
  // CHECK-NEXT:   %q = ocl.local_load %tile[%lx] : !ocl.local<64>
  // CHECK-NEXT:   ocl.return
  // CHECK-NEXT: }
  ocl.kernel @shared(%in: !texture.image2d<4x2xf32>) attributes {group_size = array<i64: 64, 1>} {
    %tile = ocl.local_array : !ocl.local<64>
    %lx = ocl.local_id 0
    %p = ocl.read_imagef %in[%lx, %lx] : !texture.image2d<4x2xf32>
    ocl.local_store %p, %tile[%lx] : vector<4xf32>, !ocl.local<64>
    %x = vector.extract %p[0] : f32 from vector<4xf32>
    ocl.local_store %x, %tile[%lx] : f32, !ocl.local<64>
    ocl.barrier
    %q = ocl.local_load %tile[%lx] : !ocl.local<64>
    ocl.return
  }
  // CHECK-NEXT: ocl.kernel @buffers(%f: !texture.buffer2d<4x2xf32>, %h: !texture.buffer2d<4x2xf16>) {
  // CHECK-NEXT:   %i = ocl.global_id 0
  // CHECK-NEXT:   %p = ocl.vload4 %f[%i] : !texture.buffer2d<4x2xf32>
  // CHECK-NEXT:   %q = ocl.vload_half4 %h[%i] : !texture.buffer2d<4x2xf16>
  // CHECK-NEXT:   ocl.vstore4 %q, %f[%i] : !texture.buffer2d<4x2xf32>
  // CHECK-NEXT:   ocl.vstore_half4 %p, %h[%i] : !texture.buffer2d<4x2xf16>
  // CHECK-NEXT:   ocl.return
  // CHECK-NEXT: }
  ocl.kernel @buffers(%f: !texture.buffer2d<4x2xf32>, %h: !texture.buffer2d<4x2xf16>) {
    %i = ocl.global_id 0
    %p = ocl.vload4 %f[%i] : !texture.buffer2d<4x2xf32>
    %q = ocl.vload_half4 %h[%i] : !texture.buffer2d<4x2xf16>
    ocl.vstore4 %q, %f[%i] : !texture.buffer2d<4x2xf32>
    ocl.vstore_half4 %p, %h[%i] : !texture.buffer2d<4x2xf16>
    ocl.return
  }
  // Sixteen floats (four pixels) and one lane of a pixel, loaded at once.
  // CHECK-NEXT: ocl.kernel @loads(%f: !texture.buffer2d<4x2xf32>, %h: !texture.buffer2d<4x2xf16>) {
  // CHECK-NEXT:   %i = ocl.global_id 0
  // CHECK-NEXT:   %r = ocl.vload16 %f[%i] : !texture.buffer2d<4x2xf32>
  // CHECK-NEXT:   %s = ocl.vload_half16 %h[%i] : !texture.buffer2d<4x2xf16>
  // CHECK-NEXT:   %a = ocl.load_lane %f[%i] [%i] : !texture.buffer2d<4x2xf32>
  // CHECK-NEXT:   %b = ocl.load_half_lane %h[%i] [%i] : !texture.buffer2d<4x2xf16>
  // CHECK-NEXT:   ocl.return
  // CHECK-NEXT: }
  ocl.kernel @loads(%f: !texture.buffer2d<4x2xf32>, %h: !texture.buffer2d<4x2xf16>) {
    %i = ocl.global_id 0
    %r = ocl.vload16 %f[%i] : !texture.buffer2d<4x2xf32>
    %s = ocl.vload_half16 %h[%i] : !texture.buffer2d<4x2xf16>
    %a = ocl.load_lane %f[%i] [%i] : !texture.buffer2d<4x2xf32>
    %b = ocl.load_half_lane %h[%i] [%i] : !texture.buffer2d<4x2xf16>
    ocl.return
  }
  // CHECK-NEXT: ocl.kernel @wide(%f: !texture.buffer2d<4x2xf32>) {
  // CHECK-NEXT:   %i = ocl.global_id 0
  // CHECK-NEXT:   %p = ocl.vload4 %f[%i] : !texture.buffer2d<4x2xf32>
  // CHECK-NEXT:   %v = ocl.vec16 %p, %p, %p, %p
  // CHECK-NEXT:   %q = ocl.part4 %v[3]
  // CHECK-NEXT:   ocl.vstore4 %q, %f[%i] : !texture.buffer2d<4x2xf32>
  // CHECK-NEXT:   ocl.return
  // CHECK-NEXT: }
  ocl.kernel @wide(%f: !texture.buffer2d<4x2xf32>) {
    %i = ocl.global_id 0
    %p = ocl.vload4 %f[%i] : !texture.buffer2d<4x2xf32>
    %v = ocl.vec16 %p, %p, %p, %p
    %q = ocl.part4 %v[3]
    ocl.vstore4 %q, %f[%i] : !texture.buffer2d<4x2xf32>
    ocl.return
  }
  // CHECK-NEXT: ocl.kernel @empty() {
  // CHECK-NEXT:   ocl.return
  // CHECK-NEXT: }
  ocl.kernel @empty() {
    ocl.return
  }
  // CHECK-NEXT: func.func @main_graph() {
  // CHECK-NEXT:   %a = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.image2d<4x2xf32>
  // CHECK-NEXT:   %b = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.image2d<4x2xf32>
  // CHECK-NEXT:   %c = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.image2d<4x2xf16>
  // CHECK-NEXT:   %d = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.image2d<4x2xf16>
  // CHECK-NEXT:   %e = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.buffer2d<4x2xf32>
  // CHECK-NEXT:   %f = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.buffer2d<4x2xf16>
  // CHECK-NEXT:   ocl.launch @images(%a, %b, %c, %d) {global_size = array<i64: 4, 2>} : !texture.image2d<4x2xf32>, !texture.image2d<4x2xf32>, !texture.image2d<4x2xf16>, !texture.image2d<4x2xf16>
  // CHECK-NEXT:   ocl.launch @buffers(%e, %f) {global_size = array<i64: 8>, local_size = array<i64: 4>} : !texture.buffer2d<4x2xf32>, !texture.buffer2d<4x2xf16>
  // CHECK-NEXT:   ocl.launch @empty() {global_size = array<i64: 1, 1, 1>}
  // CHECK-NEXT:   ocl.launch @shared(%a) {global_size = array<i64: 128>, local_size = array<i64: 64>} : !texture.image2d<4x2xf32>
  // CHECK-NEXT:   func.return
  // CHECK-NEXT: }
  func.func @main_graph() {
    %a = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.image2d<4x2xf32>
    %b = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.image2d<4x2xf32>
    %c = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.image2d<4x2xf16>
    %d = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.image2d<4x2xf16>
    %e = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.buffer2d<4x2xf32>
    %f = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.buffer2d<4x2xf16>
    ocl.launch @images(%a, %b, %c, %d) {global_size = array<i64: 4, 2>} : !texture.image2d<4x2xf32>, !texture.image2d<4x2xf32>, !texture.image2d<4x2xf16>, !texture.image2d<4x2xf16>
    ocl.launch @buffers(%e, %f) {global_size = array<i64: 8>, local_size = array<i64: 4>} : !texture.buffer2d<4x2xf32>, !texture.buffer2d<4x2xf16>
    ocl.launch @empty() {global_size = array<i64: 1, 1, 1>}
    ocl.launch @shared(%a) {global_size = array<i64: 128>, local_size = array<i64: 64>} : !texture.image2d<4x2xf32>
    func.return
  }
}
// CHECK-NEXT: }
