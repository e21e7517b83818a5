// RUN: strata-opt %s --gpu-map-loops --split-input-file | FileCheck %s

// An elementwise op: 1000 points in blocks of 256 threads (4 blocks), each thread behind a
// bounds check, its point delinearized from the linear thread id.
// CHECK-LABEL: func.func @elementwise
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c4, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c256
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK: arith.remui
// CHECK: math.tanh
// CHECK-NOT: scf.parallel
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @elementwise(%x: memref<10x100xf32>, %y: memref<10x100xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<10x100xf32>) outs(%y : memref<10x100xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// A reduction over the leading axis: the parallel dim is moved first, so each of the 64
// threads loops over the 32 rows.
// CHECK-LABEL: func.func @leading_reduction
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: arith.addf
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>
func.func @leading_reduction(%x: memref<32x64xf32>, %y: memref<64xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<32x64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A copy into a result buffer becomes a launch too; allocations stay on the host.
// CHECK-LABEL: func.func @copy
// CHECK: memref.alloc
// CHECK: gpu.launch
// CHECK-NOT: memref.copy
func.func @copy(%x: memref<8xf32>, %y: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  memref.copy %x, %t : memref<8xf32> to memref<8xf32>
  memref.copy %t, %y : memref<8xf32> to memref<8xf32>
  return
}
