// RUN: strata-opt %s --graph-split-groups --split-input-file | FileCheck %s

// Two groups of two input channels: each group's channels of the input, its weights and its
// bias (constants of their own), an ordinary conv, and the two joined along the channels.
// CHECK-LABEL: func.func @constant_weights
// CHECK-NOT: tensor<4x2x1x1xf32>
// CHECK-DAG: %[[X0:.*]] = "graph.slice"(%arg0) {ends = array<i64: 1, 2, 5, 5>, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>}
// CHECK-DAG: %[[W0:.*]] = "graph.constant"() {value = dense_resource<group_weight> : tensor<2x2x1x1xf32>}
// CHECK-DAG: %[[B0:.*]] = "graph.constant"() {value = dense_resource<group_weight_1> : tensor<2xf32>}
// CHECK: %[[C0:.*]] = "graph.conv2d"(%[[X0]], %[[W0]], %[[B0]]) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
// CHECK-DAG: %[[X1:.*]] = "graph.slice"(%arg0) {ends = array<i64: 1, 4, 5, 5>, starts = array<i64: 0, 2, 0, 0>
// CHECK-DAG: %[[W1:.*]] = "graph.constant"() {value = dense_resource<group_weight_2> : tensor<2x2x1x1xf32>}
// CHECK-DAG: %[[B1:.*]] = "graph.constant"() {value = dense_resource<group_weight_3> : tensor<2xf32>}
// CHECK: %[[C1:.*]] = "graph.conv2d"(%[[X1]], %[[W1]], %[[B1]])
// CHECK: %[[Y:.*]] = "graph.concat"(%[[C0]], %[[C1]]) {axis = 1 : i64} : (tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>) -> tensor<1x4x5x5xf32>
// CHECK: return %[[Y]]
// The blobs (a 4-byte alignment word, then the f32s): weights 1, 2, 3, 4 and 5, 6, 7, 8, biases
// 0.1, 0.2 and 0.3, 0.4.
// CHECK: group_weight: "0x040000000000803F000000400000404000008040",
// CHECK-NEXT: group_weight_1: "0x04000000CDCCCC3DCDCC4C3E",
// CHECK-NEXT: group_weight_2: "0x040000000000A0400000C0400000E04000000041",
// CHECK-NEXT: group_weight_3: "0x040000009A99993ECDCCCC3E"
func.func @constant_weights(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %w = "graph.constant"() {value = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]], [[[7.0]], [[8.0]]]]> : tensor<4x2x1x1xf32>} : () -> tensor<4x2x1x1xf32>
  %b = "graph.constant"() {value = dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>} : () -> tensor<4xf32>
  %y = "graph.conv2d"(%x, %w, %b) {groups = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
  return %y : tensor<1x4x5x5xf32>
}

// -----

// Weights that are not constants are sliced; strides, padding and dilations carry over; a
// splat weight gives splat constants.
// CHECK-LABEL: func.func @runtime_weights
// CHECK: "graph.slice"(%arg0) {ends = array<i64: 2, 3, 9, 9>, starts = array<i64: 0, 0, 0, 0>
// CHECK: "graph.slice"(%arg1) {ends = array<i64: 2, 3, 3, 3>, starts = array<i64: 0, 0, 0, 0>
// CHECK: "graph.conv2d"(%{{.*}}, %{{.*}}) {dilations = array<i64: 1, 2>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>} : (tensor<2x3x9x9xf32>, tensor<2x3x3x3xf32>) -> tensor<2x2x5x7xf32>
// CHECK: "graph.slice"(%arg0) {ends = array<i64: 2, 6, 9, 9>, starts = array<i64: 0, 3, 0, 0>
// CHECK: "graph.slice"(%arg1) {ends = array<i64: 4, 3, 3, 3>, starts = array<i64: 2, 0, 0, 0>
// CHECK: "graph.concat"
// CHECK-SAME: -> tensor<2x4x5x7xf32>
// CHECK: "graph.constant"() {value = dense<5.000000e-01> : tensor<3x3x1x1xf32>}
// CHECK: "graph.constant"() {value = dense<5.000000e-01> : tensor<3x3x1x1xf32>}
// CHECK-NOT: "graph.constant"
// CHECK: "graph.concat"
func.func @runtime_weights(%x: tensor<2x6x9x9xf32>, %w: tensor<4x3x3x3xf32>) -> (tensor<2x4x5x7xf32>, tensor<2x6x9x9xf32>) {
  %y = "graph.conv2d"(%x, %w) {groups = 2 : i64, strides = array<i64: 2, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 2>} : (tensor<2x6x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x5x7xf32>
  %h = "graph.constant"() {value = dense<0.5> : tensor<6x3x1x1xf32>} : () -> tensor<6x3x1x1xf32>
  %z = "graph.conv2d"(%x, %h) {groups = 2 : i64} : (tensor<2x6x9x9xf32>, tensor<6x3x1x1xf32>) -> tensor<2x6x9x9xf32>
  return %y, %z : tensor<2x4x5x7xf32>, tensor<2x6x9x9xf32>
}

// -----

// A depthwise conv (one input channel a group) keeps its own lowering; an ungrouped conv is
// left as it is.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: "graph.slice"
// CHECK: "graph.conv2d"(%arg0, %arg1) {groups = 4 : i64}
// CHECK: "graph.conv2d"(%arg0, %arg2) :
// CHECK-NOT: "graph.concat"
func.func @left_alone(%x: tensor<1x4x5x5xf32>, %d: tensor<4x1x3x3xf32>, %w: tensor<8x4x1x1xf32>) -> (tensor<1x4x3x3xf32>, tensor<1x8x5x5xf32>) {
  %a = "graph.conv2d"(%x, %d) {groups = 4 : i64} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  %b = "graph.conv2d"(%x, %w) : (tensor<1x4x5x5xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x5x5xf32>
  return %a, %b : tensor<1x4x3x3xf32>, tensor<1x8x5x5xf32>
}
