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

// ShuffleNet's channel shuffle (4 groups of 4 channels) between nc4hw4 tensors: a
// work-item per pixel (global size W x N·H) reads each source block once and writes the
// four output blocks, their lanes picked at compile time (no ocl.lane).
// CHECK:      ocl.kernel @reshape_0(
// CHECK-NOT:    ocl.lane
// CHECK-COUNT-4: texture.write
// CHECK:      ocl.launch @reshape_0({{.*}}) {onnx.flops = 0 : i64, global_size = array<i64: 5, 6>}

// A stride-1 depthwise conv: a work-item computes one channel block at four neighbouring
// pixels as a float16; a tap whose four input pixels all lie in the row reads them as
// one texture.read16, else as four masked pixels. 8 channels are 2 blocks and 9 columns
// 3 tiles (the last ragged): the range is 6 x 5.
// CHECK:      ocl.kernel @[[DW:conv_[0-9]+]](
// CHECK:        %{{.*}} = texture.read16 %in[
// CHECK:        } else {
// CHECK-COUNT-4:  texture.read %in[
// CHECK:        math.fma {{.*}} : vector<16xf32>
// CHECK:      ocl.launch @[[DW]]({{.*}}) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 6, 5>}

// A MatMul in buffers with a GELU: the axpy form reads each row of 16 weights (four rows4
// pixels side by side) as one texture.read16, and erf is Abramowitz and Stegun's formula
// (exp, a reciprocal and copysign), not OpenCL's erf.
// CHECK:      ocl.kernel @[[MM:matmul_[0-9]+]](
// CHECK:        texture.read16 %b[
// CHECK-NOT:    math.erf
// CHECK:        math.exp
// CHECK:        math.copysign
// CHECK:      ocl.launch @[[MM]](

// OCL:        for (int ib = ib_lo; ib < ib_hi; ib++)
// OCL:        vload16(0, weight + 4 *
// BUILD: {{(built|skipped)}} 5 kernels

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
  func.func @shuffle(%s: tensor<2x16x3x5xf32>) -> tensor<2x16x3x5xf32> {
    %five = onnx.Constant {value = dense<[2, 4, 4, 3, 5]> : tensor<5xi64>} : tensor<5xi64>
    %four = onnx.Constant {value = dense<[2, 16, 3, 5]> : tensor<4xi64>} : tensor<4xi64>
    %a = onnx.Reshape %s, %five : (tensor<2x16x3x5xf32>, tensor<5xi64>) -> tensor<2x4x4x3x5xf32> loc("shuffle")
    %b = onnx.Transpose %a {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<2x4x4x3x5xf32>) -> tensor<2x4x4x3x5xf32>
    %c = onnx.Reshape %b, %four : (tensor<2x4x4x3x5xf32>, tensor<4xi64>) -> tensor<2x16x3x5xf32>
    func.return %c : tensor<2x16x3x5xf32>
  }
  func.func @depthwise(%d: tensor<1x8x5x9xf32>) -> tensor<1x8x5x9xf32> {
    %k = onnx.Constant {value = dense<0.5> : tensor<8x1x3x3xf32>} : tensor<8x1x3x3xf32>
    %none = onnx.None
    %e = onnx.Conv %d, %k, %none {group = 8 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x5x9xf32>, tensor<8x1x3x3xf32>, none) -> tensor<1x8x5x9xf32> loc("dw")
    func.return %e : tensor<1x8x5x9xf32>
  }
  func.func @mlp(%t: tensor<4x16xf32>) -> tensor<4x32xf32> {
    %wm = onnx.Constant {value = dense<0.25> : tensor<16x32xf32>} : tensor<16x32xf32>
    %m = onnx.MatMul %t, %wm : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32> loc("mm")
    %g = onnx.Gelu %m : (tensor<4x32xf32>) -> tensor<4x32xf32> loc("gelu")
    func.return %g : tensor<4x32xf32>
  }
}
