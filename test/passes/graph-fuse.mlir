// RUN: strata-opt %s --graph-fuse --split-input-file | FileCheck %s

// A matmul with its bias and activation is one contraction kernel, called where it was.
// Kernels come before their caller.
// CHECK-LABEL: func.func private @mlp_layer_kernel_0
// CHECK-SAME: attributes {tile.kernel = "contraction"}
// CHECK: "graph.matmul"
// CHECK: "graph.add"
// CHECK: "graph.relu"
// CHECK: return
// CHECK-LABEL: func.func @mlp_layer
// CHECK: %[[Y:.*]] = call @mlp_layer_kernel_0(%arg0, %arg1, %arg2)
// CHECK-NEXT: return %[[Y]]
func.func @mlp_layer(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = "graph.add"(%0, %b) : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = "graph.relu"(%1) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}

// -----

// An elementwise chain is one kernel; the constant it uses is copied into it.
// CHECK-LABEL: func.func private @chain_kernel_0
// CHECK-SAME: tile.kernel = "elementwise"
// CHECK: "graph.constant"
// CHECK: "graph.mul"
// CHECK: "graph.add"
// CHECK: "graph.tanh"
// CHECK-LABEL: func.func @chain
// CHECK-NOT: graph.constant
// CHECK: call @chain_kernel_0(%arg0)
func.func @chain(%x: tensor<64xf32>) -> tensor<64xf32> {
  %c = "graph.constant"() {value = dense<2.0> : tensor<64xf32>} : () -> tensor<64xf32>
  %0 = "graph.mul"(%x, %c) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %1 = "graph.add"(%0, %x) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %2 = "graph.tanh"(%1) : (tensor<64xf32>) -> tensor<64xf32>
  return %2 : tensor<64xf32>
}

// -----

// An elementwise prologue that only feeds a softmax joins its kernel.
// CHECK-LABEL: func.func private @scaled_softmax_kernel_0
// CHECK-SAME: tile.kernel = "reduction"
// CHECK: "graph.mul"
// CHECK: "graph.softmax"
// CHECK-LABEL: func.func @scaled_softmax
// CHECK: call @scaled_softmax_kernel_0
// CHECK-NOT: call
func.func @scaled_softmax(%x: tensor<4x16xf32>, %s: tensor<f32>) -> tensor<4x16xf32> {
  %0 = "graph.mul"(%x, %s) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %1 = "graph.softmax"(%0) {axis = -1 : i64} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// Data movement stays in the caller between kernels; a value with two uses ends its chain
// (the neg), and the chain that consumes it twice (abs, add) joins it: one kernel, one result.
// CHECK-LABEL: func.func private @split_kernel_1
// CHECK: "graph.neg"
// CHECK: "graph.abs"
// CHECK: "graph.add"
// CHECK-LABEL: func.func @split
// CHECK: %[[A:.*]] = call @split_kernel_0(%arg0)
// CHECK: %[[T:.*]] = "graph.transpose"(%[[A]])
// CHECK: %[[B:.*]] = call @split_kernel_1(%[[T]])
// CHECK: return %[[B]]
func.func @split(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.transpose"(%0) {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %2 = "graph.neg"(%1) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %3 = "graph.abs"(%2) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %4 = "graph.add"(%2, %3) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %4 : tensor<8x4xf32>
}

// -----

// Chains that meet again are one kernel: x*a+b feeds a sigmoid and a silu whose sum is the
// result.
// CHECK-LABEL: func.func private @diamond_kernel_0
// CHECK: "graph.mul"
// CHECK: "graph.add"
// CHECK: "graph.sigmoid"
// CHECK: "graph.silu"
// CHECK: "graph.add"
// CHECK-LABEL: func.func @diamond
// CHECK: %[[R:.*]] = call @diamond_kernel_0(%arg0, %arg1)
// CHECK-NEXT: return %[[R]]
func.func @diamond(%x: tensor<64xf32>, %a: tensor<64xf32>) -> tensor<64xf32> {
  %0 = "graph.mul"(%x, %a) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %1 = "graph.add"(%0, %a) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %2 = "graph.sigmoid"(%1) : (tensor<64xf32>) -> tensor<64xf32>
  %3 = "graph.silu"(%1) : (tensor<64xf32>) -> tensor<64xf32>
  %4 = "graph.add"(%2, %3) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %4 : tensor<64xf32>
}

// -----

// Not merged where the chains meet through data movement (the transpose needs the neg and
// feeds the abs): one kernel would need its own result as an input.
// CHECK-LABEL: func.func @through_transpose
// CHECK: %[[E:.*]] = call @through_transpose_kernel_0(%arg0)
// CHECK: %[[N:.*]] = call @through_transpose_kernel_1(%[[E]])
// CHECK: %[[T:.*]] = "graph.transpose"(%[[N]])
// CHECK: %[[R:.*]] = call @through_transpose_kernel_2(%[[T]], %[[E]])
// CHECK: return %[[R]]
func.func @through_transpose(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = "graph.neg"(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = "graph.transpose"(%1) {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "graph.abs"(%2) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = "graph.add"(%0, %3) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %4 : tensor<8x8xf32>
}
