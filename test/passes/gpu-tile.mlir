// RUN: strata-opt %s --gpu-tile --split-input-file | FileCheck %s

// gpu_elementwise: a forall of 1 x 4-element points, each one 16-byte load per full operand,
// a broadcast bias row read as a vector, a [rows, 1] operand as one scalar broadcast; the
// loads and the store carry 16-byte alignment (ld.global.v4 in PTX).
// CHECK-LABEL: func.func private @chain
// CHECK: scf.forall (%[[R:.*]], %[[C:.*]]) in (64, 250)
// CHECK: vector.load %arg0[{{.*}}] {alignment = 16 : i64} : memref<64x1000xf32>, vector<4xf32>
// CHECK: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<1000xf32>, vector<4xf32>
// CHECK: vector.load %arg2[{{.*}}] {alignment = 4 : i64} : memref<64x1xf32>, vector<1xf32>
// CHECK: math.tanh {{.*}} : vector<4xf32>
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<64x1000xf32>, vector<4xf32>
// CHECK-NOT: vector.transfer
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#col = affine_map<(d0, d1) -> (d0, 0)>
func.func private @chain(%x: memref<64x1000xf32>, %s: memref<1000xf32>, %c: memref<64x1xf32>, %y: memref<64x1000xf32>)
    attributes {tile.kernel = "elementwise", tile.config = {strategy = "gpu_elementwise", block_threads = 256 : i64, vector_size = 4 : i64}} {
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s, %c : memref<64x1000xf32>, memref<1000xf32>, memref<64x1xf32>) outs(%y : memref<64x1000xf32>) {
  ^bb0(%a: f32, %b: f32, %d: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    %p = arith.addf %m, %d : f32
    %t = math.tanh %p : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// f16 rows of 8 halves a vector; 1-D ops too. An odd innermost extent takes the widest vector
// that divides it (127: one element).
// CHECK-LABEL: func.func private @halves
// CHECK: scf.forall (%{{.*}}) in (512)
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<4096xf16>, vector<8xf16>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (3, 127)
// CHECK: vector.load {{.*}} : memref<3x127xf16>, vector<1xf16>
#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func private @halves(%x: memref<4096xf16>, %y: memref<4096xf16>, %u: memref<3x127xf16>, %v: memref<3x127xf16>)
    attributes {tile.kernel = "elementwise", tile.config = {strategy = "gpu_elementwise", block_threads = 256 : i64, vector_size = 8 : i64}} {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<4096xf16>) outs(%y : memref<4096xf16>) {
  ^bb0(%a: f16, %out: f16):
    %n = arith.negf %a : f16
    linalg.yield %n : f16
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%u : memref<3x127xf16>) outs(%v : memref<3x127xf16>) {
  ^bb0(%a: f16, %out: f16):
    %n = arith.negf %a : f16
    linalg.yield %n : f16
  }
  return
}

// -----

// Kernels of other strategies are not touched here; a kernel without a configuration neither.
// CHECK-LABEL: func.func private @rows
// CHECK: linalg.generic
// CHECK-NOT: scf.forall
#id = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
func.func private @rows(%x: memref<8x64xf32>, %y: memref<8xf32>)
    attributes {tile.kernel = "reduction", tile.config = {strategy = "loops"}} {
  linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
