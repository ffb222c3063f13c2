// The import folds the constant subgraphs that compute shapes, indices and masks
// before it judges the ops: only the ops left at run time need the dialect. The
// models are small versions of what torch (opset 17, dynamo=False) exports.

// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %inputs/make_model.py channel_split split.onnx
// RUN: %python %inputs/make_model.py attention attention.onnx
// RUN: %python %inputs/make_model.py bad_constant bad.onnx

// ShuffleNetV2's channel split: once --dim sizes the batch, Shape -> Gather -> Add
// -> Div -> Mul is a constant (ONNX's data propagation stops at Div), the Slices get
// static ends and shapes, and so does the channel shuffle's Reshape target, made of
// slices of the same Shape. The Shape feeding the last Reshape folds too.
// RUN: mobile-opt split.onnx --dim N=2 | filecheck %s --check-prefix=SPLIT
// RUN: mobile-opt split.onnx --dim N=2 | filecheck %s --check-prefix=SPLIT-GONE
// SPLIT-GONE-NOT: onnx.Shape
// SPLIT-GONE-NOT: onnx.Gather
// SPLIT-GONE-NOT: onnx.Add
// SPLIT-GONE-NOT: onnx.Div
// SPLIT-GONE-NOT: onnx.Mul
// SPLIT-GONE:     func.return
// SPLIT:      func.func @main_graph(%x: tensor<2x8x4x4xf32> {onnx.name = "x"}) -> (tensor<2x8x4x4xf32> {onnx.name = "y"}) {
// SPLIT:      %r = onnx.Relu %x
// SPLIT:      %s = onnx.Constant {value = dense<[2, 8, 4, 4]> : tensor<4xi64>} : tensor<4xi64>
// SPLIT-DAG:  %[[ONE:.*]] = onnx.Constant {value = dense<1> : tensor<1xi64>} : tensor<1xi64>
// SPLIT-DAG:  %[[END1:.*]] = onnx.Constant {value = dense<4> : tensor<1xi64>} : tensor<1xi64>
// SPLIT-DAG:  %[[END2:.*]] = onnx.Constant {value = dense<8> : tensor<1xi64>} : tensor<1xi64>
// SPLIT-DAG:  %[[ZERO:.*]] = onnx.Constant {value = dense<0> : tensor<1xi64>} : tensor<1xi64>
// SPLIT:      %a = onnx.Slice %r, %[[ZERO]], %[[END1]], %[[ONE]], %{{.*}} : {{.*}} -> tensor<2x4x4x4xf32>
// SPLIT-NEXT: %b = onnx.Slice %r, %[[END1]], %[[END2]], %[[ONE]], %{{.*}} : {{.*}} -> tensor<2x4x4x4xf32>
// SPLIT:      %target = onnx.Constant {value = dense<[2, 2, 4, 4, 4]> : tensor<5xi64>} : tensor<5xi64>
// SPLIT-NEXT: %grouped = onnx.Reshape %cat, %target : (tensor<2x8x4x4xf32>, tensor<5xi64>) -> tensor<2x2x4x4x4xf32>
// SPLIT:      %y = onnx.Reshape %shuffled, %s : (tensor<2x4x2x4x4xf32>, tensor<4xi64>) -> tensor<2x8x4x4xf32>

// The folded values follow the dims that --dim gives.
// RUN: mobile-opt split.onnx --dim N=5 | filecheck %s --check-prefix=SPLIT5
// SPLIT5: %target = onnx.Constant {value = dense<[5, 2, 4, 4, 4]> : tensor<5xi64>} : tensor<5xi64>

// The attention block: ViT's Equal/Where over ConstantOfShape that sizes the class
// token's Expand, nn.MultiheadAttention's Mod-ended Shape slices that unflatten the
// packed q/k/v, the 1/sqrt(head dim) scale, and a causal mask from Trilu/Equal/Where.
// None of Equal, Where, Mod, Trilu has a dialect op: all fold. The 7x7 mask is too
// large to print, so it becomes a derived weight file; the weight-only Transpose of
// w_qkv_t stays for onnx-fold-constants.
// RUN: mobile-opt attention.onnx | filecheck %s --check-prefix=ATTN
// RUN: mobile-opt attention.onnx | filecheck %s --check-prefix=ATTN-GONE
// ATTN-GONE-NOT: onnx.Shape
// ATTN-GONE-NOT: onnx.ConstantOfShape
// ATTN-GONE-NOT: onnx.Equal
// ATTN-GONE-NOT: onnx.Where
// ATTN-GONE-NOT: onnx.Mod
// ATTN-GONE-NOT: onnx.Trilu
// ATTN-GONE-NOT: onnx.Expand
// ATTN-GONE-NOT: onnx.Cast
// ATTN-GONE-NOT: onnx.Sqrt
// ATTN-GONE-NOT: onnx.Div
// ATTN-GONE:     func.return
// ATTN:      func.func @main_graph(%x: tensor<1x6x8xf32> {onnx.name = "x"}) -> (tensor<1x7x8xf32> {onnx.name = "y"}) {
// ATTN-NEXT:   %w_qkv_t = onnx.Weight {store = "{{/.*}}/attention.onnx", key = "w_qkv_t"} : tensor<24x8xf32>
// ATTN-NEXT:   %cls = onnx.Constant {value = dense<{{.*}}> : tensor<1x1x8xf32>} : tensor<1x1x8xf32>
// ATTN-NEXT:   %seq = onnx.Concat %cls, %x {axis = 1 : i64} : (tensor<1x1x8xf32>, tensor<1x6x8xf32>) -> tensor<1x7x8xf32>
// ATTN-NEXT:   %w_qkv = onnx.Transpose %w_qkv_t {perm = array<i64: 1, 0>} : (tensor<24x8xf32>) -> tensor<8x24xf32>
// ATTN-NEXT:   %qkv = onnx.MatMul %seq, %w_qkv
// ATTN-NEXT:   %unflat = onnx.Constant {value = dense<[1, 7, 3, 8]> : tensor<4xi64>} : tensor<4xi64>
// ATTN-NEXT:   %qkv4 = onnx.Reshape %qkv, %unflat : (tensor<1x7x24xf32>, tensor<4xi64>) -> tensor<1x7x3x8xf32>
// ATTN:        %scale = onnx.Constant {value = dense<0.353553385> : tensor<f32>} : tensor<f32>
// ATTN:        %scaled = onnx.Mul %raw, %scale : (tensor<1x7x7xf32>, tensor<f32>) -> tensor<1x7x7xf32>
// ATTN-NEXT:   %mask = onnx.Weight {store = "{{/.*}}/[[DIGEST:[0-9a-f]+]].npy", key = "[[DIGEST]]"} : tensor<7x7xf32>
// ATTN-NEXT:   %masked = onnx.Add %scaled, %mask
// ATTN-NEXT:   %p = onnx.Softmax %masked
// ATTN-NEXT:   %y = onnx.MatMul %p, %v
// ATTN-NEXT:   func.return %y : tensor<1x7x8xf32>

// A folded value is in no model file: with --inline-limit 0 every folded value is a
// derived weight file, while the model's own constants still name the model.
// RUN: mobile-translate --import-onnx attention.onnx --inline-limit 0 | filecheck %s --check-prefix=STORE
// STORE: %cls = onnx.Weight {store = "{{/.*}}.npy", key = "{{[0-9a-f]+}}"} : tensor<1x1x8xf32>
// STORE: %unflat = onnx.Weight {store = "{{/.*}}.npy", key = "{{[0-9a-f]+}}"} : tensor<4xi64>
// STORE: %i0 = onnx.Weight {store = "{{/.*}}/attention.onnx", key = "i0"} : tensor<i64>
// STORE: %scale = onnx.Weight {store = "{{/.*}}.npy", key = "{{[0-9a-f]+}}"} : tensor<f32>

// The derived weights are what the numpy reference reads: it matches onnxruntime.
// RUN: %python -m mobile_opt.tools.mobile_run --reference attention.onnx | filecheck %s --check-prefix=REF
// RUN: %python -m mobile_opt.tools.mobile_run --reference split.onnx --dim N=3 | filecheck %s --check-prefix=REF
// REF: y {{ +}}[{{.*}}] {{.*}} PASS

// A value the import must fold but cannot compute is one line that names the node
// that failed.
// RUN: %python %inputs/exit_status.py mobile-opt bad.onnx | filecheck %s --check-prefix=BAD
// BAD:      [output]
// BAD-NEXT: mobile-opt: error: bad.onnx: node 'bad_reshape' (Reshape): cannot be computed at import (cannot reshape array of size 6 into shape (4,2))
// BAD-NEXT: [exit status 1]
