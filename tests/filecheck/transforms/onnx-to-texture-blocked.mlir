// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture' | filecheck %s
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture,texture-to-ocl' -t opencl | filecheck %s --check-prefix=OCL
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture,texture-to-ocl' -t opencl | %python %inputs/build_opencl.py | filecheck %s --check-prefix=BUILD
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{blocked=false}' | filecheck %s --check-prefix=UNBLOCKED

// The blocked kernels (`blocked.py`) in images. A 1100x20 by 20x2000 MatMul has 9 x 16 blocks
// of 128 x 128: a group of 16 x 16 work-items per block, each 8 x 8 outputs, A and B staged
// in two buffers of local memory (2 x 8 x 32 float4s each), one barrier before the K loop
// and one per step. The kernel requires its group size; the launch gives it.
// CHECK:      ocl.kernel @matmul_0({{.*}}) attributes {onnx.node = "node 'mm' (MatMul)", group_size = array<i64: 16, 16>} {
// CHECK-NEXT:   %b_tile = ocl.local_array : !ocl.local<512>
// CHECK-NEXT:   %a_tile = ocl.local_array : !ocl.local<512>
// CHECK:        ocl.barrier
// CHECK:        scf.for %s =
// CHECK:          ocl.local_store {{.*}} : f32, !ocl.local<512>
// CHECK:          ocl.barrier
// A classifier (one row, K = 512): K split over a group of 64, the shares added by halves
// (six barriers after the first) in local memory.
// CHECK:      ocl.kernel @gemm_1({{.*}}) attributes {onnx.node = "node 'fc' (Gemm)", group_size = array<i64: 64, 1>} {
// CHECK-NEXT:   %sums = ocl.local_array : !ocl.local<64>
// CHECK-COUNT-7: ocl.barrier
// The conv, 196 positions by 256 channels, gives 16 blocks of 64 x 64: K (9 taps x 128
// channels) is split into 8 slices over z, into a partial-sum image in f32, and the conv's
// kernel adds them.
// CHECK:      ocl.kernel @conv_slices_3(%x: !texture.image2d<448x14xf32>, %weight: !texture.image2d<64x1152xf32>, %partial: !texture.image2d<64x1568xf32>) attributes {onnx.node = "node 'conv' (Conv)", group_size = array<i64: 16, 16, 1>}
// CHECK:      ocl.kernel @conv_2(%out: !texture.image2d<896x14xf32>, %partial: !texture.image2d<64x1568xf32>)
// CHECK:      ocl.launch @matmul_0({{.*}}) {onnx.flops = 88000000 : i64, global_size = array<i64: 256, 144>, local_size = array<i64: 16, 16>}
// CHECK:      texture.pack %w {layout = #texture.layout<cols4>} : tensor<100x512xf32> -> !texture.image2d<512x25xf32>
// CHECK:      ocl.launch @gemm_1({{.*}}) {{{.*}}global_size = array<i64: 1600, 1>, local_size = array<i64: 64, 1>}
// CHECK:      texture.pack %k {layout = #texture.layout<hwio4>} : tensor<256x128x3x3xf32> -> !texture.image2d<64x1152xf32>
// CHECK:      %partial = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 1568, 256>} : !texture.image2d<64x1568xf32>
// CHECK-NEXT: ocl.launch @conv_slices_3({{.*}}) {{{.*}}global_size = array<i64: 64, 64, 8>, local_size = array<i64: 16, 16, 1>}
// CHECK-NEXT: ocl.launch @conv_2(%y, %partial)

// OCL:        __attribute__((reqd_work_group_size(16, 16, 1)))
// OCL-NEXT:   __kernel void matmul_0(
// OCL:          __local float4 b_tile[512];
// OCL:          ((__local float *)a_tile)[
// BUILD: {{(built|skipped)}} 4 kernels

// UNBLOCKED-NOT: ocl.local_array
// UNBLOCKED:     texture.pack %k {layout = #texture.layout<oihw4o>}

builtin.module {
  func.func @main_graph(%a: tensor<1100x20xf32>, %v: tensor<1x512xf32>, %x: tensor<1x128x14x14xf32>) -> (tensor<1100x2000xf32>, tensor<1x100xf32>, tensor<1x256x14x14xf32>) {
    %b = onnx.Constant {value = dense<0.5> : tensor<20x2000xf32>} : tensor<20x2000xf32>
    %c = onnx.MatMul %a, %b : (tensor<1100x20xf32>, tensor<20x2000xf32>) -> tensor<1100x2000xf32> loc("mm")
    %w = onnx.Constant {value = dense<0.25> : tensor<100x512xf32>} : tensor<100x512xf32>
    %bias = onnx.Constant {value = dense<1.0> : tensor<100xf32>} : tensor<100xf32>
    %fc = onnx.Gemm %v, %w, %bias {transB = 1 : i64} : (tensor<1x512xf32>, tensor<100x512xf32>, tensor<100xf32>) -> tensor<1x100xf32> loc("fc")
    %k = onnx.Constant {value = dense<0.125> : tensor<256x128x3x3xf32>} : tensor<256x128x3x3xf32>
    %none = onnx.None
    %y = onnx.Conv %x, %k, %none {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x128x14x14xf32>, tensor<256x128x3x3xf32>, none) -> tensor<1x256x14x14xf32> loc("conv")
    func.return %c, %fc, %y : tensor<1100x2000xf32>, tensor<1x100xf32>, tensor<1x256x14x14xf32>
  }
}
