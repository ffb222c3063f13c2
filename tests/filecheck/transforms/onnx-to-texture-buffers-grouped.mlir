// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{buffers=true}' | filecheck %s
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{buffers=true},texture-to-ocl' -t opencl | filecheck %s --check-prefix=OCL
// RUN: mobile-opt %s -p 'select-layouts,onnx-to-texture{buffers=true},texture-to-ocl' -t opencl | %python %inputs/build_opencl.py | filecheck %s --check-prefix=BUILD

// `onnx-to-texture{buffers=true}` on a conv of 4 groups of 6 channels: it takes the wide
// kernel over its block-diagonal weight (hwio4 of the dense 24x24), and a work-item loops
// only over the input blocks of the groups its 16 outputs meet: outputs 16g..16g+15 are
// in groups 16g/6 to min(16g+15, 23)/6, whose inputs are blocks 6·first/4 to
// ⌈6·(last+1)/4⌉. Each input channel's 16 weights are one texture.read16.
// CHECK:      ocl.kernel @conv_0(%out: !texture.buffer2d<42x3xf32>, %in: !texture.buffer2d<42x3xf32>, %weight: !texture.buffer2d<8x24xf32>)
// CHECK:        %{{.*}} = scf.for %ib = %ib_lo to %ib_hi step
// CHECK:          texture.read16 %weight[
// CHECK:          math.fma {{.*}} : vector<16xf32>
// CHECK:      %[[W:.*]] = onnx.Weight {{.*}} : tensor<24x24x1x1xf32>
// CHECK:      texture.pack %[[W]] {layout = #texture.layout<hwio4>} : tensor<24x24x1x1xf32> -> !texture.buffer2d<8x24xf32>
// CHECK:      ocl.launch @conv_0({{.*}}) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 2, 3>}

// A softmax in buffers: one work-item takes the whole row (global size 1 x rows) and
// writes its pixels in a loop, even for a single row.
// CHECK:      ocl.kernel @softmax_0(
// CHECK:        scf.for %px =
// CHECK:      ocl.launch @softmax_0({{.*}}) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 1, 1>}

// OCL:        for (int ib = ib_lo; ib < ib_hi; ib++)
// OCL:        vload16(0, weight + 4 *
// BUILD: {{(built|skipped)}} 2 kernels

builtin.module {
  func.func @main_graph(%x: tensor<1x24x3x7xf32>) -> tensor<1x24x3x7xf32> {
    %w = onnx.Constant {value = dense<0.5> : tensor<24x6x1x1xf32>} : tensor<24x6x1x1xf32>
    %n = onnx.None
    %y = onnx.Conv %x, %w, %n {group = 4 : i64} : (tensor<1x24x3x7xf32>, tensor<24x6x1x1xf32>, none) -> tensor<1x24x3x7xf32> loc("conv")
    func.return %y : tensor<1x24x3x7xf32>
  }
  func.func @classifier(%logits: tensor<1x1000xf32>) -> tensor<1x1000xf32> {
    %p = onnx.Softmax %logits {axis = -1 : i64} : (tensor<1x1000xf32>) -> tensor<1x1000xf32> loc("softmax")
    func.return %p : tensor<1x1000xf32>
  }
}
