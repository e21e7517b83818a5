// RUN: strata-opt %s --math-approximate --split-input-file | FileCheck %s
// RUN: strata-opt %s --target=cpu:x86-64-v4 --math-approximate --split-input-file | FileCheck %s --check-prefix=AVX512
// RUN: strata-opt %s --target=cpu:x86-64 --math-approximate --split-input-file | FileCheck %s --check-prefix=SSE2

// f32 exp becomes a polynomial with range reduction and an exponent-bits scale, on scalars
// and on vectors alike; no math.exp (a libm call) is left. Horner steps may contract to FMAs.
// A vector whose lanes all have a normal result (x in [-87.3, 88]) takes 2^k from the bits
// of the rounding sum, whose constant (1.5 * 2^23 + 127, 0x4B40007F) carries the exponent
// bias, and no clamps; one with any other lane clamps x and scales by two factors, so that
// subnormal results round once (one any-lane branch).
// CHECK-LABEL: func.func @exp_f32
// CHECK-DAG: %[[LOW:.*]] = arith.constant dense<-87.3365402> : vector<16xf32>
// CHECK-DAG: %[[HIGH:.*]] = arith.constant dense<8.800000e+01> : vector<16xf32>
// CHECK-DAG: %[[ROUND:.*]] = arith.constant dense<0x4B40007F> : vector<16xf32>
// CHECK-NOT: math.exp
// CHECK: %[[ABOVE:.*]] = arith.cmpf oge, %arg0, %[[LOW]]
// CHECK: %[[BELOW:.*]] = arith.cmpf ole, %arg0, %[[HIGH]]
// CHECK: %[[NORMAL:.*]] = arith.andi %[[ABOVE]], %[[BELOW]]
// CHECK: %[[SPECIAL:.*]] = arith.xori %[[NORMAL]]
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[SPECIAL]] : vector<16xi1> into i1
// CHECK: scf.if %[[ANY]] -> (vector<16xf32>) {
// CHECK:   arith.minimumf %arg0
// CHECK:   arith.maximumf
// CHECK:   arith.mulf %{{.*}} fastmath<contract> : vector<16xf32>
// CHECK:   arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK:   arith.shrsi
// CHECK: } else {
// CHECK-NOT: arith.maximumf
// CHECK:   %[[SHIFTED:.*]] = arith.addf %{{.*}}, %[[ROUND]] fastmath<contract>
// CHECK-NOT: arith.fptosi
// CHECK:   %[[BITS:.*]] = arith.bitcast %[[SHIFTED]] : vector<16xf32> to vector<16xi32>
// CHECK:   arith.shli %[[BITS]]
// CHECK: }
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK:   arith.maximumf %{{.*}} : f32
// CHECK-NOT: math.exp
func.func @exp_f32(%v: vector<16xf32>, %s: f32) -> (vector<16xf32>, f32) {
  %0 = math.exp %v : vector<16xf32>
  %1 = math.exp %s : f32
  return %0, %1 : vector<16xf32>, f32
}

// -----

// With fastmath<afn> (softmax's exponentials) x below -125.5 ln2 flushes to 0: 2^k is one
// factor made from the bits of the rounding sum, whose constant (1.5 * 2^23 + 127,
// 0x4B40007F) carries the exponent bias (a shift makes 2^k), and lanes whose sum holds
// k + 127 < 2 (1.5 * 2^23 + 2, 0x4B400002) are selected to 0 (no clamp from below: whatever
// the bits make there is dropped), so that no subnormal reaches the softmax's normalization
// and the products after it. The test reads the sum, not x: x is dead after the reduction.
// CHECK-LABEL: func.func @exp_afn
// CHECK-DAG: %[[ROUND:.*]] = arith.constant dense<0x4B40007F> : vector<8xf32>
// CHECK-DAG: %[[LOW:.*]] = arith.constant dense<0x4B400002> : vector<8xf32>
// CHECK-NOT: arith.maximumf
// CHECK-NOT: scf.if
// CHECK: %[[SHIFTED:.*]] = arith.addf %{{.*}}, %[[ROUND]] fastmath<contract>
// CHECK: arith.subf %[[SHIFTED]], %[[ROUND]]
// CHECK-NOT: arith.shrsi
// CHECK: %[[BITS:.*]] = arith.bitcast %[[SHIFTED]] : vector<8xf32> to vector<8xi32>
// CHECK: %[[SCALE:.*]] = arith.shli %[[BITS]]
// CHECK-NOT: arith.addi
// CHECK: %[[POW:.*]] = arith.bitcast %[[SCALE]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[E:.*]] = arith.mulf %{{.*}}, %[[POW]]
// CHECK: %[[TINY:.*]] = arith.cmpf olt, %[[SHIFTED]], %[[LOW]]
// CHECK: arith.select %[[TINY]], %{{.*}}, %[[E]]
// CHECK-NOT: math.exp
func.func @exp_afn(%v: vector<8xf32>) -> vector<8xf32> {
  %0 = math.exp %v fastmath<afn> : vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

// With fastmath<ninf> too (softmax's x - max, never above 0) no result overflows: the input
// is not clamped at all; with afn alone it is clamped from above.
// CHECK-LABEL: func.func @exp_afn_ninf
// CHECK-NOT: arith.minimumf
// CHECK-NOT: arith.maximumf
// CHECK: return
// CHECK-LABEL: func.func @exp_afn_only
// CHECK: arith.minimumf
// CHECK-NOT: arith.maximumf
// CHECK: return
func.func @exp_afn_ninf(%v: vector<8xf32>) -> vector<8xf32> {
  %0 = math.exp %v fastmath<ninf,afn> : vector<8xf32>
  return %0 : vector<8xf32>
}
func.func @exp_afn_only(%v: vector<8xf32>) -> vector<8xf32> {
  %0 = math.exp %v fastmath<afn> : vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

// log: exponent and mantissa from the bits less sqrt(1/2)'s (0x3F3504F3 = 1060439283), a
// polynomial, and the special values selected; the branch for normal positive x selects none.
// CHECK-LABEL: func.func @log_f32
// CHECK-NOT: math.log
// CHECK: %[[SQRT_HALF:.*]] = arith.constant dense<1060439283> : vector<8xi32>
// CHECK: scf.if
// CHECK: arith.shrsi %{{.*}} : vector<8xi32>
// CHECK: arith.andi %{{.*}} : vector<8xi32>
// CHECK: arith.cmpf ult
// CHECK: } else {
// CHECK-NOT: arith.select
// CHECK: arith.subi %{{.*}}, %[[SQRT_HALF]] : vector<8xi32>
// CHECK: arith.shrsi %{{.*}} : vector<8xi32>
// CHECK-NOT: arith.select
// CHECK: scf.yield
// CHECK-NOT: math.log
func.func @log_f32(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.log %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

// log(1 + x), as importers write softplus, becomes log1p and then its approximation: the
// correction divides x by (1 + x) - 1.
// CHECK-LABEL: func.func @log_of_one_plus
// CHECK-NOT: math.log
// CHECK: %[[U:.*]] = arith.addf %[[X:.*]], %{{.*}} : vector<8xf32>
// CHECK: %[[D:.*]] = arith.subf %[[U]], %{{.*}} : vector<8xf32>
// CHECK: arith.divf %[[X]], %[[D]] : vector<8xf32>
func.func @log_of_one_plus(%x: vector<8xf32>) -> vector<8xf32> {
  %one = arith.constant dense<1.0> : vector<8xf32>
  %0 = arith.addf %x, %one : vector<8xf32>
  %1 = math.log %0 : vector<8xf32>
  return %1 : vector<8xf32>
}

// -----

// tanh: |x| clamped to 9 (tanh rounds to +-1 beyond), |x| P(x^2) / Q(x^2) with one
// division and no exponential, the result clamped to 1 and given x's sign bit.
// CHECK-LABEL: func.func @tanh_f32
// CHECK-DAG: %[[NINE:.*]] = arith.constant dense<9.000000e+00> : vector<16xf32>
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<16xf32>
// CHECK-NOT: math.tanh
// CHECK: %[[ABS:.*]] = math.absf %arg0
// CHECK: %[[C:.*]] = arith.minimumf %[[ABS]], %[[NINE]]
// CHECK: %[[Z:.*]] = arith.mulf %[[C]], %[[C]] : vector<16xf32>
// CHECK: %[[RATIO:.*]] = arith.divf
// CHECK: %[[Y:.*]] = arith.mulf %[[C]], %[[RATIO]]
// CHECK: %[[M:.*]] = arith.minimumf %[[Y]], %[[ONE]]
// CHECK: %[[BITS:.*]] = arith.bitcast %[[M]] : vector<16xf32> to vector<16xi32>
// CHECK: %[[X:.*]] = arith.bitcast %arg0 : vector<16xf32> to vector<16xi32>
// CHECK: arith.ori
// CHECK-NOT: math.exp
func.func @tanh_f32(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.tanh %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// erf: a Taylor series near 0, elsewhere 1 - erfc (itself made of exps); erfc alike.
// CHECK-LABEL: func.func @erf_f32
// CHECK-NOT: math.erf
// CHECK: arith.divf
// CHECK: arith.select
// CHECK-NOT: math.erf
func.func @erf_f32(%x: vector<8xf32>, %y: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %0 = math.erf %x : vector<8xf32>
  %1 = math.erfc %y : vector<8xf32>
  return %0, %1 : vector<8xf32>, vector<8xf32>
}

// -----

// sin and cos reduce by pi/2 in f64; a vector with any lane beyond 2^20 takes the general
// (Payne-Hanek) reduction, chosen once per vector.
// CHECK-LABEL: func.func @sin_cos
// CHECK-NOT: math.sin
// CHECK: arith.extf %{{.*}} : vector<16xf32> to vector<16xf64>
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %{{.*}} : vector<16xi1> into i1
// CHECK: scf.if %[[ANY]] -> (vector<16xf64>, vector<16xf64>)
// CHECK: math.roundeven %{{.*}} : vector<16xf64>
// CHECK: } else {
// CHECK: arith.truncf %{{.*}} : vector<16xf64> to vector<16xf32>
// CHECK-NOT: math.cos
func.func @sin_cos(%x: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
  %0 = math.sin %x : vector<16xf32>
  %1 = math.cos %x : vector<16xf32>
  return %0, %1 : vector<16xf32>, vector<16xf32>
}

// -----

// pow with a constant exponent of 2 is a product; otherwise exp(y log|x|) in f64. A vector
// with any lane outside normal positive x and |y| < 2^24 also selects the special cases; the
// others take the arithmetic alone. On AVX-512 too: 8 lanes are no whole 512-bit register.
// CHECK-LABEL: func.func @pow_f32
// CHECK: %[[SQUARE:.*]] = arith.mulf %[[X:.*]], %[[X]] : vector<8xf32>
// CHECK-NOT: math.powf
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %{{.*}} : vector<8xi1> into i1
// CHECK: scf.if %[[ANY]] -> (vector<8xf32>)
// CHECK: arith.extf %{{.*}} : vector<8xf32> to vector<8xf64>
// CHECK: arith.truncf %{{.*}} : vector<8xf64> to vector<8xf32>
// CHECK: arith.cmpf oeq
// CHECK: } else {
// CHECK-NOT: arith.cmpf {{oeq|olt|uno}}
// CHECK: arith.truncf %{{.*}} : vector<8xf64> to vector<8xf32>
// CHECK-NEXT: scf.yield
// CHECK-NOT: llvm.call_intrinsic
// AVX512-LABEL: func.func @pow_f32
// AVX512: } else {
// AVX512-NOT: llvm.call_intrinsic
// AVX512: arith.truncf %{{.*}} : vector<8xf64> to vector<8xf32>
// AVX512-NEXT: scf.yield
func.func @pow_f32(%x: vector<8xf32>, %y: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %two = arith.constant dense<2.0> : vector<8xf32>
  %0 = math.powf %x, %two : vector<8xf32>
  %1 = math.powf %x, %y : vector<8xf32>
  return %0, %1 : vector<8xf32>, vector<8xf32>
}

// -----

// On AVX-512, whole 512-bit registers take pow's tables in f32: 1/c and log2 c (in two
// parts) by vpermps, each product's rounding error by an FMA, y log2 x rounded to sixteenths
// by vrndscaleps, 2^(j/16) and its rounding error by vpermps, 2^floor by vscalefps. A vector
// with a special lane or a result that may be subnormal takes the special cases' f64 form
// instead, in one branch after the tables.
// AVX512-LABEL: func.func @pow_by_tables
// AVX512-NOT: scf.if
// AVX512: %[[RECIPROCAL:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"
// AVX512: %[[QUOTIENT:.*]] = arith.mulf %[[Z:.*]], %[[RECIPROCAL]] : vector<16xf32>
// AVX512: math.fma %[[Z]], %[[RECIPROCAL]], %{{.*}} : vector<16xf32>
// AVX512-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"
// AVX512: %[[N:.*]] = llvm.call_intrinsic "llvm.x86.avx512.mask.rndscale.ps.512"(%{{.*}}, %c72_i32,
// AVX512-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"
// AVX512: %[[POWER:.*]] = llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"(%{{.*}}, %[[N]],
// AVX512: %[[TINY:.*]] = arith.cmpf olt, %[[N]], %{{.*}} : vector<16xf32>
// AVX512: %[[EITHER:.*]] = arith.ori %{{.*}}, %[[TINY]] : vector<16xi1>
// AVX512: vector.reduction <or>, %[[EITHER]]
// AVX512: scf.if %{{.*}} -> (vector<16xf32>) {
// AVX512: arith.extf %{{.*}} : vector<16xf32> to vector<16xf64>
// AVX512: } else {
// AVX512-NEXT: scf.yield %[[POWER]] : vector<16xf32>
func.func @pow_by_tables(%x: vector<16xf32>, %y: vector<16xf32>) -> vector<16xf32> {
  %0 = math.powf %x, %y : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// Constant exponents: 0 gives 1, 0.5 a square root (-0 + 0 is +0, -inf gives +inf), an integer
// up to 8 in magnitude products in f64 (x^-3: x^2, x^3, then 1 / x^3), beyond that the
// general form.
// CHECK-LABEL: func.func @pow_by_constant
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<8xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK: %[[SHIFTED:.*]] = arith.addf %[[X:.*]], %[[ZERO]] : vector<8xf32>
// CHECK: %[[ROOT:.*]] = math.sqrt %[[SHIFTED]] : vector<8xf32>
// CHECK: %[[MINUS_INF:.*]] = arith.cmpf oeq, %[[X]]
// CHECK: %[[HALF:.*]] = arith.select %[[MINUS_INF]], %{{.*}}, %[[ROOT]]
// CHECK: %[[WIDE:.*]] = arith.extf %[[X]] : vector<8xf32> to vector<8xf64>
// CHECK: %[[SQUARE:.*]] = arith.mulf %[[WIDE]], %[[WIDE]] : vector<8xf64>
// CHECK: %[[CUBE:.*]] = arith.mulf %[[WIDE]], %[[SQUARE]] : vector<8xf64>
// CHECK: %[[INVERSE:.*]] = arith.divf %{{.*}}, %[[CUBE]] : vector<8xf64>
// CHECK: %[[MINUS_THREE:.*]] = arith.truncf %[[INVERSE]] : vector<8xf64> to vector<8xf32>
// CHECK: scf.if
// CHECK: return %[[ONE]], %[[HALF]], %[[MINUS_THREE]], %{{.*}} :
func.func @pow_by_constant(%x: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
  %zero = arith.constant dense<0.0> : vector<8xf32>
  %half = arith.constant dense<0.5> : vector<8xf32>
  %minus_three = arith.constant dense<-3.0> : vector<8xf32>
  %nine = arith.constant dense<9.0> : vector<8xf32>
  %0 = math.powf %x, %zero : vector<8xf32>
  %1 = math.powf %x, %half : vector<8xf32>
  %2 = math.powf %x, %minus_three : vector<8xf32>
  %3 = math.powf %x, %nine : vector<8xf32>
  return %0, %1, %2, %3 : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
}

// -----

// f16 and bf16 compute in f32 and round once.
// CHECK-LABEL: func.func @narrow
// CHECK: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: math.tanh
func.func @narrow(%x: vector<8xf16>, %y: bf16) -> (vector<8xf16>, bf16) {
  %0 = math.exp %x : vector<8xf16>
  %1 = math.tanh %y : bf16
  return %0, %1 : vector<8xf16>, bf16
}

// -----

// f64 keeps its math ops.
// CHECK-LABEL: func.func @exp_f64
// CHECK: math.exp %{{.*}} : f64
func.func @exp_f64(%x: f64) -> f64 {
  %0 = math.exp %x : f64
  return %0 : f64
}

// -----

// Before SSE4.1 (the x86-64 baseline) floor, ceil and round-half-even are adds of 2^23 of x's
// sign (2^52 in f64), a step where that went the other way, and x itself from 2^23 on (and
// for inf and NaN); elsewhere they stay math ops (one instruction each).
// CHECK-LABEL: func.func @roundings
// CHECK: math.floor
// CHECK: math.ceil
// CHECK: math.roundeven
// SSE2-LABEL: func.func @roundings
// SSE2-NOT: math.floor
// SSE2-DAG: arith.constant dense<0x4B000000> : vector<8xf32>
// SSE2-DAG: arith.constant 0x4330000000000000 : f64
// SSE2: math.copysign
// SSE2: arith.cmpf ogt
// SSE2: arith.cmpf uge
// SSE2: arith.cmpf olt
// SSE2-NOT: math.ceil
// SSE2-NOT: math.roundeven
func.func @roundings(%x: vector<8xf32>, %d: f64) -> (vector<8xf32>, vector<8xf32>, f64) {
  %0 = math.floor %x : vector<8xf32>
  %1 = math.ceil %x : vector<8xf32>
  %2 = math.roundeven %d : f64
  return %0, %1, %2 : vector<8xf32>, vector<8xf32>, f64
}
