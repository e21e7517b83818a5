// RUN: strata-opt %s --prefetch-panels --split-input-file | FileCheck %s

// A block loop over K inside a loop over N: its micro-kernels (2 x 2) prefetch the next
// block's 8 pack reads, 2 each, each read 4 rows of 2 lines: 16 prefetches into L2 before
// each micro-kernel. After the last K block, the first of the next N block.
// CHECK-LABEL: func.func private @short_block
// CHECK: scf.for %[[N:.*]] = %c0 to %c256 step %c64 {
// CHECK: scf.for %[[K:.*]] = %c0 to %c64 step %c16 {
// CHECK: vector.transfer_write %{{.*}}, %alloc
// CHECK: scf.for %[[J:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT: scf.for %[[I:.*]] = %c0 to %c2 step %c1 {
// CHECK: %[[AHEAD:.*]] = arith.addi %[[K]], %{{.*}}
// CHECK: %[[WRAPS:.*]] = arith.cmpi sgt, %[[AHEAD]], %{{.*}}
// CHECK: %[[NEXT_K:.*]] = arith.select %[[WRAPS]], %{{.*}}, %[[AHEAD]]
// CHECK: %[[NEXT_N:.*]] = arith.select %[[WRAPS]], %{{.*}}, %[[N]]
// CHECK-COUNT-16: memref.prefetch %arg0[{{.*}}], read, locality<2>, data : memref<64x256xf32>
// CHECK-NOT: memref.prefetch
// CHECK: vector.transfer_read %alloc
// CHECK-NOT: tile.
func.func private @short_block(%b: memref<64x256xf32>, %c: memref<2x2x4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %pad = arith.constant 0.0 : f32
  %alloc = memref.alloc() : memref<2x4x4x32xf32>
  scf.for %n = %c0 to %c256 step %c64 {
    scf.for %k = %c0 to %c64 step %c16 {
      scf.for %kk = %c0 to %c4 step %c1 {
        %row = affine.apply affine_map<(d0, d1) -> (d0 + d1 * 4)>(%k, %kk)
        scf.for %p = %c0 to %c2 step %c1 {
          %col = affine.apply affine_map<(d0, d1) -> (d0 + d1 * 32)>(%n, %p)
          %v = vector.transfer_read %b[%row, %col], %pad {in_bounds = [true, true]} : memref<64x256xf32>, vector<4x32xf32>
          vector.transfer_write %v, %alloc[%p, %kk, %c0, %c0] {in_bounds = [true, true]} : vector<4x32xf32>, memref<2x4x4x32xf32>
        }
      }
      scf.for %j = %c0 to %c2 step %c1 {
        scf.for %i = %c0 to %c2 step %c1 {
          %panel = vector.transfer_read %alloc[%j, %c0, %c0, %c0], %pad {in_bounds = [true, true]} : memref<2x4x4x32xf32>, vector<4x32xf32>
          vector.transfer_write %panel, %c[%j, %i, %c0, %c0] {in_bounds = [true, true]} : vector<4x32xf32>, memref<2x2x4x32xf32>
        } {tile.micro_kernel}
      }
    } {tile.prefetch_block}
  }
  return
}

// -----

// No loop over columns around the block loop: after the last block, the last again. Eight
// micro-kernels for 8 reads: one each.
// CHECK-LABEL: func.func private @one_column_block
// CHECK: scf.for %[[K:.*]] = %c0 to %c64 step %c16 {
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK: %[[AHEAD:.*]] = arith.addi %[[K]], %c16
// CHECK: %[[NEXT:.*]] = arith.minsi %[[AHEAD]], %c48
// CHECK: %[[ROW:.*]] = affine.apply #{{.*}}(%[[NEXT]], %{{.*}})
// CHECK: memref.prefetch %arg0[%[[ROW]], %{{.*}}], read, locality<2>, data
// CHECK-COUNT-7: memref.prefetch
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func private @one_column_block(%b: memref<64x64xf32>, %c: memref<8x4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %alloc = memref.alloc() : memref<2x4x4x32xf32>
  scf.for %k = %c0 to %c64 step %c16 {
    scf.for %kk = %c0 to %c4 step %c1 {
      %row = affine.apply affine_map<(d0, d1) -> (d0 + d1 * 4)>(%k, %kk)
      scf.for %p = %c0 to %c2 step %c1 {
        %col = affine.apply affine_map<(d0) -> (d0 * 32)>(%p)
        %v = vector.transfer_read %b[%row, %col], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x32xf32>
        vector.transfer_write %v, %alloc[%p, %kk, %c0, %c0] {in_bounds = [true, true]} : vector<4x32xf32>, memref<2x4x4x32xf32>
      }
    }
    scf.for %i = %c0 to %c8 step %c1 {
      %panel = vector.transfer_read %alloc[%c0, %c0, %c0, %c0], %pad {in_bounds = [true, true]} : memref<2x4x4x32xf32>, vector<4x32xf32>
      vector.transfer_write %panel, %c[%i, %c0, %c0] {in_bounds = [true, true]} : vector<4x32xf32>, memref<8x4x32xf32>
    } {tile.micro_kernel}
  } {tile.prefetch_block}
  return
}

// -----

// More micro-kernels (4 x 8) than pack reads (8): the prefetches go before the inner loop of
// micro-kernels, two reads for each of the 4 outer iterations (4 rows of one line each:
// bf16), so that no two micro-kernels prefetch the same lines. The pack reads past the last
// row of B (K = 60 padded to 64: not in bounds), so the prefetches stay inside it.
// CHECK-LABEL: func.func private @padded_pairs
// CHECK: vector.transfer_write %{{.*}}, %alloc
// CHECK: scf.for %[[J:.*]] = %c0 to %c4 step %c1 {
// CHECK: %[[ROW:.*]] = arith.minsi %{{.*}}, %c59
// CHECK: %[[COL:.*]] = arith.minsi %{{.*}}, %c63
// CHECK: memref.prefetch %arg0[%[[ROW]], %[[COL]]]
// CHECK-COUNT-7: memref.prefetch %arg0
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func private @padded_pairs(%b: memref<60x64xbf16>, %c: memref<4x8x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : bf16
  %alloc = memref.alloc() : memref<2x4x4x32xbf16>
  scf.for %k = %c0 to %c64 step %c16 {
    scf.for %kk = %c0 to %c4 step %c1 {
      %row = affine.apply affine_map<(d0, d1) -> (d0 + d1 * 4)>(%k, %kk)
      scf.for %p = %c0 to %c2 step %c1 {
        %col = affine.apply affine_map<(d0) -> (d0 * 32)>(%p)
        %v = vector.transfer_read %b[%row, %col], %pad {in_bounds = [false, true]} : memref<60x64xbf16>, vector<4x32xbf16>
        vector.transfer_write %v, %alloc[%p, %kk, %c0, %c0] {in_bounds = [true, true]} : vector<4x32xbf16>, memref<2x4x4x32xbf16>
      }
    }
    scf.for %j = %c0 to %c4 step %c1 {
      scf.for %i = %c0 to %c8 step %c1 {
        %panel = vector.transfer_read %alloc[%c0, %c0, %c0, %c0], %pad {in_bounds = [true]} : memref<2x4x4x32xbf16>, vector<32xbf16>
        vector.transfer_write %panel, %c[%j, %i, %c0] {in_bounds = [true]} : vector<32xbf16>, memref<4x8x32xbf16>
      } {tile.micro_kernel}
    }
  } {tile.prefetch_block}
  return
}

// -----

// A block loop whose pack this pass does not know (two reads of B: the micro-kernels could
// not tell which the next block packs) keeps no prefetches; the marks go either way.
// CHECK-LABEL: func.func private @two_reads
// CHECK-NOT: memref.prefetch
// CHECK-NOT: tile.
// CHECK: return
func.func private @two_reads(%b: memref<64x64xf32>, %c: memref<8x4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %alloc = memref.alloc() : memref<2x4x32xf32>
  scf.for %k = %c0 to %c64 step %c16 {
    %v = vector.transfer_read %b[%k, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x32xf32>
    %w = vector.transfer_read %b[%k, %c32], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x32xf32>
    vector.transfer_write %v, %alloc[%c0, %c0, %c0] {in_bounds = [true, true]} : vector<4x32xf32>, memref<2x4x32xf32>
    vector.transfer_write %w, %alloc[%c1, %c0, %c0] {in_bounds = [true, true]} : vector<4x32xf32>, memref<2x4x32xf32>
    scf.for %i = %c0 to %c8 step %c1 {
      %panel = vector.transfer_read %alloc[%c0, %c0, %c0], %pad {in_bounds = [true, true]} : memref<2x4x32xf32>, vector<4x32xf32>
      vector.transfer_write %panel, %c[%i, %c0, %c0] {in_bounds = [true, true]} : vector<4x32xf32>, memref<8x4x32xf32>
    } {tile.micro_kernel}
  } {tile.prefetch_block}
  return
}
