// RUN: mobile-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// RUN: mobile-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s --check-prefix=NOPASS

// Every chunk fails: no module is printed in custom form.
// NOPASS-NOT: {{^}}builtin.module

// Kernels return nothing and take only pixel storage.
"ocl.kernel"() <{sym_name = "k", function_type = (!texture.image2d<4x2xf32>) -> f32}> ({
^bb0(%a: !texture.image2d<4x2xf32>):
  "ocl.return"() : () -> ()
}) : () -> ()

// CHECK: ocl.kernel: kernels return nothing

// -----

ocl.kernel @k(%a: !texture.image2d<4x2xf32>) -> f32 {
  ocl.return
}

// CHECK: ocl.kernel returns nothing

// -----

ocl.kernel @k(%a: !texture.image2d<4x2xf32>, %b: f32) {
  ocl.return
}

// CHECK: ocl.kernel: arguments are texture.image2d or texture.buffer2d, not f32

// -----

ocl.kernel @k(%a: tensor<4xf32>) {
  ocl.return
}

// CHECK: ocl.kernel: arguments are texture.image2d or texture.buffer2d, not tensor<4xf32>

// -----

"ocl.kernel"() <{sym_name = "k", function_type = (!texture.image2d<4x2xf32>) -> ()}> ({
^bb0(%a: !texture.buffer2d<4x2xf32>):
  "ocl.return"() : () -> ()
}) : () -> ()

// CHECK: ocl.kernel: block arguments differ from the signature

// -----

func.func @f() {
  ocl.return
}

// CHECK: 'ocl.return' expects parent op 'ocl.kernel'

// -----

// Work-item queries: dimension 0, 1 or 2, an i32 result.
%i = ocl.global_id 3

// CHECK: ocl.global_id: dimension is 0, 1 or 2

// -----

%i = ocl.local_id -1

// CHECK: ocl.local_id: dimension is 0, 1 or 2

// -----

%i = ocl.group_id 7

// CHECK: ocl.group_id: dimension is 0, 1 or 2

// -----

%i = "ocl.global_id"() <{dimension = 0 : i64}> : () -> i64

// CHECK:      result 'result' at position 0 does not verify:
// CHECK-NEXT: Expected attribute i32 but got i64

// -----

// Image access: the f or h function must match the image's pixels, and images only.
ocl.kernel @k(%a: !texture.image2d<4x2xf16>) {
  %i = ocl.global_id 0
  %p = ocl.read_imagef %a[%i, %i] : !texture.image2d<4x2xf16>
  ocl.return
}

// CHECK: ocl.read_imagef reads f32 images, not !texture.image2d<4x2xf16>

// -----

ocl.kernel @k(%a: !texture.image2d<4x2xf32>) {
  %i = ocl.global_id 0
  %p = ocl.read_imageh %a[%i, %i] : !texture.image2d<4x2xf32>
  ocl.return
}

// CHECK: ocl.read_imageh reads f16 images, not !texture.image2d<4x2xf32>

// -----

ocl.kernel @k(%a: !texture.image2d<4x2xf16>) {
  %i = ocl.global_id 0
  %v = "test.op"() : () -> vector<4xf32>
  ocl.write_imagef %v, %a[%i, %i] : !texture.image2d<4x2xf16>
  ocl.return
}

// CHECK: ocl.write_imagef writes f32 images, not !texture.image2d<4x2xf16>

// -----

ocl.kernel @k(%a: !texture.image2d<4x2xf32>) {
  %i = ocl.global_id 0
  %v = "test.op"() : () -> vector<4xf16>
  ocl.write_imageh %v, %a[%i, %i] : !texture.image2d<4x2xf32>
  ocl.return
}

// CHECK: ocl.write_imageh writes f16 images, not !texture.image2d<4x2xf32>

// -----

ocl.kernel @k(%a: !texture.buffer2d<4x2xf32>) {
  %i = ocl.global_id 0
  %p = ocl.read_imagef %a[%i, %i] : !texture.buffer2d<4x2xf32>
  ocl.return
}

// CHECK: !texture.buffer2d<4x2xf32> should be of base attribute texture.image2d

// -----

ocl.kernel @k(%a: !texture.image2d<4x2xf32>) {
  %i = ocl.global_id 0
  %p = "ocl.read_imagef"(%a, %i, %i) : (!texture.image2d<4x2xf32>, i32, i32) -> vector<4xf16>
  ocl.return
}

// CHECK:      result 'result' at position 0 does not verify:
// CHECK-NEXT: Expected attribute vector<4xf32> but got vector<4xf16>

// -----

// Buffer access: vload4/vstore4 on f32 buffers, vload_half4/vstore_half4 on f16 ones.
ocl.kernel @k(%a: !texture.buffer2d<4x2xf16>) {
  %i = ocl.global_id 0
  %p = ocl.vload4 %a[%i] : !texture.buffer2d<4x2xf16>
  ocl.return
}

// CHECK: ocl.vload4 accesses f32 buffers, not !texture.buffer2d<4x2xf16>

// -----

ocl.kernel @k(%a: !texture.buffer2d<4x2xf32>) {
  %i = ocl.global_id 0
  %p = ocl.vload_half4 %a[%i] : !texture.buffer2d<4x2xf32>
  ocl.return
}

// CHECK: ocl.vload_half4 accesses f16 buffers, not !texture.buffer2d<4x2xf32>

// -----

ocl.kernel @k(%a: !texture.buffer2d<4x2xf16>) {
  %i = ocl.global_id 0
  %v = "test.op"() : () -> vector<4xf32>
  ocl.vstore4 %v, %a[%i] : !texture.buffer2d<4x2xf16>
  ocl.return
}

// CHECK: ocl.vstore4 accesses f32 buffers, not !texture.buffer2d<4x2xf16>

// -----

ocl.kernel @k(%a: !texture.buffer2d<4x2xf32>) {
  %i = ocl.global_id 0
  %v = "test.op"() : () -> vector<4xf32>
  ocl.vstore_half4 %v, %a[%i] : !texture.buffer2d<4x2xf32>
  ocl.return
}

// CHECK: ocl.vstore_half4 accesses f16 buffers, not !texture.buffer2d<4x2xf32>

// -----

// Sixteen floats or one lane: each on its own element type.
ocl.kernel @k(%a: !texture.buffer2d<4x2xf16>) {
  %i = ocl.global_id 0
  %p = ocl.vload16 %a[%i] : !texture.buffer2d<4x2xf16>
  ocl.return
}

// CHECK: ocl.vload16 accesses f32 buffers, not !texture.buffer2d<4x2xf16>

// -----

ocl.kernel @k(%a: !texture.buffer2d<4x2xf32>) {
  %i = ocl.global_id 0
  %p = ocl.vload_half16 %a[%i] : !texture.buffer2d<4x2xf32>
  ocl.return
}

// CHECK: ocl.vload_half16 accesses f16 buffers, not !texture.buffer2d<4x2xf32>

// -----

ocl.kernel @k(%a: !texture.buffer2d<4x2xf16>) {
  %i = ocl.global_id 0
  %p = ocl.load_lane %a[%i] [%i] : !texture.buffer2d<4x2xf16>
  ocl.return
}

// CHECK: ocl.load_lane accesses f32 buffers, not !texture.buffer2d<4x2xf16>

// -----

ocl.kernel @k(%a: !texture.buffer2d<4x2xf32>) {
  %i = ocl.global_id 0
  %p = ocl.load_half_lane %a[%i] [%i] : !texture.buffer2d<4x2xf32>
  ocl.return
}

// CHECK: ocl.load_half_lane accesses f16 buffers, not !texture.buffer2d<4x2xf32>

// -----

ocl.kernel @k(%a: !texture.buffer2d<4x2xf32>) {
  %i = ocl.global_id 0
  %p = "ocl.vload16"(%a, %i) : (!texture.buffer2d<4x2xf32>, i32) -> vector<4xf32>
  ocl.return
}

// CHECK:      result 'result' at position 0 does not verify:
// CHECK-NEXT: Expected attribute vector<16xf32> but got vector<4xf32>

// -----

ocl.kernel @k(%a: !texture.buffer2d<4x2xf32>) {
  %i = ocl.global_id 0
  %f = "test.op"() : () -> f32
  %p = "ocl.load_lane"(%f, %a, %i) : (f32, !texture.buffer2d<4x2xf32>, i32) -> f32
  ocl.return
}

// CHECK:      operand 'lane' at position 0 does not verify:
// CHECK-NEXT: Expected attribute i32 but got f32

// -----

ocl.kernel @k(%a: !texture.image2d<4x2xf32>) {
  %i = ocl.global_id 0
  %p = ocl.vload4 %a[%i] : !texture.image2d<4x2xf32>
  ocl.return
}

// CHECK: !texture.image2d<4x2xf32> should be of base attribute texture.buffer2d

// -----

// Vector literals and lanes are f32.
%x = "test.op"() : () -> f16
%v = "ocl.vec4"(%x, %x, %x, %x) : (f16, f16, f16, f16) -> vector<4xf32>

// CHECK:      operand 'x' at position 0 does not verify:
// CHECK-NEXT: Expected attribute f32 but got f16

// -----

%v = "test.op"() : () -> vector<4xf16>
%i = "test.op"() : () -> i32
%l = "ocl.lane"(%v, %i) : (vector<4xf16>, i32) -> f32

// CHECK:      operand 'vector' at position 0 does not verify:
// CHECK-NEXT: Expected attribute vector<4xf32> but got vector<4xf16>

// -----

// A float16 joins four float4 pixels, and has pixels 0 to 3.
%p = "test.op"() : () -> vector<4xf32>
%v = "ocl.vec16"(%p, %p, %p) : (vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<16xf32>

// CHECK: ocl.vec16 takes four float4 pixels, got 3

// -----

%p = "test.op"() : () -> vector<4xf32>
%v = "ocl.vec16"(%p, %p, %p, %p) : (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<16xf32>
%q = "ocl.part4"(%v) <{index = 4 : i64}> : (vector<16xf32>) -> vector<4xf32>

// CHECK: ocl.part4: index 4 is not in 0..3

// -----

%v = "test.op"() : () -> vector<4xf32>
%q = "ocl.part4"(%v) <{index = 0 : i64}> : (vector<4xf32>) -> vector<4xf32>

// CHECK:      operand 'vector' at position 0 does not verify:
// CHECK-NEXT: Expected attribute vector<16xf32> but got vector<4xf32>

// -----

// Launches: the kernel's argument types, 1 to 3 positive global sizes, a local size
// of the same rank.
ocl.kernel @k(%a: !texture.image2d<4x2xf32>) {
  ocl.return
}
func.func @main() {
  %s = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.buffer2d<4x2xf32>
  ocl.launch @k(%s) {global_size = array<i64: 4, 2>} : !texture.buffer2d<4x2xf32>
  func.return
}

// CHECK: ocl.launch: @k takes 1 arguments of types (!texture.image2d<4x2xf32>), got (!texture.buffer2d<4x2xf32>)

// -----

ocl.kernel @k(%a: !texture.image2d<4x2xf32>) {
  ocl.return
}
func.func @main() {
  %s = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.image2d<4x2xf32>
  ocl.launch @k(%s, %s) {global_size = array<i64: 4, 2>} : !texture.image2d<4x2xf32>, !texture.image2d<4x2xf32>
  func.return
}

// CHECK: ocl.launch: @k takes 1 arguments of types (!texture.image2d<4x2xf32>), got (!texture.image2d<4x2xf32>, !texture.image2d<4x2xf32>)

// -----

func.func @k() {
  func.return
}
func.func @main() {
  ocl.launch @k() {global_size = array<i64: 4, 2>} :
  func.return
}

// CHECK: ocl.launch: @k is not an ocl.kernel

// -----

%t = "test.op"() : () -> tensor<4xf32>
"ocl.launch"(%t) <{kernel = @k, global_size = array<i64: 4>}> : (tensor<4xf32>) -> ()

// CHECK:      operand 'args' at position 0 does not verify:
// CHECK-NEXT: Unexpected attribute tensor<4xf32>

// -----

ocl.launch @k() {global_size = array<i64>} :

// CHECK: ocl.launch: bad global size []

// -----

ocl.launch @k() {global_size = array<i64: 1, 1, 1, 1>} :

// CHECK: ocl.launch: bad global size [1, 1, 1, 1]

// -----

ocl.launch @k() {global_size = array<i64: 4, 0>} :

// CHECK: ocl.launch: bad global size [4, 0]

// -----

ocl.launch @k() {global_size = array<i64: 4, 2>, local_size = array<i64: 4>} :

// CHECK: ocl.launch: bad local size [4]

// -----

ocl.launch @k() {global_size = array<i64: 4, 2>, local_size = array<i64: 4, 0>} :

// CHECK: ocl.launch: bad local size [4, 0]

// -----

// Local arrays are declared in a kernel's outermost scope, hold at least one float4,
// and are indexed by an i32.
%a = "ocl.local_array"() : () -> !ocl.local<16>

// CHECK: 'ocl.local_array' expects parent op 'ocl.kernel'

// -----

"ocl.kernel"() <{sym_name = "k", function_type = () -> ()}> ({
  %a = "ocl.local_array"() : () -> !ocl.local<0>
  "ocl.return"() : () -> ()
}) : () -> ()

// CHECK: !ocl.local: size 0 is not positive

// -----

"ocl.kernel"() <{sym_name = "k", function_type = () -> ()}> ({
  %a = "ocl.local_array"() : () -> !ocl.local<4>
  %i = "test.op"() : () -> i64
  %p = "ocl.local_load"(%a, %i) : (!ocl.local<4>, i64) -> vector<4xf32>
  "ocl.return"() : () -> ()
}) : () -> ()

// CHECK:      operand 'index' at position 1 does not verify:
// CHECK-NEXT: Expected attribute i32 but got i64

// -----

// A local store writes a float4 or one float.
"ocl.kernel"() <{sym_name = "k", function_type = () -> ()}> ({
  %a = "ocl.local_array"() : () -> !ocl.local<4>
  %i = "test.op"() : () -> i32
  %h = "test.op"() : () -> vector<4xf16>
  "ocl.local_store"(%h, %a, %i) : (vector<4xf16>, !ocl.local<4>, i32) -> ()
  "ocl.return"() : () -> ()
}) : () -> ()

// CHECK:      operand 'value' at position 0 does not verify:

// -----

// A kernel with a required work-group size is launched in groups of that size.
ocl.kernel @k() attributes {group_size = array<i64: 16, 16>} {
  ocl.return
}
func.func @main() {
  ocl.launch @k() {global_size = array<i64: 32, 32>, local_size = array<i64: 32, 8>}
  func.return
}

// CHECK: ocl.launch: @k runs only in work groups of [16, 16], not [32, 8]

// -----

ocl.kernel @k() attributes {group_size = array<i64: 16, 16>} {
  ocl.return
}
func.func @main() {
  ocl.launch @k() {global_size = array<i64: 32, 32>}
  func.return
}

// CHECK: ocl.launch: @k runs only in work groups of [16, 16], not the driver's

// -----

ocl.kernel @k() attributes {group_size = array<i64: 0>} {
  ocl.return
}

// CHECK: ocl.kernel: bad group size [0]
