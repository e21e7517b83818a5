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

// gpu_rows, a warp a row (8 rows a block of 256): each lane holds its 8 vectors of 4 (the
// 250 of a 1000-wide row, the last of them partial: loads and stores behind a bound, the
// reductions masked with their identity), the max and the sum folded across lanes by five
// xor shuffles each; the exponentials stay in registers and the result is stored once.
// CHECK-LABEL: func.func private @softmax
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c16, {{.*}}) threads({{.*}}) in ({{.*}} = %c256,
// CHECK-COUNT-7: vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<127x1000xf32>, vector<4xf32>
// CHECK: arith.cmpi ult, %{{.*}}, %c250
// CHECK: scf.if
// CHECK: vector.reduction <maxnumf>
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: math.exp {{.*}} : vector<4xf32>
// CHECK: arith.select {{.*}} : vector<4xi1>, vector<4xf32>
// CHECK: vector.reduction <add>
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: arith.divf %cst, {{.*}} : f32
// CHECK-COUNT-7: vector.store {{.*}} {alignment = 16 : i64} : memref<127x1000xf32>, vector<4xf32>
// CHECK-NOT: linalg.
// CHECK-NOT: memref.alloc
#id = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
func.func private @softmax(%x: memref<127x1000xf32>, %y: memref<127x1000xf32>)
    attributes {tile.kernel = "reduction", tile.config = {strategy = "gpu_rows", block_threads = 256 : i64, rows_per_block = 8 : i64, vector_size = 4 : i64}} {
  %one = arith.constant 1.000000e+00 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %lowest = arith.constant 0xFF800000 : f32
  %row = memref.alloc() : memref<127xf32>
  linalg.fill ins(%lowest : f32) outs(%row : memref<127xf32>)
  linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<127x1000xf32>) outs(%row : memref<127xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maxnumf %in, %acc : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #red, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %row : memref<127x1000xf32>, memref<127xf32>) outs(%y : memref<127x1000xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  linalg.fill ins(%zero : f32) outs(%row : memref<127xf32>)
  linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<127x1000xf32>) outs(%row : memref<127xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.reciprocal ins(%row : memref<127xf32>) outs(%row : memref<127xf32>)
  linalg.generic {indexing_maps = [#id, #red, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %row : memref<127x1000xf32>, memref<127xf32>) outs(%y : memref<127x1000xf32>) {
  ^bb0(%in: f32, %r: f32, %out: f32):
    %p = arith.mulf %in, %r : f32
    linalg.yield %p : f32
  }
  return
}

// -----

// A block a row (rows of 8192 bf16, 256 threads): bf16 read as 8-element vectors and
// widened, the sum folded across each warp by shuffles, then across the 8 warps through
// shared memory (a workgroup attribution of one f32 a warp) behind a barrier; gamma is
// read as a column vector; the result is narrowed and stored as bf16 vectors.
// CHECK-LABEL: func.func private @rms_norm
// CHECK: gpu.launch {{.*}} workgroup(%[[SHARED:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-4: vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<64x8192xbf16>, vector<8xbf16>
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.store {{.*}}, %[[SHARED]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[SHARED]]
// CHECK: math.rsqrt
// CHECK: vector.load %arg1{{.*}} : memref<8192xbf16>, vector<8xbf16>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<64x8192xbf16>, vector<8xbf16>
#id = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#id1 = affine_map<(d0) -> (d0)>
func.func private @rms_norm(%x: memref<64x8192xbf16>, %g: memref<8192xbf16>, %y: memref<64x8192xbf16>)
    attributes {tile.kernel = "reduction", tile.config = {strategy = "gpu_rows", block_threads = 256 : i64, rows_per_block = 1 : i64, vector_size = 8 : i64}} {
  %zero = arith.constant 0.000000e+00 : f32
  %scale = arith.constant 1.22070313E-4 : f32
  %eps = arith.constant 9.99999997E-7 : f32
  %sum = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<64xf32>)
  linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x8192xbf16>) outs(%sum : memref<64xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %w = arith.extf %in : bf16 to f32
    %q = arith.mulf %w, %w : f32
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%sum : memref<64xf32>) outs(%sum : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %scale : f32
    %e = arith.addf %m, %eps : f32
    %r = math.rsqrt %e : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #red, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum, %g : memref<64x8192xbf16>, memref<64xf32>, memref<8192xbf16>) outs(%y : memref<64x8192xbf16>) {
  ^bb0(%in: bf16, %r: f32, %gamma: bf16, %out: bf16):
    %w = arith.extf %in : bf16 to f32
    %gw = arith.extf %gamma : bf16 to f32
    %n = arith.mulf %w, %r : f32
    %p = arith.mulf %n, %gw : f32
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// -----

// gpu_matmul on FMA units: a block per 64x64 tile of C (2 x 3 blocks for 100 x 192; rows
// past 100 masked), 256 threads of 4x4 accumulators started from the fill's zero; each
// 16-deep slice of K staged in shared memory (A transposed) between barriers; the bias and
// relu applied to the accumulators and C stored once, one 16-byte vector a row of a tile.
// CHECK-LABEL: func.func private @linear
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256,
// CHECK-SAME: workgroup({{.*}} : memref<16x64xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<16x64xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[ZERO:.*]] = vector.broadcast %cst : f32 to vector<4xf32>
// CHECK: scf.for {{.*}} iter_args({{.*}} = %[[ZERO]], {{.*}} = %[[ZERO]], {{.*}} = %[[ZERO]], {{.*}} = %[[ZERO]])
// CHECK: vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<100x256xf32>, vector<4xf32>
// CHECK: gpu.barrier
// CHECK: arith.mulf {{.*}} fastmath<contract> : vector<4xf32>
// CHECK: arith.addf {{.*}} fastmath<contract> : vector<4xf32>
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK: vector.load %arg2{{.*}} : memref<192xf32>, vector<4xf32>
// CHECK: arith.maximumf
// CHECK: arith.cmpi ult, {{.*}}, %c100
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<100x192xf32>, vector<4xf32>
// CHECK-NOT: linalg.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func private @linear(%x: memref<100x256xf32>, %w: memref<256x192xf32>, %bias: memref<192xf32>, %y: memref<100x192xf32>)
    attributes {tile.kernel = "contraction", tile.config = {strategy = "gpu_matmul", mma = "simt", block_tile = array<i64: 64, 64, 16>, warp_tile = array<i64: 32, 32>, stages = 2 : i64, vector_size = 4 : i64}} {
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<100x192xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<100x256xf32>, memref<256x192xf32>) outs(%y : memref<100x192xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %bias : memref<100x192xf32>, memref<192xf32>) outs(%y : memref<100x192xf32>) {
  ^bb0(%v: f32, %b: f32, %out: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// gpu_matmul on wgmma (f16 in, f32 out): the kernel asks for TMA descriptors of A and B
// (calls of declared strata.tensormap functions on 128-byte slots), then launches one
// warpgroup a 128x128 tile with 128 KiB of dynamic shared memory: 4 ring slots of A and B
// slices under mbarriers, thread 0 issuing the TMA copies, nvgpu.warpgroup.mma on each slot;
// C goes through shared memory to the epilogue.
// CHECK-LABEL: func.func private @half
// CHECK: %[[SLOT_A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// CHECK: call @half_tensormap_a(%[[SLOT_A]], %arg0) : (memref<128xi8>, memref<256x512xf16>) -> ()
// CHECK: call @half_tensormap_b({{.*}}, %arg1) : (memref<128xi8>, memref<512x384xf16>) -> ()
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}}) dynamic_shared_memory_size %c131072_i32
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
// CHECK: nvgpu.tma.async.load
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvgpu.warpgroup.mma {{.*}} {transposeB}
// CHECK: nvgpu.warpgroup.mma.store
// CHECK: vector.store {{.*}} : memref<256x384xf32>, vector<4xf32>
// CHECK: func.func private @half_tensormap_a(memref<128xi8>, memref<256x512xf16>) attributes {strata.tensormap = {box = array<i64: 128, 64>, swizzle = 128 : i64}}
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @half(%x: memref<256x512xf16>, %w: memref<512x384xf16>, %y: memref<256x384xf32>)
    attributes {tile.kernel = "contraction", tile.config = {strategy = "gpu_matmul", mma = "wgmma", block_tile = array<i64: 128, 128, 64>, warp_tile = array<i64: 64, 128>, stages = 4 : i64, vector_size = 8 : i64}} {
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<256x384xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<256x512xf16>, memref<512x384xf16>) outs(%y : memref<256x384xf32>) {
  ^bb0(%p: f16, %q: f16, %acc: f32):
    %pe = arith.extf %p : f16 to f32
    %qe = arith.extf %q : f16 to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// mma.sync: 4 warps of 32x32 accumulators (a 64x64 block tile), A and B slices copied by
// cp.async into a ring in dynamic shared memory. A hand-written config of one stage still
// gets two ring slots (one read while the next is filled): 2 x (64 x 40 + 32 x 72) halves,
// under the 64x64 f32 C tile that reuses the ring (16 KiB).
// CHECK-LABEL: func.func private @mma
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}}) dynamic_shared_memory_size %c19456_i32
// CHECK: nvgpu.device_async_copy {{.*}} {bypassL1}
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait {{.*}} {numGroups = 0 : i32}
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync
// CHECK: vector.store {{.*}} : memref<100x192xf32>, vector<4xf32>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @mma(%x: memref<100x64xbf16>, %w: memref<64x192xbf16>, %y: memref<100x192xf32>)
    attributes {tile.kernel = "contraction", tile.config = {strategy = "gpu_matmul", mma = "mma.sync", block_tile = array<i64: 64, 64, 32>, warp_tile = array<i64: 32, 32>, stages = 1 : i64, vector_size = 8 : i64}} {
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<100x192xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<100x64xbf16>, memref<64x192xbf16>) outs(%y : memref<100x192xf32>) {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pe = arith.extf %p : bf16 to f32
    %qe = arith.extf %q : bf16 to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
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

// -----

// Attention (graph.attention as graph-to-linalg writes it: the scores, their scale and causal
// mask, a softmax over the keys, the weighted values, the rounding to f16) becomes one
// flash-style launch: a block per 8 query rows of a head, 2 rows a thread and 2 threads a row
// (grid: heads x row blocks); K and V staged as f32 tiles in workgroup memory; an online
// softmax over the key tiles; the [8, 8] scores never reach memory.
// CHECK-LABEL: func.func private @attention
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c8{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%{{.*}} : memref<8x16xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<8x16xf32, #gpu.address_space<workgroup>>)
// CHECK: vector.load %arg0{{.*}} : memref<1x2x8x16xf16>, vector<4xf16>
// CHECK: scf.for {{.*}} iter_args
// CHECK: gpu.barrier
// CHECK: memref.store {{.*}} : memref<8x16xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: vector.fma
// CHECK: gpu.shuffle  xor
// CHECK: arith.cmpi sgt
// CHECK: math.exp
// CHECK: arith.truncf {{.*}} : vector<4xf32> to vector<4xf16>
// CHECK: vector.store {{.*}} %arg3
// CHECK-NOT: linalg.generic
#qk_q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#qk_k = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#qk_s = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#pv_r = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
#pv_v = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#all = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func private @attention(%q: memref<1x2x8x16xf16>, %k: memref<1x2x8x16xf16>, %v: memref<1x2x8x16xf16>, %y: memref<1x2x8x16xf16>)
    attributes {tile.kernel = "attention", tile.config = {strategy = "gpu_attention", block_tile = array<i64: 8, 8>, block_threads = 8 : i64, register_tile = array<i64: 2>}} {
  %one = arith.constant 1.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 2.500000e-01 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<1x2x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x8x8xf32>)
  linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x2x8x16xf16>, memref<1x2x8x16xf16>) outs(%s : memref<1x2x8x8xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %0 = arith.extf %b : f16 to f32
    %1 = arith.extf %a : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : memref<1x2x8x8xf32>) outs(%s : memref<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    %1 = linalg.index 2 : index
    %2 = arith.index_cast %1 : index to i64
    %3 = linalg.index 3 : index
    %4 = arith.index_cast %3 : index to i64
    %5 = arith.cmpi sgt, %4, %2 : i64
    %6 = arith.select %5, %ninf, %0 : f32
    linalg.yield %6 : f32
  }
  %m = memref.alloc() {alignment = 64 : i64} : memref<1x2x8xf32>
  linalg.fill ins(%ninf : f32) outs(%m : memref<1x2x8xf32>)
  linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x8x8xf32>) outs(%m : memref<1x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#all, #row, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %m : memref<1x2x8x8xf32>, memref<1x2x8xf32>) outs(%s : memref<1x2x8x8xf32>) {
  ^bb0(%in: f32, %max: f32, %out: f32):
    %0 = arith.subf %in, %max : f32
    %1 = math.exp %0 fastmath<ninf,afn> : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%m : memref<1x2x8xf32>)
  linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x8x8xf32>) outs(%m : memref<1x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.reciprocal ins(%m : memref<1x2x8xf32>) outs(%m : memref<1x2x8xf32>)
  %o = memref.alloc() {alignment = 64 : i64} : memref<1x2x8x16xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<1x2x8x16xf32>)
  linalg.generic {indexing_maps = [#qk_q, #pv_r, #pv_v, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %m, %v : memref<1x2x8x8xf32>, memref<1x2x8xf32>, memref<1x2x8x16xf16>) outs(%o : memref<1x2x8x16xf32>) {
  ^bb0(%p: f32, %inverse: f32, %x: f16, %acc: f32):
    %0 = arith.extf %x : f16 to f32
    %1 = arith.mulf %p, %inverse : f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : memref<1x2x8x16xf32>) outs(%y : memref<1x2x8x16xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  }
  return
}

// -----

// On tensor cores (mma = "mma.sync", f16/bf16): a warp per 16 query rows, dynamic shared
// memory for Q and two slots of K and V tiles filled by cp.async, ldmatrix fragments (V's
// transposed), S = Q K^T and O += P V as mma.sync steps; the tiles a causal mask or the end
// of the 20 keys cut are masked under an scf.if; the weights are 2^(scaled s - max), one FMA
// and an exp2 each; O goes through shared memory (f32) to the rounding epilogue.
// CHECK-LABEL: func.func private @attention_mma
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) dynamic_shared_memory_size
// CHECK: gpu.dynamic_shared_memory
// CHECK: nvgpu.device_async_copy %arg0
// CHECK: nvgpu.device_async_copy %arg1
// CHECK: nvgpu.device_async_copy %arg2
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvgpu.device_async_wait
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: nvgpu.device_async_copy %arg1
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvvm.mma.sync
// CHECK: scf.if {{.*}} -> (vector<2x2xf32>, vector<2x2xf32>)
// CHECK: arith.cmpi sgt
// CHECK: arith.cmpi uge
// CHECK: gpu.shuffle  xor
// CHECK: math.exp2 {{.*}} fastmath<afn> : f32
// CHECK: math.fma
// CHECK: math.exp2 {{.*}} fastmath<afn> : vector<2xf32>
// CHECK: arith.truncf {{.*}} : vector<2xf32> to vector<2xf16>
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK: vector.store {{.*}} : memref<16x24xf32, 3>, vector<2xf32>
// CHECK: gpu.barrier
// CHECK: arith.truncf {{.*}} : vector<4xf32> to vector<4xf16>
// CHECK: vector.store {{.*}} %arg3
// CHECK-NOT: linalg.generic
#qk_q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#qk_k = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#qk_s = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#pv_r = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
#pv_v = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#all = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func private @attention_mma(%q: memref<1x2x20x16xf16>, %k: memref<1x2x20x16xf16>, %v: memref<1x2x20x16xf16>, %y: memref<1x2x20x16xf16>)
    attributes {tile.kernel = "attention", tile.config = {strategy = "gpu_attention", mma = "mma.sync", block_tile = array<i64: 16, 16>, block_threads = 32 : i64}} {
  %one = arith.constant 1.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 2.500000e-01 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<1x2x20x20xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x20x20xf32>)
  linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x2x20x16xf16>, memref<1x2x20x16xf16>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %0 = arith.extf %b : f16 to f32
    %1 = arith.extf %a : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : memref<1x2x20x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    %1 = linalg.index 2 : index
    %2 = arith.index_cast %1 : index to i64
    %3 = linalg.index 3 : index
    %4 = arith.index_cast %3 : index to i64
    %5 = arith.cmpi sgt, %4, %2 : i64
    %6 = arith.select %5, %ninf, %0 : f32
    linalg.yield %6 : f32
  }
  %m = memref.alloc() {alignment = 64 : i64} : memref<1x2x20xf32>
  linalg.fill ins(%ninf : f32) outs(%m : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%m : memref<1x2x20xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#all, #row, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %m : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%in: f32, %max: f32, %out: f32):
    %0 = arith.subf %in, %max : f32
    %1 = math.exp %0 fastmath<ninf,afn> : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%m : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%m : memref<1x2x20xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.reciprocal ins(%m : memref<1x2x20xf32>) outs(%m : memref<1x2x20xf32>)
  %o = memref.alloc() {alignment = 64 : i64} : memref<1x2x20x16xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<1x2x20x16xf32>)
  linalg.generic {indexing_maps = [#qk_q, #pv_r, #pv_v, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %m, %v : memref<1x2x20x20xf32>, memref<1x2x20xf32>, memref<1x2x20x16xf16>) outs(%o : memref<1x2x20x16xf32>) {
  ^bb0(%p: f32, %inverse: f32, %x: f16, %acc: f32):
    %0 = arith.extf %x : f16 to f32
    %1 = arith.mulf %p, %inverse : f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : memref<1x2x20x16xf32>) outs(%y : memref<1x2x20x16xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  }
  return
}

// -----

// A mask other than the causal one (here: keys before the query masked) has no fused kernel:
// the kernel stays linalg, for --gpu-map-loops, with a remark.
// CHECK-LABEL: func.func private @anticausal
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
#qk_q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#qk_k = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#qk_s = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#pv_v = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#all = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func private @anticausal(%q: memref<1x1x8x16xf32>, %k: memref<1x1x8x16xf32>, %v: memref<1x1x8x16xf32>, %y: memref<1x1x8x16xf32>)
    attributes {tile.kernel = "attention", tile.config = {strategy = "gpu_attention", block_tile = array<i64: 8, 8>, block_threads = 8 : i64, register_tile = array<i64: 2>}} {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<1x1x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x1x8x8xf32>)
  linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x1x8x16xf32>, memref<1x1x8x16xf32>) outs(%s : memref<1x1x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : memref<1x1x8x8xf32>) outs(%s : memref<1x1x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = linalg.index 2 : index
    %2 = linalg.index 3 : index
    %3 = arith.cmpi slt, %2, %1 : index
    %4 = arith.select %3, %ninf, %in : f32
    linalg.yield %4 : f32
  }
  linalg.fill ins(%zero : f32) outs(%y : memref<1x1x8x16xf32>)
  linalg.generic {indexing_maps = [#qk_q, #pv_v, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %v : memref<1x1x8x8xf32>, memref<1x1x8x16xf32>) outs(%y : memref<1x1x8x16xf32>) {
  ^bb0(%p: f32, %x: f32, %acc: f32):
    %0 = arith.mulf %p, %x : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
