// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{buffers=true}' | filecheck %s
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{buffers=true},texture-to-ocl' -t opencl | filecheck %s --check-prefix=OCL
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{buffers=true},texture-to-ocl' -t opencl | %python %inputs/build_opencl.py | filecheck %s --check-prefix=BUILD
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture' | filecheck %s --check-prefix=IMAGES

// `onnx-to-texture{buffers=true}`: every tensor in a pixel buffer, and an ungrouped conv
// storing nc4hw4 takes the wide kernel. Its weight is packed in hwio4 (width ⌈20/4⌉ = 5
// pixels rounded up to 8; 9 taps × 8 input channels = 72 rows). A work-item computes 16
// output channels at 8 output pixels: 20 channels are 2 groups and 10 columns 2 tiles,
// so the range is 4 × 5 rows. Each input channel's lane meets a float16 of 16 weights.
// CHECK:      ocl.kernel @conv_0(%out: !texture.buffer2d<50x5xf32>, %in: !texture.buffer2d<20x5xf32>, %bias: !texture.buffer2d<5x1xf32>, %weight: !texture.buffer2d<8x72xf32>)
// CHECK:        ocl.vec16
// CHECK:        math.fma {{.*}} : vector<16xf32>
// CHECK:        ocl.part4 %{{.*}}[3]
// CHECK:      texture.pack %x {layout = #texture.layout<nc4hw4>} : tensor<1x8x5x10xf32> -> !texture.buffer2d<20x5xf32>
// CHECK:      texture.pack %w {layout = #texture.layout<hwio4>} : tensor<20x8x3x3xf32> -> !texture.buffer2d<8x72xf32>
// CHECK:      ocl.launch @conv_0({{.*}}) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 4, 5>}
// The second group has one channel block (16..19) of its four, and the second tile two
// columns of its eight: those stores are guarded.
// OCL:        __kernel void conv_0(
// OCL:        float16
// OCL:        .scdef
// BUILD: {{(built|skipped)}} 1 kernels

// IMAGES-NOT: ocl.vec16
// IMAGES:     texture.pack %w {layout = #texture.layout<oihw4o>} : tensor<20x8x3x3xf32> -> !texture.image2d<72x5xf32>

builtin.module {
  func.func @main_graph(%x: tensor<1x8x5x10xf32>) -> tensor<1x20x5x10xf32> {
    %w = onnx.Constant {value = dense<0.5> : tensor<20x8x3x3xf32>} : tensor<20x8x3x3xf32>
    %b = onnx.Constant {value = dense<0.25> : tensor<20xf32>} : tensor<20xf32>
    %y = onnx.Conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x5x10xf32>, tensor<20x8x3x3xf32>, tensor<20xf32>) -> tensor<1x20x5x10xf32> loc("conv")
    func.return %y : tensor<1x20x5x10xf32>
  }
}
