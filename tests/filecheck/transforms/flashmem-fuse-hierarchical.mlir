// flashmem-fuse keeps hierarchical ops whole (§4.3's rule 2): LayerNormalization and
// Softmax move nothing (capacity 0, §4.2), and are never split or split off, even where
// the plan moves chunks over their capacity. 1 KiB chunks: a FusedMatMul{act} with bias
// may move 4 chunks (its MatMul's 20 % of what it reads), split 4 + 24 (the activation's
// 300 % of 8 KiB).

// At 0.077 MiB the plan breaks C3 at both hierarchical layers and at the FusedMatMuls
// before the LayerNormalization and after the Softmax; splitting those two gives the
// capacity for a plan within C3. Each split peels the activation off; the bias stays with
// its product. The hierarchical ops, and h1 between them, stay whole.
// RUN: mobile-opt %s -p 'flashmem-fuse{budget-mb=0.077 chunk-kb=1}' --explain 2>&1 | filecheck %s
// CHECK:      flashmem-fuse @main_graph: 6 layers, plan cp-sat, C3 relaxed (optimal), {{.*}}, 24 chunks over capacity ('h0' 4, 'n0' 8, 's1' 8, 'h2' 4)
// CHECK-NEXT:   round 1: split layer 1 ('h0'): capacity 4 -> 4 + 24 chunks, alpha 0.2; penalty {{.*}}
// CHECK-NEXT:   round 1: split layer 5 ('h2'): capacity 4 -> 4 + 24 chunks, alpha 0.2; penalty {{.*}}
// CHECK-NEXT:   round 1: 8 layers, plan cp-sat (optimal), {{.*}}, 0 chunks over capacity
// CHECK:      %h0_matmul = onnx.FusedMatMul %x, %w0, %b0 {flashmem.split = "{{.*}}"} : (tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<32x64xf32>
// CHECK-NEXT: %h0 = onnx.Relu %h0_matmul {flashmem.split = "{{.*}}"}
// CHECK-NEXT: %n0 = onnx.LayerNormalization %h0, %g, %be :
// CHECK-NEXT: %h1 = onnx.FusedMatMul %n0, %w1, %b1 {activation = "Relu"}
// CHECK-NEXT: %s1 = onnx.Softmax %h1 :
// CHECK-NEXT: %h2_matmul = onnx.FusedMatMul %s1, %w2, %b2 {flashmem.split = "{{.*}}"}
// CHECK-NEXT: %h2 = onnx.Sigmoid %h2_matmul {flashmem.split = "{{.*}}"}
// CHECK-NEXT: %y = onnx.MatMul %h2, %w3 :
// CHECK-NEXT: func.return %y

builtin.module {
  func.func @main_graph(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
    %w0 = onnx.Weight {store = "weights.onnx", key = "w0"} : tensor<64x64xf32>
    %b0 = onnx.Weight {store = "weights.onnx", key = "b0"} : tensor<64xf32>
    %g = onnx.Weight {store = "weights.onnx", key = "g"} : tensor<64xf32>
    %be = onnx.Weight {store = "weights.onnx", key = "be"} : tensor<64xf32>
    %w1 = onnx.Weight {store = "weights.onnx", key = "w1"} : tensor<64x64xf32>
    %b1 = onnx.Weight {store = "weights.onnx", key = "b1"} : tensor<64xf32>
    %w2 = onnx.Weight {store = "weights.onnx", key = "w2"} : tensor<64x64xf32>
    %b2 = onnx.Weight {store = "weights.onnx", key = "b2"} : tensor<64xf32>
    %w3 = onnx.Weight {store = "weights.onnx", key = "w3"} : tensor<64x64xf32>
    %h0 = onnx.FusedMatMul %x, %w0, %b0 {activation = "Relu"} : (tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<32x64xf32>
    %n0 = onnx.LayerNormalization %h0, %g, %be : (tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<32x64xf32>
    %h1 = onnx.FusedMatMul %n0, %w1, %b1 {activation = "Relu"} : (tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<32x64xf32>
    %s1 = onnx.Softmax %h1 : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %h2 = onnx.FusedMatMul %s1, %w2, %b2 {activation = "Sigmoid"} : (tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<32x64xf32>
    %y = onnx.MatMul %h2, %w3 : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    func.return %y : tensor<32x64xf32>
  }
}
