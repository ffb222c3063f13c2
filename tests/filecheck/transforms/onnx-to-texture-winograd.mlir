// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{buffers=true winograd=true}' | filecheck %s
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{buffers=true winograd=true},texture-to-ocl' -t opencl | filecheck %s --check-prefix=OCL
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{buffers=true winograd=true},texture-to-ocl' -t opencl | %python %inputs/build_opencl.py | filecheck %s --check-prefix=BUILD
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{buffers=true}' | filecheck %s --check-prefix=DIRECT
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture' | filecheck %s --check-prefix=DIRECT

// Asked for, a 3x3 stride-1 conv in buffers takes Winograd F(2x2, 3x3) (`winograd.py`). Its weight
// is transformed on the host, U = G g Gᵀ: a derived 20x16x4x4 weight packed in hwio4 (16
// "taps" by 16 input channels = 256 rows). A work-item computes 16 output channels at 2 rows
// by 5 tiles of 2 columns (10 columns: one item a row): 2 channel groups by 4 tile rows.
// A loop of four passes, one per row of the 4x4 products, carries the 5 tiles' outputs
// (20 float16s); each pass loops over the 4 input blocks carrying its row's sums of the 5
// tiles (20 float16s).
// CHECK:      ocl.kernel @conv_0(%out: !texture.buffer2d<50x7xf32>, %in: !texture.buffer2d<40x7xf32>, %bias: !texture.buffer2d<5x1xf32>, %weight: !texture.buffer2d<8x256xf32>)
// CHECK:      scf.for %a{{(_[0-9]+)?}} = {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) : i32 {
// CHECK:      scf.for %ib{{(_[0-9]+)?}} = {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) : i32 {
// CHECK-NOT:  scf.for %ib
// The 7x7 conv's output is too small for Winograd to pay: the direct wide kernel, its
// weight in hwio4 as it is.
// CHECK:      ocl.kernel @conv_1(
// CHECK:      %w_winograd = onnx.Weight {{{.*}}} : tensor<20x16x4x4xf32>
// CHECK-NEXT: texture.pack %w_winograd {layout = #texture.layout<hwio4>} : tensor<20x16x4x4xf32> -> !texture.buffer2d<8x256xf32>
// CHECK-NEXT: ocl.launch @conv_0({{.*}}) {onnx.flops = 403200 : i64, global_size = array<i64: 2, 4>}
// CHECK:      texture.pack %k {layout = #texture.layout<hwio4>} : tensor<16x32x3x3xf32> -> !texture.buffer2d<4x288xf32>

// OCL:        __kernel void conv_0(
// OCL:        for (int a{{[0-9]*}} = 0; a{{[0-9]*}} < 4; a{{[0-9]*}}++) {
// OCL:        for (int ib{{[0-9]*}} = 0; ib{{[0-9]*}} < 4; ib{{[0-9]*}}++) {
// OCL-NOT:    for (int ib
// OCL:        float16
// BUILD: {{(built|skipped)}} 2 kernels

// By default, and in images: the 3x3 weight as it is, no transformed one.
// DIRECT-NOT: tensor<20x16x4x4xf32>
// DIRECT:     texture.pack %w {layout = #texture.layout<{{hwio4|oihw4o}}>} : tensor<20x16x3x3xf32>
// DIRECT-NOT: tensor<20x16x4x4xf32>

builtin.module {
  func.func @main_graph(%x: tensor<1x16x7x10xf32>, %v: tensor<1x32x7x7xf32>) -> (tensor<1x20x7x10xf32>, tensor<1x16x7x7xf32>) {
    %w = onnx.Constant {value = dense<0.5> : tensor<20x16x3x3xf32>} : tensor<20x16x3x3xf32>
    %b = onnx.Constant {value = dense<0.25> : tensor<20xf32>} : tensor<20xf32>
    %y = onnx.Conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x7x10xf32>, tensor<20x16x3x3xf32>, tensor<20xf32>) -> tensor<1x20x7x10xf32> loc("conv")
    %k = onnx.Constant {value = dense<0.125> : tensor<16x32x3x3xf32>} : tensor<16x32x3x3xf32>
    %none = onnx.None
    %z = onnx.Conv %v, %k, %none {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x7x7xf32>, tensor<16x32x3x3xf32>, none) -> tensor<1x16x7x7xf32> loc("small")
    func.return %y, %z : tensor<1x20x7x10xf32>, tensor<1x16x7x7xf32>
  }
}
