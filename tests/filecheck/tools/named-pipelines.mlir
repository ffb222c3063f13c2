// The named pipelines: `gpu-pipeline` lowers an ONNX model to OpenCL kernels for a
// device, `dsp-pipeline` a quantized one to packed HVX kernels; each stands for the
// list pipelines.py builds, and a target with nothing lowered to print says which to run.
// The GPU runs take the default device (as mobile-run does), which every host with a
// working OpenCL CPU runtime has; `device=cpu` names one.

// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %inputs/make_model.py conv conv.onnx
// RUN: %python %inputs/make_model.py qdq_conv qconv.onnx

// RUN: mobile-opt conv.onnx -p gpu-pipeline -t opencl | filecheck %s --check-prefix=GPU
// RUN: mobile-opt conv.onnx --pass-pipeline='builtin.module(gpu-pipeline{device=cpu})' -t opencl | filecheck %s --check-prefix=GPU
// RUN: mobile-opt conv.onnx -p gpu-pipeline -t opencl | %python %inputs/build_opencl.py | filecheck %s --check-prefix=BUILD
// GPU:     __kernel void conv_0(
// GPU:     mobile-opt host plan
// BUILD:   {{(built|skipped)}} 1 kernels

// fp16=true stores every tensor as half.
// RUN: mobile-opt conv.onnx -p 'gpu-pipeline{fp16=true}' -t opencl-plan | filecheck %s --check-prefix=HALF
// RUN: mobile-opt conv.onnx -p gpu-pipeline -t opencl-plan | filecheck %s --check-prefix=FLOAT
// HALF:     "element_type": "f16"
// FLOAT-NOT: "element_type": "f16"
// FLOAT:     "element_type": "f32"
// FLOAT-NOT: "element_type": "f16"

// A memory budget plans weight streaming last.
// RUN: mobile-opt conv.onnx -p 'gpu-pipeline{memory-budget=1MB}' | filecheck %s --check-prefix=BUDGET
// BUDGET: stream.plan

// Each pass of the pipeline runs, and is timed, as a pass of its own.
// RUN: mobile-opt conv.onnx -p gpu-pipeline --time-passes -o %t/timed.mlir | filecheck %s --check-prefix=TIMED
// TIMED:      Pass onnx-fold-constants took
// TIMED:      Pass select-layouts took
// TIMED-NEXT: Pass onnx-to-texture took
// TIMED-NEXT: Pass texture-to-ocl took
// TIMED-NEXT: Pass ace took
// TIMED-NEXT: Pass cse took

// RUN: mobile-opt qconv.onnx -p dsp-pipeline -t hexagon-asm | filecheck %s --check-prefix=DSP
// RUN: mobile-opt qconv.onnx -p 'dsp-pipeline{layout=col4 packing=single}' -t 'hexagon-asm{packing=single}' | filecheck %s --check-prefix=DSP
// DSP:      _start:
// DSP:      k0_conv:
// DSP:      vmem(

// A module with nothing lowered has nothing for a code target to print.
// RUN: %python %inputs/exit_status.py mobile-opt conv.onnx -t opencl | filecheck %s --check-prefix=NO-OCL
// RUN: %python %inputs/exit_status.py mobile-opt conv.onnx -t opencl-plan | filecheck %s --check-prefix=NO-PLAN
// RUN: %python %inputs/exit_status.py mobile-opt qconv.onnx -t hexagon-asm | filecheck %s --check-prefix=NO-ASM
// RUN: %python %inputs/exit_status.py mobile-opt qconv.onnx -t hexagon-c | filecheck %s --check-prefix=NO-C
// NO-OCL:       [output]
// NO-OCL-NEXT:  mobile-opt: error: conv.onnx: no OpenCL kernels to print: lower the model first, e.g. -p 'gpu-pipeline{device=pocl}'
// NO-OCL-NEXT:  [exit status 1]
// NO-PLAN:      [output]
// NO-PLAN-NEXT: mobile-opt: error: conv.onnx: -t opencl-plan: the module is not lowered: lower the model first, e.g. -p 'gpu-pipeline{device=pocl}'
// NO-PLAN-NEXT: [exit status 1]
// NO-ASM:       [output]
// NO-ASM-NEXT:  mobile-opt: error: qconv.onnx: hexagon-asm: no HVX kernels to print: lower the model first, e.g. -p dsp-pipeline
// NO-ASM-NEXT:  [exit status 1]
// NO-C:         [output]
// NO-C-NEXT:    mobile-opt: error: qconv.onnx: hexagon-c: no HVX kernels to print: lower the model first, e.g. -p dsp-pipeline
// NO-C-NEXT:    [exit status 1]

// An option value that names nothing is one line, before any input is read.
// RUN: %python %inputs/exit_status.py mobile-opt conv.onnx -p 'gpu-pipeline{device=no-such-device}' -t opencl | filecheck %s --check-prefix=DEVICE
// RUN: %python %inputs/exit_status.py mobile-opt conv.onnx -p 'gpu-pipeline{solver=best}' | filecheck %s --check-prefix=SOLVER
// RUN: %python %inputs/exit_status.py mobile-opt conv.onnx -p 'dsp-pipeline{layout=col3}' | filecheck %s --check-prefix=LAYOUT
// DEVICE:      [output]
// DEVICE-NEXT: mobile-opt: error: pass pipeline 'gpu-pipeline{device=no-such-device}': no OpenCL device matches 'no-such-device'; available: {{.+}}
// DEVICE-NEXT: [exit status 1]
// SOLVER:      [output]
// SOLVER-NEXT: mobile-opt: error: pass pipeline 'gpu-pipeline{solver=best}': solver must be one of local, chain, pbqp, gcd2, exact, not 'best'
// SOLVER-NEXT: [exit status 1]
// LAYOUT:      [output]
// LAYOUT-NEXT: mobile-opt: error: pass pipeline 'dsp-pipeline{layout=col3}': layout must be one of auto, col1, col2, col4, not 'col3'
// LAYOUT-NEXT: [exit status 1]

// --list-pipelines: each pipeline, its options and defaults, and what it stands for.
// RUN: mobile-opt --list-pipelines | filecheck %s --check-prefix=LIST
// LIST:      gpu-pipeline: {{.+}}
// LIST-NEXT:   options:
// LIST-NEXT:     device (default {{.+}}): {{.+}}
// LIST-NEXT:     fp16 (default false): store every tensor as half
// LIST-NEXT:     solver (default gcd2): {{.+}}local|chain|pbqp|gcd2|exact
// LIST-NEXT:     memory-budget (default none): {{.+}}
// LIST-NEXT:   passes with the defaults (on {{.+}}):
// LIST-NEXT:     onnx-fold-constants,onnx-fold-batchnorm,onnx-canonicalize,onnx-fuse,{{.*}}select-layouts{{.*}},onnx-to-texture{{.*}},texture-to-ocl,ace,cse
// LIST-NEXT: dsp-pipeline: {{.+}}
// LIST-NEXT:   options:
// LIST-NEXT:     layout (default auto): {{.+}}
// LIST-NEXT:     packing (default sda): {{.+}}
// LIST-NEXT:     solver (default gcd2): {{.+}}
// LIST-NEXT:     function (default main_graph): {{.+}}
// LIST-NEXT:   passes with the defaults:
// LIST-NEXT:     select-layouts{target="dsp" solver="gcd2"},onnx-to-hvx,hvx-unroll,hvx-regalloc,vliw-pack{tune=true}
// LIST-NOT:  {{.}}

// Stock xdsl-opt finds them through the xdsl.universe entry point.
// RUN: mobile-opt conv.onnx -o conv.mlir
// RUN: xdsl-opt conv.mlir -p gpu-pipeline -t opencl | filecheck %s --check-prefix=GPU
