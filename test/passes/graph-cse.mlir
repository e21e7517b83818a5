// RUN: strata-opt %s --graph-cse --split-input-file | FileCheck %s

// The same transpose of the same weight, once per time step as an exported LSTM has it, is
// computed once; both products use it.
// CHECK-LABEL: func.func @steps
// CHECK: %[[T:.*]] = "graph.transpose"(%arg1)
// CHECK-NOT: "graph.transpose"
// CHECK: "graph.matmul"(%arg0, %[[T]])
// CHECK: "graph.matmul"(%{{.*}}, %[[T]])
func.func @steps(%x: tensor<1x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x8xf32> {
  %t0 = "graph.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %h0 = "graph.matmul"(%x, %t0) : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  %t1 = "graph.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %h1 = "graph.matmul"(%h0, %t1) : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  return %h1 : tensor<1x8xf32>
}

// -----

// Ops that differ in an attribute, an operand or the result type stay apart; equal constants
// become one.
// CHECK-LABEL: func.func @different
// CHECK: "graph.constant"
// CHECK-NOT: "graph.constant"
// CHECK: "graph.softmax"(%arg0) {axis = 0 : i64}
// CHECK: "graph.softmax"(%arg0) {axis = 1 : i64}
// CHECK: "graph.add"(%arg0, %{{.*}})
// CHECK: "graph.add"(%arg1, %{{.*}})
// CHECK: "graph.reduce_sum"(%arg0) {axes = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<4xf32>
// CHECK: "graph.reduce_sum"(%arg0) {axes = array<i64: 1>, keepdims = true} : (tensor<4x4xf32>) -> tensor<4x1xf32>
func.func @different(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x1xf32>) {
  %c0 = "graph.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %c1 = "graph.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "graph.softmax"(%x) {axis = 0 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = "graph.add"(%x, %c0) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %3 = "graph.add"(%y, %c1) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %4 = "graph.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<4xf32>
  %5 = "graph.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = true} : (tensor<4x4xf32>) -> tensor<4x1xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x1xf32>
}
