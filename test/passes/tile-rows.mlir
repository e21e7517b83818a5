// RUN: strata-opt %s --target=cpu:x86-64-v4 --graph-fuse --tile-configure --tile-rows --split-input-file | FileCheck %s
// RUN: strata-opt %s --tile-rows --split-input-file | FileCheck %s --check-prefix=THREADS

// A softmax kernel with its prologue becomes one loop over rows; each row is sliced, computed
// by the same graph ops on tensor<1xN>, and inserted into the result. The loop is marked for
// --prefetch-rows (the next row of its inputs is fetched while this one is computed).
// CHECK-LABEL: func.func private @softmax_kernel_0
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<4x256xf32>
// CHECK: %[[R:.*]] = scf.for %[[I:.*]] = %{{.*}} to %c4 step %{{.*}} iter_args(%[[ACC:.*]] = %[[OUT]])
// CHECK: %[[ROW:.*]] = tensor.extract_slice %arg0[%{{.*}}, 0] [1, 256] [1, 1] : tensor<4x256xf32> to tensor<1x256xf32>
// CHECK: %[[M:.*]] = "graph.mul"(%[[ROW]], %{{.*}}) : (tensor<1x256xf32>, tensor<f32>) -> tensor<1x256xf32>
// CHECK: %[[S:.*]] = "graph.softmax"(%[[M]]) {axis = 1 : i64} : (tensor<1x256xf32>) -> tensor<1x256xf32>
// CHECK: %[[NEXT:.*]] = tensor.insert_slice %[[S]] into %[[ACC]][%{{.*}}, 0] [1, 256] [1, 1]
// CHECK: scf.yield %[[NEXT]]
// CHECK-NEXT: } {tile.prefetch_rows = 1 : i64}
// CHECK: return %[[R]]
func.func @softmax(%x: tensor<4x256xf32>) -> tensor<4x256xf32> {
  %t = "graph.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %0 = "graph.mul"(%x, %t) : (tensor<4x256xf32>, tensor<f32>) -> tensor<4x256xf32>
  %1 = "graph.softmax"(%0) {axis = 1 : i64} : (tensor<4x256xf32>) -> tensor<4x256xf32>
  return %1 : tensor<4x256xf32>
}

// -----

// Leading dims are walked as one flat row index; the scale and bias broadcast along rows and
// are used whole.
// CHECK-LABEL: func.func private @norm_kernel_0
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c6 step
// CHECK: %[[C:.*]] = arith.remui %[[I]], %c3
// CHECK: %[[Q:.*]] = arith.divui %[[I]], %c3
// CHECK: %[[B:.*]] = arith.remui %[[Q]], %c2
// CHECK: %[[ROW:.*]] = tensor.extract_slice %arg0[%[[B]], %[[C]], 0] [1, 1, 64] [1, 1, 1]
// CHECK: "graph.layer_norm"(%[[ROW]], %arg1, %arg2) {{{.*}}} : (tensor<1x1x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x1x64xf32>
func.func @norm(%x: tensor<2x3x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<2x3x64xf32> {
  %0 = "graph.layer_norm"(%x, %g, %b) {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x3x64xf32>
  return %0 : tensor<2x3x64xf32>
}

// -----

// A padding mask (batch x 1 x 1 x keys) is the same for every head and query: its row is
// sliced at the batch index alone. A lower-rank bias (queries x keys) aligns with the last
// dims, as numpy broadcasting aligns it: it is sliced at the query index.
// CHECK-LABEL: func.func private @masked_kernel_0
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c24 step
// CHECK: %[[Q:.*]] = arith.remui %[[I]], %c4
// CHECK: %[[R:.*]] = arith.divui %[[I]], %c4
// CHECK: %[[H:.*]] = arith.remui %[[R]], %c3
// CHECK: %[[R2:.*]] = arith.divui %[[R]], %c3
// CHECK: %[[B:.*]] = arith.remui %[[R2]], %c2
// CHECK: %[[ROW:.*]] = tensor.extract_slice %arg0[%[[B]], %[[H]], %[[Q]], 0] [1, 1, 1, 16] [1, 1, 1, 1]
// CHECK: %[[MASK:.*]] = tensor.extract_slice %arg1[%[[B]], 0, 0, 0] [1, 1, 1, 16] [1, 1, 1, 1] : tensor<2x1x1x16xf32> to tensor<1x1x1x16xf32>
// CHECK: %[[BIAS:.*]] = tensor.extract_slice %arg2[%[[Q]], 0] [1, 16] [1, 1] : tensor<4x16xf32> to tensor<1x16xf32>
// CHECK: %[[A:.*]] = "graph.add"(%[[ROW]], %[[MASK]])
// CHECK: "graph.add"(%[[A]], %[[BIAS]]) : (tensor<1x1x1x16xf32>, tensor<1x16xf32>)
func.func @masked(%x: tensor<2x3x4x16xf32>, %mask: tensor<2x1x1x16xf32>, %bias: tensor<4x16xf32>) -> tensor<2x3x4x16xf32> {
  %0 = "graph.add"(%x, %mask) : (tensor<2x3x4x16xf32>, tensor<2x1x1x16xf32>) -> tensor<2x3x4x16xf32>
  %1 = "graph.add"(%0, %bias) : (tensor<2x3x4x16xf32>, tensor<4x16xf32>) -> tensor<2x3x4x16xf32>
  %2 = "graph.softmax"(%1) {axis = 3 : i64} : (tensor<2x3x4x16xf32>) -> tensor<2x3x4x16xf32>
  return %2 : tensor<2x3x4x16xf32>
}

// -----

// A reduction over the innermost dim (with its prologue) loops over the rows it reduces; each
// row's reduction has the row's reduced shape and is inserted into the result at the row.
// CHECK-LABEL: func.func private @row_sums_kernel_0
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<6x4xf32>
// CHECK: %[[R:.*]] = scf.for %[[I:.*]] = %{{.*}} to %c24 step %{{.*}} iter_args(%[[ACC:.*]] = %[[OUT]])
// CHECK: %[[ROW:.*]] = tensor.extract_slice %arg0[%{{.*}}, %{{.*}}, 0] [1, 1, 256] [1, 1, 1] : tensor<6x4x256xf32> to tensor<1x1x256xf32>
// CHECK: %[[SQ:.*]] = "graph.mul"(%[[ROW]], %[[ROW]]) : (tensor<1x1x256xf32>, tensor<1x1x256xf32>) -> tensor<1x1x256xf32>
// CHECK: %[[S:.*]] = "graph.reduce_sum"(%[[SQ]]) {axes = array<i64: 2>, keepdims = false} : (tensor<1x1x256xf32>) -> tensor<1x1xf32>
// CHECK: tensor.insert_slice %[[S]] into %[[ACC]][%{{.*}}, %{{.*}}] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<6x4xf32>
// CHECK: } {tile.prefetch_rows = 1 : i64}
// CHECK: return %[[R]]
func.func @row_sums(%x: tensor<6x4x256xf32>) -> tensor<6x4xf32> {
  %0 = "graph.mul"(%x, %x) : (tensor<6x4x256xf32>, tensor<6x4x256xf32>) -> tensor<6x4x256xf32>
  %1 = "graph.reduce_sum"(%0) {axes = array<i64: 2>, keepdims = false} : (tensor<6x4x256xf32>) -> tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}

// -----

// A reduction over an image's H and W computes on the image as one flat row: the input and
// the per-channel bias are collapsed before the loop, the rows reduce their one flat dim, and
// the kept dims come back after the loop.
// CHECK-LABEL: func.func private @global_pool_kernel_0
// CHECK-SAME: tile_sizes = array<i64: 1, 1, 0, 0>
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<2x8x7x7xf32> into tensor<2x8x49xf32>
// CHECK: %[[B:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2]] : tensor<8x1x1xf32> into tensor<8x1xf32>
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<2x8x1xf32>
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %c16 step %{{.*}} iter_args(%[[ACC:.*]] = %[[OUT]])
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[X]][%{{.*}}, %{{.*}}, 0] [1, 1, 49] [1, 1, 1] : tensor<2x8x49xf32> to tensor<1x1x49xf32>
// CHECK: %[[BIAS:.*]] = tensor.extract_slice %[[B]][%{{.*}}, 0] [1, 1] [1, 1] : tensor<8x1xf32> to tensor<1x1xf32>
// CHECK: %[[A:.*]] = "graph.add"(%[[ROW]], %[[BIAS]]) : (tensor<1x1x49xf32>, tensor<1x1xf32>) -> tensor<1x1x49xf32>
// CHECK: %[[M:.*]] = "graph.reduce_mean"(%[[A]]) {axes = array<i64: 2>, keepdims = true} : (tensor<1x1x49xf32>) -> tensor<1x1x1xf32>
// CHECK: tensor.insert_slice %[[M]] into %[[ACC]]
// CHECK: } {tile.prefetch_rows = 1 : i64}
// CHECK: %[[E:.*]] = tensor.expand_shape %[[R]] {{\[}}[0], [1], [2, 3]] output_shape [2, 8, 1, 1] : tensor<2x8x1xf32> into tensor<2x8x1x1xf32>
// CHECK: return %[[E]]
func.func @global_pool(%x: tensor<2x8x7x7xf32>, %b: tensor<8x1x1xf32>) -> tensor<2x8x1x1xf32> {
  %0 = "graph.add"(%x, %b) : (tensor<2x8x7x7xf32>, tensor<8x1x1xf32>) -> tensor<2x8x7x7xf32>
  %1 = "graph.reduce_mean"(%0) {axes = array<i64: 2, 3>, keepdims = true} : (tensor<2x8x7x7xf32>) -> tensor<2x8x1x1xf32>
  return %1 : tensor<2x8x1x1xf32>
}

// -----

// A batch norm indexes its scale, bias, mean and variance by the channel (dim 1), not as
// numpy aligns operands: each row takes its channel's value of each.
// CHECK-LABEL: func.func private @pooled_norm_kernel_0
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<2x8x7x7xf32> into tensor<2x8x49xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c16 step
// CHECK: %[[C:.*]] = arith.remui %[[I]], %c8
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[X]][%{{.*}}, %[[C]], 0] [1, 1, 49]
// CHECK: %[[S:.*]] = tensor.extract_slice %arg1[%[[C]]] [1] [1] : tensor<8xf32> to tensor<1xf32>
// CHECK: %[[V:.*]] = tensor.extract_slice %arg4[%[[C]]] [1] [1] : tensor<8xf32> to tensor<1xf32>
// CHECK: "graph.batch_norm"(%[[ROW]], %[[S]], %{{.*}}, %{{.*}}, %[[V]]) : (tensor<1x1x49xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x49xf32>
// CHECK: "graph.reduce_mean"(%{{.*}}) {axes = array<i64: 2>, keepdims = false} : (tensor<1x1x49xf32>) -> tensor<1x1xf32>
func.func @pooled_norm(%x: tensor<2x8x7x7xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = "graph.batch_norm"(%x, %s, %b, %m, %v) : (tensor<2x8x7x7xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x7x7xf32>
  %1 = "graph.reduce_mean"(%0) {axes = array<i64: 2, 3>, keepdims = false} : (tensor<2x8x7x7xf32>) -> tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}

// -----

// An operand that spans some row dims and broadcasts along others (a per-column scale) keeps
// the rows in their dims; the reduction gets each 7x7 image whole.
// CHECK-LABEL: func.func private @per_column_kernel_0
// CHECK-NOT: tensor.collapse_shape
// CHECK: scf.for
// CHECK: %[[ROW:.*]] = tensor.extract_slice %arg0[%{{.*}}, %{{.*}}, 0, 0] [1, 1, 7, 7] [1, 1, 1, 1]
// CHECK: %[[P:.*]] = "graph.mul"(%[[ROW]], %arg1) : (tensor<1x1x7x7xf32>, tensor<7xf32>) -> tensor<1x1x7x7xf32>
// CHECK: "graph.reduce_sum"(%[[P]]) {axes = array<i64: 2, 3>, keepdims = false} : (tensor<1x1x7x7xf32>) -> tensor<1x1xf32>
func.func @per_column(%x: tensor<2x8x7x7xf32>, %s: tensor<7xf32>) -> tensor<2x8xf32> {
  %0 = "graph.mul"(%x, %s) : (tensor<2x8x7x7xf32>, tensor<7xf32>) -> tensor<2x8x7x7xf32>
  %1 = "graph.reduce_sum"(%0) {axes = array<i64: 2, 3>, keepdims = false} : (tensor<2x8x7x7xf32>) -> tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}

// -----

// A reduction of every dim is one row, left in its dims (collapsed here, reshape fusion would
// expand it again; --tile-lower walks its dims).
// CHECK-LABEL: func.func private @total_kernel_0
// CHECK-SAME: tile_sizes = array<i64>
// CHECK-NOT: scf.for
// CHECK-NOT: tensor.collapse_shape
// CHECK: "graph.reduce_max"(%arg0) {axes = array<i64: 0, 1>, keepdims = false} : (tensor<1000x127xf32>) -> tensor<f32>
func.func @total(%x: tensor<1000x127xf32>) -> tensor<f32> {
  %0 = "graph.reduce_max"(%x) {axes = array<i64: 0, 1>, keepdims = false} : (tensor<1000x127xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A 1-D reduction is one row: no loop.
// CHECK-LABEL: func.func private @vector_sum_kernel_0
// CHECK-SAME: tile_sizes = array<i64: 0>
// CHECK-NOT: scf.for
// CHECK: "graph.reduce_sum"(%arg0) {axes = array<i64: 0>, keepdims = true} : (tensor<1000xf32>) -> tensor<1xf32>
func.func @vector_sum(%v: tensor<1000xf32>) -> tensor<1xf32> {
  %0 = "graph.reduce_sum"(%v) {axes = array<i64: 0>, keepdims = true} : (tensor<1000xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// A softmax over another axis than the last is not a row kernel: left as it is.
// CHECK-LABEL: func.func private @columns_kernel_0
// CHECK-SAME: tile.config = {strategy = "loops"}
// CHECK-NOT: scf.for
// CHECK: "graph.softmax"(%arg0) {axis = 0 : i64} : (tensor<4x256xf32>) -> tensor<4x256xf32>
func.func @columns(%x: tensor<4x256xf32>) -> tensor<4x256xf32> {
  %0 = "graph.softmax"(%x) {axis = 0 : i64} : (tensor<4x256xf32>) -> tensor<4x256xf32>
  return %0 : tensor<4x256xf32>
}

// -----

// Attention with short sequences loops over (batch, head) pairs; keys and values of another
// length than the queries are sliced by the same leading dims.
// CHECK-LABEL: func.func private @attention_kernel_0
// CHECK-SAME: tile.config = {strategy = "rows", tile_sizes = array<i64: 1, 1, 0, 0>, vector_size = 16 : i64}
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4 step
// CHECK: %[[Q:.*]] = tensor.extract_slice %arg0[%{{.*}}, %{{.*}}, 0, 0] [1, 1, 4, 8] [1, 1, 1, 1]
// CHECK: %[[K:.*]] = tensor.extract_slice %arg1[%{{.*}}, %{{.*}}, 0, 0] [1, 1, 6, 8] [1, 1, 1, 1]
// CHECK: %[[V:.*]] = tensor.extract_slice %arg2[%{{.*}}, %{{.*}}, 0, 0] [1, 1, 6, 8] [1, 1, 1, 1]
// CHECK: "graph.attention"(%[[Q]], %[[K]], %[[V]]) {causal = true} : (tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32>
func.func @attention(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x6x8xf32>, %v: tensor<2x2x6x8xf32>) -> tensor<2x2x4x8xf32> {
  %0 = "graph.attention"(%q, %k, %v) {causal = true} : (tensor<2x2x4x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>) -> tensor<2x2x4x8xf32>
  return %0 : tensor<2x2x4x8xf32>
}

// -----

// With `threads` in its config, the row loop is split over an scf.forall: each thread takes
// an equal chunk of the first row dim and loops over its rows, sliced at chunk start + row.
// THREADS-LABEL: func.func private @threaded_kernel_0
// THREADS: %[[OUT:.*]] = tensor.empty() : tensor<8x3x64xf32>
// THREADS: %[[R:.*]] = scf.forall (%[[T:.*]]) in (2) shared_outs(%[[SHARED:.*]] = %[[OUT]])
// THREADS: %[[FIRST:.*]] = arith.muli %[[T]], %c4
// THREADS: %[[PART:.*]] = tensor.extract_slice %[[SHARED]][%[[FIRST]], 0, 0] [4, 3, 64] [1, 1, 1]
// THREADS: %[[DONE:.*]] = scf.for %[[I:.*]] = %{{.*}} to %c12 step %{{.*}} iter_args(%[[ACC:.*]] = %[[PART]])
// THREADS: %[[J:.*]] = arith.remui %[[I]], %c3
// THREADS: %[[Q:.*]] = arith.divui %[[I]], %c3
// THREADS: %[[L:.*]] = arith.remui %[[Q]], %c4
// THREADS: %[[ROW0:.*]] = arith.addi %[[FIRST]], %[[L]]
// THREADS: tensor.extract_slice %arg0[%[[ROW0]], %[[J]], 0] [1, 1, 64]
// THREADS: "graph.rms_norm"
// THREADS: tensor.insert_slice %{{.*}} into %[[ACC]][%[[L]], %[[J]], 0] [1, 1, 64]
// THREADS: scf.forall.in_parallel
// THREADS: tensor.parallel_insert_slice %[[DONE]] into %[[SHARED]][%[[FIRST]], 0, 0] [4, 3, 64] [1, 1, 1]
// THREADS: return %[[R]]
func.func private @threaded_kernel_0(%x: tensor<8x3x64xf32>, %g: tensor<64xf32>) -> tensor<8x3x64xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "rows", threads = 2 : i64, tile_sizes = array<i64: 1, 1, 0>, vector_size = 16 : i64}} {
  %0 = "graph.rms_norm"(%x, %g) {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<8x3x64xf32>, tensor<64xf32>) -> tensor<8x3x64xf32>
  return %0 : tensor<8x3x64xf32>
}

// -----

// `thread_dim` picks the leading dim the threads split (here the channels of one image).
// THREADS-LABEL: func.func private @channels_kernel_0
// THREADS: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<1x64x56x56xf32> into tensor<1x64x3136xf32>
// THREADS: %[[R:.*]] = scf.forall (%[[T:.*]]) in (4) shared_outs(%[[SHARED:.*]] = %{{.*}})
// THREADS: %[[FIRST:.*]] = arith.muli %[[T]], %c16
// THREADS: %[[PART:.*]] = tensor.extract_slice %[[SHARED]][0, %[[FIRST]]] [1, 16] [1, 1]
// THREADS: scf.for %[[I:.*]] = %{{.*}} to %c16{{.*}} step
// THREADS: %[[C:.*]] = arith.remui %[[I]], %c16{{.*}}
// THREADS: %[[CH:.*]] = arith.addi %[[FIRST]], %[[C]]
// THREADS: tensor.extract_slice %[[X]][%{{.*}}, %[[CH]], 0] [1, 1, 3136]
// THREADS: "graph.reduce_sum"(%{{.*}}) {axes = array<i64: 2>, keepdims = false} : (tensor<1x1x3136xf32>) -> tensor<1x1xf32>
// THREADS: tensor.parallel_insert_slice %{{.*}} into %[[SHARED]][0, %[[FIRST]]] [1, 16] [1, 1]
// THREADS: return %[[R]]
func.func private @channels_kernel_0(%x: tensor<1x64x56x56xf32>) -> tensor<1x64xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "rows", threads = 2 : i64, thread_dim = 1 : i64, chunks = 4 : i64, tile_sizes = array<i64: 1, 1>, vector_size = 8 : i64}} {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 2, 3>, keepdims = false} : (tensor<1x64x56x56xf32>) -> tensor<1x64xf32>
  return %0 : tensor<1x64xf32>
}

// -----

// A reduction of every dim with `threads` is reduced in parts: each scf.forall iteration
// reduces an equal slab of rows (with the prologue) to one value, then the parts are reduced;
// kept dims come back by reshape.
// THREADS-LABEL: func.func private @total_in_parts_kernel_0
// THREADS: %[[PARTS:.*]] = tensor.empty() : tensor<4xf32>
// THREADS: %[[R:.*]] = scf.forall (%[[T:.*]]) in (4) shared_outs(%[[SHARED:.*]] = %[[PARTS]])
// THREADS: %[[FIRST:.*]] = arith.muli %[[T]], %c16
// THREADS: %[[SLAB:.*]] = tensor.extract_slice %arg0[%[[FIRST]], 0] [16, 300] [1, 1] : tensor<64x300xf32> to tensor<16x300xf32>
// THREADS: %[[SQ:.*]] = "graph.mul"(%[[SLAB]], %[[SLAB]]) : (tensor<16x300xf32>, tensor<16x300xf32>) -> tensor<16x300xf32>
// THREADS: %[[PART:.*]] = "graph.reduce_mean"(%[[SQ]]) {axes = array<i64: 0, 1>, keepdims = false} : (tensor<16x300xf32>) -> tensor<f32>
// THREADS: tensor.parallel_insert_slice %[[PART]] into %[[SHARED]][%[[T]]] [1] [1] : tensor<f32> into tensor<4xf32>
// THREADS: %[[M:.*]] = "graph.reduce_mean"(%[[R]]) {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
// THREADS: %[[E:.*]] = tensor.expand_shape %[[M]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// THREADS: %[[E2:.*]] = tensor.expand_shape %[[E]] {{\[\[}}0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
// THREADS: return %[[E2]]
func.func private @total_in_parts_kernel_0(%x: tensor<64x300xf32>) -> tensor<1x1xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "rows", threads = 2 : i64, thread_dim = 0 : i64, chunks = 4 : i64, tile_sizes = array<i64: 0, 0>, vector_size = 8 : i64}} {
  %0 = "graph.mul"(%x, %x) : (tensor<64x300xf32>, tensor<64x300xf32>) -> tensor<64x300xf32>
  %1 = "graph.reduce_mean"(%0) {axes = array<i64: 0, 1>, keepdims = true} : (tensor<64x300xf32>) -> tensor<1x1xf32>
  return %1 : tensor<1x1xf32>
}
