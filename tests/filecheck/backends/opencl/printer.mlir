// RUN: mobile-opt %s -t opencl | filecheck %s
// RUN: mobile-opt %s -t opencl | %python %inputs/build_opencl.py | filecheck %s --check-prefix=BUILD

// `-t opencl` prints every ocl.kernel as one OpenCL C program: the prelude, then
// each kernel with the access qualifier its uses imply on each argument.

// BUILD: {{(built|skipped)}} 5 kernels

// Without cl_khr_fp16 (PoCL's CPU device), half pixels are read and written as float.
// CHECK:      #ifdef cl_khr_fp16
// CHECK-NEXT: #pragma OPENCL EXTENSION cl_khr_fp16 : enable
// CHECK-NEXT: #else
// CHECK-NEXT: // no cl_khr_fp16: half pixels are read and written as float (images keep half storage)
// CHECK-NEXT: #define half4 float4
// CHECK-NEXT: #define read_imageh read_imagef
// CHECK-NEXT: #define write_imageh write_imagef
// CHECK-NEXT: #define convert_half4 convert_float4
// CHECK-NEXT: #endif
// CHECK-EMPTY:
// CHECK-NEXT: __constant sampler_t SMP = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
// CHECK-EMPTY:
// CHECK-NEXT: // lane k (known at run time) of a pixel
// CHECK-NEXT: inline float mo_lane(float4 v, int k) { return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w; }
// CHECK-EMPTY:

builtin.module {
  // Images: written ones __write_only, the others __read_only (an unused one too);
  // the kernel's onnx.node becomes a comment.
  // CHECK-NEXT: // node 'relu' (Relu)
  // CHECK-NEXT: __kernel void images(
  // CHECK-NEXT:     __write_only image2d_t out,
  // CHECK-NEXT:     __read_only image2d_t in,
  // CHECK-NEXT:     __read_only image2d_t unused,
  // CHECK-NEXT:     __read_only image2d_t hin,
  // CHECK-NEXT:     __write_only image2d_t hout) {
  // CHECK-NEXT:   const int x = (int)get_global_id(0);
  // CHECK-NEXT:   const int y = (int)get_global_id(1);
  // CHECK-NEXT:   const float4 a = read_imagef(in, SMP, (int2)(x, y));
  // CHECK-NEXT:   const half4 h = read_imageh(hin, SMP, (int2)(x, y));
  // CHECK-NEXT:   const float4 hf = convert_float4(h);
  // CHECK-NEXT:   const float4 s = a + hf;
  // CHECK-NEXT:   write_imagef(out, (int2)(x, y), s);
  // CHECK-NEXT:   const half4 sh = convert_half4(s);
  // CHECK-NEXT:   write_imageh(hout, (int2)(x, y), sh);
  // CHECK-NEXT: }
  // CHECK-EMPTY:
  ocl.kernel @images(%out: !texture.image2d<4x2xf32>, %in: !texture.image2d<4x2xf32>, %unused: !texture.image2d<4x2xf32>, %hin: !texture.image2d<4x2xf16>, %hout: !texture.image2d<4x2xf16>) attributes {onnx.node = "node 'relu' (Relu)"} {
    %x = ocl.global_id 0
    %y = ocl.global_id 1
    %a = ocl.read_imagef %in[%x, %y] : !texture.image2d<4x2xf32>
    %h = ocl.read_imageh %hin[%x, %y] : !texture.image2d<4x2xf16>
    %hf = arith.extf %h : vector<4xf16> to vector<4xf32>
    %s = arith.addf %a, %hf : vector<4xf32>
    ocl.write_imagef %s, %out[%x, %y] : !texture.image2d<4x2xf32>
    %sh = arith.truncf %s : vector<4xf32> to vector<4xf16>
    ocl.write_imageh %sh, %hout[%x, %y] : !texture.image2d<4x2xf16>
    ocl.return
  }

  // Buffers: const where only read, float or half elements.
  // CHECK-NEXT: __kernel void buffers(
  // CHECK-NEXT:     __global float* restrict out,
  // CHECK-NEXT:     __global const float* restrict in,
  // CHECK-NEXT:     __global float* restrict inout,
  // CHECK-NEXT:     __global const half* restrict hin,
  // CHECK-NEXT:     __global half* restrict hout) {
  // CHECK-NEXT:   const int i = (int)get_global_id(0);
  // CHECK-NEXT:   const float4 a = vload4(i, in);
  // CHECK-NEXT:   const float4 b = vload4(i, inout);
  // CHECK-NEXT:   const float4 h = vload_half4(i, hin);
  // CHECK-NEXT:   const float4 s = a * b;
  // CHECK-NEXT:   const float4 t = s - h;
  // CHECK-NEXT:   vstore4(t, i, out);
  // CHECK-NEXT:   vstore4(t, i, inout);
  // CHECK-NEXT:   vstore_half4(t, i, hout);
  // CHECK-NEXT: }
  // CHECK-EMPTY:
  ocl.kernel @buffers(%out: !texture.buffer2d<4x2xf32>, %in: !texture.buffer2d<4x2xf32>, %inout: !texture.buffer2d<4x2xf32>, %hin: !texture.buffer2d<4x2xf16>, %hout: !texture.buffer2d<4x2xf16>) {
    %i = ocl.global_id 0
    %a = ocl.vload4 %in[%i] : !texture.buffer2d<4x2xf32>
    %b = ocl.vload4 %inout[%i] : !texture.buffer2d<4x2xf32>
    %h = ocl.vload_half4 %hin[%i] : !texture.buffer2d<4x2xf16>
    %s = arith.mulf %a, %b : vector<4xf32>
    %t = arith.subf %s, %h : vector<4xf32>
    ocl.vstore4 %t, %out[%i] : !texture.buffer2d<4x2xf32>
    ocl.vstore4 %t, %inout[%i] : !texture.buffer2d<4x2xf32>
    ocl.vstore_half4 %t, %hout[%i] : !texture.buffer2d<4x2xf16>
    ocl.return
  }

  // Work-item ids, inline constants, a loop with a carried value, a run-time lane,
  // an if with a result, a barrier, vector literals and splats.
  // CHECK-NEXT: __kernel void compute(
  // CHECK-NEXT:     __write_only image2d_t out,
  // CHECK-NEXT:     __read_only image2d_t in) {
  // CHECK-NEXT:   const int gx = (int)get_global_id(0);
  // CHECK-NEXT:   const int lx = (int)get_local_id(0);
  // CHECK-NEXT:   const int grp = (int)get_group_id(0);
  // CHECK-NEXT:   float4 sum = ((float4)(0.0f));
  // CHECK-NEXT:   for (int k = 0; k < 4; k++) {
  // CHECK-NEXT:     const float4 p = read_imagef(in, SMP, (int2)(k, 0));
  // CHECK-NEXT:     const float4 e = exp(p);
  // CHECK-NEXT:     const float4 next = sum + e;
  // CHECK-NEXT:     sum = next;
  // CHECK-NEXT:   }
  // CHECK-NEXT:   const float lane = mo_lane(sum, lx);
  // CHECK-NEXT:   const float scaled = lane * 0.5f;
  // CHECK-NEXT:   const float first = sum.x;
  // CHECK-NEXT:   const bool big = scaled > first;
  // CHECK-NEXT:   const float pick = big ? scaled : (-0.25f);
  // CHECK-NEXT:   const bool inside = grp < 4;
  // CHECK-NEXT:   float r;
  // CHECK-NEXT:   if (inside) {
  // CHECK-NEXT:     const float m = select(pick, 0.5f, pick < 0.5f);
  // CHECK-NEXT:     r = m;
  // CHECK-NEXT:   } else {
  // CHECK-NEXT:     const float fl = (float)gx;
  // CHECK-NEXT:     r = fl;
  // CHECK-NEXT:   }
  // CHECK-NEXT:   barrier(CLK_LOCAL_MEM_FENCE);
  // CHECK-NEXT:   const float4 v = (float4)(r, pick, first, 0.5f);
  // CHECK-NEXT:   const float4 w = (float4)(r);
  // CHECK-NEXT:   const float4 sum1 = v + w;
  // CHECK-NEXT:   const float4 res = sum1 + ((float4)(1.0f, 2.0f, 3.0f, 4.0f));
  // CHECK-NEXT:   write_imagef(out, (int2)(gx, 0), res);
  // CHECK-NEXT: }
  ocl.kernel @compute(%out: !texture.image2d<8x1xf32>, %in: !texture.image2d<8x1xf32>) {
    %gx = ocl.global_id 0
    %lx = ocl.local_id 0
    %grp = ocl.group_id 0
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %zero = arith.constant dense<0.000000e+00> : vector<4xf32>
    %ramp = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : vector<4xf32>
    %c_half = arith.constant 5.000000e-01 : f32
    %c_neg = arith.constant -2.500000e-01 : f32
    %acc = scf.for %k = %c0 to %c4 step %c1 iter_args(%sum = %zero) -> (vector<4xf32>) : i32 {
      %p = ocl.read_imagef %in[%k, %c0] : !texture.image2d<8x1xf32>
      %e = math.exp %p : vector<4xf32>
      %next = arith.addf %sum, %e : vector<4xf32>
      scf.yield %next : vector<4xf32>
    }
    %lane = ocl.lane %acc[%lx]
    %scaled = arith.mulf %lane, %c_half : f32
    %first = vector.extract %acc[0] : f32 from vector<4xf32>
    %big = arith.cmpf ogt, %scaled, %first : f32
    %pick = arith.select %big, %scaled, %c_neg : f32
    %inside = arith.cmpi slt, %grp, %c4 : i32
    %r = scf.if %inside -> (f32) {
      %m = arith.maximumf %pick, %c_half : f32
      scf.yield %m : f32
    } else {
      %fl = arith.sitofp %gx : i32 to f32
      scf.yield %fl : f32
    }
    ocl.barrier
    %v = ocl.vec4 %r, %pick, %first, %c_half
    %w = vector.broadcast %r : f32 to vector<4xf32>
    %sum = arith.addf %v, %w : vector<4xf32>
    %res = arith.addf %sum, %ramp : vector<4xf32>
    ocl.write_imagef %res, %out[%gx, %c0] : !texture.image2d<8x1xf32>
    ocl.return
  }

  // Local memory: a group-shared float4 array declared first, a pixel stored and a float
  // stored by its index among floats, loads; a required work-group size.
  // CHECK-EMPTY:
  // CHECK-NEXT: __attribute__((reqd_work_group_size(16, 4, 1)))
  // CHECK-NEXT: __kernel void staged(
  // CHECK-NEXT:     __write_only image2d_t out) {
  // CHECK-NEXT:   __local float4 tile[64];
  // CHECK-NEXT:   const int lx = (int)get_local_id(0);
  // CHECK-NEXT:   tile[lx] = ((float4)(0.0f));
  // CHECK-NEXT:   ((__local float *)tile)[lx] = 0.5f;
  // CHECK-NEXT:   barrier(CLK_LOCAL_MEM_FENCE);
  // CHECK-NEXT:   const float4 p = tile[lx];
  // CHECK-NEXT:   write_imagef(out, (int2)(lx, 0), p);
  // CHECK-NEXT: }
  ocl.kernel @staged(%out: !texture.image2d<8x1xf32>) attributes {group_size = array<i64: 16, 4>} {
    %tile = ocl.local_array : !ocl.local<64>
    %lx = ocl.local_id 0
    %c0 = arith.constant 0 : i32
    %zero = arith.constant dense<0.000000e+00> : vector<4xf32>
    %half = arith.constant 5.000000e-01 : f32
    ocl.local_store %zero, %tile[%lx] : vector<4xf32>, !ocl.local<64>
    ocl.local_store %half, %tile[%lx] : f32, !ocl.local<64>
    ocl.barrier
    %p = ocl.local_load %tile[%lx] : !ocl.local<64>
    ocl.write_imagef %p, %out[%lx, %c0] : !texture.image2d<8x1xf32>
    ocl.return
  }

  // maximumf/minimumf propagate NaN (fmax/fmin do not): against a constant one compare
  // and select, the constant second; of two values a NaN second operand tested too.
  // maxnumf/minnumf are fmax/fmin.
  // CHECK-EMPTY:
  // CHECK-NEXT: __kernel void extrema(
  // CHECK-NEXT:     __write_only image2d_t out,
  // CHECK-NEXT:     __read_only image2d_t in) {
  // CHECK-NEXT:   const float4 a = read_imagef(in, SMP, (int2)(0, 0));
  // CHECK-NEXT:   const float4 b = read_imagef(in, SMP, (int2)(1, 0));
  // CHECK-NEXT:   const float4 hi = select(a, b, (a < b) | (b != b));
  // CHECK-NEXT:   const float4 lo = select(hi, ((float4)(6.0f)), hi > ((float4)(6.0f)));
  // CHECK-NEXT:   const float4 nans = (float4)(NAN);
  // CHECK-NEXT:   const float4 nan = select(lo, nans, (lo < nans) | (nans != nans));
  // CHECK-NEXT:   const float4 num = fmax(nan, b);
  // CHECK-NEXT:   const float4 least = fmin(num, a);
  // CHECK-NEXT:   write_imagef(out, (int2)(0, 0), least);
  // CHECK-NEXT: }
  ocl.kernel @extrema(%out: !texture.image2d<8x1xf32>, %in: !texture.image2d<8x1xf32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %six = arith.constant dense<6.000000e+00> : vector<4xf32>
    %nan_scalar = arith.constant 0x7FC00000 : f32
    %a = ocl.read_imagef %in[%c0, %c0] : !texture.image2d<8x1xf32>
    %b = ocl.read_imagef %in[%c1, %c0] : !texture.image2d<8x1xf32>
    %hi = arith.maximumf %a, %b : vector<4xf32>
    %lo = arith.minimumf %six, %hi : vector<4xf32>
    %nans = vector.broadcast %nan_scalar : f32 to vector<4xf32>
    %nan = arith.maximumf %lo, %nans : vector<4xf32>
    %num = arith.maxnumf %nan, %b : vector<4xf32>
    %least = arith.minnumf %num, %a : vector<4xf32>
    ocl.write_imagef %least, %out[%c0, %c0] : !texture.image2d<8x1xf32>
    ocl.return
  }

  // The host function prints nothing.
  // CHECK-NOT: main_graph
  func.func @main_graph() {
    %o = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 1, 32>} : !texture.image2d<8x1xf32>
    %i = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 1, 32>} : !texture.image2d<8x1xf32>
    ocl.launch @compute(%o, %i) {global_size = array<i64: 8>, local_size = array<i64: 4>} : !texture.image2d<8x1xf32>, !texture.image2d<8x1xf32>
    func.return
  }
}
