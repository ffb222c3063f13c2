// RUN: mobile-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// RUN: mobile-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s --check-prefix=NOPASS

// Storage types compare by size and element type, and a launch must name a kernel.

// NOPASS-NOT: {{^}}builtin.module

"ocl.kernel"() <{sym_name = "k", function_type = (!texture.image2d<4x2xf32>) -> ()}> ({
^bb0(%a: !texture.image2d<4x2xf16>):
  "ocl.return"() : () -> ()
}) : () -> ()

// CHECK: ocl.kernel: block arguments differ from the signature

// -----

ocl.kernel @k(%a: !texture.image2d<4x2xf32>) {
  ocl.return
}
func.func @main() {
  %s = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.image2d<4x2xf16>
  ocl.launch @k(%s) {global_size = array<i64: 4, 2>} : !texture.image2d<4x2xf16>
  func.return
}

// CHECK: ocl.launch: @k takes 1 arguments of types (!texture.image2d<4x2xf32>), got (!texture.image2d<4x2xf16>)

// -----

ocl.kernel @k(%a: !texture.buffer2d<4x2xf32>) {
  ocl.return
}
func.func @main() {
  %s = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 3, 16>} : !texture.buffer2d<4x3xf32>
  ocl.launch @k(%s) {global_size = array<i64: 4, 3>} : !texture.buffer2d<4x3xf32>
  func.return
}

// CHECK: ocl.launch: @k takes 1 arguments of types (!texture.buffer2d<4x2xf32>), got (!texture.buffer2d<4x3xf32>)

// -----

%s = "test.op"() : () -> !texture.image2d<4x2xf32>
%i = "test.op"() : () -> i32
%p = "ocl.read_imageh"(%s, %i, %i) : (!texture.image2d<4x2xf16>, i32, i32) -> vector<4xf16>

// CHECK: but has been previously used or defined with type !texture.image2d<4x2xf32>

// -----

func.func @main() {
  %s = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 16>} : !texture.image2d<4x2xf32>
  ocl.launch @missing(%s) {global_size = array<i64: 4, 2>} : !texture.image2d<4x2xf32>
  func.return
}

// CHECK: ocl.launch: {{.*}}@missing
