// RUN: mobile-opt %s --split-input-file -p select-layouts,onnx-to-texture | filecheck %s
// RUN: mobile-opt %s --split-input-file -p 'select-layouts,onnx-to-texture{fuse=false}' | filecheck %s --check-prefix=NOFUSE
// RUN: mobile-opt %s --split-input-file -p 'select-layouts,onnx-to-texture{storage=f16}' | filecheck %s --check-prefix=F16
// RUN: mobile-opt %s --split-input-file -p 'select-layouts,onnx-to-texture{max-image-width=4}' 2> %t.stderr | filecheck %s --check-prefix=BUF
// RUN: filecheck %s --check-prefix=REMARK --input-file %t.stderr
// RUN: mobile-opt %s --split-input-file -p 'select-layouts,onnx-to-texture{max-image-width=4 remarks=false}' 2> %t.quiet | filecheck %s --check-prefix=BUF
// RUN: filecheck %s --check-prefix=QUIET --input-file %t.quiet --allow-empty

// onnx-to-texture on elementwise graphs: storage and layouts on the host, one
// kernel per op or per fused chain of elementwise ops, storage type options.

// Relu then a per-channel Add: rank-4 tensors take nc4hw4 (6 channels -> 2 pixels
// of 4 along x, 3 wide: 6x2), the [6,1,1] bias rows4 (one row per channel: 1x6).
// The Add runs in the Relu's kernel, its broadcast operand read one lane per channel;
// its launch counts both ops' FLOPs, one per output element each (2 x 36).
// CHECK:      builtin.module attributes {texture.limits = #texture.limits<16384x16384>} {
// CHECK-NEXT:   ocl.kernel @eltwise_0(%out: !texture.image2d<6x2xf32>, %in0: !texture.image2d<6x2xf32>, %operand: !texture.image2d<1x6xf32>) attributes {onnx.node = "node 'relu' (Relu) + node 'add' (Add)"} {
// CHECK-NEXT:     %gx = ocl.global_id 0
// CHECK-NEXT:     %gy = ocl.global_id 1
// CHECK:          %[[X:.*]] = texture.read %in0[%{{.*}}, %h] : !texture.image2d<6x2xf32>
// CHECK:          %[[R:.*]] = arith.maximumf %[[X]], %{{.*}} : vector<4xf32>
// CHECK-COUNT-4:  texture.read %operand[%{{.*}}, %{{.*}}] : !texture.image2d<1x6xf32>
// CHECK:          %[[B:.*]] = ocl.vec4
// CHECK-NEXT:     %[[S:.*]] = arith.addf %[[R]], %[[B]] : vector<4xf32>
// Lanes past the sixth channel are zeroed before the write.
// CHECK:          arith.select
// CHECK:          texture.write %{{.*}}, %out[%gx, %gy] : !texture.image2d<6x2xf32>
// CHECK-NEXT:     ocl.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @main_graph(%x: tensor<1x6x2x3xf32>, %b: tensor<6x1x1xf32>) -> tensor<1x6x2x3xf32> {
// CHECK-NEXT:     %[[PB:.*]] = texture.pack %b {layout = #texture.layout<rows4>} : tensor<6x1x1xf32> -> !texture.image2d<1x6xf32>
// CHECK-NEXT:     %[[PX:.*]] = texture.pack %x {layout = #texture.layout<nc4hw4>} : tensor<1x6x2x3xf32> -> !texture.image2d<6x2xf32>
// CHECK-NEXT:     %y = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 6, 2, 3>} : !texture.image2d<6x2xf32>
// CHECK-NEXT:     ocl.launch @eltwise_0(%y, %[[PX]], %[[PB]]) {onnx.flops = 72 : i64, global_size = array<i64: 6, 2>} : !texture.image2d<6x2xf32>, !texture.image2d<6x2xf32>, !texture.image2d<1x6xf32>
// CHECK-NEXT:     %[[Y:.*]] = texture.unpack %y {layout = #texture.layout<nc4hw4>} : !texture.image2d<6x2xf32> -> tensor<1x6x2x3xf32>
// CHECK-NEXT:     func.return %[[Y]] : tensor<1x6x2x3xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// Without fusion each op has its kernel; the Relu's result lives in storage of its own.
// NOFUSE:      ocl.kernel @eltwise_0(%out: !texture.image2d<6x2xf32>, %in0: !texture.image2d<6x2xf32>) attributes {onnx.node = "node 'relu' (Relu)"} {
// NOFUSE:      ocl.kernel @eltwise_1(%out: !texture.image2d<6x2xf32>, %in0: !texture.image2d<6x2xf32>, %in1: !texture.image2d<1x6xf32>) attributes {onnx.node = "node 'add' (Add)"} {
// NOFUSE:      func.func @main_graph(
// NOFUSE-NEXT:   %[[PB:.*]] = texture.pack %b {layout = #texture.layout<rows4>} : tensor<6x1x1xf32> -> !texture.image2d<1x6xf32>
// NOFUSE-NEXT:   %[[PX:.*]] = texture.pack %x {layout = #texture.layout<nc4hw4>} : tensor<1x6x2x3xf32> -> !texture.image2d<6x2xf32>
// NOFUSE-NEXT:   %r = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 6, 2, 3>} : !texture.image2d<6x2xf32>
// NOFUSE-NEXT:   ocl.launch @eltwise_0(%r, %[[PX]]) {onnx.flops = 36 : i64, global_size = array<i64: 6, 2>}
// NOFUSE-NEXT:   %y = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 6, 2, 3>} : !texture.image2d<6x2xf32>
// NOFUSE-NEXT:   ocl.launch @eltwise_1(%y, %r, %[[PB]]) {onnx.flops = 36 : i64, global_size = array<i64: 6, 2>}
// NOFUSE-NEXT:   texture.unpack %y

// storage=f16: every image holds halves; host tensors stay f32.
// F16:      ocl.kernel @eltwise_0(%out: !texture.image2d<6x2xf16>, %in0: !texture.image2d<6x2xf16>, %operand: !texture.image2d<1x6xf16>)
// F16:        texture.read %in0[%{{.*}}, %h] : !texture.image2d<6x2xf16>
// F16:        texture.write %{{.*}}, %out[%gx, %gy] : !texture.image2d<6x2xf16>
// F16:      func.func @main_graph(
// F16-NEXT:   texture.pack %b {layout = #texture.layout<rows4>} : tensor<6x1x1xf32> -> !texture.image2d<1x6xf16>
// F16-NEXT:   texture.pack %x {layout = #texture.layout<nc4hw4>} : tensor<1x6x2x3xf32> -> !texture.image2d<6x2xf16>
// F16-NEXT:   %y = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 6, 2, 3>} : !texture.image2d<6x2xf16>
// F16:        texture.unpack %y {layout = #texture.layout<nc4hw4>} : !texture.image2d<6x2xf16> -> tensor<1x6x2x3xf32>

// An image wider than max-image-width becomes a buffer of the same pixel grid; the
// narrow bias stays an image. A remark on stderr says which tensor and why.
// BUF:      builtin.module attributes {texture.limits = #texture.limits<4x16384>} {
// BUF-NEXT:   ocl.kernel @eltwise_0(%out: !texture.buffer2d<6x2xf32>, %in0: !texture.buffer2d<6x2xf32>, %operand: !texture.image2d<1x6xf32>)
// BUF:        texture.read %in0[%{{.*}}, %h] : !texture.buffer2d<6x2xf32>
// BUF:        texture.write %{{.*}}, %out[%gx, %gy] : !texture.buffer2d<6x2xf32>
// BUF:      func.func @main_graph(
// BUF-NEXT:   texture.pack %b {layout = #texture.layout<rows4>} : tensor<6x1x1xf32> -> !texture.image2d<1x6xf32>
// BUF-NEXT:   texture.pack %x {layout = #texture.layout<nc4hw4>} : tensor<1x6x2x3xf32> -> !texture.buffer2d<6x2xf32>
// BUF-NEXT:   %y = texture.alloc {layout = #texture.layout<nc4hw4>, shape = array<i64: 1, 6, 2, 3>, remark = "node 'relu' (Relu): a [1, 6, 2, 3] tensor takes a 6x2 image, over the device limit 4x16384; it is stored in a buffer instead"} : !texture.buffer2d<6x2xf32>
// BUF:        texture.unpack %y {layout = #texture.layout<nc4hw4>} : !texture.buffer2d<6x2xf32> -> tensor<1x6x2x3xf32>
// REMARK: remark: node 'relu' (Relu): a [1, 6, 2, 3] tensor takes a 6x2 image, over the device limit 4x16384; it is stored in a buffer instead
// QUIET-NOT: remark
builtin.module {
  func.func @main_graph(%x: tensor<1x6x2x3xf32>, %b: tensor<6x1x1xf32>) -> tensor<1x6x2x3xf32> {
    %r = onnx.Relu %x : (tensor<1x6x2x3xf32>) -> tensor<1x6x2x3xf32> loc("relu")
    %y = onnx.Add %r, %b : (tensor<1x6x2x3xf32>, tensor<6x1x1xf32>) -> tensor<1x6x2x3xf32> loc("add")
    func.return %y : tensor<1x6x2x3xf32>
  }
}

// -----

// A chain of three elementwise ops on a rank-2 tensor (rows4: 5 columns -> 2 pixels
// per row): one kernel; host constants are packed next to their definition.
// CHECK:      ocl.kernel @eltwise_0(%out: !texture.image2d<2x2xf32>, %in0: !texture.image2d<2x2xf32>, {{.*}}) attributes {onnx.node = "node 'sigmoid' (Sigmoid) + node 'clip' (Clip) + node 'mul' (Mul)"} {
// CHECK:        %[[X:.*]] = texture.read %in0[%gx, %gy] : !texture.image2d<2x2xf32>
// CHECK-NEXT:   %[[NEG:.*]] = arith.negf %[[X]] : vector<4xf32>
// CHECK-NEXT:   %[[EXP:.*]] = math.exp %[[NEG]] : vector<4xf32>
// CHECK:        %[[SIG:.*]] = arith.divf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK:        %[[LO:.*]] = arith.maximumf %[[SIG]], %{{.*}} : vector<4xf32>
// CHECK:        %[[HI:.*]] = arith.minimumf %[[LO]], %{{.*}} : vector<4xf32>
// The [5] scale broadcasts along rows: each output pixel reads the scale's pixel x.
// CHECK:        %[[SC:.*]] = texture.read %{{operand[_0-9]*}}[%gx, %{{.*}}] : !texture.image2d<2x1xf32>
// CHECK-NEXT:   %{{.*}} = arith.mulf %[[HI]], %[[SC]] : vector<4xf32>
// CHECK:        texture.write %{{.*}}, %out[%gx, %gy] : !texture.image2d<2x2xf32>
// CHECK:      func.func @main_graph(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
// CHECK-NEXT:   %[[PX:.*]] = texture.pack %x {layout = #texture.layout<rows4>} : tensor<2x5xf32> -> !texture.image2d<2x2xf32>
// CHECK:        %scale = onnx.Constant
// CHECK-NEXT:   %[[PS:.*]] = texture.pack %scale {layout = #texture.layout<rows4>} : tensor<5xf32> -> !texture.image2d<2x1xf32>
// CHECK-NEXT:   %m = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 5>} : !texture.image2d<2x2xf32>
// CHECK-NEXT:   ocl.launch @eltwise_0(%m, %[[PX]], {{.*}}%[[PS]]) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 2, 2>}
// CHECK-NEXT:   %[[M:.*]] = texture.unpack %m {layout = #texture.layout<rows4>} : !texture.image2d<2x2xf32> -> tensor<2x5xf32>
// CHECK-NEXT:   func.return %[[M]] : tensor<2x5xf32>
// NOFUSE-COUNT-3: ocl.launch
// NOFUSE-NOT:     ocl.launch
// NOFUSE:         {{^// -+$}}
builtin.module {
  func.func @main_graph(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
    %lo = onnx.Constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
    %hi = onnx.Constant {value = dense<6.0> : tensor<f32>} : tensor<f32>
    %scale = onnx.Constant {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>} : tensor<5xf32>
    %s = onnx.Sigmoid %x : (tensor<2x5xf32>) -> tensor<2x5xf32> loc("sigmoid")
    %c = onnx.Clip %s, %lo, %hi : (tensor<2x5xf32>, tensor<f32>, tensor<f32>) -> tensor<2x5xf32> loc("clip")
    %m = onnx.Mul %c, %scale : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32> loc("mul")
    func.return %m : tensor<2x5xf32>
  }
}

// -----

// A result with two users is not fused into either: three kernels, the Relu's
// storage read by the other two.
// CHECK:      ocl.kernel @eltwise_0(%out: !texture.image2d<1x3xf32>, %in0: !texture.image2d<1x3xf32>) attributes {onnx.node = "node 'relu' (Relu)"}
// CHECK:      ocl.kernel @eltwise_1(%out: !texture.image2d<1x3xf32>, %in0: !texture.image2d<1x3xf32>) attributes {onnx.node = "node 'neg' (Neg)"}
// CHECK:        arith.negf
// CHECK:      ocl.kernel @eltwise_2(%out: !texture.image2d<1x3xf32>, %in0: !texture.image2d<1x3xf32>) attributes {onnx.node = "node 'square' (Mul)"}
// CHECK:        %[[A:.*]] = texture.read %in0[%gx, %gy]
// CHECK:        %[[B:.*]] = texture.read %in0[%gx, %gy]
// CHECK-NEXT:   arith.mulf %[[A]], %[[B]] : vector<4xf32>
// CHECK:      func.func @main_graph(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
// CHECK-NEXT:   %[[PX:.*]] = texture.pack %x {layout = #texture.layout<rows4>} : tensor<3x4xf32> -> !texture.image2d<1x3xf32>
// CHECK-NEXT:   %r = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 3, 4>} : !texture.image2d<1x3xf32>
// CHECK-NEXT:   ocl.launch @eltwise_0(%r, %[[PX]]) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 1, 3>}
// CHECK-NEXT:   %n = texture.alloc
// CHECK-NEXT:   ocl.launch @eltwise_1(%n, %r) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 1, 3>}
// CHECK-NEXT:   %s = texture.alloc
// CHECK-NEXT:   ocl.launch @eltwise_2(%s, %r) {onnx.flops = {{[0-9]+}} : i64, global_size = array<i64: 1, 3>}
// CHECK-NEXT:   %[[N:.*]] = texture.unpack %n {layout = #texture.layout<rows4>} : !texture.image2d<1x3xf32> -> tensor<3x4xf32>
// CHECK-NEXT:   %[[S:.*]] = texture.unpack %s {layout = #texture.layout<rows4>} : !texture.image2d<1x3xf32> -> tensor<3x4xf32>
// CHECK-NEXT:   func.return %[[N]], %[[S]] : tensor<3x4xf32>, tensor<3x4xf32>
builtin.module {
  func.func @main_graph(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
    %r = onnx.Relu %x : (tensor<3x4xf32>) -> tensor<3x4xf32> loc("relu")
    %n = onnx.Neg %r : (tensor<3x4xf32>) -> tensor<3x4xf32> loc("neg")
    %s = onnx.Mul %r, %r : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32> loc("square")
    func.return %n, %s : tensor<3x4xf32>, tensor<3x4xf32>
  }
}
