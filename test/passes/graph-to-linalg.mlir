// RUN: strata-opt %s --split-input-file --graph-to-linalg | FileCheck %s

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>) outs(%[[E]] : tensor<4x8xf32>)
// CHECK: arith.addf
// CHECK-NOT: graph.
func.func @add_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// relu and clamp leave the sign of a zero free (fastmath nsz: one max instruction on x86);
// NaN still propagates through maximumf and minimumf.
// CHECK-LABEL: func.func @relu_and_clamp
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<nsz> : f32
// CHECK: linalg.generic
// CHECK: %[[LOW:.*]] = arith.maximumf %{{.*}}, %{{.*}} fastmath<nsz> : f32
// CHECK: arith.minimumf %[[LOW]], %{{.*}} fastmath<nsz> : f32
func.func @relu_and_clamp(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.clamp"(%0) {min = 0.0 : f32, max = 6.0 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @integer_div
// CHECK: arith.divsi
func.func @integer_div(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "graph.div"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @matmul_2d
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x4xf32>) outs(%[[Z]] : tensor<8x4xf32>)
func.func @matmul_2d(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// On the CPU a bf16 matmul is an f32 matmul between conversions, rounded once at the end; its
// constant weights are widened here, once, not on every call.
// CHECK-LABEL: func.func @matmul_bf16_constant_weights
// CHECK-DAG: %[[W:.*]] = arith.constant dense_resource<widened> : tensor<4x2xf32>
// CHECK-DAG: %[[A:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x4xbf16>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[A]], %[[W]] : tensor<8x4xf32>, tensor<4x2xf32>) outs(%{{.*}} : tensor<8x2xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<8x2xf32>) outs(%{{.*}} : tensor<8x2xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @matmul_bf16_constant_weights(%a: tensor<8x4xbf16>) -> tensor<8x2xbf16> {
  %w = "graph.constant"() {value = dense_resource<w> : tensor<4x2xbf16>} : () -> tensor<4x2xbf16>
  %0 = "graph.matmul"(%a, %w) : (tensor<8x4xbf16>, tensor<4x2xbf16>) -> tensor<8x2xbf16>
  return %0 : tensor<8x2xbf16>
}
{-#
  dialect_resources: { builtin: { w: "0x02000000003F803FC03F00402040404060408040" } }
#-}

// -----

// A bf16 kernel packed for the CPU's pair products (pack 2 on a CPU with AVX-512 BF16) keeps
// its bf16 operands, summed into f32 and rounded once; the same kernel for a CPU without them
// is an f32 matmul.
// CHECK-LABEL: func.func private @bf16_pairs
// CHECK: %[[P:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<128x768xbf16>, tensor<768x3072xbf16>) outs(%{{.*}} : tensor<128x3072xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<128x3072xf32>) outs(%{{.*}} : tensor<128x3072xbf16>)
// CHECK-LABEL: func.func private @bf16_no_pairs
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<128x768xf32>, tensor<768x3072xf32>)
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", features = "+avx512f,+avx512bf16", cores = 1 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func private @bf16_pairs(%x: tensor<128x768xbf16>, %w: tensor<768x3072xbf16>) -> tensor<128x3072xbf16> attributes {tile.config = {interchange = array<i64: 1, 2, 0>, pack = 2 : i64, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 128, 256, 128>, vector_size = 16 : i64}, tile.kernel = "contraction"} {
    %0 = "graph.matmul"(%x, %w) : (tensor<128x768xbf16>, tensor<768x3072xbf16>) -> tensor<128x3072xbf16>
    return %0 : tensor<128x3072xbf16>
  }
}
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", features = "+avx512f", cores = 1 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func private @bf16_no_pairs(%x: tensor<128x768xbf16>, %w: tensor<768x3072xbf16>) -> tensor<128x3072xbf16> attributes {tile.config = {interchange = array<i64: 1, 2, 0>, pack = 2 : i64, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 128, 256, 128>, vector_size = 16 : i64}, tile.kernel = "contraction"} {
    %0 = "graph.matmul"(%x, %w) : (tensor<128x768xbf16>, tensor<768x3072xbf16>) -> tensor<128x3072xbf16>
    return %0 : tensor<128x3072xbf16>
  }
}

// -----

// A bf16 conv packed for pair products keeps its bf16 input (padded with bf16 zeros) and
// weights, summed into f32; the bias is widened and added in f32, the result rounded once.
// CHECK-LABEL: func.func private @bf16_pair_conv
// CHECK: linalg.fill ins(%{{.*}} : bf16) outs(%{{.*}} : tensor<1x64x1x58xbf16>)
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x64x58x58xbf16>, tensor<64x64x3x3xbf16>) outs(%{{.*}} : tensor<1x64x56x56xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[C]], %{{.*}} : tensor<1x64x56x56xf32>, tensor<64xbf16>) outs(%{{.*}} : tensor<1x64x56x56xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", features = "+avx512f,+avx512bf16", cores = 1 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}} {
  func.func private @bf16_pair_conv(%x: tensor<1x64x56x56xbf16>, %w: tensor<64x64x3x3xbf16>, %b: tensor<64xbf16>) -> tensor<1x64x56x56xbf16> attributes {tile.config = {im2col = 1 : i64, interchange = array<i64: 1, 2, 0>, pack = 2 : i64, register_tile = array<i64: 8, 32, 1>, strategy = "matmul", tile_sizes = array<i64: 64, 224, 256>, vector_size = 16 : i64}, tile.kernel = "convolution"} {
    %0 = "graph.conv2d"(%x, %w, %b) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x64x56x56xbf16>, tensor<64x64x3x3xbf16>, tensor<64xbf16>) -> tensor<1x64x56x56xbf16>
    return %0 : tensor<1x64x56x56xbf16>
  }
}

// -----

// A splat of weights widens to a fill of f32.
// CHECK-LABEL: func.func @matmul_f16_splat_weights
// CHECK: %[[W:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16x4xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %[[W]] : tensor<8x16xf32>, tensor<16x4xf32>)
func.func @matmul_f16_splat_weights(%a: tensor<8x16xf16>) -> tensor<8x4xf16> {
  %w = "graph.constant"() {value = dense<0.5> : tensor<16x4xf16>} : () -> tensor<16x4xf16>
  %0 = "graph.matmul"(%a, %w) : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  return %0 : tensor<8x4xf16>
}

// -----

// A sum of f16 accumulates in f32 and rounds once; a max stays in f16 (it is exact).
// CHECK-LABEL: func.func @reduce_f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: arith.extf
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f16
func.func @reduce_f16(%x: tensor<4x100xf16>) -> (tensor<4xf16>, tensor<4xf16>) {
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<4x100xf16>) -> tensor<4xf16>
  %1 = "graph.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<4x100xf16>) -> tensor<4xf16>
  return %0, %1 : tensor<4xf16>, tensor<4xf16>
}

// -----

// f16 GELU is computed in f32 and rounded once; relu, exact, stays in f16.
// CHECK-LABEL: func.func @gelu_relu_f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: math.erfc %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<nsz> : f16
func.func @gelu_relu_f16(%x: tensor<64xf16>) -> tensor<64xf16> {
  %0 = "graph.gelu"(%x) : (tensor<64xf16>) -> tensor<64xf16>
  %1 = "graph.relu"(%0) : (tensor<64xf16>) -> tensor<64xf16>
  return %1 : tensor<64xf16>
}

// -----

// A batch of rows times a matrix is one 2-D matmul over all rows.
// CHECK-LABEL: func.func @matmul_rows
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x8x16xf32> into tensor<16x16xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x16xf32>, tensor<16x4xf32>) outs(%{{.*}} : tensor<16x4xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 8, 4] : tensor<16x4xf32> into tensor<2x8x4xf32>
func.func @matmul_rows(%a: tensor<2x8x16xf32>, %b: tensor<16x4xf32>) -> tensor<2x8x4xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

// Batched matmul with a broadcast lhs: a generic with one reduction loop.
// CHECK-LABEL: func.func @matmul_batched
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @matmul_batched(%a: tensor<8x16xf32>, %b: tensor<2x16x4xf32>) -> tensor<2x8x4xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<8x16xf32>, tensor<2x16x4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

// Batches of matmuls on both sides (attention per batch and head): the batch dims flattened
// into one linalg.batch_matmul, its result expanded back.
// CHECK-LABEL: func.func @matmul_heads
// CHECK: %[[Q:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2], [3]] : tensor<2x3x8x16xf32> into tensor<6x8x16xf32>
// CHECK: %[[K:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2], [3]] : tensor<2x3x16x4xf32> into tensor<6x16x4xf32>
// CHECK: %[[P:.*]] = linalg.batch_matmul ins(%[[Q]], %[[K]] : tensor<6x8x16xf32>, tensor<6x16x4xf32>) outs(%{{.*}} : tensor<6x8x4xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 8, 4] : tensor<6x8x4xf32> into tensor<2x3x8x4xf32>
func.func @matmul_heads(%q: tensor<2x3x8x16xf32>, %k: tensor<2x3x16x4xf32>) -> tensor<2x3x8x4xf32> {
  %0 = "graph.matmul"(%q, %k) : (tensor<2x3x8x16xf32>, tensor<2x3x16x4xf32>) -> tensor<2x3x8x4xf32>
  return %0 : tensor<2x3x8x4xf32>
}

// -----

// Padding fills the border slab by slab (rows above and below, then the columns beside the
// input's rows), then inserts the input: each element is written once.
// CHECK-LABEL: func.func @conv_padded_bias
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: tensor.empty() : tensor<1x3x10x10xf32>
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x3x1x10xf32>)
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0, 0] [1, 3, 1, 10]
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x3x1x10xf32>)
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 9, 0] [1, 3, 1, 10]
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x3x8x1xf32>)
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 1, 0] [1, 3, 8, 1]
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x3x8x1xf32>)
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 1, 9] [1, 3, 8, 1]
// CHECK: tensor.insert_slice %arg0 into %{{.*}}[0, 0, 1, 1] [1, 3, 8, 8]
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @conv_padded_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "graph.conv2d"(%x, %w, %b) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// Without a target, a pool is a generic over the output's dims, then the window's, of the
// input padded with -inf (only the border filled). With a stride along rows, the input is first split into
// phases (even and odd columns: shuffles of vector runs); the left pad of one column grows to
// a whole phase element. Each phase's taps are a generic of their own, reading a slice of
// one phase, so a tap's run is contiguous.
// CHECK-DAG: #[[TAPS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 + d5)>
// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-LABEL: func.func @max_pool_pads_with_lowest
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<1x3x4x4xf32>)
// CHECK: linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<1x3x1x2x5xf32>)
// CHECK: linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<1x3x8x2x1xf32>)
// CHECK: %[[PHASES:.*]] = scf.for
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<1x3x8x8xf32>, vector<8xf32>
// CHECK: vector.shuffle %{{.*}} [0, 2, 4, 6]
// CHECK: vector.transfer_write {{.*}} : vector<4xf32>, tensor<1x3x9x2x5xf32>
// CHECK: vector.shuffle %{{.*}} [1, 3, 5, 7]
// CHECK: %[[EVEN:.*]] = tensor.extract_slice %[[PHASES]][0, 0, 0, 0, 1] [1, 3, 9, 1, 4]
// CHECK: %[[FIRST:.*]] = linalg.generic {indexing_maps = [#[[TAPS]], #[[WINDOW]], {{.*}}]{{.*}} ins(%[[EVEN]], %{{.*}} : tensor<1x3x9x4xf32>, tensor<2x1xf32>) outs(%[[INIT]]
// CHECK: arith.maximumf
// CHECK: %[[ODD:.*]] = tensor.extract_slice %[[PHASES]][0, 0, 0, 1, 0] [1, 3, 9, 1, 5]
// CHECK: linalg.generic {{.*}} ins(%[[ODD]], %{{.*}} : tensor<1x3x9x5xf32>, tensor<2x1xf32>) outs(%[[FIRST]]
func.func @max_pool_pads_with_lowest(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// For a CPU target a max pool reads its input once, in place: per output row (one loop over
// image, channel and row), each window row is a run of the input and each tap a shuffle of
// it. Window rows and columns in the padding read the nearest input row or column (clamped
// rows; the first output's window takes column 0 twice), which leaves the max as it is.
// CHECK-LABEL: func.func @max_pool_in_registers
// CHECK-NOT: linalg.fill
// CHECK: scf.for %{{.*}} = %c0 to %c15 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x3x5x5xf32>)
// CHECK: %[[TOP:.*]] = arith.maxsi %{{.*}}, %c0 : index
// CHECK: arith.minsi %{{.*}}, %c8 : index
// CHECK: %[[FIRST_ROW:.*]] = vector.transfer_read %arg0[%c0, %{{.*}}, %[[TOP]], %c0]{{.*}} : tensor<1x3x9x9xf32>, vector<8xf32>
// CHECK: vector.shuffle %[[FIRST_ROW]], %[[FIRST_ROW]] [0, 1, 3, 5]
// CHECK: vector.shuffle %[[FIRST_ROW]], %[[FIRST_ROW]] [0, 2, 4, 6]
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<nsz> : vector<4xf32>
// CHECK: vector.shuffle %[[FIRST_ROW]], %[[FIRST_ROW]] [1, 3, 5, 7]
// CHECK: vector.transfer_write %{{.*}} : vector<4xf32>, tensor<1x3x5x5xf32>
// CHECK: vector.transfer_write %{{.*}} : vector<1xf32>, tensor<1x3x5x5xf32>
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 1 : i64, vector_bits = 128 : i64, vector_registers = 16 : i64}} {
  func.func @max_pool_in_registers(%x: tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32> {
    %0 = "graph.max_pool2d"(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32>
    return %0 : tensor<1x3x5x5xf32>
  }
}

// -----

// A sum pool (an average's) reads its input in place too: a padded column is a lane of 0 in
// the tap's shuffle, and a window row in the padding is replaced by 0 where it is one.
// CHECK-LABEL: func.func @avg_pool_in_registers
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<6xf32>
// CHECK-DAG: %[[ZERO_TAPS:.*]] = arith.constant dense<0.000000e+00> : vector<3xf32>
// CHECK: %[[ABOVE:.*]] = arith.cmpi sge, %{{.*}}, %c0 : index
// CHECK: %[[FIRST_ROW:.*]] = vector.transfer_read %arg0{{.*}} : tensor<1x2x6x6xf32>, vector<6xf32>
// CHECK: vector.shuffle %[[FIRST_ROW]], %[[ZEROS]] [6, 1, 3]
// CHECK: arith.addf
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<3xf32>
// CHECK: arith.select %[[ABOVE]], %[[SUM]], %[[ZERO_TAPS]] : vector<3xf32>
// CHECK: arith.divf
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 1 : i64, vector_bits = 128 : i64, vector_registers = 16 : i64}} {
  func.func @avg_pool_in_registers(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
    %0 = "graph.avg_pool2d"(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
    return %0 : tensor<1x2x3x3xf32>
  }
}

// -----

// Without a stride along rows, the taps read the padded input itself.
// CHECK-DAG: #[[TAPS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 + d5)>
// CHECK-LABEL: func.func @avg_pool_sums_windows
// CHECK: %[[PADDED:.*]] = tensor.insert_slice %arg0 into %{{.*}}[0, 0, 1, 1] [1, 2, 6, 6]
// CHECK: %[[SUMS:.*]] = linalg.generic {indexing_maps = [#[[TAPS]], {{.*}}]{{.*}} ins(%[[PADDED]], %{{.*}} : tensor<1x2x8x8xf32>, tensor<3x3xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[SUMS]]
// CHECK: arith.divf
func.func @avg_pool_sums_windows(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x6xf32> {
  %0 = "graph.avg_pool2d"(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x6xf32>
  return %0 : tensor<1x2x3x6xf32>
}

// -----

// A depthwise conv of stride 2 reads its input split into phases, as pools do: the taps of
// each phase are a generic of their own, with every other column of the weights.
// CHECK-DAG: #[[TAPS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 * 2 + d5, d3 + d6)>
// CHECK-DAG: #[[WEIGHTS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-LABEL: func.func @strided_depthwise
// CHECK: %[[PHASES:.*]] = scf.for
// CHECK: vector.shuffle %{{.*}} [0, 2, 4, 6]
// CHECK: vector.shuffle %{{.*}} [1, 3, 5, 7]
// CHECK: %[[EVEN:.*]] = tensor.extract_slice %[[PHASES]][0, 0, 0, 0, 1] [1, 4, 10, 1, 5]
// CHECK: %[[MIDDLE:.*]] = tensor.extract_slice %arg1[0, 0, 0, 1] [4, 1, 3, 1] [1, 1, 1, 2]
// CHECK: %[[FIRST:.*]] = linalg.generic {indexing_maps = [#[[TAPS]], #[[WEIGHTS]], {{.*}}]{{.*}} ins(%[[EVEN]], %[[MIDDLE]] :
// CHECK: %[[ODD:.*]] = tensor.extract_slice %[[PHASES]][0, 0, 0, 1, 0] [1, 4, 10, 1, 6]
// CHECK: %[[OUTER:.*]] = tensor.extract_slice %arg1[0, 0, 0, 0] [4, 1, 3, 2] [1, 1, 1, 2]
// CHECK: linalg.generic {{.*}} ins(%[[ODD]], %[[OUTER]] : {{.*}}) outs(%[[FIRST]]
func.func @strided_depthwise(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "graph.conv2d"(%x, %w) {groups = 4 : i64, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// The stable form: max-reduce (with no NaNs: a NaN still reaches every output of its row
// through its exponential), exp(x - max) allowed to flush results under 2^-126 (afn), sum-reduce, one
// reciprocal per row (a named op, so that elementwise fusion does not compute it per element),
// multiply.
// CHECK-LABEL: func.func @softmax
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf %{{.*}} fastmath<nnan,nsz>
// CHECK: linalg.generic
// CHECK: arith.subf
// CHECK: math.exp %{{.*}} fastmath<ninf,afn>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf
// CHECK: linalg.reciprocal ins(%{{.*}} : tensor<4xf32>)
// CHECK: linalg.generic
// CHECK: arith.mulf
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A safe softmax gives 0 for a row whose maximum is -inf (every input -inf), selected in the
// normalization.
// CHECK-LABEL: func.func @safe_softmax
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: linalg.reciprocal
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[MAX]] : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[NONE:.*]] = arith.cmpf oeq, %{{.*}}, %cst{{.*}} : f32
// CHECK: %[[P:.*]] = arith.mulf
// CHECK: arith.select %[[NONE]], %{{.*}}, %[[P]] : f32
func.func @safe_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.softmax"(%x) {axis = 1 : i64, safe = true} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_and_keepdims
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
func.func @reshape_and_keepdims(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = "graph.reshape"(%x) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func.func @movement
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [3, 2] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[3, 0] [3, 2] [1, 1]
// CHECK: tensor.extract_slice %{{.*}}[1, 0] [3, 2] [2, 1]
func.func @movement(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "graph.concat"(%0, %0) {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  %2 = "graph.slice"(%1) {starts = array<i64: 1, 0>, ends = array<i64: 6, 2>, steps = array<i64: 2, 1>} : (tensor<6x2xf32>) -> tensor<3x2xf32>
  return %2 : tensor<3x2xf32>
}

// -----

// A transpose that keeps its trailing dims in place (attention's heads moved before or after
// the sequence) is a loop over the output's leading dims copying runs of the kept dims whole;
// runs shorter than 16 elements stay a linalg.transpose.
// CHECK-LABEL: func.func @heads
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<2x128x12x64xf32>
// CHECK: scf.for %[[I:.*]] = %c0 to %c3072 step %c1 iter_args(%[[ACC:.*]] = %[[OUT]])
// CHECK: %[[H:.*]] = arith.remui %[[I]], %c12
// CHECK: %[[R1:.*]] = arith.divui %[[I]], %c12
// CHECK: %[[S:.*]] = arith.remui %[[R1]], %c128
// CHECK: %[[R2:.*]] = arith.divui %[[R1]], %c128
// CHECK: %[[B:.*]] = arith.remui %[[R2]], %c2
// CHECK: %[[PIECE:.*]] = tensor.extract_slice %arg0[%[[B]], %[[H]], %[[S]], 0] [1, 1, 1, 64] [1, 1, 1, 1] : tensor<2x12x128x64xf32> to tensor<64xf32>
// CHECK: tensor.insert_slice %[[PIECE]] into %[[ACC]][%[[B]], %[[S]], %[[H]], 0] [1, 1, 1, 64] [1, 1, 1, 1] : tensor<64xf32> into tensor<2x128x12x64xf32>
// CHECK: linalg.transpose ins(%arg1 : tensor<4x8x2xf32>) outs(%{{.*}} : tensor<8x4x2xf32>) permutation = [1, 0, 2]
func.func @heads(%x: tensor<2x12x128x64xf32>, %y: tensor<4x8x2xf32>) -> (tensor<2x128x12x64xf32>, tensor<8x4x2xf32>) {
  %0 = "graph.transpose"(%x) {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x12x128x64xf32>) -> tensor<2x128x12x64xf32>
  %1 = "graph.transpose"(%y) {perm = array<i64: 1, 0, 2>} : (tensor<4x8x2xf32>) -> tensor<8x4x2xf32>
  return %0, %1 : tensor<2x128x12x64xf32>, tensor<8x4x2xf32>
}

// -----

// A transpose that moves the innermost dim is done in 8x8 blocks (one loop over the dims that
// stay and the blocks of the two that move, in groups): each block reads 8 runs of the input's
// last dim, transposes them in registers with three rounds of shuffles (pairs, pairs of pairs,
// halves) and writes 8 runs of the output's last dim. The ends that whole blocks leave (20 =
// 16 + 4 along the dim that becomes the last, 12 = 8 + 4 along the input's last) are
// linalg.transposes of their own, inserted after the blocks.
// CHECK-LABEL: func.func @blocks
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<12x2x20xf32>
// CHECK: %[[B:.*]] = scf.for %[[I:.*]] = %c0 to %c4 step %c1 iter_args(%[[ACC:.*]] = %[[OUT]])
// CHECK: %[[A:.*]] = arith.remui %[[I]], %c2
// CHECK: %[[Q:.*]] = arith.divui %[[I]], %c2
// CHECK: %[[N:.*]] = arith.remui %[[Q]], %c2
// CHECK: %[[A8:.*]] = arith.muli %[[A]], %c8
// CHECK: %[[R0:.*]] = vector.transfer_read %arg0[%[[N]], %[[A8]], %c0], %{{.*}} {in_bounds = [true]} : tensor<2x20x12xf32>, vector<8xf32>
// CHECK: %[[A1:.*]] = arith.addi %[[A8]], %c1
// CHECK: %[[R1:.*]] = vector.transfer_read %arg0[%[[N]], %[[A1]], %c0]
// CHECK-COUNT-6: vector.transfer_read
// CHECK: %[[P:.*]] = vector.shuffle %[[R0]], %[[R1]] [0, 8, 1, 9, 4, 12, 5, 13] : vector<8xf32>, vector<8xf32>
// CHECK: vector.shuffle %[[R0]], %[[R1]] [2, 10, 3, 11, 6, 14, 7, 15]
// CHECK-COUNT-6: vector.shuffle
// CHECK: %[[PP:.*]] = vector.shuffle %[[P]], %{{.*}} [0, 1, 8, 9, 4, 5, 12, 13]
// CHECK-COUNT-7: vector.shuffle
// CHECK: %[[C0:.*]] = vector.shuffle %[[PP]], %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11]
// CHECK-COUNT-7: vector.shuffle
// CHECK: %[[W0:.*]] = vector.transfer_write %[[C0]], %[[ACC]][%c0, %[[N]], %[[A8]]] {in_bounds = [true]} : vector<8xf32>, tensor<12x2x20xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[W0]][%c1, %[[N]], %[[A8]]]
// CHECK-COUNT-6: vector.transfer_write
// CHECK: scf.yield
// CHECK: %[[END1:.*]] = tensor.extract_slice %arg0[0, 16, 0] [2, 4, 12] [1, 1, 1]
// CHECK: %[[T1:.*]] = linalg.transpose ins(%[[END1]] : tensor<2x4x12xf32>) outs(%{{.*}} : tensor<12x2x4xf32>) permutation = [2, 0, 1]
// CHECK: %[[E1:.*]] = tensor.insert_slice %[[T1]] into %[[B]][0, 0, 16] [12, 2, 4] [1, 1, 1]
// CHECK: %[[END2:.*]] = tensor.extract_slice %arg0[0, 0, 8] [2, 16, 4] [1, 1, 1]
// CHECK: %[[T2:.*]] = linalg.transpose ins(%[[END2]] : tensor<2x16x4xf32>) outs(%{{.*}} : tensor<4x2x16xf32>) permutation = [2, 0, 1]
// CHECK: %[[E2:.*]] = tensor.insert_slice %[[T2]] into %[[E1]][8, 0, 0] [4, 2, 16] [1, 1, 1]
// CHECK: return %[[E2]]
func.func @blocks(%x: tensor<2x20x12xf32>) -> tensor<12x2x20xf32> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 2, 0, 1>} : (tensor<2x20x12xf32>) -> tensor<12x2x20xf32>
  return %0 : tensor<12x2x20xf32>
}

// -----

// On a target of 2 cores, a transpose that moves enough memory (2 MiB here) splits the input's
// last dim over them: each scf.forall iteration transposes the blocks of its half of the
// input's columns into its half of the output's rows.
// CHECK-LABEL: func.func @split
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<512x1024xf32>
// CHECK: scf.forall (%[[T:.*]]) in (2) shared_outs(%[[SHARED:.*]] = %[[OUT]])
// CHECK: %[[FIRST:.*]] = arith.muli %[[T]], %c256
// CHECK: %[[IN:.*]] = tensor.extract_slice %arg0[0, %[[FIRST]]] [1024, 256] [1, 1] : tensor<1024x512xf32> to tensor<1024x256xf32>
// CHECK: %[[PART:.*]] = tensor.extract_slice %[[SHARED]][%[[FIRST]], 0] [256, 1024] [1, 1] : tensor<512x1024xf32> to tensor<256x1024xf32>
// CHECK: %[[DONE:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[PART]])
// CHECK: vector.transfer_read %[[IN]]
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %[[DONE]] into %[[SHARED]][%[[FIRST]], 0] [256, 1024] [1, 1]
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 2 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @split(%x: tensor<1024x512xf32>) -> tensor<512x1024xf32> {
    %0 = "graph.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<1024x512xf32>) -> tensor<512x1024xf32>
    return %0 : tensor<512x1024xf32>
  }
}

// -----

// A transpose with a moving dim narrower than a block stays a linalg.transpose.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: vector.transfer_read
// CHECK: linalg.transpose ins(%arg0 : tensor<1000x7xf32>) outs(%{{.*}} : tensor<7x1000xf32>) permutation = [1, 0]
func.func @narrow(%x: tensor<1000x7xf32>) -> tensor<7x1000xf32> {
  %0 = "graph.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<1000x7xf32>) -> tensor<7x1000xf32>
  return %0 : tensor<7x1000xf32>
}

// -----

// Inputs of different sizes along the axis come as tensor.concat; it lowers like graph.concat.
// CHECK-LABEL: func.func @tensor_concat
// CHECK-NOT: tensor.concat
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [2, 3] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 3] [2, 5] [1, 1]
func.func @tensor_concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %0 = tensor.concat dim(1) %a, %b : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Negative indices wrap around: select(idx < 0, idx + size, idx).
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic
// CHECK: arith.index_cast
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: tensor.extract
func.func @gather(%x: tensor<5x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  %0 = "graph.gather"(%x, %i) {axis = 0 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Slices of 16 elements or more (an embedding's rows) are gathered by one loop over the
// indices (row-major), each slice copied whole.
// CHECK-LABEL: func.func @embedding
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<2x3x64xf32>
// CHECK: scf.for %[[I:.*]] = %c0 to %c6 step %c1 iter_args(%[[ACC:.*]] = %[[OUT]])
// CHECK: %[[COL:.*]] = arith.remui %[[I]], %c3
// CHECK: %[[REST:.*]] = arith.divui %[[I]], %c3
// CHECK: %[[ROW:.*]] = arith.remui %[[REST]], %c2
// CHECK: %[[AT:.*]] = tensor.extract %arg1[%[[ROW]], %[[COL]]] : tensor<2x3xi64>
// CHECK: %[[WRAPPED:.*]] = arith.select
// CHECK: %[[TAKEN:.*]] = tensor.extract_slice %arg0[%[[WRAPPED]], 0] [1, 64] [1, 1] : tensor<1000x64xf32> to tensor<64xf32>
// CHECK: tensor.insert_slice %[[TAKEN]] into %[[ACC]][%[[ROW]], %[[COL]], 0] [1, 1, 64] [1, 1, 1] : tensor<64xf32> into tensor<2x3x64xf32>
// CHECK-NOT: linalg.generic
func.func @embedding(%x: tensor<1000x64xf32>, %i: tensor<2x3xi64>) -> tensor<2x3x64xf32> {
  %0 = "graph.gather"(%x, %i) {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<2x3xi64>) -> tensor<2x3x64xf32>
  return %0 : tensor<2x3x64xf32>
}

// -----

// Causal masking compares the key index with the query index plus the length offset.
// CHECK-LABEL: func.func @attention_causal
// CHECK: linalg.index 2
// CHECK: linalg.index 3
// CHECK: arith.cmpi sgt
// CHECK: arith.select
// CHECK: math.exp
func.func @attention_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %0 = "graph.attention"(%q, %k, %v) {causal = true} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @constant
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
func.func @constant() -> tensor<2xf32> {
  %0 = "graph.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Comparisons produce i1 through arith.cmpf/cmpi; where is a select.
// CHECK-LABEL: func.func @compare_and_select
// CHECK: linalg.generic
// CHECK: arith.cmpf olt
// CHECK: linalg.yield %{{.*}} : i1
// CHECK: linalg.generic
// CHECK: arith.select
func.func @compare_and_select(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.less"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = "graph.where"(%0, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Constant padding fills the border and inserts the input; edge and reflect read the input
// at clamped or mirrored indices.
// CHECK-LABEL: func.func @pad_modes
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x6xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x2xf32>)
// CHECK: tensor.insert_slice %arg0 into %{{.*}}[1, 0] [3, 4] [1, 1]
// CHECK: linalg.generic
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.extract
func.func @pad_modes(%x: tensor<3x4xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %0 = "graph.pad"(%x) {pads = array<i64: 1, 0, 0, 2>} : (tensor<3x4xf32>) -> tensor<4x6xf32>
  %1 = "graph.pad"(%x) {pads = array<i64: 1, 0, 0, 2>, mode = "edge"} : (tensor<3x4xf32>) -> tensor<4x6xf32>
  return %0, %1 : tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// LRN sums squares over a channel window of the zero-padded input.
// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d4, d2, d3)>
// CHECK-LABEL: func.func @lrn
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x2x2xf32>)
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0, 0] [1, 1, 2, 2]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x2x2xf32>)
// CHECK: tensor.insert_slice %{{.*}}[0, 5, 0, 0] [1, 1, 2, 2]
// CHECK: tensor.insert_slice %{{.*}}[0, 1, 0, 0] [1, 4, 2, 2]
// CHECK: linalg.generic {indexing_maps = [#[[WINDOW]]
// CHECK-SAME: "reduction"
// CHECK: math.powf
func.func @lrn(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %0 = "graph.lrn"(%x) {size = 3 : i64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// -----

// Large splat constants become a fill at run time, small ones stay constants.
// CHECK-LABEL: func.func @splats
// CHECK-DAG: arith.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-DAG: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<100x100xf32>)
func.func @splats() -> (tensor<100x100xf32>, tensor<4xf32>) {
  %0 = "graph.constant"() {value = dense<1.0> : tensor<100x100xf32>} : () -> tensor<100x100xf32>
  %1 = "graph.constant"() {value = dense<2.0> : tensor<4xf32>} : () -> tensor<4xf32>
  return %0, %1 : tensor<100x100xf32>, tensor<4xf32>
}
