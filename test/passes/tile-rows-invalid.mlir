// RUN: strata-opt %s --tile-rows --verify-diagnostics --split-input-file
// A tile.config written by hand is checked before it is used.

// expected-error @+1 {{'tile.config' key 'threads' must be an integer, got array<i64>}}
func.func private @threads_array(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "rows", threads = array<i64>, tile_sizes = array<i64: 1, 0>}} {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// expected-error @+1 {{'tile.config' has no key 'tiles' (strategy, tile_sizes, interchange, register_tile, vector_size, threads, thread_dim, chunks, pack, im2col, direct, columns, block_tile, warp_tile, stages, mma, block_threads, rows_per_block)}}
func.func private @unknown_key(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "rows", tiles = array<i64: 1, 0>}} {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// expected-error @+1 {{'tile.config' strategy must be one of loops, elementwise, matmul, rows, gpu_matmul, gpu_elementwise, gpu_rows, gpu_attention}}
func.func private @strategy(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "columns", tile_sizes = array<i64: 1, 0>}} {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// expected-error @+1 {{'tile.config' tile_sizes must be 2 non-negative sizes, got [1]}}
func.func private @rank(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "rows", tile_sizes = array<i64: 1>}} {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// expected-error @+1 {{'tile.config' thread_dim must be a dim below 2}}
func.func private @thread_dim(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "rows", threads = 2 : i64, thread_dim = 2 : i64, tile_sizes = array<i64: 1, 0>}} {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// expected-error @+1 {{'tile.config' loops over 2 leading dims, but the kernel's rows start at dim 1}}
func.func private @whole_row(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "rows", tile_sizes = array<i64: 1, 1>}} {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// expected-error @+1 {{'tile.config' loops over 1 leading dims, but the kernel's rows start at dim 0}}
func.func private @reduced_dim(%x: tensor<8x64xf32>) -> tensor<64xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "rows", tile_sizes = array<i64: 1>}} {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<8x64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// expected-error @+1 {{'tile.config' tile_sizes and register_tile must be 3 positive sizes each}}
func.func private @register_tile(%a: tensor<8x64xf32>, %b: tensor<64x32xf32>) -> tensor<8x32xf32> attributes {tile.kernel = "contraction", tile.config = {strategy = "matmul", tile_sizes = array<i64: 8, 32, 64>, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 4, 0, 1>}} {
  %0 = "graph.matmul"(%a, %b) : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// expected-error @+1 {{'tile.config' threads, chunks, vector_size and pack must be positive}}
func.func private @no_chunks(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "rows", tile_sizes = array<i64: 1, 0>, threads = 2 : i64, chunks = 0 : i64}} {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// expected-error @+1 {{'tile.config' warp_tile [48, 64] must divide the block tile [128, 128]}}
func.func private @gpu_warps(%a: tensor<256x64xf16>, %b: tensor<64x256xf16>) -> tensor<256x256xf32> attributes {tile.kernel = "contraction", tile.config = {strategy = "gpu_matmul", block_tile = array<i64: 128, 128, 32>, warp_tile = array<i64: 48, 64>, stages = 3 : i64, mma = "mma.sync"}} {
  %0 = "graph.matmul"(%a, %b) : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// expected-error @+1 {{'tile.config' mma must be one of wgmma, mma.sync, simt}}
func.func private @gpu_unit(%a: tensor<256x64xf16>, %b: tensor<64x256xf16>) -> tensor<256x256xf32> attributes {tile.kernel = "contraction", tile.config = {strategy = "gpu_matmul", block_tile = array<i64: 128, 128, 32>, warp_tile = array<i64: 64, 64>, stages = 3 : i64, mma = "hmma"}} {
  %0 = "graph.matmul"(%a, %b) : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// expected-error @+1 {{'tile.config' strategy 'gpu_rows' needs rows_per_block}}
func.func private @gpu_rows(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "gpu_rows", block_threads = 256 : i64, vector_size = 4 : i64}} {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// expected-error @+1 {{'tile.config' strategy 'gpu_attention' needs block_threads}}
func.func private @gpu_attention_threads(%q: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> attributes {tile.kernel = "attention", tile.config = {strategy = "gpu_attention", block_tile = array<i64: 64, 64>}} {
  %0 = "graph.attention"(%q, %q, %q) : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
  return %0 : tensor<1x2x64x64xf32>
}

// -----

// expected-error @+1 {{'tile.config' gpu_attention: 96 threads of 2 rows cannot share a block's 64 rows in a power of two of threads a row}}
func.func private @gpu_attention_rows(%q: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> attributes {tile.kernel = "attention", tile.config = {strategy = "gpu_attention", block_tile = array<i64: 64, 64>, block_threads = 96 : i64, register_tile = array<i64: 2>}} {
  %0 = "graph.attention"(%q, %q, %q) : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
  return %0 : tensor<1x2x64x64xf32>
}

// -----

// expected-error @+1 {{'tile.config' gpu_attention: block_tile must be 2 positive sizes (rows, keys)}}
func.func private @gpu_attention_tile(%q: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> attributes {tile.kernel = "attention", tile.config = {strategy = "gpu_attention", block_tile = array<i64: 64, 64, 16>, block_threads = 128 : i64}} {
  %0 = "graph.attention"(%q, %q, %q) : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
  return %0 : tensor<1x2x64x64xf32>
}

// -----

// expected-error @+1 {{'tile.config' gpu_attention: register_tile must be 1 size (rows a thread)}}
func.func private @gpu_attention_register_tile(%q: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> attributes {tile.kernel = "attention", tile.config = {strategy = "gpu_attention", block_tile = array<i64: 64, 64>, block_threads = 128 : i64, register_tile = array<i64: 2, 2>}} {
  %0 = "graph.attention"(%q, %q, %q) : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
  return %0 : tensor<1x2x64x64xf32>
}

// -----

// expected-error @+1 {{'tile.config' gpu_attention on mma.sync: 256 threads must be warps of whole 16-row tiles of the block's 64 rows, and key tiles whole 16s}}
func.func private @gpu_attention_mma_warps(%q: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> attributes {tile.kernel = "attention", tile.config = {strategy = "gpu_attention", mma = "mma.sync", block_tile = array<i64: 64, 64>, block_threads = 256 : i64}} {
  %0 = "graph.attention"(%q, %q, %q) : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  return %0 : tensor<1x2x64x64xf16>
}

// -----

// expected-error @+1 {{'tile.config' gpu_attention on mma.sync: 128 threads must be warps of whole 16-row tiles of the block's 64 rows, and key tiles whole 16s}}
func.func private @gpu_attention_mma_keys(%q: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> attributes {tile.kernel = "attention", tile.config = {strategy = "gpu_attention", mma = "mma.sync", block_tile = array<i64: 64, 40>, block_threads = 128 : i64}} {
  %0 = "graph.attention"(%q, %q, %q) : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  return %0 : tensor<1x2x64x64xf16>
}

// -----

// expected-error @+1 {{'tile.config' gpu_attention: mma must be mma.sync or simt}}
func.func private @gpu_attention_wgmma(%q: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> attributes {tile.kernel = "attention", tile.config = {strategy = "gpu_attention", mma = "wgmma", block_tile = array<i64: 64, 64>, block_threads = 128 : i64}} {
  %0 = "graph.attention"(%q, %q, %q) : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  return %0 : tensor<1x2x64x64xf16>
}
