// RUN: mobile-opt %s -p texture-to-ocl | filecheck %s
// RUN: mobile-opt %s -p texture-to-ocl | mobile-opt -t opencl | %python %inputs/build_opencl.py | filecheck %s --check-prefix=BUILD

// texture-to-ocl: pixel reads and writes become OpenCL's accesses for their storage.
// Kernels compute in float4, so f16 storage converts at each access.

// BUILD: {{(built|skipped)}} 4 kernels

builtin.module {
  // Images: read_imagef/write_imagef on f32, read_imageh + extf and truncf +
  // write_imageh on f16.
  // CHECK-LABEL: ocl.kernel @images(
  // CHECK-NEXT:    %x = ocl.global_id 0
  // CHECK-NEXT:    %y = ocl.global_id 1
  // CHECK-NEXT:    %[[A:.*]] = ocl.read_imagef %in[%x, %y] : !texture.image2d<6x2xf32>
  // CHECK-NEXT:    %[[BH:.*]] = ocl.read_imageh %hin[%x, %y] : !texture.image2d<6x2xf16>
  // CHECK-NEXT:    %[[B:.*]] = arith.extf %[[BH]] : vector<4xf16> to vector<4xf32>
  // CHECK-NEXT:    %s = arith.addf %[[A]], %[[B]] : vector<4xf32>
  // CHECK-NEXT:    ocl.write_imagef %s, %out[%x, %y] : !texture.image2d<6x2xf32>
  // CHECK-NEXT:    %[[SH:.*]] = arith.truncf %s : vector<4xf32> to vector<4xf16>
  // CHECK-NEXT:    ocl.write_imageh %[[SH]], %hout[%x, %y] : !texture.image2d<6x2xf16>
  // CHECK-NEXT:    ocl.return
  // CHECK-NEXT:  }
  // CHECK-NOT:   texture.read
  ocl.kernel @images(%out: !texture.image2d<6x2xf32>, %in: !texture.image2d<6x2xf32>, %hin: !texture.image2d<6x2xf16>, %hout: !texture.image2d<6x2xf16>) {
    %x = ocl.global_id 0
    %y = ocl.global_id 1
    %a = texture.read %in[%x, %y] : !texture.image2d<6x2xf32>
    %b = texture.read %hin[%x, %y] : !texture.image2d<6x2xf16>
    %s = arith.addf %a, %b : vector<4xf32>
    texture.write %s, %out[%x, %y] : !texture.image2d<6x2xf32>
    texture.write %s, %hout[%x, %y] : !texture.image2d<6x2xf16>
    ocl.return
  }

  // Buffers: pixel (x, y) is number y * width + x; vload4/vstore4 on f32,
  // vload_half4/vstore_half4 (float4 in registers) on f16.
  // CHECK-LABEL: ocl.kernel @buffers(
  // CHECK-NEXT:    %x = ocl.global_id 0
  // CHECK-NEXT:    %y = ocl.global_id 1
  // CHECK-NEXT:    %[[W:.*]] = arith.constant 7 : i32
  // CHECK-NEXT:    %[[ROW:.*]] = arith.muli %y, %[[W]] : i32
  // CHECK-NEXT:    %[[OFF:.*]] = arith.addi %[[ROW]], %x : i32
  // CHECK-NEXT:    %[[A:.*]] = ocl.vload4 %in[%[[OFF]]] : !texture.buffer2d<7x3xf32>
  // CHECK-NEXT:    %[[HW:.*]] = arith.constant 5 : i32
  // CHECK-NEXT:    %[[HROW:.*]] = arith.muli %y, %[[HW]] : i32
  // CHECK-NEXT:    %[[HOFF:.*]] = arith.addi %[[HROW]], %x : i32
  // CHECK-NEXT:    %[[B:.*]] = ocl.vload_half4 %hin[%[[HOFF]]] : !texture.buffer2d<5x3xf16>
  // CHECK-NEXT:    %s = arith.addf %[[A]], %[[B]] : vector<4xf32>
  // CHECK-NEXT:    %[[W2:.*]] = arith.constant 7 : i32
  // CHECK-NEXT:    %[[ROW2:.*]] = arith.muli %y, %[[W2]] : i32
  // CHECK-NEXT:    %[[OFF2:.*]] = arith.addi %[[ROW2]], %x : i32
  // CHECK-NEXT:    ocl.vstore4 %s, %out[%[[OFF2]]] : !texture.buffer2d<7x3xf32>
  // CHECK-NEXT:    %[[HW2:.*]] = arith.constant 5 : i32
  // CHECK-NEXT:    %[[HROW2:.*]] = arith.muli %y, %[[HW2]] : i32
  // CHECK-NEXT:    %[[HOFF2:.*]] = arith.addi %[[HROW2]], %x : i32
  // CHECK-NEXT:    ocl.vstore_half4 %s, %hout[%[[HOFF2]]] : !texture.buffer2d<5x3xf16>
  // CHECK-NEXT:    ocl.return
  // CHECK-NEXT:  }
  ocl.kernel @buffers(%out: !texture.buffer2d<7x3xf32>, %in: !texture.buffer2d<7x3xf32>, %hin: !texture.buffer2d<5x3xf16>, %hout: !texture.buffer2d<5x3xf16>) {
    %x = ocl.global_id 0
    %y = ocl.global_id 1
    %a = texture.read %in[%x, %y] : !texture.buffer2d<7x3xf32>
    %b = texture.read %hin[%x, %y] : !texture.buffer2d<5x3xf16>
    %s = arith.addf %a, %b : vector<4xf32>
    texture.write %s, %out[%x, %y] : !texture.buffer2d<7x3xf32>
    texture.write %s, %hout[%x, %y] : !texture.buffer2d<5x3xf16>
    ocl.return
  }

  // Four pixels of a row: one vload16 (vload_half16) from a buffer, four reads and a
  // float16 from an image.
  // CHECK-LABEL: ocl.kernel @rows(
  // CHECK:         %[[OFF:.*]] = arith.addi %{{.*}}, %x : i32
  // CHECK-NEXT:    %{{.*}} = ocl.vload16 %in[%[[OFF]]] : !texture.buffer2d<8x3xf32>
  // CHECK:         %{{.*}} = ocl.vload_half16 %hin[%{{.*}}] : !texture.buffer2d<8x3xf16>
  // CHECK-COUNT-4: ocl.read_imagef %img[%{{.*}}, %y] : !texture.image2d<8x3xf32>
  // CHECK-NEXT:    %{{.*}} = ocl.vec16 %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}
  // CHECK-NOT:     texture.read16
  ocl.kernel @rows(%in: !texture.buffer2d<8x3xf32>, %hin: !texture.buffer2d<8x3xf16>, %img: !texture.image2d<8x3xf32>) {
    %x = ocl.global_id 0
    %y = ocl.global_id 1
    %ra = texture.read16 %in[%x, %y] : !texture.buffer2d<8x3xf32>
    %rb = texture.read16 %hin[%x, %y] : !texture.buffer2d<8x3xf16>
    %rc = texture.read16 %img[%x, %y] : !texture.image2d<8x3xf32>
    ocl.return
  }

  // A buffer pixel read only for lanes picked at run time: one scalar load per lane
  // (at the pixel's offset), no pixel; a pixel also used whole stays a vload4.
  // CHECK-LABEL: ocl.kernel @lanes(
  // CHECK:         %[[OFF:.*]] = arith.addi %{{.*}}, %x : i32
  // CHECK-NEXT:    %{{.*}} = ocl.load_lane %in[%[[OFF]]] [%x] : !texture.buffer2d<8x3xf32>
  // CHECK-NEXT:    %{{.*}} = ocl.load_lane %in[%[[OFF]]] [%y] : !texture.buffer2d<8x3xf32>
  // CHECK:         %{{.*}} = ocl.load_half_lane %hin[%{{.*}}] [%x] : !texture.buffer2d<8x3xf16>
  // CHECK:         %[[Q:.*]] = ocl.vload4 %in[%{{.*}}] : !texture.buffer2d<8x3xf32>
  // CHECK-NEXT:    %{{.*}} = ocl.lane %[[Q]][%x]
  // CHECK-NOT:     texture.read
  ocl.kernel @lanes(%out: !texture.buffer2d<8x3xf32>, %in: !texture.buffer2d<8x3xf32>, %hin: !texture.buffer2d<8x3xf16>) {
    %x = ocl.global_id 0
    %y = ocl.global_id 1
    %lp = texture.read %in[%x, %y] : !texture.buffer2d<8x3xf32>
    %la = ocl.lane %lp[%x]
    %lb = ocl.lane %lp[%y]
    %lh = texture.read %hin[%x, %y] : !texture.buffer2d<8x3xf16>
    %lc = ocl.lane %lh[%x]
    %lq = texture.read %in[%y, %x] : !texture.buffer2d<8x3xf32>
    %ld = ocl.lane %lq[%x]
    %lv = ocl.vec4 %la, %lb, %lc, %ld
    %ls = arith.addf %lv, %lq : vector<4xf32>
    texture.write %ls, %out[%x, %y] : !texture.buffer2d<8x3xf32>
    ocl.return
  }

  // Host ops are left alone.
  // CHECK-LABEL: func.func @main_graph(
  // CHECK-NEXT:    %p = texture.pack %t {layout = #texture.layout<rows4>} : tensor<2x24xf32> -> !texture.image2d<6x2xf32>
  // CHECK-NEXT:    %o = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 24>} : !texture.image2d<6x2xf32>
  // CHECK-NEXT:    ocl.launch @images(%o, %p, %h, %h) {global_size = array<i64: 6, 2>}
  // CHECK-NEXT:    %r = texture.unpack %o
  // CHECK-NEXT:    func.return %r
  func.func @main_graph(%t: tensor<2x24xf32>, %h: !texture.image2d<6x2xf16>) -> tensor<2x24xf32> {
    %p = texture.pack %t {layout = #texture.layout<rows4>} : tensor<2x24xf32> -> !texture.image2d<6x2xf32>
    %o = texture.alloc {layout = #texture.layout<rows4>, shape = array<i64: 2, 24>} : !texture.image2d<6x2xf32>
    ocl.launch @images(%o, %p, %h, %h) {global_size = array<i64: 6, 2>} : !texture.image2d<6x2xf32>, !texture.image2d<6x2xf32>, !texture.image2d<6x2xf16>, !texture.image2d<6x2xf16>
    %r = texture.unpack %o {layout = #texture.layout<rows4>} : !texture.image2d<6x2xf32> -> tensor<2x24xf32>
    func.return %r : tensor<2x24xf32>
  }
}
