// RUN: strata-opt %s --dedup-kernels --split-input-file | FileCheck %s

// Two time steps compute the same kernel on their own values: both call the first, and the
// copy is gone. A kernel with another body (tanh, not sigmoid) or another configuration stays.
// CHECK-LABEL: func.func private @step_kernel_0
// CHECK-NOT: func.func private @step_kernel_1(
// CHECK-LABEL: func.func private @step_kernel_2
// CHECK: "graph.tanh"
// CHECK-LABEL: func.func private @step_kernel_3
// CHECK-SAME: vector_size = 8
// CHECK-LABEL: func.func @step
// CHECK: %[[A:.*]] = call @step_kernel_0(%arg0)
// CHECK: %[[B:.*]] = call @step_kernel_0(%[[A]])
// CHECK: %[[C:.*]] = call @step_kernel_2(%[[B]])
// CHECK: call @step_kernel_3(%[[C]])
func.func private @step_kernel_0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {tile.kernel = "elementwise", tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 8>, vector_size = 16 : i64}} {
  %0 = "graph.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
func.func private @step_kernel_1(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {tile.kernel = "elementwise", tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 8>, vector_size = 16 : i64}} {
  %0 = "graph.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
func.func private @step_kernel_2(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {tile.kernel = "elementwise", tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 8>, vector_size = 16 : i64}} {
  %0 = "graph.tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
func.func private @step_kernel_3(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {tile.kernel = "elementwise", tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 8>, vector_size = 8 : i64}} {
  %0 = "graph.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
func.func @step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = call @step_kernel_0(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = call @step_kernel_1(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = call @step_kernel_2(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = call @step_kernel_3(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}
