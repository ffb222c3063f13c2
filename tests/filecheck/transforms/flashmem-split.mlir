// RUN: mobile-opt %s -p 'flashmem-split{max-weight-mb=0.0005}' | filecheck %s
// RUN: mobile-opt %s -p 'flashmem-split{max-weight-mb=0.01}' | filecheck %s --check-prefix=WHOLE
// RUN: not mobile-opt %s -p 'flashmem-split' 2>&1 | filecheck %s --check-prefix=NOLIMIT

// flashmem-split: the 1280-byte weight is over 0.0005 MiB (524 bytes), so it is cut into
// three blocks of whole pixels (16, 16 and 8 columns), each read by a MatMul of its own;
// a Concat on the last axis joins them. The activation input is not a weight: that MatMul
// stays.

// CHECK:      func.func @main_graph(%x: tensor<2x8xf32>, %y: tensor<8x40xf32>)
// CHECK:        %w = onnx.Weight {store = "m.onnx", key = "w"} : tensor<8x40xf32>
// CHECK:        %[[S0:.*]] = onnx.Slice %w, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} -> tensor<8x16xf32>
// CHECK-NEXT:   %[[M0:.*]] = onnx.MatMul %x, %[[S0]] : {{.*}} -> tensor<2x16xf32>
// CHECK:        %[[S1:.*]] = onnx.Slice %w, {{.*}} -> tensor<8x16xf32>
// CHECK-NEXT:   %[[M1:.*]] = onnx.MatMul %x, %[[S1]] : {{.*}} -> tensor<2x16xf32>
// CHECK:        %[[S2:.*]] = onnx.Slice %w, {{.*}} -> tensor<8x8xf32>
// CHECK-NEXT:   %[[M2:.*]] = onnx.MatMul %x, %[[S2]] : {{.*}} -> tensor<2x8xf32>
// CHECK-NEXT:   %p = onnx.Concat %[[M0]], %[[M1]], %[[M2]] {axis = 1 : i64} : {{.*}} -> tensor<2x40xf32>
// CHECK-NEXT:   %q = onnx.MatMul %x, %y : {{.*}} -> tensor<2x40xf32>
// CHECK-NEXT:   %s = onnx.Add %p, %q

// WHOLE-NOT:  onnx.Slice
// WHOLE:      onnx.MatMul %x, %w

// NOLIMIT: error: {{.*}}flashmem-split: max-weight-mb is required and positive

func.func @main_graph(%x: tensor<2x8xf32>, %y: tensor<8x40xf32>) -> tensor<2x40xf32> {
  %w = onnx.Weight {store = "m.onnx", key = "w"} : tensor<8x40xf32>
  %p = onnx.MatMul %x, %w : (tensor<2x8xf32>, tensor<8x40xf32>) -> tensor<2x40xf32>
  %q = onnx.MatMul %x, %y : (tensor<2x8xf32>, tensor<8x40xf32>) -> tensor<2x40xf32>
  %s = onnx.Add %p, %q : (tensor<2x40xf32>, tensor<2x40xf32>) -> tensor<2x40xf32>
  func.return %s : tensor<2x40xf32>
}
