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

// A depthwise conv whose config (as a tuner might write it) asks for a tile of 64 x 64
// outputs would vectorize each tap as one vector of 4096 elements (more than the registers
// hold, and minutes of unrolling): the kernel falls back, here to plain loops.
// CHECK-LABEL: func.func private @huge_tiles
// CHECK-SAME: tile.config = {strategy = "loops"}
// CHECK-NOT: tile.vectorize
// STRICT: error: tile-lower cannot realize kernel @huge_tiles {{.*}}: linalg.generic at {{.*}} would be one vector of 4096 elements
#window = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d3 + d6)>
#weights = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#output = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// expected-remark @below {{tile-lower falls back from kernel @huge_tiles (tensor<1x8x66x66xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x64x64xf32> with tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 1, 64, 64>, vector_size = 16 : i64} (linalg.generic at}}
func.func private @huge_tiles(%x: tensor<1x8x66x66xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x64x64xf32> attributes {tile.kernel = "convolution", tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 1, 64, 64>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x8x64x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32>
  %r = linalg.generic {indexing_maps = [#window, #weights, #output], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x8x66x66xf32>, tensor<8x1x3x3xf32>) outs(%init : tensor<1x8x64x64xf32>) {
  ^bb0(%in: f32, %weight: f32, %acc: f32):
    %p = arith.mulf %in, %weight : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x8x64x64xf32>
  return %r : tensor<1x8x64x64xf32>
}

// -----

// A direct conv reads its input one pixel after another: a config that asks it of a conv of
// stride 2 falls back to loops.
// MATMUL-LABEL: func.func private @strided_direct
// MATMUL-SAME: tile.config = {strategy = "loops"}
// CHECK-LABEL: func.func private @strided_direct
// MATMUL: linalg.conv_2d_nchw_fchw
// STRICT-MATMUL: error: tile-lower cannot realize kernel @strided_direct {{.*}}: direct conv: strides other than 1
func.func private @strided_direct(%x: tensor<1x2x9x9xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<1x8x4x4xf32> attributes {
    tile.kernel = "convolution",
    tile.config = {strategy = "matmul", direct = 1 : i64, tile_sizes = array<i64: 8, 16, 18>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 16, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x9x9xf32>, tensor<8x2x3x3xf32>) outs(%init : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}
