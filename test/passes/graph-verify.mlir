// RUN: strata-opt %s --split-input-file --graph-verify | FileCheck %s

// A valid module passes through unchanged.
// CHECK-LABEL: func.func @valid
// CHECK: "graph.relu"
func.func @valid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
