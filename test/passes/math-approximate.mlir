// RUN: strata-opt %s --math-approximate --split-input-file | FileCheck %s

// f32 exp becomes a polynomial with range reduction and an exponent-bits scale, on scalars
// and on vectors alike; no math.exp (a libm call) is left.
// CHECK-LABEL: func.func @exp_f32
// CHECK-NOT: math.exp
// CHECK: math.floor %{{.*}} : vector<16xf32>
// CHECK: arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.shli %{{.*}} : vector<16xi32>
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: arith.cmpf uno
// CHECK: math.floor %{{.*}} : f32
func.func @exp_f32(%v: vector<16xf32>, %s: f32) -> (vector<16xf32>, f32) {
  %0 = math.exp %v : vector<16xf32>
  %1 = math.exp %s : f32
  return %0, %1 : vector<16xf32>, f32
}

// -----

// f32 erf: a Taylor series near 0, elsewhere 1 - poly(t) * exp(-x^2) (itself a polynomial).
// CHECK-LABEL: func.func @erf_f32
// CHECK-NOT: math.erf
// CHECK: arith.divf
// CHECK: math.floor
// CHECK: arith.select
func.func @erf_f32(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.erf %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

// Other widths keep math.exp.
// CHECK-LABEL: func.func @exp_f64
// CHECK: math.exp %{{.*}} : f64
func.func @exp_f64(%x: f64) -> f64 {
  %0 = math.exp %x : f64
  return %0 : f64
}
