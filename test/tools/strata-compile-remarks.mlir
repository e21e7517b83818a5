// RUN: strata-compile %s -v --emit so -o %t.so 2>&1 | FileCheck %s
// RUN: strata-compile %s --emit so -o %t.so 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty

// A kernel whose tile.config cannot be realized (five threads over 96 columns give uneven
// pieces, which do not vectorize) still compiles, with a simpler configuration; -v tells why.
// CHECK: strata-compile-remarks.mlir:[[@LINE+6]]:1: remark: tile-lower falls back from kernel @chain (tensor<4x96xf32>) -> tensor<4x96xf32> with tile.config = {{{.*}}threads = 5 : i64{{.*}}} (Attempted to vectorize, but failed (at {{.*}}strata-compile-remarks.mlir:[[@LINE+10]]:8)) to {strategy = "elementwise", tile_sizes = array<i64: 1, 48>, vector_size = 16 : i64}
// QUIET-NOT: remark
func.func @main(%x: tensor<4x96xf32>) -> tensor<4x96xf32> {
  %r = func.call @chain(%x) : (tensor<4x96xf32>) -> tensor<4x96xf32>
  return %r : tensor<4x96xf32>
}
func.func private @chain(%x: tensor<4x96xf32>) -> tensor<4x96xf32> attributes {
    tile.kernel = "elementwise",
    tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 48>, vector_size = 16 : i64,
                   threads = 5 : i64, thread_dim = 1 : i64, chunks = 5 : i64}} {
  %r = "graph.exp"(%x) : (tensor<4x96xf32>) -> tensor<4x96xf32>
  return %r : tensor<4x96xf32>
}
