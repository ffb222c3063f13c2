// RUN: %python %inputs/make_model.py qdq_conv %t.onnx
// RUN: mobile-opt %t.onnx -p hvx-plan | filecheck %s

// Each quantized operator gets one execution plan per SIMD layout, with the cycle
// model's packets and cycles for its whole kernel.

// CHECK: onnx.Conv %{{.*}} {hvx.plans = [#hvx.plan<col1, vmpy, [[P1:[0-9]+]] packets, [[C1:[0-9]+]] cycles>, #hvx.plan<col2, vmpa, {{[0-9]+}} packets, {{[0-9]+}} cycles>, #hvx.plan<col4, vrmpy, {{[0-9]+}} packets, {{[0-9]+}} cycles>]
