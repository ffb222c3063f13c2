// A dense literal past the tensor size limit is refused as it is parsed, before a
// splat is expanded: one line naming the file, the literal's place, its size and the
// limit, exit status 1. --max-tensor-size sets the limit.

// RUN: %python %inputs/exit_status.py mobile-opt %s | filecheck %s
// CHECK:      [output]
// CHECK-NEXT: mobile-opt: error: {{.*}}size-limits.mlir:[[#]]:[[#]]: dense literal: [800000, 800000] (640000000000 elements) is 2.3 TiB, over the limit of {{.*}} a tensor (default; set with --max-tensor-size)
// CHECK-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-opt %s --max-tensor-size 1.5GB | filecheck %s --check-prefix=OPTION
// OPTION:      [output]
// OPTION-NEXT: mobile-opt: error: {{.*}}: dense literal: [800000, 800000] (640000000000 elements) is 2.3 TiB, over the limit of 1.5 GiB a tensor (--max-tensor-size)
// OPTION-NEXT: [exit status 1]

// RUN: %python %inputs/exit_status.py mobile-opt %s --max-tensor-size 99999999999999999999GB | filecheck %s --check-prefix=HUGE
// HUGE:      [output]
// HUGE-NEXT: mobile-opt: error: --max-tensor-size expects a size such as 200MB or 1.5GB, at most 8.0 EiB, not '99999999999999999999GB'
// HUGE-NEXT: [exit status 2]

func.func @main_graph() -> tensor<800000x800000xf32> {
  %0 = onnx.Constant {value = dense<1.0> : tensor<800000x800000xf32>} : tensor<800000x800000xf32>
  func.return %0 : tensor<800000x800000xf32>
}
