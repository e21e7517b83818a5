// REQUIRES: onnx
// RUN: %python %S/Inputs/onnx_model.py %t.onnx
// RUN: strata-import %t.onnx | FileCheck %s
// RUN: strata-import %t.onnx | strata-opt --graph-to-linalg | FileCheck %s --check-prefix=LOWERED
// RUN: %python %S/Inputs/onnx_model.py %t.bad.onnx QGemm
// RUN: not strata-import %t.bad.onnx 2>&1 | FileCheck %s --check-prefix=ERROR
// RUN: not strata-import %t.missing.onnx 2>&1 | FileCheck %s --check-prefix=MISSING

// Graph inputs become arguments in order; weights are resources, splats stay dense; Gemm is a
// matmul and an add; inputs of different sizes are joined with tensor.concat.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[SKIP:.*]]: tensor<2x3xf32>) -> tensor<2x7xf32>
// CHECK: "graph.constant"() {value = dense_resource<{{.*}}> : tensor<8x4xf32>}
// CHECK: "graph.matmul"(%[[X]], %{{.*}}) : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
// CHECK: "graph.constant"() {value = dense<5.000000e-01> : tensor<4xf32>}
// CHECK: "graph.add"
// CHECK: "graph.relu"
// CHECK: tensor.concat dim(1) %{{.*}}, %[[SKIP]] : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<2x7xf32>
// CHECK: dialect_resources

// LOWERED-LABEL: func.func @main
// LOWERED: linalg.matmul
// LOWERED-NOT: graph.

// ERROR: error: node 'fc' (QGemm): op 'QGemm' is not supported
// MISSING: missing.onnx: error: no such file
