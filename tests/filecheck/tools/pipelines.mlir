// mobile-opt takes passes as xDSL's `-p a,b` and as MLIR's
// `--pass-pipeline='builtin.module(a,b)'`, with `=` or a space; both this
// project's passes and stock xDSL passes are available.

// RUN: mobile-opt %s --pass-pipeline='builtin.module(onnx-fold-constants)' | filecheck %s --check-prefix=FOLD
// RUN: mobile-opt %s --pass-pipeline 'builtin.module(onnx-fold-constants)' | filecheck %s --check-prefix=FOLD
// RUN: mobile-opt %s -p onnx-fold-constants | filecheck %s --check-prefix=FOLD
// RUN: mobile-opt %s --pass-pipeline='builtin.module(onnx-fold-constants,dce)' | filecheck %s --check-prefix=FOLD
// RUN: mobile-opt %s -p dce | filecheck %s --check-prefix=DCE
// RUN: mobile-opt %s --pass-pipeline='builtin.module(dce)' | filecheck %s --check-prefix=DCE
// RUN: mobile-opt %s | filecheck %s --check-prefix=NONE

%x = "test.op"() : () -> tensor<4xf32>
%a = onnx.Constant {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>} : tensor<4xf32>
%b = onnx.Constant {value = dense<2.000000e+00> : tensor<4xf32>} : tensor<4xf32>
%ab = onnx.Mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
%y = onnx.Add %x, %ab : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
%unused = arith.constant 7 : i32
"test.op"(%y) : (tensor<4xf32>) -> ()

// onnx-fold-constants evaluates a * b = [2, 4, 6, 8].
// FOLD:      builtin.module {
// FOLD-NEXT:   %x = "test.op"() : () -> tensor<4xf32>
// FOLD-NEXT:   %ab = onnx.Constant {value = dense<[2.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00]> : tensor<4xf32>} : tensor<4xf32>
// FOLD-NEXT:   %y = onnx.Add %x, %ab : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// FOLD-NEXT:   "test.op"(%y) : (tensor<4xf32>) -> ()
// FOLD-NEXT: }

// xDSL's dce removes the unused arith.constant and nothing else.
// DCE:      %ab = onnx.Mul %a, %b
// DCE-NEXT: %y = onnx.Add %x, %ab
// DCE-NEXT: "test.op"(%y)
// DCE-NOT:  arith.constant

// NONE: %ab = onnx.Mul %a, %b
// NONE: %unused = arith.constant 7 : i32

// Bad pipelines are one-line errors too.
// RUN: %python %inputs/exit_status.py mobile-opt %s -p no-such-pass | filecheck %s --check-prefix=UNKNOWN
// RUN: %python %inputs/exit_status.py mobile-opt %s --pass-pipeline='builtin.module(no-such-pass)' | filecheck %s --check-prefix=UNKNOWN
// RUN: %python %inputs/exit_status.py mobile-opt %s -p 'onnx-fold-constants{no-such-option=1}' | filecheck %s --check-prefix=OPTION
// RUN: %python %inputs/exit_status.py mobile-opt %s -p 'onnx-fold-constants{' | filecheck %s --check-prefix=SYNTAX

// UNKNOWN:      [output]
// UNKNOWN-NEXT: mobile-opt: error: pass pipeline 'no-such-pass': Unrecognized passes: ['no-such-pass']
// UNKNOWN-NEXT: [exit status 1]
// OPTION:      [output]
// OPTION-NEXT: mobile-opt: error: pass pipeline 'onnx-fold-constants{no-such-option=1}': Provided arguments ["no_such_option"] not found {{.*}}
// OPTION-NEXT: [exit status 1]
// SYNTAX:      [output]
// SYNTAX-NEXT: mobile-opt: error: pass pipeline 'onnx-fold-constants{': Expected argument name here
// SYNTAX-NEXT: [exit status 1]
