// RUN: %python %inputs/exit_status.py mobile-opt %s -t opencl | filecheck %s

// What the OpenCL printer cannot express is a one-line error, not a traceback.

// CHECK:      [output]
// CHECK-NEXT: mobile-opt: error: {{.*}}print-errors.mlir: the OpenCL printer has no rule for texture.read
// CHECK-NEXT: [exit status 1]

// texture.read is left for texture-to-ocl to lower.
builtin.module {
  ocl.kernel @k(%out: !texture.image2d<4x2xf32>, %in: !texture.image2d<4x2xf32>) {
    %x = ocl.global_id 0
    %p = texture.read %in[%x, %x] : !texture.image2d<4x2xf32>
    ocl.write_imagef %p, %out[%x, %x] : !texture.image2d<4x2xf32>
    ocl.return
  }
}
