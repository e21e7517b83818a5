// RUN: strata-opt %s --target=cpu:x86-64-v4 --graph-fuse --tile-configure --split-input-file | FileCheck %s --check-prefix=V4
// RUN: strata-opt %s --target=cpu:x86-64-v3 --graph-fuse --tile-configure --split-input-file | FileCheck %s --check-prefix=V3
// RUN: strata-opt %s --target=cpu:aarch64 --graph-fuse --tile-configure --split-input-file | FileCheck %s --check-prefix=ARM
// RUN: strata-opt %s --graph-fuse --tile-configure --split-input-file | FileCheck %s --check-prefix=CORES

// The micro-kernel uses half the vector registers as accumulators, two vectors per row:
// 8 x 32 with AVX-512 (16 zmm), 4 x 16 with AVX2 (8 ymm), 8 x 8 with NEON (16 q).
// Cache blocks divide the dims and follow the caches (Kc x nr of B in half of L1, Mc x Kc of
// A in a sixteenth of L2); the block loops run n, k, m. B fits in L2: no packing.
// V4-LABEL: func.func private @matmul_kernel_0
// V4-SAME: tile.config = {interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 128, 256, 128>, vector_size = 16 : i64}
// V3-LABEL: func.func private @matmul_kernel_0
// V3-SAME: register_tile = array<i64: 4, 16, 1>, strategy = "matmul", tile_sizes = array<i64: 64, 256, 256>, vector_size = 8 : i64
// ARM-LABEL: func.func private @matmul_kernel_0
// ARM-SAME: register_tile = array<i64: 8, 8, 1>, strategy = "matmul", tile_sizes = array<i64: 32, 256, 512>, vector_size = 4 : i64
func.func @matmul(%a: tensor<256x512xf32>, %b: tensor<512x256xf32>) -> tensor<256x256xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<256x512xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A B larger than L2 is packed into micro-panels, four k steps per panel row.
// V4-LABEL: func.func private @large_kernel_0
// V4-SAME: pack = 4 : i64, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 128, 256, 128>
// V3-LABEL: func.func private @large_kernel_0
// V3-SAME: pack = 4 : i64, register_tile = array<i64: 4, 16, 1>
func.func @large(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// Dims without a good divisor (169 = 13 x 13, 1000 = 8 x 125) keep the full micro-kernel and
// cache blocks; tile-lower peels the partial tiles.
// V4-LABEL: func.func private @odd_kernel_0
// V4-SAME: register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 128, 256, 128>
func.func @odd(%a: tensor<169x512xf32>, %b: tensor<512x1000xf32>) -> tensor<169x1000xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<169x512xf32>, tensor<512x1000xf32>) -> tensor<169x1000xf32>
  return %0 : tensor<169x1000xf32>
}

// -----

// Elementwise chains are cut into vectors along the innermost dim (up to four vectors wide).
// V4-LABEL: func.func private @chain_kernel_0
// V4-SAME: tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 48>, vector_size = 16 : i64}
// V3-LABEL: func.func private @chain_kernel_0
// V3-SAME: tile_sizes = array<i64: 1, 32>, vector_size = 8 : i64
func.func @chain(%x: tensor<4x96xf32>) -> tensor<4x96xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x96xf32>) -> tensor<4x96xf32>
  %1 = "graph.relu"(%0) : (tensor<4x96xf32>) -> tensor<4x96xf32>
  return %1 : tensor<4x96xf32>
}

// -----

// f16 and bf16 chains and row ops take the f32 configurations: they compute in f32 lanes
// (--graph-to-linalg widens what rounds), one vector of f32 a step.
// V4-LABEL: func.func private @half_chain_kernel_0
// V4-SAME: tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 48>, vector_size = 16 : i64}
// V3-LABEL: func.func private @half_chain_kernel_0
// V3-SAME: tile_sizes = array<i64: 1, 32>, vector_size = 8 : i64
// V4-LABEL: func.func private @half_norm_kernel_0
// V4-SAME: tile.config = {strategy = "rows", tile_sizes = array<i64: 1, 0>, vector_size = 16 : i64}
func.func @half_chain(%x: tensor<4x96xbf16>) -> tensor<4x96xbf16> {
  %0 = "graph.gelu"(%x) : (tensor<4x96xbf16>) -> tensor<4x96xbf16>
  %1 = "graph.relu"(%0) : (tensor<4x96xbf16>) -> tensor<4x96xbf16>
  return %1 : tensor<4x96xbf16>
}
func.func @half_norm(%x: tensor<4x96xf16>, %g: tensor<96xf16>) -> tensor<4x96xf16> {
  %0 = "graph.rms_norm"(%x, %g) : (tensor<4x96xf16>, tensor<96xf16>) -> tensor<4x96xf16>
  return %0 : tensor<4x96xf16>
}

// -----

// Softmax and the norms run row by row (rows of up to two vectors are vectorized whole);
// integer kernels stay plain loops; a row narrower than a vector is one partial vector.
// V4-LABEL: func.func private @mixed_kernel_0
// V4-SAME: tile.config = {strategy = "rows", tile_sizes = array<i64: 1, 0>, vector_size = 16 : i64}
// V4-LABEL: func.func private @mixed_kernel_1
// V4-SAME: tile.config = {strategy = "loops"}
// V4-LABEL: func.func private @mixed_kernel_2
// V4-SAME: tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 10>, vector_size = 16 : i64}
func.func @mixed(%x: tensor<4x10xf32>, %i: tensor<4x10xi32>) -> (tensor<4x10xf32>, tensor<4x10xi32>, tensor<4x10xf32>) {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  %1 = "graph.add"(%i, %i) : (tensor<4x10xi32>, tensor<4x10xi32>) -> tensor<4x10xi32>
  %2 = "graph.exp"(%x) : (tensor<4x10xf32>) -> tensor<4x10xf32>
  return %0, %1, %2 : tensor<4x10xf32>, tensor<4x10xi32>, tensor<4x10xf32>
}

// -----

// A reduction over the innermost dim is a row kernel (in plain loops a sum is one chain of
// dependent adds); a 1-D tensor is one row, with no row loop. So is one over several trailing
// dims (their row spans them all) or over every dim. A reduction over another dim, or over a
// row narrower than a vector, stays plain loops.
// V4-LABEL: func.func private @reductions_kernel_0
// V4-SAME: tile.config = {strategy = "rows", tile_sizes = array<i64: 1>, vector_size = 16 : i64}
// V4-LABEL: func.func private @reductions_kernel_1
// V4-SAME: tile.config = {strategy = "rows", tile_sizes = array<i64: 1, 1, 0>, vector_size = 16 : i64}
// V4-LABEL: func.func private @reductions_kernel_2
// V4-SAME: tile.config = {strategy = "rows", tile_sizes = array<i64: 0>, vector_size = 16 : i64}
// V4-LABEL: func.func private @reductions_kernel_3
// V4-SAME: tile.config = {strategy = "loops"}
// V4-LABEL: func.func private @reductions_kernel_4
// V4-SAME: tile.config = {strategy = "loops"}
// V4-LABEL: func.func private @reductions_kernel_5
// V4-SAME: tile.config = {strategy = "rows", tile_sizes = array<i64: 1, 0, 0>, vector_size = 16 : i64}
// V4-LABEL: func.func private @reductions_kernel_6
// V4-SAME: tile.config = {strategy = "rows", tile_sizes = array<i64>, vector_size = 16 : i64}
func.func @reductions(%x: tensor<64x768xf32>, %y: tensor<2x8x1000xf32>, %v: tensor<1000xf32>, %n: tensor<64x9xf32>) -> (tensor<64xf32>, tensor<2x8x1xf32>, tensor<1xf32>, tensor<768xf32>, tensor<64xf32>, tensor<2x1x1xf32>, tensor<f32>) {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = false} : (tensor<64x768xf32>) -> tensor<64xf32>
  %1 = "graph.reduce_max"(%y) {axes = array<i64: -1>, keepdims = true} : (tensor<2x8x1000xf32>) -> tensor<2x8x1xf32>
  %2 = "graph.reduce_mean"(%v) {axes = array<i64: 0>, keepdims = true} : (tensor<1000xf32>) -> tensor<1xf32>
  %3 = "graph.reduce_sum"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<64x768xf32>) -> tensor<768xf32>
  %4 = "graph.reduce_sum"(%n) {axes = array<i64: 1>, keepdims = false} : (tensor<64x9xf32>) -> tensor<64xf32>
  %5 = "graph.reduce_min"(%y) {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x8x1000xf32>) -> tensor<2x1x1xf32>
  %6 = "graph.reduce_sum"(%x) {axes = array<i64: 0, 1>, keepdims = false} : (tensor<64x768xf32>) -> tensor<f32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<64xf32>, tensor<2x8x1xf32>, tensor<1xf32>, tensor<768xf32>, tensor<64xf32>, tensor<2x1x1xf32>, tensor<f32>
}

// -----

// A depthwise conv (one input channel per group) is an elementwise kernel: tiles of output
// rows by one or two vectors (8 accumulators of 16 registers), accumulated over the window;
// rows that are not whole vectors are one tile row, whole. Strided, a tile is one output row
// (its input split into phases by --graph-to-linalg); strided and dilated, plain loops.
// V3-LABEL: func.func private @depthwise_kernel_0
// V3-SAME: tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 1, 8, 8>, vector_size = 8 : i64}
// V3-LABEL: func.func private @depthwise_kernel_1
// V3-SAME: tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 1, 4, 16>, vector_size = 8 : i64}
// V3-LABEL: func.func private @depthwise_kernel_2
// V3-SAME: tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 1, 1, 8>, vector_size = 8 : i64}
// V3-LABEL: func.func private @depthwise_kernel_3
// V3-SAME: tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 1, 1, 14>, vector_size = 8 : i64}
// V3-LABEL: func.func private @depthwise_kernel_4
// V3-SAME: tile.config = {strategy = "loops"}
func.func @depthwise(%x: tensor<1x96x56x56xf32>, %w: tensor<96x1x7x7xf32>, %y: tensor<1x32x112x112xf32>, %v: tensor<32x1x3x3xf32>, %z: tensor<1x16x14x14xf32>, %u: tensor<16x1x3x3xf32>) -> (tensor<1x96x56x56xf32>, tensor<1x32x112x112xf32>, tensor<1x32x56x56xf32>, tensor<1x16x14x14xf32>, tensor<1x32x56x56xf32>) {
  %0 = "graph.conv2d"(%x, %w) {groups = 96 : i64, padding = array<i64: 3, 3, 3, 3>} : (tensor<1x96x56x56xf32>, tensor<96x1x7x7xf32>) -> tensor<1x96x56x56xf32>
  %1 = "graph.conv2d"(%y, %v) {groups = 32 : i64, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x112x112xf32>
  %2 = "graph.conv2d"(%y, %v) {groups = 32 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x56x56xf32>
  %3 = "graph.conv2d"(%z, %u) {groups = 16 : i64, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x14x14xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x14x14xf32>
  %4 = "graph.conv2d"(%y, %v) {groups = 32 : i64, padding = array<i64: 2, 2, 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>} : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x56x56xf32>
  return %0, %1, %2, %3, %4 : tensor<1x96x56x56xf32>, tensor<1x32x112x112xf32>, tensor<1x32x56x56xf32>, tensor<1x16x14x14xf32>, tensor<1x32x56x56xf32>
}

// -----

// Pools are window kernels tiled as depthwise convs are; with a stride along columns their
// input is split into phases (--graph-to-linalg), along rows a tile is one output row.
// V3-LABEL: func.func private @pools_kernel_0
// V3-SAME: tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 1, 1, 8>, vector_size = 8 : i64}
// V3-LABEL: func.func private @pools_kernel_1
// V3-SAME: tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 1, 4, 16>, vector_size = 8 : i64}
func.func @pools(%x: tensor<1x64x112x112xf32>, %y: tensor<1x16x32x32xf32>) -> (tensor<1x64x56x56xf32>, tensor<1x16x32x32xf32>) {
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  %1 = "graph.avg_pool2d"(%y) {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  return %0, %1 : tensor<1x64x56x56xf32>, tensor<1x16x32x32xf32>
}

// -----

// On 2 cores a depthwise conv that moves enough splits its channels, in chunks the threads
// claim.
// CORES-LABEL: func.func private @depthwise_threads_kernel_0
// CORES-SAME: tile.config = {chunks = 8 : i64, strategy = "elementwise", thread_dim = 1 : i64, threads = 2 : i64, tile_sizes = array<i64: 1, 1, 8, 8>, vector_size = 8 : i64}
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @depthwise_threads(%x: tensor<1x96x56x56xf32>, %w: tensor<96x1x7x7xf32>) -> tensor<1x96x56x56xf32> {
    %0 = "graph.conv2d"(%x, %w) {groups = 96 : i64, padding = array<i64: 3, 3, 3, 3>} : (tensor<1x96x56x56xf32>, tensor<96x1x7x7xf32>) -> tensor<1x96x56x56xf32>
    return %0 : tensor<1x96x56x56xf32>
  }
}

// -----

// A bf16 product on a CPU with pair products (AVX-512 BF16) packs its panels in pairs of k
// (pack 2); without them (x86-64-v4) it is an f32 product, in panels of four.
// CORES-LABEL: func.func private @bf16_pairs_kernel_0
// CORES-SAME: pack = 2 : i64, register_tile = array<i64: 8, 32, 1>, strategy = "matmul"
// V4-LABEL: func.func private @bf16_pairs_kernel_0
// V4-SAME: pack = 4 : i64
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", features = "+avx512f,+avx512bf16", cores = 1 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func @bf16_pairs(%x: tensor<128x768xbf16>, %w: tensor<768x3072xbf16>) -> tensor<128x3072xbf16> {
    %0 = "graph.matmul"(%x, %w) : (tensor<128x768xbf16>, tensor<768x3072xbf16>) -> tensor<128x3072xbf16>
    return %0 : tensor<128x3072xbf16>
  }
}

// -----

// A configuration written in the IR (by hand or by a tuner) is kept.
// V4-LABEL: func.func private @k
// V4-SAME: tile.config = {strategy = "loops"}
func.func private @k(%x: tensor<64xf32>) -> tensor<64xf32> attributes {tile.kernel = "elementwise", tile.config = {strategy = "loops"}} {
  %0 = "graph.exp"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// A conv (one group) is a matmul of its weights by its input patches: M = O = 16,
// N = N*OH*OW = 512, K = C*KH*KW = 27.
// V4-LABEL: func.func private @conv_kernel_0
// V4-SAME: tile.config = {im2col = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 16, 256, 27>, vector_size = 16 : i64}
func.func @conv(%x: tensor<2x3x16x16xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<2x16x16x16xf32> {
  %0 = "graph.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x16x16xf32>, tensor<16x3x3x3xf32>) -> tensor<2x16x16x16xf32>
  return %0 : tensor<2x16x16x16xf32>
}

// -----

// B larger than L2 whose N no 256-wide block divides (784 patches of a 28x28 map, here of a
// conv of stride 2) is packed in narrower blocks that divide it: 7 micro-panels of 16.
// V3-LABEL: func.func private @conv_28x28_kernel_0
// V3-SAME: pack = 4 : i64, register_tile = array<i64: 4, 16, 1>, strategy = "matmul", tile_sizes = array<i64: 64, 112, 192>
func.func @conv_28x28(%x: tensor<1x128x56x56xf32>, %w: tensor<128x128x3x3xf32>) -> tensor<1x128x28x28xf32> {
  %0 = "graph.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x128x56x56xf32>, tensor<128x128x3x3xf32>) -> tensor<1x128x28x28xf32>
  return %0 : tensor<1x128x28x28xf32>
}

// -----

// 729 patches of a 27x27 map (a conv of stride 2): padded to whole micro-kernels (736) no block
// of four of them or more divides them (23 x 32, 46 x 16), so they are padded to whole blocks
// of four (768: 3 blocks of 256), and packed.
// V4-LABEL: func.func private @conv_27x27_kernel_0
// V4-SAME: pack = 4 : i64, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 64, 256, 144>
// V3-LABEL: func.func private @conv_27x27_kernel_0
// V3-SAME: pack = 4 : i64, register_tile = array<i64: 4, 16, 1>, strategy = "matmul", tile_sizes = array<i64: 64, 256, 144>
func.func @conv_27x27(%x: tensor<1x32x54x54xf32>, %w: tensor<128x32x3x3xf32>) -> tensor<1x128x27x27xf32> {
  %0 = "graph.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x32x54x54xf32>, tensor<128x32x3x3xf32>) -> tensor<1x128x27x27xf32>
  return %0 : tensor<1x128x27x27xf32>
}

// -----

// A stem on 3 channels: K = 3*7*7 = 147, not whole panels of 4. The packs pad it to 148 with
// zeros, so the product is packed as any other of its size (Kc = 148).
// V3-LABEL: func.func private @stem_kernel_0
// V3-SAME: pack = 4 : i64, register_tile = array<i64: 4, 16, 1>, strategy = "matmul", tile_sizes = array<i64: 64, 256, 148>
func.func @stem(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32> {
  %0 = "graph.conv2d"(%x, %w) {padding = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>
  return %0 : tensor<1x64x112x112xf32>
}

// -----

// On AVX2 a 7x7 map's 49 patches are padded to 64 and packed though B fits in L2: the pad
// pays only in packed panels (unpacked, the last micro-kernel is one column of 16).
// V3-LABEL: func.func private @conv_7x7_kernel_0
// V3-SAME: pack = 4 : i64, register_tile = array<i64: 4, 16, 1>, strategy = "matmul", tile_sizes = array<i64: 64, 64, 256>
func.func @conv_7x7(%x: tensor<1x2048x7x7xf32>, %w: tensor<512x2048x1x1xf32>) -> tensor<1x512x7x7xf32> {
  %0 = "graph.conv2d"(%x, %w) : (tensor<1x2048x7x7xf32>, tensor<512x2048x1x1xf32>) -> tensor<1x512x7x7xf32>
  return %0 : tensor<1x512x7x7xf32>
}

// -----

// On 2 cores, memory-bound kernels that move enough split their outer dim over both, in up
// to 4 chunks per thread that divide it evenly (the threads claim chunks as they get free);
// comparisons vectorize like the f32 chains, their bools stored as bytes.
// CORES-LABEL: func.func private @memory_bound_kernel_0
// CORES-SAME: tile.config = {chunks = 8 : i64, strategy = "rows", thread_dim = 0 : i64, threads = 2 : i64, tile_sizes = array<i64: 1, 0>, vector_size = 8 : i64}
// CORES-LABEL: func.func private @memory_bound_kernel_1
// CORES-SAME: tile.config = {chunks = 8 : i64, strategy = "elementwise", thread_dim = 0 : i64, threads = 2 : i64, tile_sizes = array<i64: 1, 32>, vector_size = 8 : i64}
// CORES-LABEL: func.func private @memory_bound_kernel_2
// CORES-SAME: tile.config = {chunks = 6 : i64, strategy = "elementwise", thread_dim = 0 : i64, threads = 2 : i64, tile_sizes = array<i64: 1, 32>, vector_size = 8 : i64}
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @memory_bound(%x: tensor<1024x1024xf32>, %y: tensor<300x1000xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xi1>, tensor<300x1000xf32>) {
    %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %1 = "graph.less"(%x, %x) : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xi1>
    %2 = "graph.neg"(%y) : (tensor<300x1000xf32>) -> tensor<300x1000xf32>
    return %0, %1, %2 : tensor<1024x1024xf32>, tensor<1024x1024xi1>, tensor<300x1000xf32>
  }
}

// -----

// A memory-bound kernel takes a thread for each 128 KiB it moves: a chain on 2^15 f32 (256 KiB
// in and out) splits over both cores, one on 2^14 does not.
// CORES-LABEL: func.func private @small_chains_kernel_0
// CORES-SAME: threads = 2 : i64
// CORES-LABEL: func.func private @small_chains_kernel_1
// CORES-SAME: tile.config = {strategy = "elementwise", tile_sizes = array<i64: 32>, vector_size = 8 : i64}
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @small_chains(%x: tensor<32768xf32>, %y: tensor<16384xf32>) -> (tensor<32768xf32>, tensor<16384xf32>) {
    %0 = "graph.tanh"(%x) : (tensor<32768xf32>) -> tensor<32768xf32>
    %1 = "graph.tanh"(%y) : (tensor<16384xf32>) -> tensor<16384xf32>
    return %0, %1 : tensor<32768xf32>, tensor<16384xf32>
  }
}

// -----

// A packed matmul with no more rows than columns splits N over the threads, so that each
// packs only its own columns of B; one with more rows splits M. With 64 rows or fewer, the
// rows are one block and B's blocks have page-long rows (1024 f32) and kc = 64.
// CORES-LABEL: func.func private @linear_kernel_0
// CORES-SAME: pack = 4 : i64
// CORES-SAME: thread_dim = 1 : i64, threads = 2 : i64, tile_sizes = array<i64: 64, 1024, 64>
// CORES-LABEL: func.func private @linear_kernel_1
// CORES-SAME: pack = 4 : i64
// CORES-SAME: thread_dim = 1 : i64, threads = 2 : i64, tile_sizes = array<i64: 64, 256, 256>
// CORES-LABEL: func.func private @linear_kernel_2
// CORES-SAME: pack = 4 : i64
// CORES-SAME: thread_dim = 0 : i64, threads = 2 : i64, tile_sizes = array<i64: 64, 256, 256>
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @linear(%x: tensor<64x1024xf32>, %w: tensor<1024x4096xf32>, %a: tensor<1024x1024xf32>, %t: tensor<2048x1024xf32>, %u: tensor<1024x512xf32>) -> (tensor<64x4096xf32>, tensor<1024x1024xf32>, tensor<2048x512xf32>) {
    %0 = "graph.matmul"(%x, %w) : (tensor<64x1024xf32>, tensor<1024x4096xf32>) -> tensor<64x4096xf32>
    %1 = "graph.matmul"(%a, %a) : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %2 = "graph.matmul"(%t, %u) : (tensor<2048x1024xf32>, tensor<1024x512xf32>) -> tensor<2048x512xf32>
    return %0, %1, %2 : tensor<64x4096xf32>, tensor<1024x1024xf32>, tensor<2048x512xf32>
  }
}

// -----

// A matmul takes a thread for each 2^20 flops it has (the pool's workers wake in
// microseconds): 128x64 @ 64x128 (2^21 flops) splits over both cores, 64x64 @ 64x128 does not.
// CORES-LABEL: func.func private @small_kernel_0
// CORES-SAME: threads = 2 : i64
// CORES-LABEL: func.func private @small_kernel_1
// CORES-SAME: strategy = "matmul", tile_sizes = array<i64: 64, 128, 64>
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @small(%x: tensor<128x64xf32>, %w: tensor<64x128xf32>, %y: tensor<64x64xf32>) -> (tensor<128x128xf32>, tensor<64x128xf32>) {
    %0 = "graph.matmul"(%x, %w) : (tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
    %1 = "graph.matmul"(%y, %w) : (tensor<64x64xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
    return %0, %1 : tensor<128x128xf32>, tensor<64x128xf32>
  }
}

// -----

// An unpacked matmul whose rows are one cache block splits them over the threads into whole
// micro-kernels (5-row ones: 100 rows have no 8-row tiles); each thread's share is then a
// block of its own (50 rows), not part of a 100-row block whose tiles would be dynamic.
// CORES-LABEL: func.func private @short_rows_kernel_0
// CORES-SAME: register_tile = array<i64: 5, 32, 1>, strategy = "matmul", thread_dim = 0 : i64, threads = 2 : i64, tile_sizes = array<i64: 50, 256, 128>
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64, l2_bytes = 2097152 : i64}} {
  func.func @short_rows(%x: tensor<100x256xf32>, %w: tensor<256x768xf32>) -> tensor<100x768xf32> {
    %0 = "graph.matmul"(%x, %w) : (tensor<100x256xf32>, tensor<256x768xf32>) -> tensor<100x768xf32>
    return %0 : tensor<100x768xf32>
  }
}

// -----

// Batched matmuls (attention's scores per head) are blocked per batch as 2-D matmuls are,
// unpacked; the threads split the batches.
// CORES-LABEL: func.func private @scores_kernel_0
// CORES-SAME: tile.config = {interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", threads = 2 : i64, tile_sizes = array<i64: 256, 256, 64>, vector_size = 16 : i64}
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func @scores(%q: tensor<12x512x64xf32>, %k: tensor<12x64x512xf32>) -> tensor<12x512x512xf32> {
    %0 = "graph.matmul"(%q, %k) : (tensor<12x512x64xf32>, tensor<12x64x512xf32>) -> tensor<12x512x512xf32>
    return %0 : tensor<12x512x512xf32>
  }
}

// -----

// GPT-2's QKV projection on 2 cores: 2304 columns are 1152 per thread, which 256-wide packed
// blocks do not divide; the blocks become 192 wide, so the threads still split N.
// CORES-LABEL: func.func private @qkv_kernel_0
// CORES-SAME: pack = 4 : i64
// CORES-SAME: thread_dim = 1 : i64, threads = 2 : i64, tile_sizes = array<i64: 128, 192, 128>
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func @qkv(%x: tensor<128x768xf32>, %w: tensor<768x2304xf32>) -> tensor<128x2304xf32> {
    %0 = "graph.matmul"(%x, %w) : (tensor<128x768xf32>, tensor<768x2304xf32>) -> tensor<128x2304xf32>
    return %0 : tensor<128x2304xf32>
  }
}

// -----

// A decode step (one row) by constant weights, packed as they compile: no second row of
// micro-kernels reuses a panel, so each walks its panel down all of K (blocks 1024 deep), one
// stream; weights given at run time are packed block by block, 64 deep.
// CORES-LABEL: func.func private @decode_kernel_0
// CORES-SAME: register_tile = array<i64: 1, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 1, 704, 1024>
// CORES-LABEL: func.func private @decode_kernel_1
// CORES-SAME: register_tile = array<i64: 1, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 1, 704, 64>
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 1 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64, l1_bytes = 32768 : i64, l2_bytes = 1048576 : i64}} {
  func.func @decode(%x: tensor<1x1024xf32>, %b: tensor<1024x2816xf32>) -> (tensor<1x2816xf32>, tensor<1x2816xf32>) {
    %w = "graph.constant"() {value = dense<0.5> : tensor<1024x2816xf32>} : () -> tensor<1024x2816xf32>
    %0 = "graph.matmul"(%x, %w) : (tensor<1x1024xf32>, tensor<1024x2816xf32>) -> tensor<1x2816xf32>
    %1 = "graph.matmul"(%x, %b) : (tensor<1x1024xf32>, tensor<1024x2816xf32>) -> tensor<1x2816xf32>
    return %0, %1 : tensor<1x2816xf32>, tensor<1x2816xf32>
  }
}

// -----

// A classifier's matrix-vector product over 1000 columns (no whole micro-kernels: B stays
// unpacked) reads whole rows of B, 8 at a time; 2 threads take 500 columns each.
// CORES-LABEL: func.func private @classifier_kernel_0
// CORES-SAME: register_tile = array<i64: 1, 32, 1>, strategy = "matmul", thread_dim = 1 : i64, threads = 2 : i64, tile_sizes = array<i64: 1, 500, 8>
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64, l1_bytes = 32768 : i64, l2_bytes = 1048576 : i64}} {
  func.func @classifier(%x: tensor<1x2048xf32>) -> tensor<1x1000xf32> {
    %w = "graph.constant"() {value = dense<0.5> : tensor<2048x1000xf32>} : () -> tensor<2048x1000xf32>
    %0 = "graph.matmul"(%x, %w) : (tensor<1x2048xf32>, tensor<2048x1000xf32>) -> tensor<1x1000xf32>
    return %0 : tensor<1x1000xf32>
  }
}

// -----

// On AVX-512 micro-kernels are 32 wide: a 7x7 map's 49 patches (32 + 17) and a 14x14 map's
// 196 (6 x 32 + 4) are not padded to 64 and 224 (a pad of more than an eighth, which the last
// micro-kernel would not have needed); unpacked, as B fits in L2.
// CORES-LABEL: func.func private @small_maps_kernel_0
// CORES-SAME: tile.config = {im2col = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 128, 49, 128>, vector_size = 16 : i64}
// CORES-LABEL: func.func private @small_maps_kernel_1
// CORES-SAME: tile.config = {im2col = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 128, 196, 128>, vector_size = 16 : i64}
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 1 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64, l1_bytes = 32768 : i64, l2_bytes = 1048576 : i64}} {
  func.func @small_maps(%x: tensor<1x2048x7x7xf32>, %w: tensor<512x2048x1x1xf32>, %y: tensor<1x256x14x14xf32>, %v: tensor<256x256x3x3xf32>) -> (tensor<1x512x7x7xf32>, tensor<1x256x14x14xf32>) {
    %0 = "graph.conv2d"(%x, %w) : (tensor<1x2048x7x7xf32>, tensor<512x2048x1x1xf32>) -> tensor<1x512x7x7xf32>
    %1 = "graph.conv2d"(%y, %v) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x256x14x14xf32>, tensor<256x256x3x3xf32>) -> tensor<1x256x14x14xf32>
    return %0, %1 : tensor<1x512x7x7xf32>, tensor<1x256x14x14xf32>
  }
}

// -----

// A conv of stride 1 whose rows lose little to their padded width reads its input in place
// (direct): 56x56 and 28x28 maps (rows of 57 and 29 pixels, the zeros between two rows serving
// both; 3200 and 832 columns with the pad to whole micro-kernels: 2% and 6% over OH*OW); a
// 14x14 map (224 columns, 14% over) and 12 output channels (no whole micro-kernels of 8) stay
// im2col products.
// CORES-LABEL: func.func private @direct_kernel_0
// CORES-SAME: tile.config = {direct = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 64, 3200, 576>, vector_size = 16 : i64}
// CORES-LABEL: func.func private @direct_kernel_1
// CORES-SAME: tile.config = {direct = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 128, 832, 1152>, vector_size = 16 : i64}
// CORES-LABEL: func.func private @direct_kernel_2
// CORES-SAME: tile.config = {im2col = 1
// CORES-LABEL: func.func private @direct_kernel_3
// CORES-SAME: tile.config = {im2col = 1
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 1 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64, l1_bytes = 32768 : i64, l2_bytes = 1048576 : i64}} {
  func.func @direct(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>, %y: tensor<1x128x28x28xf32>, %v: tensor<128x128x3x3xf32>, %z: tensor<1x256x14x14xf32>, %u: tensor<256x256x3x3xf32>, %t: tensor<12x64x3x3xf32>) -> (tensor<1x64x56x56xf32>, tensor<1x128x28x28xf32>, tensor<1x256x14x14xf32>, tensor<1x12x56x56xf32>) {
    %0 = "graph.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
    %1 = "graph.conv2d"(%y, %v) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x128x28x28xf32>, tensor<128x128x3x3xf32>) -> tensor<1x128x28x28xf32>
    %2 = "graph.conv2d"(%z, %u) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x256x14x14xf32>, tensor<256x256x3x3xf32>) -> tensor<1x256x14x14xf32>
    %3 = "graph.conv2d"(%x, %t) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x64x56x56xf32>, tensor<12x64x3x3xf32>) -> tensor<1x12x56x56xf32>
    return %0, %1, %2, %3 : tensor<1x64x56x56xf32>, tensor<1x128x28x28xf32>, tensor<1x256x14x14xf32>, tensor<1x12x56x56xf32>
  }
}

// -----

// On 2 cores the threads split a direct conv's output channels where each gets whole
// micro-kernels; 24 channels (3 micro-kernels) split its columns instead, padded to whole micro-kernels for each
// thread (a 5x5 window with no padding on 40x40: 36 rows of 40, 1440 columns, 1472).
// CORES-LABEL: func.func private @direct_threads_kernel_0
// CORES-SAME: tile.config = {direct = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", thread_dim = 0 : i64, threads = 2 : i64, tile_sizes = array<i64: 64, 3200, 576>, vector_size = 16 : i64}
// CORES-LABEL: func.func private @direct_threads_kernel_1
// CORES-SAME: tile.config = {direct = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", thread_dim = 1 : i64, threads = 2 : i64, tile_sizes = array<i64: 24, 1472, 800>, vector_size = 16 : i64}
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64, l1_bytes = 32768 : i64, l2_bytes = 1048576 : i64}} {
  func.func @direct_threads(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>, %y: tensor<1x32x40x40xf32>, %v: tensor<24x32x5x5xf32>) -> (tensor<1x64x56x56xf32>, tensor<1x24x36x36xf32>) {
    %0 = "graph.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
    %1 = "graph.conv2d"(%y, %v) : (tensor<1x32x40x40xf32>, tensor<24x32x5x5xf32>) -> tensor<1x24x36x36xf32>
    return %0, %1 : tensor<1x64x56x56xf32>, tensor<1x24x36x36xf32>
  }
}

// -----

// A 1x1 conv of stride 1 multiplies its input in place where its columns are whole vectors:
// 784 of a 28x28 map are not padded to 800 (no copy of the input into padded rows; packed
// where B outgrows L2, in blocks of 112 that divide them). 196 of a 14x14 map are not whole
// vectors, but the pad to 224 is more than an eighth: unpadded too.
// CORES-LABEL: func.func private @in_place_kernel_0
// CORES-SAME: tile.config = {columns = 784 : i64, im2col = 1 : i64, interchange = array<i64: 1, 2, 0>, pack = 4 : i64, register_tile = array<i64: 8, 16, 1>, strategy = "matmul", tile_sizes = array<i64: 64, 112, 256>, vector_size = 16 : i64}
// CORES-LABEL: func.func private @in_place_kernel_1
// CORES-SAME: tile.config = {columns = 784 : i64, im2col = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 7, 16, 1>, strategy = "matmul", tile_sizes = array<i64: 28, 256, 28>, vector_size = 16 : i64}
// CORES-LABEL: func.func private @in_place_kernel_2
// CORES-SAME: tile.config = {im2col = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 64, 196, 64>, vector_size = 16 : i64}
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 1 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64, l1_bytes = 32768 : i64, l2_bytes = 1048576 : i64}} {
  func.func @in_place(%x: tensor<1x512x28x28xf32>, %w: tensor<128x512x1x1xf32>, %y: tensor<1x28x28x28xf32>, %v: tensor<28x28x1x1xf32>, %z: tensor<1x64x14x14xf32>, %u: tensor<64x64x1x1xf32>) -> (tensor<1x128x28x28xf32>, tensor<1x28x28x28xf32>, tensor<1x64x14x14xf32>) {
    %0 = "graph.conv2d"(%x, %w) : (tensor<1x512x28x28xf32>, tensor<128x512x1x1xf32>) -> tensor<1x128x28x28xf32>
    %1 = "graph.conv2d"(%y, %v) : (tensor<1x28x28x28xf32>, tensor<28x28x1x1xf32>) -> tensor<1x28x28x28xf32>
    %2 = "graph.conv2d"(%z, %u) : (tensor<1x64x14x14xf32>, tensor<64x64x1x1xf32>) -> tensor<1x64x14x14xf32>
    return %0, %1, %2 : tensor<1x128x28x28xf32>, tensor<1x28x28x28xf32>, tensor<1x64x14x14xf32>
  }
}

// -----

// SqueezeNet's squeeze conv on 55x55 on 2 cores: 3025 patches padded to 3040 would leave the
// threads only M to split (16 rows: each thread would pack all of B for 8); padded to 3072,
// each thread packs and computes 1536 columns of its own.
// CORES-LABEL: func.func private @squeeze_kernel_0
// CORES-SAME: tile.config = {columns = 3072 : i64, im2col = 1 : i64, interchange = array<i64: 1, 2, 0>, pack = 4 : i64, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", thread_dim = 1 : i64, threads = 2 : i64, tile_sizes = array<i64: 16, 768, 64>
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64, l1_bytes = 32768 : i64, l2_bytes = 1048576 : i64}} {
  func.func @squeeze(%x: tensor<1x64x55x55xf32>, %w: tensor<16x64x1x1xf32>) -> tensor<1x16x55x55xf32> {
    %0 = "graph.conv2d"(%x, %w) : (tensor<1x64x55x55xf32>, tensor<16x64x1x1xf32>) -> tensor<1x16x55x55xf32>
    return %0 : tensor<1x16x55x55xf32>
  }
}

// -----

// SqueezeNet's classifier on 2 cores: 1000 filters by 169 patches leave the threads no whole
// micro-kernels unpacked, so the patches are padded to 192 and packed, in blocks of 200 rows
// (none near the 128 of the L2 limit divides 1000), and the threads split the columns. On one
// core the same conv stays unpacked (169 columns: no padding to pay for).
// CORES-LABEL: func.func private @classifier_kernel_0
// CORES-SAME: im2col = 1 : i64, interchange = array<i64: 1, 2, 0>, pack = 4 : i64, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", thread_dim = 1 : i64, threads = 2 : i64, tile_sizes = array<i64: 200, 96, 128>
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64, l1_bytes = 32768 : i64, l2_bytes = 1048576 : i64}} {
  func.func @classifier(%x: tensor<1x512x13x13xf32>, %w: tensor<1000x512x1x1xf32>) -> tensor<1x1000x13x13xf32> {
    %0 = "graph.conv2d"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x512x13x13xf32>, tensor<1000x512x1x1xf32>) -> tensor<1x1000x13x13xf32>
    return %0 : tensor<1x1000x13x13xf32>
  }
}

// -----

// CORES-LABEL: func.func private @classifier_one_core_kernel_0
// CORES-SAME: tile.config = {im2col = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 128, 169, 128>, vector_size = 16 : i64}
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 1 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64, l1_bytes = 32768 : i64, l2_bytes = 1048576 : i64}} {
  func.func @classifier_one_core(%x: tensor<1x512x13x13xf32>, %w: tensor<1000x512x1x1xf32>) -> tensor<1x1000x13x13xf32> {
    %0 = "graph.conv2d"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x512x13x13xf32>, tensor<1000x512x1x1xf32>) -> tensor<1x1000x13x13xf32>
    return %0 : tensor<1x1000x13x13xf32>
  }
}

// -----

// A kernel already lowered to buffers has no graph ops to tile: it keeps its loops.
// CORES-LABEL: func.func private @lowered
// CORES-SAME: tile.config = {strategy = "loops"}
func.func private @lowered(%a: memref<256x1000xf32>, %b: memref<256x1000xf32>) attributes {tile.kernel = "elementwise"} {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0, %c0] : memref<256x1000xf32>
  memref.store %v, %b[%c0, %c0] : memref<256x1000xf32>
  return
}
