// Every value is defined before it is used: the tools check dominance on what they
// parse, before the verifier (whose shape rules would follow a cycle forever).

// RUN: mobile-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: %python %inputs/exit_status.py mobile-opt %inputs/self_use.mlir | filecheck %s --check-prefix=OPT
// RUN: %python %inputs/exit_status.py mobile-run %inputs/self_use.mlir | filecheck %s --check-prefix=RUNNER

// OPT:      [output]
// OPT-NEXT: mobile-opt: error: {{.*}}self_use.mlir: %t is used before it is defined (onnx.Add)
// OPT-NEXT: [exit status 1]

// RUNNER:      [output]
// RUNNER-NEXT: mobile-run: error: {{.*}}self_use.mlir: %t is used before it is defined (onnx.Add)
// RUNNER-NEXT: [exit status 1]

// An op that uses its own result.
func.func @main_graph(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = onnx.Add %x, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %t : tensor<4xf32>
}

// CHECK: %t is used before it is defined (onnx.Add)

// -----

// A use above the definition in the same block.
func.func @main_graph(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = onnx.Relu %b : (tensor<4xf32>) -> tensor<4xf32>
  %b = onnx.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// CHECK: %b is used before it is defined (onnx.Relu)

// -----

// A use in a nested region of a value its enclosing block defines only later.
%r = "test.op"() ({
  "test.op"(%late) : (i32) -> ()
}) : () -> i32
%late = "test.op"() : () -> i32

// CHECK: %late is used before it is defined (test.op)

// -----

// In a region of several blocks, a value is usable only where its block dominates.
func.func @branches(%c: i1) -> i32 {
  cf.cond_br %c, ^left, ^right
^left:
  %v = "test.op"() : () -> i32
  cf.br ^right
^right:
  func.return %v : i32
}

// CHECK: %v is used before it is defined (func.return)

// -----

func.func @dominated(%c: i1) -> i32 {
  %v = "test.op"() : () -> i32
  cf.cond_br %c, ^left, ^right
^left:
  cf.br ^right
^right:
  func.return %v : i32
}

// CHECK: func.func @dominated
// CHECK: func.return %v

// -----

// Block arguments, earlier values and enclosing values are all visible.
func.func @main_graph(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = onnx.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = onnx.Add %a, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "test.op"() ({
    "test.op"(%b) : (tensor<4xf32>) -> ()
    "test.termop"() : () -> ()
  }) : () -> ()
  func.return %b : tensor<4xf32>
}

// CHECK:      func.func @main_graph
// CHECK:      "test.op"(%b)
// CHECK-NOT:  used before it is defined
