// RUN: strata-opt %s --prefetch-rows --split-input-file | FileCheck %s

// Each vector read of a kernel argument in a marked row loop prefetches the same columns one
// row further down (clamped to the last row), one prefetch per 64-byte line: two for 32 f32.
// A next row of 4 KiB takes under a quarter of L1 (32 KiB without a target): into L1.
// CHECK-LABEL: func.func private @rows
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[NEXT:.*]] = arith.addi %[[R]], %c1
// CHECK: %[[ROW:.*]] = arith.minsi %[[NEXT]], %c255
// CHECK: memref.prefetch %arg0[%[[ROW]], %[[C]]], read, locality<3>, data
// CHECK: %[[C16:.*]] = arith.addi %[[C]], %c16
// CHECK: memref.prefetch %arg0[%[[ROW]], %[[C16]]], read, locality<3>, data
// CHECK-NEXT: vector.load %arg0[%[[R]], %[[C]]]
// CHECK-NOT: memref.prefetch
// CHECK: return
// CHECK-NOT: tile.prefetch_rows
func.func private @rows(%x: memref<256x1024xf32>, %y: memref<256x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  scf.for %r = %c0 to %c256 step %c1 {
    scf.for %c = %c0 to %c1024 step %c32 {
      %v = vector.load %x[%r, %c] : memref<256x1024xf32>, vector<32xf32>
      vector.store %v, %y[%r, %c] : memref<256x1024xf32>, vector<32xf32>
    }
  } {tile.prefetch_rows = 1 : i64}
  return
}

// -----

// Left alone: a loop without the mark, reads of buffers the kernel allocates, and of 1-D
// arguments.
// CHECK-LABEL: func.func private @unmarked
// CHECK-NOT: memref.prefetch
// CHECK-LABEL: func.func private @temporaries
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func private @unmarked(%x: memref<256x1024xf32>, %y: memref<256x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %r = %c0 to %c256 step %c1 {
    %v = vector.load %x[%r, %c0] : memref<256x1024xf32>, vector<32xf32>
    vector.store %v, %y[%r, %c0] : memref<256x1024xf32>, vector<32xf32>
  }
  return
}
func.func private @temporaries(%x: memref<1024xf32>, %y: memref<256x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %t = memref.alloc() : memref<256x1024xf32>
  scf.for %r = %c0 to %c256 step %c1 {
    %v = vector.load %t[%r, %c0] : memref<256x1024xf32>, vector<32xf32>
    %w = vector.load %x[%c0] : memref<1024xf32>, vector<32xf32>
    %s = arith.addf %v, %w : vector<32xf32>
    vector.store %s, %y[%r, %c0] : memref<256x1024xf32>, vector<32xf32>
  } {tile.prefetch_rows = 1 : i64}
  memref.dealloc %t : memref<256x1024xf32>
  return
}

// -----

// Two loops over one row of %x (softmax's max, then its exponentials): only the first
// prefetches the next row; the second would ask for lines already on their way.
// CHECK-LABEL: func.func private @two_passes
// CHECK: scf.for
// CHECK: memref.prefetch %arg0
// CHECK: vector.load %arg0
// CHECK: scf.for
// CHECK-NOT: memref.prefetch
// CHECK: vector.load %arg0
// CHECK: return
func.func private @two_passes(%x: memref<256x1024xf32>, %y: memref<256x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  scf.for %r = %c0 to %c256 step %c1 {
    %m = scf.for %c = %c0 to %c1024 step %c16 iter_args(%acc = %zero) -> (vector<16xf32>) {
      %v = vector.load %x[%r, %c] : memref<256x1024xf32>, vector<16xf32>
      %n = arith.maximumf %v, %acc : vector<16xf32>
      scf.yield %n : vector<16xf32>
    }
    scf.for %c = %c0 to %c1024 step %c16 {
      %v = vector.load %x[%r, %c] : memref<256x1024xf32>, vector<16xf32>
      %d = arith.subf %v, %m : vector<16xf32>
      vector.store %d, %y[%r, %c] : memref<256x1024xf32>, vector<16xf32>
    }
  } {tile.prefetch_rows = 1 : i64}
  return
}

// -----

// Next rows of 2 x 16 KiB would crowd L1: they come into L2.
// CHECK-LABEL: func.func private @wide_rows
// CHECK-COUNT-2: memref.prefetch %{{.*}}, read, locality<2>, data
func.func private @wide_rows(%x: memref<64x4096xf32>, %z: memref<64x4096xf32>, %y: memref<64x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  scf.for %r = %c0 to %c64 step %c1 {
    scf.for %c = %c0 to %c4096 step %c16 {
      %v = vector.load %x[%r, %c] : memref<64x4096xf32>, vector<16xf32>
      %w = vector.load %z[%r, %c] : memref<64x4096xf32>, vector<16xf32>
      %s = arith.addf %v, %w : vector<16xf32>
      vector.store %s, %y[%r, %c] : memref<64x4096xf32>, vector<16xf32>
    }
  } {tile.prefetch_rows = 1 : i64}
  return
}
