// RUN: mobile-opt %s --split-input-file -p 'select-layouts,onnx-to-texture,cse' | filecheck %s
// RUN: mobile-opt %s --split-input-file -p 'select-layouts,onnx-to-texture{storage=f16},cse' | filecheck %s --check-prefix=F16
// RUN: mobile-opt %s --split-input-file -p 'select-layouts,onnx-to-texture{fuse=false},cse' | filecheck %s --check-prefix=NOFUSE

// onnx-to-texture on what transformer exports run beyond float arithmetic: masks
// (comparisons, Where), integer remainders, embedding lookups with run-time
// indices, and Range, Trilu and ConstantOfShape. Integer and boolean tensors are
// exact integers in f32 pixels (booleans 0 and 1), also under storage=f16.

// A key-padding mask: Equal of the int64 token ids, then Where filling with a
// large negative number. Both run in one kernel: each lane compares and selects.
builtin.module {
  func.func @main_graph(%ids: tensor<2x5xi64>, %x: tensor<2x5xf32>) -> tensor<2x5xf32> {
    %zero = onnx.Constant {value = dense<0> : tensor<i64>} : tensor<i64>
    %fill = onnx.Constant {value = dense<-1.0e+30> : tensor<f32>} : tensor<f32>
    %pad = onnx.Equal %ids, %zero : (tensor<2x5xi64>, tensor<i64>) -> tensor<2x5xi1> loc("pad")
    %y = onnx.Where %pad, %fill, %x : (tensor<2x5xi1>, tensor<f32>, tensor<2x5xf32>) -> tensor<2x5xf32> loc("mask")
    func.return %y : tensor<2x5xf32>
  }
}

// CHECK:      ocl.kernel @eltwise_0(%out: !texture.image2d<2x2xf32>, %in0: !texture.image2d<2x2xf32>, %in1: !texture.image2d<1x1xf32>, %operand: !texture.image2d<1x1xf32>, %operand_1: !texture.image2d<2x2xf32>) attributes {onnx.node = "node 'pad' (Equal) + node 'mask' (Where)"} {
// CHECK:        %[[IDS:.*]] = texture.read %in0[%gx, %gy]
// CHECK-COUNT-4: arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
// CHECK:        %[[PAD:.*]] = ocl.vec4
// CHECK:        %[[PAD0:.*]] = vector.extract %[[PAD]][0] : f32 from vector<4xf32>
// CHECK:        %[[ZERO:.*]] = arith.cmpf oeq, %[[PAD0]], %{{.*}} : f32
// CHECK-NEXT:   arith.select %[[ZERO]], %{{.*}}, %{{.*}} : f32
// CHECK:        texture.write
// CHECK:      func.func @main_graph(
// CHECK-NEXT:   texture.pack %x {layout = #texture.layout<rows4>} : tensor<2x5xf32> -> !texture.image2d<2x2xf32>
// CHECK-NEXT:   texture.pack %ids {layout = #texture.layout<rows4>} : tensor<2x5xi64> -> !texture.image2d<2x2xf32>
// CHECK:        ocl.launch @eltwise_0(
// CHECK-NOT:    ocl.launch

// Under f16 storage the float tensors take half pixels, the integers f32 ones.
// F16:      ocl.kernel @eltwise_0(%out: !texture.image2d<2x2xf16>, %in0: !texture.image2d<2x2xf32>, %in1: !texture.image2d<1x1xf32>, %operand: !texture.image2d<1x1xf16>, %operand_1: !texture.image2d<2x2xf16>)
// F16:        texture.pack %x {layout = #texture.layout<rows4>} : tensor<2x5xf32> -> !texture.image2d<2x2xf16>
// F16-NEXT:   texture.pack %ids {layout = #texture.layout<rows4>} : tensor<2x5xi64> -> !texture.image2d<2x2xf32>

// Without fusion the boolean mask lives in storage of its own, f32 pixels of 0 and 1.
// NOFUSE:      ocl.kernel @eltwise_0({{.*}}) attributes {onnx.node = "node 'pad' (Equal)"}
// NOFUSE:      ocl.kernel @eltwise_1({{.*}}) attributes {onnx.node = "node 'mask' (Where)"}
// NOFUSE:      %pad = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 5>} : !texture.image2d<2x2xf32>

// -----

// An embedding lookup: each work-item reads its token id, wraps a negative one,
// clamps it into the table, and copies one whole pixel of the table's row.
builtin.module {
  func.func @main_graph(%ids: tensor<2x3xi64>) -> tensor<2x3x8xf32> {
    %table = onnx.Constant {value = dense<1.5> : tensor<10x8xf32>} : tensor<10x8xf32>
    %e = onnx.Gather %table, %ids {axis = 0 : i64} : (tensor<10x8xf32>, tensor<2x3xi64>) -> tensor<2x3x8xf32> loc("emb")
    func.return %e : tensor<2x3x8xf32>
  }
}

// CHECK:      ocl.kernel @gather_0(%out: !texture.image2d<2x6xf32>, %in: !texture.image2d<2x10xf32>, %indices: !texture.image2d<1x2xf32>) attributes {onnx.node = "node 'emb' (Gather)"} {
// CHECK:        %[[I:.*]] = texture.read %indices[%{{.*}}, %{{.*}}] : !texture.image2d<1x2xf32>
// CHECK:        %[[R:.*]] = arith.remsi
// CHECK:        %[[L:.*]] = ocl.lane %[[I]][%[[R]]]
// CHECK:        %index = arith.fptosi %[[L]] : f32 to i32
// CHECK:        %[[NEG:.*]] = arith.cmpi slt, %index, %{{.*}} : i32
// CHECK:        %[[WRAP:.*]] = arith.addi %index, %{{.*}} : i32
// CHECK:        %[[W:.*]] = arith.select %[[NEG]], %[[WRAP]], %index : i32
// CHECK:        %[[LO:.*]] = arith.maxsi %[[W]], %{{.*}} : i32
// CHECK:        %[[ROW:.*]] = arith.minsi %[[LO]], %{{.*}} : i32
// CHECK:        %[[PX:.*]] = texture.read %in[%gx, %[[ROW]]] : !texture.image2d<2x10xf32>
// CHECK:        texture.write %[[PX]], %out[%gx, %gy] : !texture.image2d<2x6xf32>
// CHECK:      texture.pack %ids {layout = #texture.layout<rows4>} : tensor<2x3xi64> -> !texture.image2d<1x2xf32>

// -----

// Integer Mod (fmod = 0): C remainders of ints, lane by lane, moved to the divisor's
// sign; a zero divisor (as in padding lanes) divides by one instead of trapping.
builtin.module {
  func.func @main_graph(%a: tensor<6xi64>, %b: tensor<6xi64>) -> tensor<6xi64> {
    %m = onnx.Mod %a, %b : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64> loc("mod")
    func.return %m : tensor<6xi64>
  }
}

// CHECK:      ocl.kernel @eltwise_0({{.*}}) attributes {onnx.node = "node 'mod' (Mod)"} {
// CHECK:        %[[A:.*]] = arith.fptosi %{{.*}} : f32 to i32
// CHECK:        %[[B:.*]] = arith.fptosi %{{.*}} : f32 to i32
// CHECK:        %[[Z:.*]] = arith.cmpi eq, %[[B]], %{{.*}} : i32
// CHECK:        %[[D:.*]] = arith.select %[[Z]], %{{.*}}, %[[B]] : i32
// CHECK:        %[[R:.*]] = arith.remsi %[[A]], %[[D]] : i32
// CHECK:        %[[FIX:.*]] = arith.addi %[[R]], %[[D]] : i32
// CHECK:        %[[M:.*]] = arith.select %{{.*}}, %[[FIX]], %[[R]] : i32
// CHECK:        arith.sitofp %[[M]] : i32 to f32
// CHECK:      texture.unpack %m {layout = #texture.layout<rows4>} : !texture.image2d<2x1xf32> -> tensor<6xi64>

// -----

// Range from run-time scalars (start + i * delta, the length from the result type),
// Trilu with a constant diagonal, and a fill of a shape computed at run time.
builtin.module {
  func.func @main_graph(%s: tensor<i64>, %d: tensor<i64>, %x: tensor<3x5xf32>, %shape: tensor<2xi64>) -> (tensor<6xi64>, tensor<3x5xf32>, tensor<2x4xi1>) {
    %l = onnx.Constant {value = dense<20> : tensor<i64>} : tensor<i64>
    %r = onnx.Range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<6xi64> loc("range")
    %k = onnx.Constant {value = dense<-1> : tensor<i64>} : tensor<i64>
    %t = onnx.Trilu %x, %k {upper = 0 : i64} : (tensor<3x5xf32>, tensor<i64>) -> tensor<3x5xf32> loc("tril")
    %f = onnx.ConstantOfShape %shape {value = dense<true> : tensor<1xi1>} : (tensor<2xi64>) -> tensor<2x4xi1> loc("fill")
    func.return %r, %t, %f : tensor<6xi64>, tensor<3x5xf32>, tensor<2x4xi1>
  }
}

// CHECK:      ocl.kernel @range_0(%out: !texture.image2d<2x1xf32>, %start: !texture.image2d<1x1xf32>, %delta: !texture.image2d<1x1xf32>) attributes {onnx.node = "node 'range' (Range)"} {
// CHECK:        %[[S:.*]] = vector.extract %{{.*}}[0] : f32 from vector<4xf32>
// CHECK:        %[[D:.*]] = vector.extract %{{.*}}[0] : f32 from vector<4xf32>
// CHECK:        %[[I:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK:        math.fma %[[I]], %[[D]], %[[S]] : f32
// CHECK:      ocl.kernel @trilu_1(%out: !texture.image2d<2x3xf32>, %in: !texture.image2d<2x3xf32>) attributes {onnx.node = "node 'tril' (Trilu)"} {
// CHECK:        %[[COL:.*]] = arith.muli %gx, %{{.*}} : i32
// CHECK:        %[[OFF:.*]] = arith.subi %[[COL]], %gy : i32
// CHECK:        %[[KEEP:.*]] = arith.cmpi sle, %[[OFF]], %{{.*}} : i32
// CHECK:        arith.select %[[KEEP]], %{{.*}}, %{{.*}} : f32
// CHECK:      ocl.kernel @fill_2(%out: !texture.image2d<1x2xf32>) attributes {onnx.node = "node 'fill' (ConstantOfShape)"} {
// CHECK-NEXT:   %gx = ocl.global_id 0
// CHECK-NEXT:   %gy = ocl.global_id 1
// CHECK:        %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<4xf32>
// CHECK:        texture.write %[[ONE]], %out[%gx, %gy] : !texture.image2d<1x2xf32>
// CHECK:      func.func @main_graph(
// CHECK-NOT:    texture.pack %shape
// CHECK:        texture.unpack %f {layout = #texture.layout<rows4>} : !texture.image2d<1x2xf32> -> tensor<2x4xi1>
