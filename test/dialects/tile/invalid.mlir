// RUN: strata-opt %s --split-input-file --verify-diagnostics

func.func @rank(%x: tensor<64x32xf32>) {
  // expected-error @+1 {{'tile_sizes' must have one entry per dim (2), got 1}}
  %0 = "tile.config"(%x) {tile_sizes = array<i64: 8>} : (tensor<64x32xf32>) -> tensor<64x32xf32>
  return
}

// -----

func.func @negative(%x: tensor<64x32xf32>) {
  // expected-error @+1 {{'tile_sizes' must be non-negative}}
  %0 = "tile.config"(%x) {tile_sizes = array<i64: 8, -1>} : (tensor<64x32xf32>) -> tensor<64x32xf32>
  return
}
