// RUN: mobile-opt %s -t opencl | %python %inputs/build_opencl.py | filecheck %s

// Locals never take OpenCL C keywords, type or builtin names, or the prelude's.

// CHECK: {{(built|skipped)}} 1 kernels

builtin.module {
  ocl.kernel @k(%out: !texture.image2d<4x2xf32>, %SMP: !texture.image2d<4x2xf32>) {
    %int = ocl.global_id 0
    %half = ocl.global_id 1
    %exp = ocl.read_imagef %SMP[%int, %half] : !texture.image2d<4x2xf32>
    %float4 = math.exp %exp : vector<4xf32>
    %mo_lane = arith.addf %float4, %exp : vector<4xf32>
    ocl.write_imagef %mo_lane, %out[%int, %half] : !texture.image2d<4x2xf32>
    ocl.return
  }
}
