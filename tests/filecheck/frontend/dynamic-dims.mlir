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

// `--dim INPUT:AXIS=N` sizes one axis of one input: a dim with no name, or a named
// one for that axis alone (AXIS may count from the end).
// RUN: mobile-opt unnamed.onnx --dim x:0=3 | filecheck %s --check-prefix=X3
// RUN: mobile-opt dynamic.onnx --dim x:0=3 | filecheck %s --check-prefix=X3
// RUN: mobile-opt dynamic.onnx --dim x:-4=3 | filecheck %s --check-prefix=X3
// RUN: %python -m mobile_opt.tools.mobile_run --reference unnamed.onnx --dim x:0=3 | filecheck %s --check-prefix=REF3
// X3: func.func @main_graph(%x: tensor<3x3x8x8xf32> {onnx.name = "x"}) -> (tensor<3x8x8x8xf32> {onnx.name = "y"}) {
// REF3: y {{ +}}[3, 8, 8, 8] {{.*}} PASS

// A static axis may be given its own size again; a repeated option its own value.
// RUN: mobile-opt dynamic.onnx --dim x:1=3 --dim N=2 --dim N=2 | filecheck %s --check-prefix=N2

// PP-OCR's classifier stores x[-1, 3, ?, ?]: a -1 and two dims that share the
// non-name '?'. Each axis is sized on its own.
// RUN: %python %inputs/make_model.py unnamed_dims ppocr.onnx
// RUN: mobile-opt ppocr.onnx --dim x:0=1 --dim x:2=48 --dim x:3=192 | filecheck %s --check-prefix=PPOCR
// RUN: mobile-translate --import-onnx ppocr.onnx --dim x:0=1 --dim x:2=48 --dim x:-1=192 | filecheck %s --check-prefix=PPOCR
// PPOCR: func.func @main_graph(%x: tensor<1x3x48x192xf32> {onnx.name = "x"}) -> (tensor<1x8x48x192xf32> {onnx.name = "y"}) {

// Without --dim the import stops and says what to give: the first input left
// dynamic, each of its dynamic dims, and the options that size them.
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx | filecheck %s --check-prefix=MISSING
// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx dynamic.onnx | filecheck %s --check-prefix=MISSING-T
// RUN: %python %inputs/exit_status.py mobile-opt unnamed.onnx | filecheck %s --check-prefix=UNNAMED
// RUN: %python %inputs/exit_status.py mobile-opt inner.onnx | filecheck %s --check-prefix=INNER
// RUN: %python %inputs/exit_status.py mobile-opt ppocr.onnx | filecheck %s --check-prefix=PPOCR-MISSING
// RUN: %python %inputs/exit_status.py %python -m mobile_opt.tools.mobile_run ppocr.onnx --dim x:0=1 | filecheck %s --check-prefix=PPOCR-HW

// MISSING:      [output]
// MISSING-NEXT: mobile-opt: error: dynamic.onnx: input 'x' has dynamic dim 'N'; a static shape is needed (give it with --dim N=<size>)
// MISSING-NEXT: [exit status 1]
// MISSING-T:      [output]
// MISSING-T-NEXT: mobile-translate: error: dynamic.onnx: input 'x' has dynamic dim 'N'; a static shape is needed (give it with --dim N=<size>)
// MISSING-T-NEXT: [exit status 1]
// UNNAMED:      [output]
// UNNAMED-NEXT: mobile-opt: error: unnamed.onnx: input 'x' has dynamic dim #0; a static shape is needed (give it with --dim x:0=<size>)
// UNNAMED-NEXT: [exit status 1]
// INNER:      [output]
// INNER-NEXT: mobile-opt: error: inner.onnx: input 'x' has dynamic dim #2; a static shape is needed (give it with --dim x:2=<size>)
// INNER-NEXT: [exit status 1]
// PPOCR-MISSING:      [output]
// PPOCR-MISSING-NEXT: mobile-opt: error: ppocr.onnx: input 'x' has dynamic dims #0 (-1), #2 ('?'), #3 ('?'); a static shape is needed (give them with --dim x:0=<size> --dim x:2=<size> --dim x:3=<size>)
// PPOCR-MISSING-NEXT: [exit status 1]
// PPOCR-HW:      [output]
// PPOCR-HW-NEXT: mobile-run: error: ppocr.onnx: input 'x' has dynamic dims #2 ('?'), #3 ('?'); a static shape is needed (give them with --dim x:2=<size> --dim x:3=<size>)
// PPOCR-HW-NEXT: [exit status 1]

// A --dim that sizes nothing is an error: a symbol no input uses, an input's name
// alone, '?', an input the model lacks, an axis out of range, or a static axis
// given another size.
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim M=2 | filecheck %s --check-prefix=SYMBOL
// RUN: %python %inputs/exit_status.py %python -m mobile_opt.tools.mobile_run --reference dynamic.onnx --dim N=2 --dim M=2 | filecheck %s --check-prefix=SYMBOL-MR
// RUN: %python %inputs/exit_status.py mobile-opt unnamed.onnx --dim x=3 | filecheck %s --check-prefix=INPUT-NAME
// RUN: %python %inputs/exit_status.py mobile-translate --import-onnx ppocr.onnx --dim ?=48 | filecheck %s --check-prefix=QUESTION
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim y:0=2 | filecheck %s --check-prefix=NO-INPUT
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim x:4=2 | filecheck %s --check-prefix=AXIS
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim x:-5=2 | filecheck %s --check-prefix=AXIS-NEG
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim N=2 --dim x:1=4 | filecheck %s --check-prefix=STATIC
// SYMBOL:      [output]
// SYMBOL-NEXT: mobile-opt: error: dynamic.onnx: --dim M=2: no input dim is named 'M' (named dims: N; size one axis with --dim INPUT:AXIS=N)
// SYMBOL-NEXT: [exit status 1]
// SYMBOL-MR:      [output]
// SYMBOL-MR-NEXT: mobile-run: error: dynamic.onnx: --dim M=2: no input dim is named 'M' (named dims: N; size one axis with --dim INPUT:AXIS=N)
// SYMBOL-MR-NEXT: [exit status 1]
// INPUT-NAME:      [output]
// INPUT-NAME-NEXT: mobile-opt: error: unnamed.onnx: --dim x=3: no input dim is named 'x' ('x' is an input: size one of its axes with --dim x:AXIS=N)
// INPUT-NAME-NEXT: [exit status 1]
// QUESTION:      [output]
// QUESTION-NEXT: mobile-translate: error: ppocr.onnx: --dim ?=48: no input dim is named '?' (no input dim has a name; size one axis with --dim INPUT:AXIS=N)
// QUESTION-NEXT: [exit status 1]
// NO-INPUT:      [output]
// NO-INPUT-NEXT: mobile-opt: error: dynamic.onnx: --dim y:0=2: the model has no input 'y' (inputs: x)
// NO-INPUT-NEXT: [exit status 1]
// AXIS:      [output]
// AXIS-NEXT: mobile-opt: error: dynamic.onnx: --dim x:4=2: input 'x' has 4 axes, no axis 4
// AXIS-NEXT: [exit status 1]
// AXIS-NEG:      [output]
// AXIS-NEG-NEXT: mobile-opt: error: dynamic.onnx: --dim x:-5=2: input 'x' has 4 axes, no axis -5
// AXIS-NEG-NEXT: [exit status 1]
// STATIC:      [output]
// STATIC-NEXT: mobile-opt: error: dynamic.onnx: --dim x:1=4: axis 1 of input 'x' is static (3)
// STATIC-NEXT: [exit status 1]

// --dim sizes the dims of an ONNX model's inputs: with any other input it is an error.
// RUN: mobile-opt dynamic.onnx --dim N=2 -o dynamic.mlir
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.mlir --dim N=2 | filecheck %s --check-prefix=MLIR
// MLIR:      [output]
// MLIR-NEXT: mobile-opt: error: --dim applies to .onnx models only
// MLIR-NEXT: [exit status 1]

// Malformed --dim values.
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim N=0 | filecheck %s --check-prefix=ZERO
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim N | filecheck %s --check-prefix=NOVALUE
// RUN: %python %inputs/exit_status.py mobile-opt dynamic.onnx --dim N=2 --dim N=3 | filecheck %s --check-prefix=TWICE
// ZERO:      [output]
// ZERO-NEXT: mobile-opt: error: --dim expects NAME=N or INPUT:AXIS=N with N >= 1, got 'N=0'
// ZERO-NEXT: [exit status 2]
// NOVALUE:      [output]
// NOVALUE-NEXT: mobile-opt: error: --dim expects NAME=N or INPUT:AXIS=N with N >= 1, got 'N'
// NOVALUE-NEXT: [exit status 2]
// TWICE:      [output]
// TWICE-NEXT: mobile-opt: error: --dim N is given twice, as 2 and 3
// TWICE-NEXT: [exit status 2]
