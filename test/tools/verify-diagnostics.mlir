// --verify-diagnostics reports unexpected diagnostics and unmet expectations, and fails.
// RUN: not strata-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s

// CHECK: verify-diagnostics.mlir:[[#@LINE+2]]:8: error: unexpected error: 'graph.relu' op result type
func.func @unexpected(%a: tensor<4xf32>) {
  %0 = "graph.relu"(%a) : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

// CHECK: verify-diagnostics.mlir:[[#@LINE+2]]:6: error: expected error "never emitted" was not produced
func.func @unmet(%a: tensor<4xf32>) {
  // expected-error @+1 {{never emitted}}
  %0 = "graph.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// Matched expectations produce nothing.
// CHECK-NOT: matched
func.func @matched(%a: tensor<4xf32>) {
  %0 = "graph.relu"(%a) : (tensor<4xf32>) -> tensor<3xf32> // expected-error {{result type tensor<3xf32>}}
  return
}
