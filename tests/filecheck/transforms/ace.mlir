// RUN: mobile-opt %s -p select-layouts,onnx-to-texture,texture-to-ocl,cse,ace -t opencl | filecheck %s
// RUN: mobile-opt %s -p select-layouts,onnx-to-texture,texture-to-ocl,cse -t opencl | filecheck %s --check-prefix=BEFORE

// Without ace the row offset h - 1 is recomputed in the kh loop and w - 1 in the kw loop.
// BEFORE:      for (int kh = 0; kh < 3; kh++) {
// BEFORE-NEXT:   const int [[ROW:v[0-9]+]] = h - 1;
// BEFORE:        for (int kw = 0; kw < 3; kw++) {
// BEFORE-NEXT:     const int {{v[0-9]+}} = w0 - 1;

// With ace every loop-invariant piece of address arithmetic is computed once, before the
// outermost loop it does not depend on (out of the `if` that guards the row too).
// CHECK:      const int [[ROW:v[0-9]+]] = h - 1;
// CHECK:      const int [[COL:v[0-9]+]] = w0 - 1;
// CHECK:      const int [[BASE:v[0-9]+]] = n * 16;
// CHECK:      for (int kh = 0; kh < 3; kh++) {
// CHECK-NEXT:   const int [[Y:v[0-9]+]] = [[ROW]] + kh;
// CHECK-NOT:    - 1;
// CHECK:        for (int kw = 0; kw < 3; kw++) {
// CHECK-NEXT:     const int {{v[0-9]+}} = [[COL]] + kw;
// CHECK-NOT:  n * 16

builtin.module {
  func.func @main_graph(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
    %w = onnx.Constant {value = dense<0.5> : tensor<8x8x3x3xf32>} : tensor<8x8x3x3xf32>
    %none = onnx.None
    %y = onnx.Conv %x, %w, %none {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x16x16xf32>
    func.return %y : tensor<1x8x16x16xf32>
  }
}
