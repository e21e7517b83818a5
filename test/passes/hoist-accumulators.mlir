// RUN: strata-opt %s --hoist-accumulators --split-input-file | FileCheck %s

// A micro-kernel's C tile, in a buffer that is expanded to NCHW after the loop (as a conv's
// product is): it is read once before the k loop, carried, and written once after it.
// CHECK-LABEL: func.func @conv_tile
// CHECK: %[[C:.*]] = vector.transfer_read %[[BUF:.*]][%{{.*}}, %{{.*}}]
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[C]]) -> (vector<4x16xf32>)
// CHECK-NOT: vector.transfer_write
// CHECK: vector.fma %{{.*}}, %{{.*}}, %[[ACC]]
// CHECK: scf.yield
// CHECK: vector.transfer_write %[[SUM]], %[[BUF]]
// CHECK: memref.expand_shape %[[BUF]]
func.func @conv_tile(%a: memref<64x144xf32>, %b: memref<144x3025xf32>, %out: memref<1x64x55x55xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c144 = arith.constant 144 : index
  %pad = arith.constant 0.0 : f32
  %buf = memref.alloc() : memref<64x3025xf32>
  scf.for %k = %c0 to %c144 step %c1 {
    %av = vector.transfer_read %a[%c0, %k], %pad {in_bounds = [true]} : memref<64x144xf32>, vector<16xf32>
    %bv = vector.transfer_read %b[%k, %c0], %pad {in_bounds = [true, true]} : memref<144x3025xf32>, vector<4x16xf32>
    %cv = vector.transfer_read %buf[%c0, %c0], %pad {in_bounds = [true, true]} : memref<64x3025xf32>, vector<4x16xf32>
    %ab = vector.broadcast %av : vector<16xf32> to vector<4x16xf32>
    %r = vector.fma %ab, %bv, %cv : vector<4x16xf32>
    vector.transfer_write %r, %buf[%c0, %c0] {in_bounds = [true, true]} : vector<4x16xf32>, memref<64x3025xf32>
  }
  %e = memref.expand_shape %buf [[0, 1], [2, 3]] output_shape [1, 64, 55, 55] : memref<64x3025xf32> into memref<1x64x55x55xf32>
  memref.copy %e, %out : memref<1x64x55x55xf32> to memref<1x64x55x55xf32>
  return
}

// -----

// Kept: another op in the loop reads the buffer through a view.
// CHECK-LABEL: func.func @read_through_view
// CHECK: scf.for
// CHECK-NEXT: vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}]
// CHECK: vector.transfer_write
// CHECK: scf.yield
func.func @read_through_view(%out: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %pad = arith.constant 0.0 : f32
  %buf = memref.alloc() : memref<8x16xf32>
  %flat = memref.collapse_shape %buf [[0, 1]] : memref<8x16xf32> into memref<128xf32>
  %sum = scf.for %k = %c0 to %c8 step %c1 iter_args(%s = %pad) -> (f32) {
    %v = vector.transfer_read %buf[%c0, %c0], %pad {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
    %w = arith.addf %v, %v : vector<16xf32>
    vector.transfer_write %w, %buf[%c0, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
    %x = memref.load %flat[%k] : memref<128xf32>
    %t = arith.addf %s, %x : f32
    scf.yield %t : f32
  }
  memref.store %sum, %out[%c0, %c0] : memref<8x16xf32>
  return
}

// -----

// Kept: the indices change with the loop.
// CHECK-LABEL: func.func @moving_slot
// CHECK: scf.for
// CHECK-NEXT: vector.transfer_read
// CHECK: vector.transfer_write
func.func @moving_slot(%buf: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %v = vector.transfer_read %buf[%i, %c0], %pad {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
    %w = arith.addf %v, %v : vector<16xf32>
    vector.transfer_write %w, %buf[%i, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
  }
  return
}

// -----

// Kept: the loop may not run (its bounds are not known), and the read must not happen then.
// CHECK-LABEL: func.func @maybe_empty
// CHECK: scf.for
// CHECK-NEXT: vector.transfer_read
func.func @maybe_empty(%buf: memref<8x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %v = vector.transfer_read %buf[%c0, %c0], %pad {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
    %w = arith.addf %v, %v : vector<16xf32>
    vector.transfer_write %w, %buf[%c0, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
  }
  return
}

// -----

// Two pairs in one loop (two accumulator rows) are both carried, and the loop's own
// iter_args stay in place.
// CHECK-LABEL: func.func @two_pairs
// CHECK: %[[A:.*]] = vector.transfer_read %{{.*}}[%c0, %c0]
// CHECK: %[[B:.*]] = vector.transfer_read %{{.*}}[%c1, %c0]
// CHECK: %[[R:.*]]:3 = scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[A]], %{{.*}} = %[[B]]) -> (f32, vector<16xf32>, vector<16xf32>)
// CHECK-NOT: memref<8x16xf32>, vector<16xf32>
// CHECK: scf.yield
// CHECK-DAG: vector.transfer_write %[[R]]#1, %{{.*}}[%c0, %c0]
// CHECK-DAG: vector.transfer_write %[[R]]#2, %{{.*}}[%c1, %c0]
// CHECK: memref.store %[[R]]#0
func.func @two_pairs(%buf: memref<8x16xf32>, %x: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %pad = arith.constant 0.0 : f32
  %n = scf.for %k = %c0 to %c8 step %c1 iter_args(%s = %pad) -> (f32) {
    %xv = vector.transfer_read %x[%c0], %pad {in_bounds = [true]} : memref<16xf32>, vector<16xf32>
    %v0 = vector.transfer_read %buf[%c0, %c0], %pad {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
    %v1 = vector.transfer_read %buf[%c1, %c0], %pad {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
    %w0 = arith.addf %v0, %xv : vector<16xf32>
    %w1 = arith.addf %v1, %xv : vector<16xf32>
    vector.transfer_write %w0, %buf[%c0, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
    vector.transfer_write %w1, %buf[%c1, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
    %t = arith.addf %s, %pad : f32
    scf.yield %t : f32
  }
  memref.store %n, %x[%c0] : memref<16xf32>
  return
}

// -----

// The weights come from a constant global (a conv's, packed or not): a global aliases no
// argument and no allocation, so the C tile of the output argument is carried as well.
// CHECK-LABEL: func.func @weights_from_a_global
// CHECK: %[[C:.*]] = vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[C]]) -> (vector<8x16xf32>)
// CHECK-NOT: vector.transfer_write
// CHECK: scf.yield
// CHECK: vector.transfer_write
memref.global "private" constant @weights : memref<8x64xf32> = dense<1.0>
func.func @weights_from_a_global(%b: memref<64x16xf32>, %out: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %w = memref.get_global @weights : memref<8x64xf32>
  scf.for %k = %c0 to %c64 step %c1 {
    %av = vector.transfer_read %w[%c0, %k], %pad {in_bounds = [true, true]} : memref<8x64xf32>, vector<8x1xf32>
    %bv = vector.transfer_read %b[%k, %c0], %pad {in_bounds = [true]} : memref<64x16xf32>, vector<16xf32>
    %cv = vector.transfer_read %out[%c0, %c0], %pad {in_bounds = [true, true]} : memref<8x16xf32>, vector<8x16xf32>
    %ab = vector.broadcast %av : vector<8x1xf32> to vector<16x8x1xf32>
    %at = vector.shape_cast %ab : vector<16x8x1xf32> to vector<16x8xf32>
    %a = vector.transpose %at, [1, 0] : vector<16x8xf32> to vector<8x16xf32>
    %bb = vector.broadcast %bv : vector<16xf32> to vector<8x16xf32>
    %r = vector.fma %a, %bb, %cv : vector<8x16xf32>
    vector.transfer_write %r, %out[%c0, %c0] {in_bounds = [true, true]} : vector<8x16xf32>, memref<8x16xf32>
  }
  return
}

// -----

// Kept: the loop reads the global that the slot is in (two get_global ops of one name).
// CHECK-LABEL: func.func @slot_in_a_global
// CHECK: scf.for
// CHECK-NEXT: vector.transfer_read
// CHECK: vector.transfer_write
memref.global "private" @table : memref<8x16xf32> = dense<1.0>
func.func @slot_in_a_global(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %pad = arith.constant 0.0 : f32
  %t = memref.get_global @table : memref<8x16xf32>
  %u = memref.get_global @table : memref<8x16xf32>
  scf.for %k = %c0 to %c8 step %c1 {
    %v = vector.transfer_read %t[%c0, %c0], %pad {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
    %w = arith.addf %v, %v : vector<16xf32>
    vector.transfer_write %w, %t[%c0, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
    %x = memref.load %u[%k, %c1] : memref<8x16xf32>
    memref.store %x, %out[%k] : memref<8xf32>
  }
  return
}

// -----

// A C tile filled where its micro-kernel starts and read back at once: the read takes the
// zeros written, the k loop starts from them, and the fill goes, since the tile's store after
// the loop replaces it before anything else reaches the buffer.
// CHECK-LABEL: func.func @filled_tile
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4x16xf32>
// CHECK-NOT: vector.transfer_write
// CHECK-NOT: vector.transfer_read %arg2
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (vector<4x16xf32>)
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: vector.transfer_write %[[SUM]], %arg2[%c0, %c0]
// CHECK-NOT: vector.transfer_write
func.func @filled_tile(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<4x16xf32>
  vector.transfer_write %zero, %c[%c0, %c0] {in_bounds = [true, true]} : vector<4x16xf32>, memref<64x64xf32>
  %start = vector.transfer_read %c[%c0, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x16xf32>
  %sum = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %start) -> (vector<4x16xf32>) {
    %av = vector.transfer_read %a[%c0, %k], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<16xf32>
    %bv = vector.transfer_read %b[%k, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x16xf32>
    %ab = vector.broadcast %av : vector<16xf32> to vector<4x16xf32>
    %r = vector.fma %ab, %bv, %acc : vector<4x16xf32>
    scf.yield %r : vector<4x16xf32>
  }
  vector.transfer_write %sum, %c[%c0, %c0] {in_bounds = [true, true]} : vector<4x16xf32>, memref<64x64xf32>
  return
}

// -----

// The read still takes the written vector, but the write stays: the loop reads the buffer
// (a view of it) before the tile's store.
// CHECK-LABEL: func.func @filled_tile_read_between
// CHECK: vector.transfer_write %{{.*}}, %arg1[%c0, %c0]
// CHECK-NOT: vector.transfer_read %arg1[%c0, %c0]
// CHECK: scf.for
// CHECK: vector.transfer_read %{{.*}}[%{{.*}}], {{.*}} : memref<4096xf32>
// CHECK: vector.transfer_write %{{.*}}, %arg1[%c0, %c0]
func.func @filled_tile_read_between(%a: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<4x16xf32>
  %flat = memref.collapse_shape %c [[0, 1]] : memref<64x64xf32> into memref<4096xf32>
  vector.transfer_write %zero, %c[%c0, %c0] {in_bounds = [true, true]} : vector<4x16xf32>, memref<64x64xf32>
  %start = vector.transfer_read %c[%c0, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x16xf32>
  %sum = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %start) -> (vector<4x16xf32>) {
    %v = vector.transfer_read %flat[%k], %pad {in_bounds = [true]} : memref<4096xf32>, vector<16xf32>
    %vb = vector.broadcast %v : vector<16xf32> to vector<4x16xf32>
    %r = arith.addf %vb, %acc : vector<4x16xf32>
    scf.yield %r : vector<4x16xf32>
  }
  vector.transfer_write %sum, %c[%c0, %c0] {in_bounds = [true, true]} : vector<4x16xf32>, memref<64x64xf32>
  return
}
