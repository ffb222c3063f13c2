// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %inputs/make_model.py sizes sizes.onnx
// RUN: mobile-translate --import-onnx sizes.onnx | filecheck %s
// RUN: mobile-opt sizes.onnx | filecheck %s
// RUN: mobile-translate --import-onnx sizes.onnx --inline-limit 0 | filecheck %s --check-prefix=NONE
// RUN: mobile-translate --import-onnx sizes.onnx --inline-limit 17 | filecheck %s --check-prefix=ALL

// Initializers of at most 16 elements print inline as dense data; larger ones
// are onnx.Weight references to the model file and never print their data.

// CHECK:      %sixteen = onnx.Constant {value = dense<[0.000000e+00, 1.000000e-02, {{.*}}, 1.500000e-01]> : tensor<16xf32>} : tensor<16xf32>
// CHECK-NEXT: %seventeen = onnx.Weight {store = "{{/.*}}/sizes.onnx", key = "seventeen"} : tensor<17xf32>
// CHECK-NOT:  dense<
// CHECK:      %y = onnx.Concat %s, %seventeen {axis = 0 : i64} : (tensor<16xf32>, tensor<17xf32>) -> tensor<33xf32>

// NONE:      %sixteen = onnx.Weight {store = "{{/.*}}/sizes.onnx", key = "sixteen"} : tensor<16xf32>
// NONE-NEXT: %seventeen = onnx.Weight {store = "{{/.*}}/sizes.onnx", key = "seventeen"} : tensor<17xf32>
// NONE-NOT:  dense<

// ALL:      %sixteen = onnx.Constant {value = dense<{{.*}}> : tensor<16xf32>} : tensor<16xf32>
// ALL-NEXT: %seventeen = onnx.Constant {value = dense<[0.000000e+00, {{.*}}, 1.600000e-01]> : tensor<17xf32>} : tensor<17xf32>
