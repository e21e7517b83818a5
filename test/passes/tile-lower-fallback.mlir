// RUN: strata-opt %s --tile-lower --split-input-file --verify-diagnostics | FileCheck %s
// RUN: strata-opt %s --tile-lower="contractions=true" --split-input-file 2>&1 | FileCheck %s --check-prefix=MATMUL
// RUN: not strata-opt %s --tile-lower="strict=true" --split-input-file 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: not strata-opt %s --tile-lower="contractions=true strict=true" --split-input-file 2>&1 | FileCheck %s --check-prefix=STRICT-MATMUL

// A configuration that cannot be realized falls back to a simpler one, with a remark that names
// the kernel, its signature, the configuration and the cause; under `strict` it is an error.

// Five threads over 96 columns give uneven (dynamic) pieces, which do not vectorize: the
// kernel is tiled again without threads, and its tile.config says so.
// CHECK-LABEL: func.func private @uneven_threads
// CHECK-SAME: tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 48>, vector_size = 16 : i64}
// CHECK-NOT: scf.forall
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x48xf32>) outs(%{{.*}} : tensor<1x48xf32>) attrs = {tile.vectorize}
// STRICT: error: tile-lower cannot realize kernel @uneven_threads (tensor<4x96xf32>) -> tensor<4x96xf32> with tile.config = {chunks = 5 : i64, {{.*}}threads = 5 : i64{{.*}}}: Attempted to vectorize, but failed
#id = affine_map<(d0, d1) -> (d0, d1)>
// expected-remark @below {{tile-lower falls back from kernel @uneven_threads (tensor<4x96xf32>) -> tensor<4x96xf32> with tile.config = {chunks = 5 : i64, strategy = "elementwise", thread_dim = 1 : i64, threads = 5 : i64, tile_sizes = array<i64: 1, 48>, vector_size = 16 : i64} (Attempted to vectorize, but failed}}
func.func private @uneven_threads(%x: tensor<4x96xf32>) -> tensor<4x96xf32> attributes {
    tile.kernel = "elementwise",
    tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 48>, vector_size = 16 : i64,
                   threads = 5 : i64, thread_dim = 1 : i64, chunks = 5 : i64}} {
  %e = tensor.empty() : tensor<4x96xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x96xf32>) outs(%e : tensor<4x96xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<4x96xf32>
  return %r : tensor<4x96xf32>
}

// -----

// Packed panels need whole micro-kernel tiles: 60 rows are not 8-row panels, so the matmul
// is tiled unpacked, into 8 x 32 micro-kernels whose partial tiles are peeled.
// MATMUL: remark: tile-lower falls back from kernel @partial_panels (tensor<60x64xf32>, tensor<64x64xf32>) -> tensor<60x64xf32> with tile.config = {{{.*}}pack = 4 : i64{{.*}}} (Attempted to vectorize, but failed
// MATMUL-LABEL: func.func private @partial_panels(%arg0
// MATMUL-SAME: tile.config = {interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 32, 64, 32>, vector_size = 16 : i64}
// MATMUL-NOT: linalg.pack
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<1x32xf32>) outs(%{{.*}} : tensor<8x32xf32>)
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x32xf32>) outs(%{{.*}} : tensor<4x32xf32>)
// STRICT-MATMUL: error: tile-lower cannot realize kernel @partial_panels {{.*}}pack = 4 : i64
func.func private @partial_panels(%a: tensor<60x64xf32>, %b: tensor<64x64xf32>) -> tensor<60x64xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", pack = 4 : i64, tile_sizes = array<i64: 32, 64, 32>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<60x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<60x64xf32>) -> tensor<60x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<60x64xf32>, tensor<64x64xf32>) outs(%c : tensor<60x64xf32>) -> tensor<60x64xf32>
  return %r : tensor<60x64xf32>
}

// -----

// A row kernel that no row loop cut (tile-rows did not run) would vectorize each of its ops
// whole, 256 rows of 16 as one vector of 4096 elements (more than the registers hold, and
// minutes of unrolling): the kernel falls back, here to plain loops.
// CHECK-LABEL: func.func private @uncut_rows
// CHECK-SAME: tile.config = {strategy = "loops"}
// CHECK-NOT: tile.vectorize
// STRICT: error: tile-lower cannot realize kernel @uncut_rows {{.*}}: linalg.generic at {{.*}} would be one vector of 4096 elements
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// expected-remark @below {{tile-lower falls back from kernel @uncut_rows (tensor<256x16xf32>) -> tensor<256x16xf32> with tile.config = {strategy = "rows", tile_sizes = array<i64: 1, 0>, vector_size = 16 : i64} (linalg.generic at}}
func.func private @uncut_rows(%x: tensor<256x16xf32>) -> tensor<256x16xf32> attributes {
    tile.kernel = "reduction",
    tile.config = {strategy = "rows", tile_sizes = array<i64: 1, 0>, vector_size = 16 : i64}} {
  %e = tensor.empty() : tensor<256x16xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<256x16xf32>) outs(%e : tensor<256x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<256x16xf32>
  return %r : tensor<256x16xf32>
}
