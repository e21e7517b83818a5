// RUN: strata-opt %s --tile-vectorize --split-input-file | FileCheck %s

// A marked 8x1x32 micro-kernel becomes FMAs on 32-wide vectors; the C tile is read once before
// the k loop and carried through it in registers (hoisted), and written back after it.
// CHECK-LABEL: func.func @micro_kernel
// CHECK: scf.for
// CHECK: vector.transfer_read %arg2{{.*}} : memref<16x32xf32>, vector<8x32xf32>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<8x32xf32>)
// CHECK-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// CHECK: scf.yield
// CHECK: vector.transfer_write {{.*}} : vector<8x32xf32>, memref<16x32xf32>
// CHECK-NOT: vector.contract
// CHECK-NOT: linalg.matmul
func.func @micro_kernel(%a: memref<16x4xf32>, %b: memref<4x32xf32>, %c: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %m = %c0 to %c16 step %c8 {
    scf.for %k = %c0 to %c4 step %c1 {
      %sa = memref.subview %a[%m, %k] [8, 1] [1, 1] : memref<16x4xf32> to memref<8x1xf32, strided<[4, 1], offset: ?>>
      %sb = memref.subview %b[%k, 0] [1, 32] [1, 1] : memref<4x32xf32> to memref<1x32xf32, strided<[32, 1], offset: ?>>
      %sc = memref.subview %c[%m, 0] [8, 32] [1, 1] : memref<16x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
      linalg.matmul {tile.vectorize} ins(%sa, %sb : memref<8x1xf32, strided<[4, 1], offset: ?>>, memref<1x32xf32, strided<[32, 1], offset: ?>>)
                    outs(%sc : memref<8x32xf32, strided<[32, 1], offset: ?>>)
    }
  }
  return
}

// -----

// The same when the product is then viewed in another shape (a conv's [O, OH*OW] product
// expanded to NCHW): the view does not keep the C tile in memory at every k step.
// CHECK-LABEL: func.func @micro_kernel_viewed_after
// CHECK: vector.transfer_read %[[C:[a-z_0-9]+]][{{.*}} : memref<16x32xf32>, vector<8x32xf32>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<8x32xf32>)
// CHECK-NOT: memref<16x32xf32>
// CHECK: scf.yield
// CHECK: vector.transfer_write {{.*}}, %[[C]]{{.*}} : vector<8x32xf32>, memref<16x32xf32>
// CHECK: memref.expand_shape %[[C]]
func.func @micro_kernel_viewed_after(%a: memref<16x4xf32>, %b: memref<4x32xf32>, %out: memref<1x16x4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<16x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<16x32xf32>)
  scf.for %m = %c0 to %c16 step %c8 {
    scf.for %k = %c0 to %c4 step %c1 {
      %sa = memref.subview %a[%m, %k] [8, 1] [1, 1] : memref<16x4xf32> to memref<8x1xf32, strided<[4, 1], offset: ?>>
      %sb = memref.subview %b[%k, 0] [1, 32] [1, 1] : memref<4x32xf32> to memref<1x32xf32, strided<[32, 1], offset: ?>>
      %sc = memref.subview %c[%m, 0] [8, 32] [1, 1] : memref<16x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
      linalg.matmul {tile.vectorize} ins(%sa, %sb : memref<8x1xf32, strided<[4, 1], offset: ?>>, memref<1x32xf32, strided<[32, 1], offset: ?>>)
                    outs(%sc : memref<8x32xf32, strided<[32, 1], offset: ?>>)
    }
  }
  %nchw = memref.expand_shape %c [[0, 1], [2, 3]] output_shape [1, 16, 4, 8] : memref<16x32xf32> into memref<1x16x4x8xf32>
  memref.copy %nchw, %out : memref<1x16x4x8xf32> to memref<1x16x4x8xf32>
  return
}

// -----

// Marked elementwise ops become vector ops; unmarked ones stay as they are.
// CHECK-LABEL: func.func @rows
// CHECK: vector.transfer_read {{.*}} vector<1x16xf32>
// CHECK: math.exp %{{.*}} : vector<1x16xf32>
// CHECK: vector.transfer_write
// CHECK: linalg.generic
// CHECK: math.exp %{{.*}} : f32
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @rows(%x: memref<1x16xf32>, %y: memref<1x16xf32>, %z: memref<1x16xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<1x16xf32>) outs(%y : memref<1x16xf32>) attrs = {tile.vectorize} {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<1x16xf32>) outs(%z : memref<1x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A row's partial results (a 1x32 vector reduced to one value) fold in halves: 16, 8, 4, 2
// and 1 lanes, then the accumulator; no per-lane extracts.
// CHECK-LABEL: func.func @row_sum
// CHECK: %[[ALL:.*]] = vector.transfer_read %{{.*}} : memref<1x32xf32>, vector<1x32xf32>
// CHECK: %[[FLAT:.*]] = vector.extract %[[ALL]][0] : vector<32xf32> from vector<1x32xf32>
// CHECK: %[[LO16:.*]] = vector.extract_strided_slice %[[FLAT]] {offsets = [0], sizes = [16], strides = [1]}
// CHECK: %[[HI16:.*]] = vector.extract_strided_slice %[[FLAT]] {offsets = [16], sizes = [16], strides = [1]}
// CHECK: arith.addf %[[LO16]], %[[HI16]] : vector<16xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK: %[[ONE:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<1xf32>
// CHECK: arith.addf %[[ONE]], %{{.*}} : vector<1xf32>
// CHECK-NOT: vector.multi_reduction
func.func @row_sum(%partial: memref<1x32xf32>, %total: memref<1xf32>) {
  linalg.reduce ins(%partial : memref<1x32xf32>) outs(%total : memref<1xf32>) dimensions = [1] {tile.vectorize}
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A 1-D row (a vector max's 32 partial results) folds in halves the same way, down to one
// lane extracted as a scalar and combined with the accumulator.
// CHECK-LABEL: func.func @vector_max
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK: %[[ONE:.*]] = arith.maxnumf %{{.*}}, %{{.*}} : vector<1xf32>
// CHECK: %[[LANE:.*]] = vector.extract %[[ONE]][0] : f32 from vector<1xf32>
// CHECK: arith.maxnumf %[[LANE]], %{{.*}} : f32
// CHECK-NOT: vector.multi_reduction
func.func @vector_max(%partial: memref<32xf32>, %total: memref<f32>) {
  linalg.reduce ins(%partial : memref<32xf32>) outs(%total : memref<f32>) dimensions = [0] {tile.vectorize}
    (%in: f32, %acc: f32) {
      %s = arith.maxnumf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A short copy between buffers in a vectorized kernel (a tiled im2col run, which bufferizes
// to memref.copy) becomes vector loads and stores; a long one is left to --lower-copies.
// CHECK-LABEL: func.func @short_copies
// CHECK: %[[PIECE:.*]] = vector.load %arg0[%arg3] : memref<64xf32>, vector<24xf32>
// CHECK: vector.store %[[PIECE]], %arg1[%arg3] : memref<64xf32>, vector<24xf32>
// CHECK: %[[OTHER:.*]] = memref.alloc() : memref<1024xf32>
// CHECK-NEXT: memref.copy %arg2, %[[OTHER]] : memref<1024xf32> to memref<1024xf32>
func.func @short_copies(%src: memref<64xf32>, %dst: memref<64xf32>, %big: memref<1024xf32>, %at: index) {
  %s = memref.subview %src[%at] [24] [1] : memref<64xf32> to memref<24xf32, strided<[1], offset: ?>>
  %d = memref.subview %dst[%at] [24] [1] : memref<64xf32> to memref<24xf32, strided<[1], offset: ?>>
  memref.copy %s, %d : memref<24xf32, strided<[1], offset: ?>> to memref<24xf32, strided<[1], offset: ?>>
  %other = memref.alloc() : memref<1024xf32>
  memref.copy %big, %other : memref<1024xf32> to memref<1024xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill {tile.vectorize} ins(%zero : f32) outs(%other : memref<1024xf32>)
  return
}

// -----

// A strided copy in a vectorized kernel (an image into the interior of its padded buffer)
// is copied row by row in vectors; a copy between contiguous buffers stays a memcpy.
// CHECK-LABEL: func.func @padded_interior
// CHECK: scf.for %[[C:.*]] = %c0 to %c64 step %c1
// CHECK: scf.for %[[Y:.*]] = %c0 to %c56 step %c1
// CHECK: %[[ROW:.*]] = vector.load %arg0[%[[C]], %[[Y]], %c0] : memref<64x56x56xf32>, vector<56xf32>
// CHECK: vector.store %[[ROW]], %arg1[%[[C]], %{{.*}}, %c1] : memref<64x58x58xf32>, vector<56xf32>
// CHECK: memref.copy %arg0, %arg2 : memref<64x56x56xf32> to memref<64x56x56xf32>
func.func @padded_interior(%x: memref<64x56x56xf32>, %padded: memref<64x58x58xf32>, %copy: memref<64x56x56xf32>) {
  %inner = memref.subview %padded[0, 1, 1] [64, 56, 56] [1, 1, 1] : memref<64x58x58xf32> to memref<64x56x56xf32, strided<[3364, 58, 1], offset: 59>>
  memref.copy %x, %inner : memref<64x56x56xf32> to memref<64x56x56xf32, strided<[3364, 58, 1], offset: 59>>
  memref.copy %x, %copy : memref<64x56x56xf32> to memref<64x56x56xf32>
  %zero = arith.constant 0.0 : f32
  %slab = memref.subview %padded[0, 0, 0] [64, 1, 58] [1, 1, 1] : memref<64x58x58xf32> to memref<64x1x58xf32, strided<[3364, 58, 1]>>
  linalg.fill {tile.vectorize} ins(%zero : f32) outs(%slab : memref<64x1x58xf32, strided<[3364, 58, 1]>>)
  return
}

// -----

// In a kernel whose threads split its channels (a depthwise conv's), the copy into the padded
// buffer is split the same way: a parallel loop over parts of the channels, rows in vectors.
// CHECK-LABEL: func.func @padded_interior_threads
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c56 step %c1
// CHECK: %[[ROW:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}, %c0] : memref<64x56x56xf32>, vector<56xf32>
// CHECK: vector.store %[[ROW]], %arg1[%{{.*}}, %{{.*}}, %c1] : memref<64x58x58xf32>, vector<56xf32>
func.func @padded_interior_threads(%x: memref<64x56x56xf32>, %padded: memref<64x58x58xf32>) attributes {
    tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 1, 56>, threads = 2 : i64,
                   thread_dim = 0 : i64, chunks = 4 : i64, vector_size = 16 : i64}} {
  %inner = memref.subview %padded[0, 1, 1] [64, 56, 56] [1, 1, 1] : memref<64x58x58xf32> to memref<64x56x56xf32, strided<[3364, 58, 1], offset: 59>>
  memref.copy %x, %inner : memref<64x56x56xf32> to memref<64x56x56xf32, strided<[3364, 58, 1], offset: 59>>
  %zero = arith.constant 0.0 : f32
  %slab = memref.subview %padded[0, 0, 0] [64, 1, 58] [1, 1, 1] : memref<64x58x58xf32> to memref<64x1x58xf32, strided<[3364, 58, 1]>>
  linalg.fill {tile.vectorize} ins(%zero : f32) outs(%slab : memref<64x1x58xf32, strided<[3364, 58, 1]>>)
  return
}

// -----

// On a CPU with bf16 pair products, a micro-kernel of bf16 tiles in pairs of k ([8][2] of A,
// [32][2] of B) summed into f32 is 16 x86vector.avx512.dot: A's pair of each row broadcast as
// one 32-bit word, B's tile read as two registers of 16 pairs, the accumulators carried
// through the k loop. B's pack, a transpose of two rows of 32 into [32][2], is written as the
// rows interleaved, in one run.
// CHECK-LABEL: func.func @pair_micro_kernel
// CHECK: %[[PANEL:.*]] = vector.interleave {{.*}} : vector<32xbf16> -> vector<64xbf16>
// CHECK: vector.store %[[PANEL]], {{.*}} : memref<1x1x64xbf16>, vector<64xbf16>
// CHECK-COUNT-16: vector.load %arg2{{.*}} : memref<8x32xf32>, vector<16xf32>
// CHECK: scf.for {{.*}} iter_args(
// CHECK-COUNT-2: vector.load {{.*}} : memref<64xbf16, strided<[1], offset: ?>>, vector<32xbf16>
// CHECK: vector.broadcast {{.*}} : i32 to vector<16xi32>
// CHECK-COUNT-2: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK: scf.yield
// CHECK-COUNT-16: vector.store {{.*}} : memref<8x32xf32>, vector<16xf32>
// CHECK-NOT: linalg.generic
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", features = "+avx512f,+avx512bf16", cores = 1 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func @pair_micro_kernel(%a: memref<4x8x2xbf16>, %b: memref<4x32x2xbf16>, %c: memref<8x32xf32>, %rows: memref<2x32xbf16>, %panel: memref<1x1x32x2xbf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %pad = ub.poison : bf16
    %r = vector.transfer_read %rows[%c0, %c0], %pad {in_bounds = [true, true]} : memref<2x32xbf16>, vector<2x32xbf16>
    %s = vector.shape_cast %r : vector<2x32xbf16> to vector<1x2x1x32xbf16>
    %t = vector.transpose %s, [2, 0, 3, 1] : vector<1x2x1x32xbf16> to vector<1x1x32x2xbf16>
    vector.transfer_write %t, %panel[%c0, %c0, %c0, %c0] {in_bounds = [true, true, true, true]} : vector<1x1x32x2xbf16>, memref<1x1x32x2xbf16>
    scf.for %k = %c0 to %c4 step %c1 {
      %sa = memref.subview %a[%k, 0, 0] [1, 8, 2] [1, 1, 1] : memref<4x8x2xbf16> to memref<8x2xbf16, strided<[2, 1], offset: ?>>
      %sb = memref.subview %b[%k, 0, 0] [1, 32, 2] [1, 1, 1] : memref<4x32x2xbf16> to memref<32x2xbf16, strided<[2, 1], offset: ?>>
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%sa, %sb : memref<8x2xbf16, strided<[2, 1], offset: ?>>, memref<32x2xbf16, strided<[2, 1], offset: ?>>) outs(%c : memref<8x32xf32>) attrs = {tile.vectorize} {
      ^bb0(%x: bf16, %y: bf16, %acc: f32):
        %0 = arith.extf %x : bf16 to f32
        %1 = arith.extf %y : bf16 to f32
        %2 = arith.mulf %0, %1 : f32
        %3 = arith.addf %acc, %2 : f32
        linalg.yield %3 : f32
      }
    }
    return
  }
}
