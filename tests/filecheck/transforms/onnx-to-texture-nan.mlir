// RUN: mobile-opt %s --split-input-file -p select-layouts,onnx-to-texture | filecheck %s
// RUN: mobile-opt %s --split-input-file -p select-layouts,onnx-to-texture,texture-to-ocl -t opencl | filecheck %s --check-prefix=OCL

// A max reduction's loop carries fmax (arith.maxnumf) and, beside it, the sum of
// min(|x|, 0), 0 or NaN: added at the end, it makes the max NaN where a NaN met it.
// Softmax's max is fmax alone (a NaN makes its row NaN either way).
// CHECK:      ocl.kernel @reduce_0(
// CHECK:        scf.for
// CHECK:          %[[M:.*]] = arith.maxnumf
// CHECK-NEXT:     %[[A:.*]] = math.absf
// CHECK-NEXT:     %[[N:.*]] = arith.minimumf %[[A]]
// CHECK-NEXT:     %{{.*}} = arith.addf %{{.*}}, %[[N]]
// CHECK:        ocl.kernel @softmax_1(
// CHECK-NOT:      math.absf
// CHECK:          arith.maxnumf
// CHECK-NOT:      math.absf
// CHECK:        func.func @main_graph
// OCL:          __kernel void reduce_0(
// OCL:            = fmax(
// OCL-NEXT:       = fabs(
// OCL-NEXT:       const float4 [[N:[a-z0-9_]+]] = select([[A:[a-z0-9_]+]], ((float4)(0.0f)), [[A]] > ((float4)(0.0f)));
builtin.module {
  func.func @main_graph(%x: tensor<1x8x3x40xf32>) -> (tensor<1x8x3x1xf32>, tensor<1x8x3x40xf32>) {
    %axes = onnx.Constant {value = dense<3> : tensor<1xi64>} : tensor<1xi64>
    %m = onnx.ReduceMax %x, %axes : (tensor<1x8x3x40xf32>, tensor<1xi64>) -> tensor<1x8x3x1xf32> loc("max")
    %s = onnx.Softmax %x {axis = 3 : i64} : (tensor<1x8x3x40xf32>) -> tensor<1x8x3x40xf32> loc("softmax")
    func.return %m, %s : tensor<1x8x3x1xf32>, tensor<1x8x3x40xf32>
  }
}
