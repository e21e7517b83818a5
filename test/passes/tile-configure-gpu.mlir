// RUN: strata-opt %s --target=nvvm:sm_80 --graph-fuse --tile-configure --split-input-file | FileCheck %s --check-prefix=SM80
// RUN: strata-opt %s --target=nvvm:sm_80+tf32 --graph-fuse --tile-configure --split-input-file | FileCheck %s --check-prefix=TF32
// RUN: strata-opt %s --target=nvvm:sm_90a --graph-fuse --tile-configure --split-input-file | FileCheck %s --check-prefix=SM90A

// GPU configurations come from the target's facts (matrix instructions, shared memory, SM
// count, warp size); the tiles are those measured best on an H200 (passes/gpu_tiles.py).

// f16 x f16 -> f32 at 4096^3: on sm_80, mma.sync in 128x128x32 blocks of 4 warps (64x64
// each), 3 stages (the 48 KiB of static shared memory); on sm_90a, wgmma in 128x128x64 blocks
// of one warpgroup, 4 TMA stages in dynamic shared memory. 16-byte accesses: 8 halves.
// SM80-LABEL: func.func private @large_f16_kernel_0
// SM80-SAME: tile.config = {block_tile = array<i64: 128, 128, 32>, mma = "mma.sync", stages = 3 : i64, strategy = "gpu_matmul", vector_size = 8 : i64, warp_tile = array<i64: 64, 64>}
// SM90A-LABEL: func.func private @large_f16_kernel_0
// SM90A-SAME: tile.config = {block_tile = array<i64: 128, 128, 64>, mma = "wgmma", stages = 4 : i64, strategy = "gpu_matmul", vector_size = 8 : i64, warp_tile = array<i64: 64, 128>}
func.func @large_f16(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<4096x4096xf16>, tensor<4096x4096xf16>) -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// At 1024^2, 128x128 tiles are 64 blocks for 108 SMs: sm_80 takes 64x64 tiles (4 warps of
// 32x32) to fill them; bf16 as f16.
// SM80-LABEL: func.func private @small_bf16_kernel_0
// SM80-SAME: tile.config = {block_tile = array<i64: 64, 64, 32>, mma = "mma.sync", stages = 3 : i64, strategy = "gpu_matmul", vector_size = 8 : i64, warp_tile = array<i64: 32, 32>}
// SM90A-LABEL: func.func private @small_bf16_kernel_0
// SM90A-SAME: mma = "wgmma"
func.func @small_bf16(%a: tensor<1024x1024xbf16>, %b: tensor<1024x1024xbf16>) -> tensor<1024x1024xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// f32 has no tensor-core path by default: FMAs (simt) in 64x64x16 blocks, 2 stages.
// SM80-LABEL: func.func private @f32_kernel_0
// SM80-SAME: tile.config = {block_tile = array<i64: 64, 64, 16>, mma = "simt", stages = 2 : i64, strategy = "gpu_matmul", vector_size = 4 : i64, warp_tile = array<i64: 32, 32>}
// SM90A-LABEL: func.func private @f32_kernel_0
// SM90A-SAME: mma = "simt"
func.func @f32(%a: tensor<512x256xf32>, %b: tensor<256x1024xf32>) -> tensor<512x1024xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<512x256xf32>, tensor<256x1024xf32>) -> tensor<512x1024xf32>
  return %0 : tensor<512x1024xf32>
}

// -----

// Elementwise chains: 256 threads a block, a 16-byte vector a thread (4 f32, 8 f16), in
// whole vectors along the rows (1000 = 250 x 4).
// SM80-LABEL: func.func private @chain_kernel_0
// SM80-SAME: tile.config = {block_threads = 256 : i64, strategy = "gpu_elementwise", vector_size = 4 : i64}
// SM80-LABEL: func.func private @chain_kernel_1
// SM80-SAME: tile.config = {block_threads = 256 : i64, strategy = "gpu_elementwise", vector_size = 8 : i64}
func.func @chain(%x: tensor<1024x1000xf32>, %y: tensor<64x4096xf16>) -> (tensor<1024x1000xf32>, tensor<64x4096xf16>) {
  %0 = "graph.tanh"(%x) : (tensor<1024x1000xf32>) -> tensor<1024x1000xf32>
  %1 = "graph.relu"(%y) : (tensor<64x4096xf16>) -> tensor<64x4096xf16>
  return %0, %1 : tensor<1024x1000xf32>, tensor<64x4096xf16>
}

// -----

// Rows a warp covers in 8 vectors a lane (768 f32) take a warp each, 8 rows a block; a
// 32768-wide row takes a block of 1024 threads.
// SM80-LABEL: func.func private @rows_kernel_0
// SM80-SAME: tile.config = {block_threads = 256 : i64, rows_per_block = 8 : i64, strategy = "gpu_rows", vector_size = 4 : i64}
// SM80-LABEL: func.func private @rows_kernel_1
// SM80-SAME: tile.config = {block_threads = 1024 : i64, rows_per_block = 1 : i64, strategy = "gpu_rows", vector_size = 4 : i64}
func.func @rows(%x: tensor<512x768xf32>, %y: tensor<8x32768xf32>) -> (tensor<512x768xf32>, tensor<8x32768xf32>) {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<512x768xf32>) -> tensor<512x768xf32>
  %1 = "graph.softmax"(%y) {axis = 1 : i64} : (tensor<8x32768xf32>) -> tensor<8x32768xf32>
  return %0, %1 : tensor<512x768xf32>, tensor<8x32768xf32>
}

// -----

// A reduction over the innermost axis is a row kernel (here 4096 bf16 a row: a block of 256
// a row); over another axis it stays loops.
// SM80-LABEL: func.func private @reductions_kernel_0
// SM80-SAME: tile.config = {block_threads = 256 : i64, rows_per_block = 1 : i64, strategy = "gpu_rows", vector_size = 8 : i64}
// SM80-LABEL: func.func private @reductions_kernel_1
// SM80-SAME: tile.config = {strategy = "loops"}
func.func @reductions(%x: tensor<64x4096xbf16>, %y: tensor<64x4096xf32>) -> (tensor<64x1xbf16>, tensor<4096xf32>) {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: -1>, keepdims = true} : (tensor<64x4096xbf16>) -> tensor<64x1xbf16>
  %1 = "graph.reduce_sum"(%y) {axes = array<i64: 0>, keepdims = false} : (tensor<64x4096xf32>) -> tensor<4096xf32>
  return %0, %1 : tensor<64x1xbf16>, tensor<4096xf32>
}

// -----

// Attention is one flash-style kernel. f32 (and head dims past 128): FMAs, 64 query rows a
// block, 2 rows a thread, a row's head dim shared by threads in chunks of 16 (64 -> 4
// threads, 256 -> 16), K and V staged in f32 tiles of 32 KiB together (64 keys at head dim
// 64, 16 at 256). f16/bf16 with head dims of whole k16 steps up to 128: mma.sync, 4 warps,
// 64-key tiles, a warp 2 m16 tiles of query rows at head dim 64 and 1 at 128 (where 2 would
// take more than 160 fragment registers a lane).
// SM80-LABEL: func.func private @attention_kernel_0
// SM80-SAME: tile.config = {block_threads = 128 : i64, block_tile = array<i64: 64, 64>, register_tile = array<i64: 2>, strategy = "gpu_attention"}
// SM80-LABEL: func.func private @attention_kernel_1
// SM80-SAME: tile.config = {block_threads = 128 : i64, block_tile = array<i64: 64, 64>, mma = "mma.sync", strategy = "gpu_attention"}
// SM80-LABEL: func.func private @attention_kernel_2
// SM80-SAME: tile.config = {block_threads = 512 : i64, block_tile = array<i64: 64, 16>, register_tile = array<i64: 2>, strategy = "gpu_attention"}
// SM80-LABEL: func.func private @attention_kernel_3
// SM80-SAME: tile.config = {block_threads = 128 : i64, block_tile = array<i64: 128, 64>, mma = "mma.sync", strategy = "gpu_attention"}
// SM90A-LABEL: func.func private @attention_kernel_0
// SM90A-SAME: tile.config = {block_threads = 128 : i64, block_tile = array<i64: 64, 64>, register_tile = array<i64: 2>, strategy = "gpu_attention"}
// SM90A-LABEL: func.func private @attention_kernel_1
// SM90A-SAME: tile.config = {block_threads = 128 : i64, block_tile = array<i64: 64, 64>, mma = "mma.sync", strategy = "gpu_attention"}
// SM90A-LABEL: func.func private @attention_kernel_3
// SM90A-SAME: tile.config = {block_threads = 128 : i64, block_tile = array<i64: 128, 64>, mma = "mma.sync", strategy = "gpu_attention"}
func.func @attention(%q: tensor<1x12x1024x64xf32>, %h: tensor<2x32x128x128xbf16>, %w: tensor<1x2x100x256xf16>, %f: tensor<1x12x1024x64xf16>) -> (tensor<1x12x1024x64xf32>, tensor<2x32x128x128xbf16>, tensor<1x2x100x256xf16>, tensor<1x12x1024x64xf16>) {
  %0 = "graph.attention"(%q, %q, %q) {causal = true} : (tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32>) -> tensor<1x12x1024x64xf32>
  %1 = "graph.attention"(%h, %h, %h) : (tensor<2x32x128x128xbf16>, tensor<2x32x128x128xbf16>, tensor<2x32x128x128xbf16>) -> tensor<2x32x128x128xbf16>
  %2 = "graph.attention"(%w, %w, %w) : (tensor<1x2x100x256xf16>, tensor<1x2x100x256xf16>, tensor<1x2x100x256xf16>) -> tensor<1x2x100x256xf16>
  %3 = "graph.attention"(%f, %f, %f) {causal = true} : (tensor<1x12x1024x64xf16>, tensor<1x12x1024x64xf16>, tensor<1x12x1024x64xf16>) -> tensor<1x12x1024x64xf16>
  return %0, %1, %2, %3 : tensor<1x12x1024x64xf32>, tensor<2x32x128x128xbf16>, tensor<1x2x100x256xf16>, tensor<1x12x1024x64xf16>
}

// -----

// f32 matmuls go to the tensor cores only where the target opts in to TF32 (`+tf32`): then
// as half ones do on mma.sync, with f32 stages (32 KiB each: 2 in half of sm_80's 164 KiB).
// SM80-LABEL: func.func private @tf32_kernel_0
// SM80-SAME: mma = "simt"
// SM90A-LABEL: func.func private @tf32_kernel_0
// SM90A-SAME: mma = "simt"
// TF32-LABEL: func.func private @tf32_kernel_0
// TF32-SAME: tile.config = {block_tile = array<i64: 128, 128, 32>, mma = "mma.sync", stages = 2 : i64, strategy = "gpu_matmul", vector_size = 4 : i64, warp_tile = array<i64: 64, 64>}
func.func @tf32(%a: tensor<4096x1024xf32>, %b: tensor<1024x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<4096x1024xf32>, tensor<1024x4096xf32>) -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}
