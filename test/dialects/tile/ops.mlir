// RUN: strata-opt %s --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @config
func.func @config(%x: tensor<64x32xf32>) -> tensor<64x32xf32> {
  // CHECK: "tile.config"(%{{.*}}) {tile_sizes = array<i64: 8, 0>} : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %0 = "tile.config"(%x) {tile_sizes = array<i64: 8, 0>} : (tensor<64x32xf32>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}
