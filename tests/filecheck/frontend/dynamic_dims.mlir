// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %inputs/make_model.py dynamic dynamic.onnx
// RUN: %python %inputs/make_model.py unnamed_dim unnamed.onnx
// RUN: %python %inputs/make_model.py unnamed_inner_dim inner.onnx

// The model's batch dim is the symbol N. --dim gives it a size; every shape of
// the graph follows.
// RUN: mobile-opt dynamic.onnx --dim N=2 | filecheck %s --check-prefix=N2
// RUN: mobile-translate --import-onnx dynamic.onnx --dim N=2 | filecheck %s --check-prefix=N2
// RUN: mobile-opt dynamic.onnx --dim N=5 | filecheck %s --check-prefix=N5

// N2:      func.func @main_graph(%x: tensor<2x3x8x8xf32> {onnx.name = "x"}) -> (tensor<2x8x8x8xf32> {onnx.name = "y"}) {
// N2:        %c = onnx.Conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>
// N2-NEXT:   %y = onnx.Relu %c : (tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
// N5:      func.func @main_graph(%x: tensor<5x3x8x8xf32> {onnx.name = "x"}) -> (tensor<5x8x8x8xf32> {onnx.name = "y"}) {

// A dim with no name is given by the input's name (batch dim only).
// RUN: mobile-opt unnamed.onnx --dim x=3 | filecheck %s --check-prefix=X3
// X3: func.func @main_graph(%x: tensor<3x3x8x8xf32> {onnx.name = "x"}) -> (tensor<3x8x8x8xf32> {onnx.name = "y"}) {

// Without --dim (or with another symbol) the import stops and says what to give.
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx | filecheck %s --check-prefix=MISSING
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim M=2 | filecheck %s --check-prefix=MISSING
// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx dynamic.onnx | filecheck %s --check-prefix=MISSING-T
// RUN: %python %inputs/exit_status.py mobile-opt unnamed.onnx | filecheck %s --check-prefix=UNNAMED
// RUN: %python %inputs/exit_status.py mobile-opt inner.onnx --dim x=2 | filecheck %s --check-prefix=INNER

// MISSING:      [output]
// MISSING-NEXT: mobile-opt: error: dynamic.onnx: input 'x' has dynamic dim 'N'; a static shape is needed (give it with --dim N=<size>)
// MISSING-NEXT: [exit status 1]
// MISSING-T:      [output]
// MISSING-T-NEXT: mobile-translate: error: dynamic.onnx: input 'x' has dynamic dim 'N'; a static shape is needed (give it with --dim N=<size>)
// MISSING-T-NEXT: [exit status 1]
// UNNAMED:      [output]
// UNNAMED-NEXT: mobile-opt: error: unnamed.onnx: input 'x' has dynamic dim #0; a static shape is needed (give it with --dim x=<size>)
// UNNAMED-NEXT: [exit status 1]
// INNER:      [output]
// INNER-NEXT: mobile-opt: error: inner.onnx: input 'x' has dynamic dim #2; a static shape is needed (--dim can give only named dims and an input's dim #0)
// INNER-NEXT: [exit status 1]

// Malformed --dim values.
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim N=0 | filecheck %s --check-prefix=ZERO
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim N | filecheck %s --check-prefix=NOVALUE
// ZERO:      [output]
// ZERO-NEXT: mobile-opt: error: --dim expects NAME=N with N >= 1, got 'N=0'
// ZERO-NEXT: [exit status 1]
// NOVALUE:      [output]
// NOVALUE-NEXT: mobile-opt: error: --dim expects NAME=N with N >= 1, got 'N'
// NOVALUE-NEXT: [exit status 1]
