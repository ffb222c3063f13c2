// RUN: mobile-opt %s --split-input-file -p select-layouts,onnx-to-texture | filecheck %s

// onnx-to-texture runs an elementwise op in its producer's kernel, except where
// flashmem-fuse split the two apart (`flashmem.split` on both): then each is a kernel.

// CHECK:      ocl.kernel @conv_0({{.*}}) attributes {onnx.node = "node 'conv' (Conv)"}
// CHECK:      ocl.kernel @eltwise_1({{.*}}) attributes {onnx.node = "node 'relu' (Relu)"}
// CHECK:      func.func @main_graph
// CHECK:        ocl.launch @conv_0
// CHECK:        ocl.launch @eltwise_1
builtin.module {
  func.func @main_graph(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
    %w = onnx.Weight {store = "weights.onnx", key = "w"} : tensor<4x4x1x1xf32>
    %none = onnx.None
    %c = onnx.Conv %x, %w, %none {flashmem.split = "capacity 0 -> 1 + 1 chunks", kernel_shape = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>, none) -> tensor<1x4x4x4xf32> loc("conv")
    %y = onnx.Relu %c {flashmem.split = "capacity 0 -> 1 + 1 chunks"} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> loc("relu")
    func.return %y : tensor<1x4x4x4xf32>
  }
}

// -----

// Without the split the Relu runs in the Conv's kernel.
// CHECK:      ocl.kernel @conv_0({{.*}}) attributes {onnx.node = "node 'conv' (Conv) + node 'relu' (Relu)"}
// CHECK-NOT:  ocl.kernel
// CHECK:      func.func @main_graph
builtin.module {
  func.func @main_graph(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
    %w = onnx.Weight {store = "weights.onnx", key = "w"} : tensor<4x4x1x1xf32>
    %none = onnx.None
    %c = onnx.Conv %x, %w, %none {kernel_shape = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>, none) -> tensor<1x4x4x4xf32> loc("conv")
    %y = onnx.Relu %c : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> loc("relu")
    func.return %y : tensor<1x4x4x4xf32>
  }
}
