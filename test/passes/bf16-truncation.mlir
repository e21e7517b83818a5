// RUN: strata-opt %s --target=cpu:x86-64-v3 --bf16-truncation --split-input-file | FileCheck %s
// RUN: strata-opt %s --target=cpu:aarch64 --bf16-truncation --split-input-file | FileCheck %s --check-prefix=KEEP
// RUN: strata-opt %s --bf16-truncation --split-input-file | FileCheck %s --check-prefix=NATIVE

// On x86 without AVX-512 BF16, f32 -> bf16 rounds by its bits: the lowest kept bit plus
// 0x7FFF added (0 for NaN, which gets the quiet bit 0x400000 instead), the top 16 bits kept.
// CHECK-LABEL: func.func @truncate
// CHECK-DAG: %[[SIXTEEN:.*]] = arith.constant dense<16> : vector<16xi32>
// CHECK-DAG: %[[BIAS:.*]] = arith.constant dense<32767> : vector<16xi32>
// CHECK-DAG: %[[QUIET:.*]] = arith.constant dense<4194304> : vector<16xi32>
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X:.*]] : vector<16xf32> to vector<16xi32>
// CHECK: %[[LOW:.*]] = arith.shrui %[[BITS]], %[[SIXTEEN]]
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]]
// CHECK: arith.select %[[NAN]], %{{.*}}, %[[QUIET]]
// CHECK: %[[TOP:.*]] = arith.trunci %{{.*}} : vector<16xi32> to vector<16xi16>
// CHECK: arith.bitcast %[[TOP]] : vector<16xi16> to vector<16xbf16>
// CHECK-NOT: arith.truncf
// KEEP-LABEL: func.func @truncate
// KEEP: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
func.func @truncate(%x: vector<16xf32>) -> vector<16xbf16> {
  %0 = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  return %0 : vector<16xbf16>
}

// -----

// bf16 -> f32 is a shift of its bits; arithmetic left in bf16 (a max) runs in f32, its
// conversions written out the same way; f16 is left alone.
// CHECK-LABEL: func.func @widen_and_max
// CHECK: %[[WIDE:.*]] = arith.extui %{{.*}} : i16 to i32
// CHECK: arith.shli %[[WIDE]]
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NOT: arith.extf %{{.*}} : bf16
// KEEP-LABEL: func.func @widen_and_max
// KEEP: arith.maximumf %{{.*}}, %{{.*}} : bf16
func.func @widen_and_max(%a: bf16, %b: bf16, %h: f16) -> (f32, bf16, f32) {
  %0 = arith.extf %a : bf16 to f32
  %1 = arith.maximumf %a, %b : bf16
  %2 = arith.extf %h : f16 to f32
  return %0, %1, %2 : f32, bf16, f32
}

// -----

// A target with AVX-512 BF16 keeps its conversion instruction (the module's own target; a
// module without one is left alone).
// NATIVE-LABEL: func.func @native
// NATIVE: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", features = "+avx512f,+avx512bf16", cores = 1 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func @native(%x: vector<16xf32>) -> vector<16xbf16> {
    %0 = arith.truncf %x : vector<16xf32> to vector<16xbf16>
    return %0 : vector<16xbf16>
  }
}
