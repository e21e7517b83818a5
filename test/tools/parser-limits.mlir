// Input that MLIR's parser or its Python bindings would crash on gets a located error first.
// RUN: strata-opt %s --split-input-file --verify-diagnostics
// RUN: %python -c "print('\"x.y\"() {a = ' + '[' * 3000 + ']' * 3000 + '} : () -> ()')" > %t.mlir
// RUN: not strata-opt %t.mlir --allow-unregistered-dialect 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: parser-limits.mlir.tmp.mlir:1:1013: error: input nested more than 1000 levels deep
// DEEP-NOT: crashed
// A truncated file: the error is inside it, where the text ends (as mlir-opt says), not at the
// implicit module's closing brace past its end.
// RUN: %python -c "import sys; sys.stdout.write('func.func @f(%%x: tensor<4xf32>) -> tensor<4xf32> {\\n  %%0 = \"graph.relu\"(%%x) : (tensor<4xf32>) -> tensor<4xf32>')" > %t.cut.mlir
// RUN: not strata-opt %t.cut.mlir 2>&1 | FileCheck %s --check-prefix=CUT
// RUN: not strata-compile %t.cut.mlir 2>&1 | FileCheck %s --check-prefix=CUT
// CUT: cut.mlir:2:58: error: expected operation name in quotes
// CUT-NOT: cut.mlir:3:
// CUT-NOT: Traceback

func.func @index_array(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+1 {{dense array element type must be one of i1, i8, i16, i32, i64, f32, f64, got 'index'}}
  %0 = "graph.max_pool2d"(%x) {kernel = array<index: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

func.func @unsigned_array(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{dense array element type must be one of i1, i8, i16, i32, i64, f32, f64, got 'ui8'}}
  %0 = "graph.max_pool2d"(%x) {kernel = array<ui8: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @signed_array(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{dense array element type must be one of i1, i8, i16, i32, i64, f32, f64, got 'si32'}}
  %0 = "graph.reduce_sum"(%a) {axes = array<si32: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Brackets inside strings and comments do not count: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[
func.func @in_a_string() attributes {note = "array<index: 1> ((((((((((((((((((((("} {
  return
}

// -----

func.func @reduce_dims(%partial: memref<32xf32>, %total: memref<f32>) {
  // expected-error @+1 {{'dimensions' must be a list of integers in brackets, as `dimensions = [0, 1]`}}
  linalg.reduce ins(%partial : memref<32xf32>) outs(%total : memref<f32>) dimensions = "text"
    (%in: f32, %acc: f32) {
      %s = arith.maxnumf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

func.func @transpose_permutation(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'permutation' must be a list of integers in brackets, as `permutation = [0, 1]`}}
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = 1
  return %t : tensor<3x2xf32>
}

// -----

func.func @broadcast_dims(%a: tensor<3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'dimensions' must be a list of integers in brackets, as `dimensions = [0, 1]`}}
  %t = linalg.broadcast ins(%a : tensor<3xf32>) outs(%b : tensor<2x3xf32>) dimensions = {x}
  return %t : tensor<2x3xf32>
}

// -----

// The generic form's attribute dictionary is not linalg's custom syntax.
func.func @generic_form(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = "linalg.transpose"(%a, %b) <{permutation = array<i64: 1, 0>}> ({
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}
