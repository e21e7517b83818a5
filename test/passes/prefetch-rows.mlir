// RUN: strata-opt %s --prefetch-rows --split-input-file | FileCheck %s

// Each vector read of a kernel argument in the last loop of a marked row loop that reads it
// prefetches the same columns one row further down (clamped to the last row), one prefetch
// per 64-byte line: two for 32 f32; the loops before it read the row unprefetched. Each
// write of an argument prefetches its next row for writing. The next rows of 2 x 4 KiB take
// at most a quarter of L1 (32 KiB without a target): into L1.
// CHECK-LABEL: func.func private @rows
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[NEXT:.*]] = arith.addi %[[R]], %c1
// CHECK: %[[ROW:.*]] = arith.minsi %[[NEXT]], %c255
// CHECK: memref.prefetch %arg0[%[[ROW]], %[[C]]], read, locality<3>, data
// CHECK: %[[C16:.*]] = arith.addi %[[C]], %c16
// CHECK: memref.prefetch %arg0[%[[ROW]], %[[C16]]], read, locality<3>, data
// CHECK-NEXT: vector.load %arg0[%[[R]], %[[C]]]
// CHECK: %[[WNEXT:.*]] = arith.addi %[[R]], %c1
// CHECK: %[[WROW:.*]] = arith.minsi %[[WNEXT]], %c255
// CHECK: memref.prefetch %arg1[%[[WROW]], %[[C]]], write, locality<3>, data
// CHECK: %[[WC16:.*]] = arith.addi %[[C]], %c16
// CHECK: memref.prefetch %arg1[%[[WROW]], %[[WC16]]], write, locality<3>, data
// CHECK-NEXT: vector.store %{{.*}}, %arg1[%[[R]], %[[C]]]
// CHECK-NOT: memref.prefetch
// CHECK: return
// CHECK-NOT: tile.prefetch_rows
func.func private @rows(%x: memref<256x1024xf32>, %y: memref<256x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant dense<0.0> : vector<32xf32>
  scf.for %r = %c0 to %c256 step %c1 {
    %m = scf.for %c = %c0 to %c1024 step %c32 iter_args(%acc = %zero) -> (vector<32xf32>) {
      %v = vector.load %x[%r, %c] : memref<256x1024xf32>, vector<32xf32>
      %n = arith.maximumf %v, %acc : vector<32xf32>
      scf.yield %n : vector<32xf32>
    }
    scf.for %c = %c0 to %c1024 step %c32 {
      %v = vector.load %x[%r, %c] : memref<256x1024xf32>, vector<32xf32>
      %d = arith.subf %v, %m : vector<32xf32>
      vector.store %d, %y[%r, %c] : memref<256x1024xf32>, vector<32xf32>
    }
  } {tile.prefetch_rows = 1 : i64}
  return
}

// -----

// One loop reads the row (a row sum; a copy): its reads are the row's first, and
// prefetching the next row beside them competes with them for the core's outstanding misses
// (a row sum of 1024x1024 ran 1.22x faster without, 1 thread of a znver4). Only its write
// is prefetched.
// CHECK-LABEL: func.func private @one_pass
// CHECK-NOT: memref.prefetch %arg0
// CHECK-COUNT-2: memref.prefetch %arg1{{.*}}, write, locality<3>
// CHECK-NEXT: vector.store
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func private @one_pass(%x: memref<256x1024xf32>, %y: memref<256x1024xf32>) {
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
// arguments. The result, an argument, is still prefetched for writing.
// CHECK-LABEL: func.func private @unmarked
// CHECK-NOT: memref.prefetch
// CHECK-LABEL: func.func private @temporaries
// CHECK-NOT: memref.prefetch %alloc
// CHECK-NOT: memref.prefetch %arg0
// CHECK: memref.prefetch %arg1[%{{.*}}, %c0], write
// CHECK: memref.prefetch %arg1[%{{.*}}, %{{.*}}], write
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

// Two loops over one row of %x (softmax's max, then its exponentials): only the last
// prefetches the next row, when this row's reads hit L1 and its arithmetic overlaps the
// fetches. %y is written in the second loop: that loop prefetches it.
// CHECK-LABEL: func.func private @two_passes
// CHECK: scf.for
// CHECK-NOT: memref.prefetch
// CHECK: vector.load %arg0
// CHECK: scf.for
// CHECK: memref.prefetch %arg0{{.*}}, read, locality<3>
// CHECK: vector.load %arg0
// CHECK: memref.prefetch %arg1{{.*}}, write, locality<3>
// CHECK: vector.store {{.*}}, %arg1
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

// Next rows of 3 x 16 KiB would crowd L1: they come into L2.
// CHECK-LABEL: func.func private @wide_rows
// CHECK-COUNT-2: memref.prefetch %{{.*}}, read, locality<2>, data
// CHECK: memref.prefetch %{{.*}}, write, locality<2>, data
func.func private @wide_rows(%x: memref<64x4096xf32>, %z: memref<64x4096xf32>, %y: memref<64x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  scf.for %r = %c0 to %c64 step %c1 {
    %m = scf.for %c = %c0 to %c4096 step %c16 iter_args(%acc = %zero) -> (vector<16xf32>) {
      %v = vector.load %x[%r, %c] : memref<64x4096xf32>, vector<16xf32>
      %w = vector.load %z[%r, %c] : memref<64x4096xf32>, vector<16xf32>
      %s = arith.addf %v, %w : vector<16xf32>
      %n = arith.maximumf %s, %acc : vector<16xf32>
      scf.yield %n : vector<16xf32>
    }
    scf.for %c = %c0 to %c4096 step %c16 {
      %v = vector.load %x[%r, %c] : memref<64x4096xf32>, vector<16xf32>
      %w = vector.load %z[%r, %c] : memref<64x4096xf32>, vector<16xf32>
      %s = arith.addf %v, %w : vector<16xf32>
      %d = arith.subf %s, %m : vector<16xf32>
      vector.store %d, %y[%r, %c] : memref<64x4096xf32>, vector<16xf32>
    }
  } {tile.prefetch_rows = 1 : i64}
  return
}

// A row written through a subview of the result (as --tile-rows leaves it) is prefetched in
// the result itself: the subview's row offset plus the row ahead. A rank-reducing subview is
// left alone: its dims are not the buffer's.
// CHECK-LABEL: func.func private @row_views
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[AT:.*]] = arith.addi %[[R]], %c0
// CHECK: %[[NEXT:.*]] = arith.addi %[[AT]], %c1
// CHECK: %[[ROW:.*]] = arith.minsi %[[NEXT]], %c255
// CHECK: memref.prefetch %arg1[%[[ROW]], %[[C]]], write, locality<3>, data
// CHECK-NEXT: vector.store %{{.*}}, %{{.*}}[%c0, %[[C]]]
// CHECK-NOT: memref.prefetch %arg2
// CHECK: return
func.func private @row_views(%x: memref<256x1024xf32>, %y: memref<256x1024xf32>, %z: memref<256x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  scf.for %r = %c0 to %c256 step %c1 {
    %row = memref.subview %y[%r, 0] [1, 1024] [1, 1] : memref<256x1024xf32> to memref<1x1024xf32, strided<[1024, 1], offset: ?>>
    %flat = memref.subview %z[%r, 0] [1, 1024] [1, 1] : memref<256x1024xf32> to memref<1024xf32, strided<[1], offset: ?>>
    scf.for %c = %c0 to %c1024 step %c16 {
      %v = vector.load %x[%r, %c] : memref<256x1024xf32>, vector<16xf32>
      vector.store %v, %row[%c0, %c] : memref<1x1024xf32, strided<[1024, 1], offset: ?>>, vector<16xf32>
      vector.store %v, %flat[%c] : memref<1024xf32, strided<[1], offset: ?>>, vector<16xf32>
    }
  } {tile.prefetch_rows = 1 : i64}
  return
}
