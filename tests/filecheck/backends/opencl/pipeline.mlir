// RUN: mobile-opt %s -p select-layouts,onnx-to-texture,texture-to-ocl -t opencl | filecheck %s
// RUN: mobile-opt %s -p select-layouts,onnx-to-texture,texture-to-ocl -t opencl | %python %inputs/build_opencl.py | filecheck %s --check-prefix=BUILD
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{storage=f16},texture-to-ocl' -t opencl | filecheck %s --check-prefix=F16
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{storage=f16},texture-to-ocl' -t opencl | %python %inputs/build_opencl.py | filecheck %s --check-prefix=BUILD
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{max-image-width=4},texture-to-ocl' -t opencl 2> %t.stderr | filecheck %s --check-prefix=BUF
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{max-image-width=4},texture-to-ocl' -t opencl 2> %t.stderr | %python %inputs/build_opencl.py | filecheck %s --check-prefix=BUILD
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{storage=f16 max-image-width=1},texture-to-ocl' -t opencl 2> %t.stderr | filecheck %s --check-prefix=HALFBUF
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{storage=f16 max-image-width=1},texture-to-ocl' -t opencl 2> %t.stderr | %python %inputs/build_opencl.py | filecheck %s --check-prefix=BUILD

// A graph through onnx-to-texture, texture-to-ocl and -t opencl, in each storage
// configuration; each program builds on PoCL.

// BUILD: {{(built|skipped)}} 2 kernels

// f32 images: sampler reads, write_imagef; inputs __read_only, the output __write_only.
// CHECK:      #ifdef cl_khr_fp16
// CHECK:      // node 'relu' (Relu) + node 'add' (Add)
// CHECK-NEXT: __kernel void eltwise_0(
// CHECK-NEXT:     __write_only image2d_t out,
// CHECK-NEXT:     __read_only image2d_t in0,
// CHECK-NEXT:     __read_only image2d_t operand) {
// CHECK-NEXT:   const int gx = (int)get_global_id(0);
// CHECK-NEXT:   const int gy = (int)get_global_id(1);
// CHECK:        = read_imagef(in0, SMP, (int2)({{.*}}, h));
// CHECK:        = select([[X:[a-z0-9_]+]], ((float4)(0.0f)), [[X]] < ((float4)(0.0f)));
// CHECK-COUNT-4: = read_imagef(operand, SMP, (int2)(0, {{.*}}));
// CHECK:        write_imagef(out, (int2)(gx, gy), {{.*}});
// CHECK-NEXT: }
// CHECK:      // node 'sigmoid' (Sigmoid) + node 'double' (Mul)
// CHECK-NEXT: __kernel void eltwise_1(
// CHECK-NEXT:     __write_only image2d_t out,
// CHECK-NEXT:     __read_only image2d_t in0,
// CHECK-NEXT:     __read_only image2d_t operand) {
// CHECK:        = exp(
// CHECK:        write_imagef(out, (int2)(gx, gy), {{.*}});
// CHECK-NEXT: }
// CHECK-NOT:  __kernel

// f16 images: read_imageh widened to float4, float4 narrowed for write_imageh.
// F16:      __kernel void eltwise_0(
// F16-NEXT:     __write_only image2d_t out,
// F16-NEXT:     __read_only image2d_t in0,
// F16-NEXT:     __read_only image2d_t operand) {
// F16:        const half4 [[H:.*]] = read_imageh(in0, SMP, (int2)({{.*}}, h));
// F16-NEXT:   const float4 {{.*}} = convert_float4([[H]]);
// F16:        const half4 [[O:.*]] = convert_half4({{.*}});
// F16-NEXT:   write_imageh(out, (int2)(gx, gy), [[O]]);
// F16:      __kernel void eltwise_1(
// F16:        read_imageh(in0
// F16:        write_imageh(out

// Storage over the image width: __global buffers, pixel y * width + x; the narrow
// bias and scalar stay images.
// BUF:      __kernel void eltwise_0(
// BUF-NEXT:     __global float* restrict out,
// BUF-NEXT:     __global const float* restrict in0,
// BUF-NEXT:     __read_only image2d_t operand) {
// BUF:        const int [[ROW:.*]] = h * 6;
// BUF:        const int [[OFF:.*]] = [[ROW]] + {{.*}};
// BUF-NEXT:   const float4 {{.*}} = vload4([[OFF]], in0);
// BUF:        const int [[OROW:.*]] = gy * 6;
// BUF-NEXT:   const int [[OOFF:.*]] = [[OROW]] + gx;
// BUF-NEXT:   vstore4({{.*}}, [[OOFF]], out);
// BUF:      __kernel void eltwise_1(
// BUF-NEXT:     __write_only image2d_t out,
// BUF-NEXT:     __read_only image2d_t in0,
// BUF-NEXT:     __read_only image2d_t operand) {

// Half buffers: vload_half4 and vstore_half4 convert in the access.
// HALFBUF:      __kernel void eltwise_0(
// HALFBUF-NEXT:     __global half* restrict out,
// HALFBUF-NEXT:     __global const half* restrict in0,
// HALFBUF-NEXT:     __read_only image2d_t operand) {
// HALFBUF:        = vload_half4({{.*}}, in0);
// HALFBUF:        vstore_half4({{.*}}, {{.*}}, out);
// HALFBUF:      __kernel void eltwise_1(
// HALFBUF-NEXT:     __global half* restrict out,
// HALFBUF-NEXT:     __global const half* restrict in0,
// HALFBUF-NEXT:     __read_only image2d_t operand) {
// HALFBUF:        = vload_half4({{.*}}, in0);
// HALFBUF:        vstore_half4({{.*}}, {{.*}}, out);

builtin.module {
  func.func @main_graph(%x: tensor<1x6x2x3xf32>, %b: tensor<6x1x1xf32>, %m: tensor<2x5xf32>) -> (tensor<1x6x2x3xf32>, tensor<2x5xf32>) {
    %two = onnx.Constant {value = dense<2.0> : tensor<f32>} : tensor<f32>
    %r = onnx.Relu %x : (tensor<1x6x2x3xf32>) -> tensor<1x6x2x3xf32> loc("relu")
    %y = onnx.Add %r, %b : (tensor<1x6x2x3xf32>, tensor<6x1x1xf32>) -> tensor<1x6x2x3xf32> loc("add")
    %s = onnx.Sigmoid %m : (tensor<2x5xf32>) -> tensor<2x5xf32> loc("sigmoid")
    %z = onnx.Mul %s, %two : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32> loc("double")
    func.return %y, %z : tensor<1x6x2x3xf32>, tensor<2x5xf32>
  }
}
