// RUN: mobile-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// RUN: mobile-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s --check-prefix=NOPASS

// Every chunk fails: no module is printed in custom form.
// NOPASS-NOT: {{^}}builtin.module

// Staging buffers hold bytes.
%s = "test.op"() : () -> !stream.staging<0>

// CHECK: stream.staging: size 0 is not positive

// -----

// A chunk range: chunks of a weight's pixel storage, cut between its channels,
// non-empty, within the storage's T(w) chunks.
"test.op"() {c = #stream.chunks<!texture.image2d<1x1xf32>, size = 0, first = 0, count = 1>} : () -> ()

// CHECK: stream.chunks: chunk size 0 is not positive

// -----

"test.op"() {c = #stream.chunks<!texture.image2d<1x1xf32>, size = 6, first = 0, count = 1>} : () -> ()

// CHECK: stream.chunks: chunk size 6 cuts the 4-byte channels of !texture.image2d<1x1xf32>; it must be a multiple of 4

// -----

// f16 channels are 2 bytes.
"test.op"() {c = #stream.chunks<!texture.buffer2d<1x1xf16>, size = 3, first = 0, count = 1>} : () -> ()

// CHECK: stream.chunks: chunk size 3 cuts the 2-byte channels of !texture.buffer2d<1x1xf16>; it must be a multiple of 2

// -----

"test.op"() {c = #stream.chunks<!texture.image2d<1x1xf32>, size = 4, first = 0, count = 0>} : () -> ()

// CHECK: stream.chunks: moves no chunk (count 0)

// -----

"test.op"() {c = #stream.chunks<!texture.image2d<1x1xf32>, size = 4, first = -1, count = 1>} : () -> ()

// CHECK: stream.chunks: first chunk -1 is negative

// -----

// 72x4 f32 pixels are 4608 bytes; in 1024-byte chunks: five chunks, 0..4.
"test.op"() {c = #stream.chunks<!texture.image2d<72x4xf32>, size = 1024, first = 3, count = 3>} : () -> ()

// CHECK: stream.chunks: chunks 3..5 lie beyond the 5 chunks of 1024 bytes that hold !texture.image2d<72x4xf32> (4608 bytes)

// -----

// Chunks are of the pixels, not of the tensor.
"test.op"() {c = #stream.chunks<tensor<16xf32>, size = 4, first = 0, count = 1>} : () -> ()

// CHECK: stream.chunks: chunks are of a weight's pixel storage, not tensor<16xf32>

// -----

"test.op"() {c = #stream.chunks<!texture.image2d<1x1xf32>, size = 4, count = 1>} : () -> ()

// CHECK: Expected 'first'

// -----

// A weight's plan: FlashMem's constraints on one weight.
"test.op"() {p = #stream.weight_plan<stream, chunks = 0, load = 1, use = 3, moves = [1: 0]>} : () -> ()

// CHECK: stream.weight_plan: a weight has chunks, not 0

// -----

"test.op"() {p = #stream.weight_plan<preload, chunks = 2, load = 0, use = 0, moves = [0: 2]>} : () -> ()

// CHECK: stream.weight_plan: the first reader is a kernel, layer 1 or later, not 0

// -----

"test.op"() {p = #stream.weight_plan<stream, chunks = 2, load = 1, use = 3, moves = []>} : () -> ()

// CHECK: stream.weight_plan: moves no chunk

// -----

// x_{w,l} >= 0, and a layer that moves nothing is left out.
"test.op"() {p = #stream.weight_plan<stream, chunks = 2, load = 1, use = 3, moves = [1: 2, 2: 0]>} : () -> ()

// CHECK: stream.weight_plan: a move takes one chunk or more, not 0

// -----

"test.op"() {p = #stream.weight_plan<stream, chunks = 2, load = 1, use = 3, moves = [1: 3, 2: -1]>} : () -> ()

// CHECK: stream.weight_plan: a move takes one chunk or more, not -1

// -----

"test.op"() {p = #stream.weight_plan<stream, chunks = 4, load = 1, use = 5, moves = [2: 2, 1: 2]>} : () -> ()

// CHECK: stream.weight_plan: move layers [2, 1] are not strictly increasing

// -----

"test.op"() {p = #stream.weight_plan<stream, chunks = 4, load = 1, use = 5, moves = [2: 2, 2: 2]>} : () -> ()

// CHECK: stream.weight_plan: move layers [2, 2] are not strictly increasing

// -----

// (C0) every chunk moves exactly once.
"test.op"() {p = #stream.weight_plan<stream, chunks = 5, load = 1, use = 3, moves = [1: 2, 2: 2]>} : () -> ()

// CHECK: stream.weight_plan: moves 4 chunks, but the weight has 5

// -----

// All chunks are in the texture before the first kernel that reads it.
"test.op"() {p = #stream.weight_plan<stream, chunks = 5, load = 1, use = 3, moves = [1: 2, 3: 3]>} : () -> ()

// CHECK: stream.weight_plan: moves chunks at layer 3, not before their first reader at layer 3

// -----

// A weight first read by layer 1 cannot stream: nothing runs before it.
"test.op"() {p = #stream.weight_plan<stream, chunks = 1, load = 1, use = 1, moves = [1: 1]>} : () -> ()

// CHECK: stream.weight_plan: moves chunks at layer 1, not before their first reader at layer 1

// -----

// A preloaded weight (the set W) loads and moves everything at layer 0.
"test.op"() {p = #stream.weight_plan<preload, chunks = 4, load = 0, use = 3, moves = [0: 2, 1: 2]>} : () -> ()

// CHECK: stream.weight_plan: a preloaded weight loads and moves all its chunks at layer 0

// -----

"test.op"() {p = #stream.weight_plan<preload, chunks = 4, load = 1, use = 3, moves = [1: 4]>} : () -> ()

// CHECK: stream.weight_plan: a preloaded weight loads and moves all its chunks at layer 0

// -----

"test.op"() {p = #stream.weight_plan<stream, chunks = 4, load = 0, use = 3, moves = [0: 4]>} : () -> ()

// CHECK: stream.weight_plan: a streamed weight loads at layer 1 or later, not 0

// -----

// (C1) no chunk moves before the weight is loaded: z_w <= l wherever x_{w,l} >= 1.
"test.op"() {p = #stream.weight_plan<stream, chunks = 4, load = 2, use = 4, moves = [1: 1, 3: 3]>} : () -> ()

// CHECK: stream.weight_plan: moves chunks at layer 1, before its load at layer 2

// -----

"test.op"() {p = #stream.weight_plan<streamed, chunks = 4, load = 2, use = 4, moves = [2: 4]>} : () -> ()

// CHECK: Expected `preload`, or `stream`.

// -----

"test.op"() {p = #stream.weight_plan<stream, chunks = 4, load = 2, use = 4, moves = [2 4]>} : () -> ()

// CHECK: Expected ':'

// -----

// The module's plan: positive chunk size, budget and layer count.
"test.op"() {p = #stream.plan<chunk = 0, budget = 4096, layers = 3, status = optimal>} : () -> ()

// CHECK: stream.plan: chunk is positive, not 0

// -----

"test.op"() {p = #stream.plan<chunk = 1024, budget = -1, layers = 3, status = optimal>} : () -> ()

// CHECK: stream.plan: budget is positive, not -1

// -----

"test.op"() {p = #stream.plan<chunk = 1024, budget = 4096, layers = 0, status = optimal>} : () -> ()

// CHECK: stream.plan: layers is positive, not 0

// -----

"test.op"() {p = #stream.plan<chunk = 1024, budget = 4096, layers = 3, status = unknown>} : () -> ()

// CHECK: Expected `optimal`, `feasible`, or `heuristic`.

// -----

"test.op"() {d = #stream.decision<maybe>} : () -> ()

// CHECK: Expected `preload`, or `stream`.

// -----

"test.op"() {s = #stream.status<infeasible>} : () -> ()

// CHECK: Expected `optimal`, `feasible`, or `heuristic`.

// -----

// stream.load: the staging buffer holds exactly the chunks' bytes (the last chunk is short).
%w = onnx.Weight {store = "/models/net.onnx", key = "conv.weight"} : tensor<16x8x3x3xf32>
%s = stream.load %w {chunks = #stream.chunks<!texture.image2d<72x4xf32>, size = 1024, first = 2, count = 3>, layout = #texture.layout<oihw4o>} : tensor<16x8x3x3xf32> -> !stream.staging<3072>

// CHECK: stream.load: a staging buffer of chunks 2..4 of !texture.image2d<72x4xf32> holds 2560 bytes, not 3072

// -----

// The chunk size is the module plan's S.
builtin.module attributes {stream.plan = #stream.plan<chunk = 1024, budget = 4096, layers = 3, status = optimal>} {
  %w = onnx.Weight {store = "/models/net.onnx", key = "conv.weight"} : tensor<16x8x3x3xf32>
  %s = stream.load %w {chunks = #stream.chunks<!texture.image2d<72x4xf32>, size = 2048, first = 0, count = 1>, layout = #texture.layout<oihw4o>} : tensor<16x8x3x3xf32> -> !stream.staging<2048>
}

// CHECK: stream.load: chunk size 2048 differs from the 1024 of the module's stream.plan

// -----

// It streams a constant, not a value the graph computes.
func.func @f(%w: tensor<16xf32>) {
  %s = stream.load %w {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>, layout = #texture.layout<rows4>} : tensor<16xf32> -> !stream.staging<64>
  func.return
}

// CHECK: stream.load: streams a constant (an onnx.Weight or host ops over constants), not a value computed at run time

// -----

// Host ops are constant only over constants.
func.func @f(%x: tensor<16xf32>) {
  %w = onnx.Weight {store = "/models/net.onnx", key = "w"} : tensor<16xf32>
  %sum = onnx.Add %w, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %s = stream.load %sum {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>, layout = #texture.layout<rows4>} : tensor<16xf32> -> !stream.staging<64>
  func.return
}

// CHECK: stream.load: streams a constant (an onnx.Weight or host ops over constants), not a value computed at run time

// -----

// The chunks' storage is the whole weight's, in the layout's size.
%w = onnx.Weight {store = "/models/net.onnx", key = "w"} : tensor<16xf32>
%s = stream.load %w {chunks = #stream.chunks<!texture.image2d<2x1xf32>, size = 32, first = 0, count = 1>, layout = #texture.layout<rows4>} : tensor<16xf32> -> !stream.staging<32>

// CHECK: stream.load: a [16] weight in rows4 takes 4x1 pixels, not 2x1

// -----

%w = onnx.Weight {store = "/models/net.onnx", key = "w"} : tensor<16xf32>
%s = stream.load %w {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>, layout = #texture.layout<oihw4o>} : tensor<16xf32> -> !stream.staging<64>

// CHECK: stream.load: layout oihw4o needs a rank-4 tensor, got rank 1

// -----

// Integer weights go into f32 pixels; f64 ones into none.
%w = onnx.Weight {store = "/models/net.onnx", key = "ids"} : tensor<16xi32>
%s = stream.load %w {chunks = #stream.chunks<!texture.image2d<4x1xf16>, size = 32, first = 0, count = 1>, layout = #texture.layout<rows4>} : tensor<16xi32> -> !stream.staging<32>

// CHECK: stream.load: integer tensors live in f32 pixels

// -----

%w = onnx.Weight {store = "/models/net.onnx", key = "w"} : tensor<16xf64>
%s = stream.load %w {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>, layout = #texture.layout<rows4>} : tensor<16xf64> -> !stream.staging<64>

// CHECK: stream.load: only float, integer and boolean tensors go into images

// -----

%w = onnx.Weight {store = "/models/net.onnx", key = "w"} : tensor<16xf32>
%s = "stream.load"(%w) <{layout = #texture.layout<rows4>}> : (tensor<16xf32>) -> !stream.staging<64>

// CHECK: property 'chunks' expected in operation 'stream.load'

// -----

%w = onnx.Weight {store = "/models/net.onnx", key = "w"} : tensor<16xf32>
%s = "stream.load"(%w) <{chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>}> : (tensor<16xf32>) -> !stream.staging<64>

// CHECK: property 'layout' expected in operation 'stream.load'

// -----

%w = onnx.Weight {store = "/models/net.onnx", key = "w"} : tensor<16xf32>
%s = "stream.load"(%w) <{chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>, layout = #texture.layout<rows4>}> : (tensor<16xf32>) -> !stream.token

// CHECK:      result 'staging' at position 0 does not verify:
// CHECK-NEXT: !stream.token should be of base attribute stream.staging

// -----

%w = "test.op"() : () -> !texture.image2d<4x1xf32>
%s = "stream.load"(%w) <{chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>, layout = #texture.layout<rows4>}> : (!texture.image2d<4x1xf32>) -> !stream.staging<64>

// CHECK:      operand 'weight' at position 0 does not verify:
// CHECK-NEXT: !texture.image2d<4x1xf32> should be of base attribute tensor

// -----

// stream.transform: the same byte count rule, for the staging buffer it reads.
%s = "test.op"() : () -> !stream.staging<64>
%img = "test.op"() : () -> !texture.image2d<4x1xf32>
%t = stream.transform %s, %img {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 32, first = 1, count = 1>} : !stream.staging<64>, !texture.image2d<4x1xf32>
stream.wait %t

// CHECK: stream.transform: a staging buffer of chunk 1 of !texture.image2d<4x1xf32> holds 32 bytes, not 64

// -----

builtin.module attributes {stream.plan = #stream.plan<chunk = 1024, budget = 4096, layers = 3, status = optimal>} {
  %s = "test.op"() : () -> !stream.staging<64>
  %img = "test.op"() : () -> !texture.image2d<4x1xf32>
  %t = stream.transform %s, %img {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>} : !stream.staging<64>, !texture.image2d<4x1xf32>
  stream.wait %t
}

// CHECK: stream.transform: chunk size 64 differs from the 1024 of the module's stream.plan

// -----

// It writes into storage of its chunks' type: size, element and kind.
%s = "test.op"() : () -> !stream.staging<64>
%img = "test.op"() : () -> !texture.image2d<2x1xf32>
%t = stream.transform %s, %img {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>} : !stream.staging<64>, !texture.image2d<2x1xf32>
stream.wait %t

// CHECK: stream.transform: moves chunks of !texture.image2d<4x1xf32> into !texture.image2d<2x1xf32>

// -----

%s = "test.op"() : () -> !stream.staging<64>
%img = "test.op"() : () -> !texture.image2d<4x1xf16>
%t = stream.transform %s, %img {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>} : !stream.staging<64>, !texture.image2d<4x1xf16>
stream.wait %t

// CHECK: stream.transform: moves chunks of !texture.image2d<4x1xf32> into !texture.image2d<4x1xf16>

// -----

%s = "test.op"() : () -> !stream.staging<64>
%img = "test.op"() : () -> !texture.buffer2d<4x1xf32>
%t = stream.transform %s, %img {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>} : !stream.staging<64>, !texture.buffer2d<4x1xf32>
stream.wait %t

// CHECK: stream.transform: moves chunks of !texture.image2d<4x1xf32> into !texture.buffer2d<4x1xf32>

// -----

// It moves the chunks its load read.
%w = onnx.Weight {store = "/models/net.onnx", key = "w"} : tensor<16xf32>
%s = stream.load %w {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 32, first = 0, count = 1>, layout = #texture.layout<rows4>} : tensor<16xf32> -> !stream.staging<32>
%img = "test.op"() : () -> !texture.image2d<4x1xf32>
%t = stream.transform %s, %img {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 32, first = 1, count = 1>} : !stream.staging<32>, !texture.image2d<4x1xf32>
stream.wait %t

// CHECK: stream.transform: moves chunk 1 of !texture.image2d<4x1xf32>, but its staging buffer holds chunk 0 of !texture.image2d<4x1xf32>

// -----

// All the chunks a texture gets come from one weight in one layout.
%w = onnx.Weight {store = "/models/net.onnx", key = "w"} : tensor<16xf32>
%v = onnx.Weight {store = "/models/net.onnx", key = "v"} : tensor<16xf32>
%img = "test.op"() : () -> !texture.image2d<4x1xf32>
%s = stream.load %w {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 32, first = 0, count = 1>, layout = #texture.layout<rows4>} : tensor<16xf32> -> !stream.staging<32>
%t = stream.transform %s, %img {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 32, first = 0, count = 1>} : !stream.staging<32>, !texture.image2d<4x1xf32>
%s2 = stream.load %v {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 32, first = 1, count = 1>, layout = #texture.layout<rows4>} : tensor<16xf32> -> !stream.staging<32>
%t2 = stream.transform %s2, %img {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 32, first = 1, count = 1>} : !stream.staging<32>, !texture.image2d<4x1xf32>
stream.wait %t, %t2

// CHECK: stream.transform: fills a texture that other transforms fill from another weight or layout

// -----

%w = onnx.Weight {store = "/models/net.onnx", key = "w"} : tensor<16xf32>
%s = stream.load %w {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 32, first = 0, count = 1>, layout = #texture.layout<rows4>} : tensor<16xf32> -> !stream.staging<32>
%img = "test.op"() : () -> !texture.image2d<2x1xf32>
%t = stream.transform %s, %img {chunks = #stream.chunks<!texture.image2d<2x1xf32>, size = 32, first = 0, count = 1>} : !stream.staging<32>, !texture.image2d<2x1xf32>
stream.wait %t

// CHECK: stream.transform: moves chunk 0 of !texture.image2d<2x1xf32>, but its staging buffer holds chunk 0 of !texture.image2d<4x1xf32>

// -----

// Its token is waited on, after it, in its block.
%s = "test.op"() : () -> !stream.staging<64>
%img = "test.op"() : () -> !texture.image2d<4x1xf32>
%t = stream.transform %s, %img {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>} : !stream.staging<64>, !texture.image2d<4x1xf32>
"test.op"(%img) : (!texture.image2d<4x1xf32>) -> ()

// CHECK: stream.transform: no stream.wait after it in its block takes its token

// -----

// No kernel reads the texture before the wait on every transform that fills it.
ocl.kernel @k(%w: !texture.image2d<4x1xf32>) {
  ocl.return
}
func.func @host() {
  %s0 = "test.op"() : () -> !stream.staging<32>
  %s1 = "test.op"() : () -> !stream.staging<32>
  %img = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 16>} : !texture.image2d<4x1xf32>
  %t0 = stream.transform %s0, %img {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 32, first = 0, count = 1>} : !stream.staging<32>, !texture.image2d<4x1xf32>
  %t1 = stream.transform %s1, %img {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 32, first = 1, count = 1>} : !stream.staging<32>, !texture.image2d<4x1xf32>
  stream.wait %t0
  ocl.launch @k(%img) {global_size = array<i64: 4, 1>} : !texture.image2d<4x1xf32>
  stream.wait %t1
  func.return
}

// CHECK: stream.transform: ocl.launch uses the texture before the stream.wait on this transform's token

// -----

// ... nor before the transform.
ocl.kernel @k(%w: !texture.image2d<4x1xf32>) {
  ocl.return
}
func.func @host() {
  %s = "test.op"() : () -> !stream.staging<64>
  %img = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 16>} : !texture.image2d<4x1xf32>
  ocl.launch @k(%img) {global_size = array<i64: 4, 1>} : !texture.image2d<4x1xf32>
  %t = stream.transform %s, %img {chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>} : !stream.staging<64>, !texture.image2d<4x1xf32>
  stream.wait %t
  func.return
}

// CHECK: stream.transform: ocl.launch uses the texture before the stream.wait on this transform's token

// -----

%s = "test.op"() : () -> !stream.staging<64>
%img = "test.op"() : () -> tensor<16xf32>
%t = "stream.transform"(%s, %img) <{chunks = #stream.chunks<!texture.image2d<4x1xf32>, size = 64, first = 0, count = 1>}> : (!stream.staging<64>, tensor<16xf32>) -> !stream.token

// CHECK:      operand 'dest' at position 1 does not verify:
// CHECK-NEXT: Unexpected attribute tensor<16xf32>

// -----

%s = "test.op"() : () -> !stream.staging<64>
%img = "test.op"() : () -> !texture.image2d<4x1xf32>
%t = "stream.transform"(%s, %img) : (!stream.staging<64>, !texture.image2d<4x1xf32>) -> !stream.token

// CHECK: property 'chunks' expected in operation 'stream.transform'

// -----

// stream.wait takes one token or more, each once.
stream.wait

// CHECK: stream.wait: waits on no token

// -----

%t = "test.op"() : () -> !stream.token
stream.wait %t, %t

// CHECK: stream.wait: waits on a token twice

// -----

%t = "test.op"() : () -> !stream.staging<4>
"stream.wait"(%t) : (!stream.staging<4>) -> ()

// CHECK:      operand 'tokens' at position 0 does not verify:
// CHECK-NEXT: Expected attribute !stream.token but got !stream.staging<4>
