// RUN: %python %inputs/exit_status.py mobile-opt %s -t opencl | filecheck %s

// An unsigned comparison has no OpenCL form here: one line, no traceback.

// CHECK:      [output]
// CHECK-NOT:  Traceback
// CHECK:      [exit status

builtin.module {
  ocl.kernel @k(%out: !texture.image2d<4x2xf32>) {
    %x = ocl.global_id 0
    %c = arith.constant 3 : i32
    %b = arith.cmpi ult, %x, %c : i32
    ocl.return
  }
}
