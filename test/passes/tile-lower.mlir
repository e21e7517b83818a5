// RUN: strata-opt %s --tile-lower="contractions=true" --split-input-file | FileCheck %s --check-prefix=MATMUL
// RUN: strata-opt %s --tile-lower --split-input-file | FileCheck %s

// Cache blocks (n, k, m loops of 64, 32, 16), then 8 x 32 micro-kernels (n, m, k loops), marked
// for vectorization. Without `contractions`, only the fill is tiled (into vector rows).
// MATMUL-LABEL: func.func private @matmul
// MATMUL: scf.for {{.*}} to %c64{{.*}} step %c64
// MATMUL: scf.for {{.*}} to %c32{{.*}} step %c32
// MATMUL: scf.for {{.*}} to %c32{{.*}} step %c16
// MATMUL: scf.for {{.*}} to %c64{{.*}} step %c32
// MATMUL: scf.for {{.*}} to %c16{{.*}} step %c8
// MATMUL: scf.for {{.*}} to %c32{{.*}} step %c1
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<1x32xf32>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK-LABEL: func.func private @matmul
// CHECK: linalg.fill {tile.vectorize} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x64xf32>)
// CHECK-NOT: tile.vectorize
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<32x32xf32>, tensor<32x64xf32>)
func.func private @matmul(%a: tensor<32x32xf32>, %b: tensor<32x64xf32>) -> tensor<32x64xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", tile_sizes = array<i64: 16, 64, 32>, interchange = array<i64: 1, 2, 0>,
                   register_tile = array<i64: 8, 32, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x64xf32>) outs(%c : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}

// -----

// Elementwise ops are cut into vector-wide pieces of the innermost dim.
// CHECK-LABEL: func.func private @chain
// CHECK: scf.for {{.*}} to %c4 step %c1
// CHECK: scf.for {{.*}} to %c96 step %c48
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x48xf32>) outs(%{{.*}} : tensor<1x48xf32>) attrs = {tile.vectorize}
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @chain(%x: tensor<4x96xf32>) -> tensor<4x96xf32> attributes {
    tile.kernel = "elementwise",
    tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 48>, vector_size = 16 : i64}} {
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

// Row kernels come with their row loop (--tile-rows). A row op of up to two vectors is
// vectorized whole; a longer one is cut into vector-wide pieces, its reduction into partial
// sums of that width (a fill, a loop of elementwise adds, a final linalg.reduce).
// CHECK-LABEL: func.func private @rows
// CHECK: scf.for {{.*}} to %c4 step %c1
// CHECK: linalg.fill {tile.vectorize} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1xf32>)
// CHECK: linalg.fill {tile.vectorize} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x64xf32>)
// CHECK: scf.for {{.*}} to %c256{{.*}} step %c64
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<1x64xf32>) outs(%{{.*}} : tensor<1x64xf32>) attrs = {tile.vectorize}
// CHECK: linalg.reduce ins(%{{.*}} : tensor<1x64xf32>) outs(%{{.*}} : tensor<1xf32>) dimensions = [1]  {tile.vectorize}
// CHECK: scf.for {{.*}} to %c256{{.*}} step %c64
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x64xf32>, tensor<1xf32>) outs(%{{.*}} : tensor<1x64xf32>) attrs = {tile.vectorize}
// CHECK: scf.yield
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func private @rows(%x: tensor<4x256xf32>) -> tensor<4x256xf32> attributes {
    tile.kernel = "reduction",
    tile.config = {strategy = "rows", tile_sizes = array<i64: 1, 0>, vector_size = 16 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %out = tensor.empty() : tensor<4x256xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %out) -> (tensor<4x256xf32>) {
    %x_row = tensor.extract_slice %x[%i, 0] [1, 256] [1, 1] : tensor<4x256xf32> to tensor<1x256xf32>
    %e = tensor.empty() : tensor<1xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1xf32>) -> tensor<1xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x_row : tensor<1x256xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %a: f32):
      %s = arith.addf %in, %a : f32
      linalg.yield %s : f32
    } -> tensor<1xf32>
    %e2 = tensor.empty() : tensor<1x256xf32>
    %q = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x_row, %sum : tensor<1x256xf32>, tensor<1xf32>) outs(%e2 : tensor<1x256xf32>) {
    ^bb0(%in: f32, %s: f32, %o: f32):
      %y = arith.divf %in, %s : f32
      linalg.yield %y : f32
    } -> tensor<1x256xf32>
    %next = tensor.insert_slice %q into %acc[%i, 0] [1, 256] [1, 1] : tensor<1x256xf32> into tensor<4x256xf32>
    scf.yield %next : tensor<4x256xf32>
  }
  return %r : tensor<4x256xf32>
}

// -----

// A row of several dims (a reduction of every dim) walks its outer dims one at a time and
// cuts the innermost into vector-wide pieces: one 1x32 partial sum over the whole tensor, the
// rest of each 56-wide row (24) added into its first lanes, then a final linalg.reduce.
// CHECK-LABEL: func.func private @total
// CHECK: linalg.fill {tile.vectorize} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x32xf32>)
// CHECK: %[[P:.*]] = scf.for %[[I:.*]] = %c0 to %c300 step %c1
// CHECK: tensor.extract_slice %arg0[%[[I]], 0] [1, 32]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<1x32xf32>) outs(%{{.*}} : tensor<1x32xf32>) attrs = {tile.vectorize}
// CHECK: tensor.extract_slice %arg0[%[[I]], 32] [1, 24]
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x24xf32>) outs(%{{.*}} : tensor<1x24xf32>) attrs = {tile.vectorize}
// CHECK: linalg.reduce ins(%[[P]] : tensor<1x32xf32>) outs(%{{.*}} : tensor<f32>) dimensions = [0, 1]  {tile.vectorize}
#all = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
func.func private @total(%x: tensor<300x56xf32>) -> tensor<f32> attributes {
    tile.kernel = "reduction",
    tile.config = {strategy = "rows", tile_sizes = array<i64>, vector_size = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<300x56xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %in, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %sum : tensor<f32>
}

// -----

// A conv configured with im2col: the weights [O, C*KH*KW] times the input patches
// [C*KH*KW, N*OH*OW], one linalg.matmul tiled like any other, whose [O, OH*OW] result is NCHW
// for one image. The patches are copied in runs along OW, plain 1-D copies (vectorized).
// MATMUL-LABEL: func.func private @conv
// MATMUL: tensor.extract_slice %{{.*}} : tensor<1x2x6x6xf32> to tensor<1x1x1x4xf32>
// MATMUL: linalg.generic {{.*}} ins(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>) attrs = {tile.vectorize}
// MATMUL: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<2x3x3x1x4x4xf32> into tensor<18x16xf32>
// MATMUL: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<8x2x3x3xf32> into tensor<8x18xf32>
// MATMUL: scf.for
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// MATMUL: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] output_shape [1, 8, 4, 4] : tensor<8x16xf32> into tensor<1x8x4x4xf32>
// MATMUL-NOT: linalg.conv_2d
func.func private @conv(%x: tensor<1x2x6x6xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<1x8x4x4xf32> attributes {
    tile.kernel = "convolution",
    tile.config = {strategy = "matmul", im2col = 1 : i64, tile_sizes = array<i64: 8, 16, 18>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 16, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x6x6xf32>, tensor<8x2x3x3xf32>) outs(%init : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// 7x9 patches (63 columns) under 16-wide micro-kernels: the patch rows are padded to 64
// columns (the pad zeroed, the patches written in place through an expanded view of the rest),
// so that no micro-kernel is cut short; the product's extra column is dropped before it is
// expanded to NCHW.
// MATMUL-LABEL: func.func private @conv_padded_columns
// MATMUL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<18x1xf32>)
// MATMUL: tensor.extract_slice %{{.*}}[0, 0] [18, 63] [1, 1] : tensor<18x64xf32> to tensor<18x63xf32>
// MATMUL: tensor.expand_shape %{{.*}} : tensor<18x63xf32> into tensor<2x3x3x1x7x9xf32>
// MATMUL: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [18, 63] [1, 1] : tensor<18x63xf32> into tensor<18x64xf32>
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// MATMUL-NOT: linalg.matmul
// MATMUL: tensor.extract_slice %{{.*}}[0, 0] [8, 63] [1, 1] : tensor<8x64xf32> to tensor<8x63xf32>
// MATMUL: tensor.expand_shape %{{.*}} output_shape [1, 8, 7, 9] : tensor<8x63xf32> into tensor<1x8x7x9xf32>
func.func private @conv_padded_columns(%x: tensor<1x2x9x11xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<1x8x7x9xf32> attributes {
    tile.kernel = "convolution",
    tile.config = {strategy = "matmul", im2col = 1 : i64, tile_sizes = array<i64: 8, 64, 18>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 16, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x7x9xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x7x9xf32>) -> tensor<1x8x7x9xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x9x11xf32>, tensor<8x2x3x3xf32>) outs(%init : tensor<1x8x7x9xf32>) -> tensor<1x8x7x9xf32>
  return %r : tensor<1x8x7x9xf32>
}

// -----

// `columns` in the config sets the patch rows' length (here 96, for threads that split N into
// whole blocks): the pad of 33 columns is zeroed, the product is 96 wide, and its extra
// columns are dropped.
// MATMUL-LABEL: func.func private @conv_stated_columns
// MATMUL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<18x33xf32>)
// MATMUL: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [18, 63] [1, 1] : tensor<18x63xf32> into tensor<18x96xf32>
// MATMUL: tensor.extract_slice %{{.*}}[0, 0] [8, 63] [1, 1] : tensor<8x96xf32> to tensor<8x63xf32>
func.func private @conv_stated_columns(%x: tensor<1x2x9x11xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<1x8x7x9xf32> attributes {
    tile.kernel = "convolution",
    tile.config = {strategy = "matmul", im2col = 1 : i64, columns = 96 : i64, tile_sizes = array<i64: 8, 96, 18>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 16, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x7x9xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x7x9xf32>) -> tensor<1x8x7x9xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x9x11xf32>, tensor<8x2x3x3xf32>) outs(%init : tensor<1x8x7x9xf32>) -> tensor<1x8x7x9xf32>
  return %r : tensor<1x8x7x9xf32>
}

// -----

// With threads, the patch copy is split over them too, along C where they divide it: each
// copies the patch rows of one channel. Threads split the product along N here.
// MATMUL-LABEL: func.func private @conv_threads
// MATMUL: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<2x3x3x1x4x4xf32>)
// MATMUL: linalg.generic {{.*}} ins(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>) attrs = {tile.vectorize}
// MATMUL: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<8x16xf32>)
func.func private @conv_threads(%x: tensor<1x2x6x6xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<1x8x4x4xf32> attributes {
    tile.kernel = "convolution",
    tile.config = {strategy = "matmul", im2col = 1 : i64, tile_sizes = array<i64: 8, 8, 18>, threads = 2 : i64,
                   thread_dim = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 8, 1>,
                   vector_size = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x6x6xf32>, tensor<8x2x3x3xf32>) outs(%init : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// A strided conv's patch rows would gather: its copy stays a loop nest (not vectorized), split
// over the threads along OH where they do not divide C (3 channels, 4 output rows).
// MATMUL-LABEL: func.func private @conv_strided_threads
// MATMUL: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<3x3x3x1x4x4xf32>)
// MATMUL: tensor.extract_slice %{{.*}} : tensor<3x3x3x1x4x4xf32> to tensor<3x3x3x1x2x4xf32>
// MATMUL: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x3x5x9xf32>) outs(%{{.*}} : tensor<3x3x3x1x2x4xf32>) {{[{]$}}
func.func private @conv_strided_threads(%x: tensor<1x3x9x9xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32> attributes {
    tile.kernel = "convolution",
    tile.config = {strategy = "matmul", im2col = 1 : i64, tile_sizes = array<i64: 8, 8, 27>, threads = 2 : i64,
                   thread_dim = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 8, 1>,
                   vector_size = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x9x9xf32>, tensor<8x3x3x3xf32>) outs(%init : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// Where the threads divide neither C nor OH (3 channels, 9 output rows), the patch copy is
// split into more parts than threads, which they claim one at a time: 9 rows, 5 and 4 a thread.
// MATMUL-LABEL: func.func private @conv_odd_rows_threads
// MATMUL: scf.forall (%{{.*}}) in (9) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<3x3x3x1x9x9xf32>)
// MATMUL: tensor.extract_slice %{{.*}} : tensor<3x3x3x1x9x9xf32> to tensor<3x3x3x1x1x9xf32>
func.func private @conv_odd_rows_threads(%x: tensor<1x3x19x19xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x9x9xf32> attributes {
    tile.kernel = "convolution",
    tile.config = {strategy = "matmul", im2col = 1 : i64, tile_sizes = array<i64: 8, 8, 27>, threads = 2 : i64,
                   thread_dim = 0 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 8, 1>,
                   vector_size = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x9x9xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x9x9xf32>) -> tensor<1x16x9x9xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x19x19xf32>, tensor<16x3x3x3xf32>) outs(%init : tensor<1x16x9x9xf32>) -> tensor<1x16x9x9xf32>
  return %r : tensor<1x16x9x9xf32>
}

// -----

// A conv that accumulates into a value other than zeros is not rewritten as a product of
// patches: it stays a conv (lowered later as loops).
// MATMUL-LABEL: func.func private @conv_accumulate
// MATMUL: linalg.conv_2d_nchw_fchw
// MATMUL-NOT: linalg.matmul
func.func private @conv_accumulate(%x: tensor<1x2x6x6xf32>, %w: tensor<8x2x3x3xf32>, %init: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> attributes {
    tile.kernel = "convolution",
    tile.config = {strategy = "matmul", im2col = 1 : i64, tile_sizes = array<i64: 8, 16, 18>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 16, 1>, vector_size = 16 : i64}} {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x6x6xf32>, tensor<8x2x3x3xf32>) outs(%init : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// A 1x1 conv of stride 1 on one image is the weights times its input as it is: no patches.
// MATMUL-LABEL: func.func private @conv_1x1
// MATMUL: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2, 3]] : tensor<1x4x4x4xf32> into tensor<4x16xf32>
// MATMUL-NOT: linalg.generic
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
func.func private @conv_1x1(%x: tensor<1x4x4x4xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<1x8x4x4xf32> attributes {
    tile.kernel = "convolution",
    tile.config = {strategy = "matmul", im2col = 1 : i64, tile_sizes = array<i64: 8, 16, 4>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 16, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x4x4x4xf32>, tensor<8x4x1x1xf32>) outs(%init : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// A packed matmul: A and B are packed into k-major micro-panels (vectorized pack ops), the
// packed contraction is cut into blocks and 8x32x4 micro-kernels, and C is unpacked. B is
// packed block by block in the N and K block loops: each 32 x 64 block of B goes into a block
// buffer (2 panels x 8 steps x 4 x 32) that the micro-kernels of the M block loop then read,
// K outer (kc / kr = 8 steps) and the N / nr = 2 panels inner, so that each step reads kr
// whole rows of B rather than a column strip down all of K. A zero C is filled in its packed
// layout (2 panels x 8 tiles x 8 x 32), not filled and packed. The loop of micro-kernels and
// the K block loop are marked for --prefetch-panels.
// MATMUL-LABEL: func.func private @packed
// MATMUL: vector.transfer_read {{.*}} : tensor<8x4xf32>, vector<8x4xf32>
// MATMUL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x8x8x32xf32>)
// MATMUL: scf.for %{{.*}} = %{{.*}} to %c16{{.*}} step %c8
// MATMUL: tensor.extract_slice %arg1[%{{.*}}, %{{.*}}] [32, 64] [1, 1]
// MATMUL: tensor.empty() : tensor<2x8x4x32xf32>
// MATMUL: scf.for %{{.*}} = %{{.*}} to %c8{{.*}} step
// MATMUL-NEXT: scf.for %{{.*}} = %{{.*}} to %c2{{.*}} step
// MATMUL: vector.transfer_read {{.*}} : tensor<4x32xf32>, vector<4x32xf32>
// MATMUL: scf.for %{{.*}} = %{{.*}} to %c8{{.*}} step %c4
// MATMUL: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x32xf32>) outs(%{{.*}} : tensor<8x32xf32>) attrs = {tile.vectorize}
// MATMUL: } {tile.micro_kernel}
// MATMUL: } {tile.prefetch_block}
// MATMUL-NOT: linalg.pack
// MATMUL-NOT: linalg.unpack
func.func private @packed(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", pack = 4 : i64, tile_sizes = array<i64: 32, 64, 32>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// A depth that is not whole panels (30 = 7 x 4 + 2): the packs pad it with zeros to 8 panels.
// Every panel's read is masked to the rows left (the last panel's two), the mask a masked
// transfer rather than a vector.mask region; the contraction walks the 8 panels.
// MATMUL-LABEL: func.func private @packed_odd_depth
// MATMUL: vector.create_mask %{{.*}}, %{{.*}} : vector<8x4xi1>
// MATMUL: vector.transfer_read {{.*}}, %{{.*}} : tensor<?x?xf32>, vector<8x4xf32>
// MATMUL: tensor.empty() : tensor<2x8x4x32xf32>
// MATMUL: vector.create_mask %{{.*}}, %{{.*}} : vector<4x32xi1>
// MATMUL: vector.transfer_read {{.*}}, %{{.*}} : tensor<?x?xf32>, vector<4x32xf32>
// MATMUL: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x32xf32>) outs(%{{.*}} : tensor<8x32xf32>) attrs = {tile.vectorize}
// MATMUL-NOT: vector.mask
// MATMUL-NOT: linalg.pack
func.func private @packed_odd_depth(%a: tensor<64x30xf32>, %b: tensor<30x64xf32>) -> tensor<64x64xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", pack = 4 : i64, tile_sizes = array<i64: 32, 64, 32>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x30xf32>, tensor<30x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// bf16 operands summed into f32 with pack 2 (the CPU's pair products) are packed in pairs of
// k: A as [M/8][K/2][8][2], B as [N/32][K/2][32][2] (two rows of B transposed into each
// panel row); the micro-kernel is 8x32 by one pair, widening both tiles. An odd depth (31)
// pads the last pair with zero: masked reads.
// MATMUL-LABEL: func.func private @packed_pairs
// MATMUL: vector.create_mask %{{.*}}, %{{.*}} : vector<8x2xi1>
// MATMUL: vector.transfer_read {{.*}} : tensor<?x?xbf16>, vector<8x2xbf16>
// MATMUL: tensor.empty() : tensor<2x16x32x2xbf16>
// MATMUL: vector.transfer_read {{.*}} : tensor<?x?xbf16>, vector<2x32xbf16>
// MATMUL: vector.transpose {{.*}} : vector<1x2x1x32xbf16> to vector<1x1x32x2xbf16>
// MATMUL: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x2xbf16>, tensor<32x2xbf16>) outs(%{{.*}} : tensor<8x32xf32>) attrs = {tile.vectorize}
// MATMUL: arith.extf
// MATMUL: arith.extf
// MATMUL-NOT: linalg.pack
func.func private @packed_pairs(%a: tensor<64x31xbf16>, %b: tensor<31x64xbf16>) -> tensor<64x64xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", pack = 2 : i64, tile_sizes = array<i64: 32, 64, 32>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x31xbf16>, tensor<31x64xbf16>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// With M split over the threads, every thread reads all of B: each packs the blocks itself,
// in its own N and K block loops (a 2 x 8 x 4 x 32 block buffer), like a single thread. Each
// zeroes its own share of C (2 panels x 4 tiles), not the caller all of it before the fork.
// MATMUL-LABEL: func.func private @packed_m_split
// MATMUL: [[PACKED_C:%.*]] = tensor.empty() : tensor<2x8x8x32xf32>
// MATMUL: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}} = [[PACKED_C]]) -> (tensor<2x8x8x32xf32>)
// MATMUL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4x8x32xf32>)
// MATMUL: scf.for %{{.*}} = %{{.*}} to %c16{{.*}} step %c8
// MATMUL: tensor.empty() : tensor<2x8x4x32xf32>
// MATMUL: vector.transfer_read {{.*}} : tensor<4x32xf32>, vector<4x32xf32>
// MATMUL: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x32xf32>) outs(%{{.*}} : tensor<8x32xf32>) attrs = {tile.vectorize}
func.func private @packed_m_split(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", pack = 4 : i64, tile_sizes = array<i64: 32, 64, 32>, threads = 2 : i64,
                   thread_dim = 0 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>,
                   vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// A C that is not zero (an accumulating matmul) is packed (a vectorized pack op of 8 x 32
// tiles), accumulated into and unpacked.
// MATMUL-LABEL: func.func private @packed_accumulate
// MATMUL-NOT: linalg.fill
// MATMUL: vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// MATMUL: vector.transfer_write {{.*}} : vector<1x1x8x32xf32>, tensor<1x1x8x32xf32>
// MATMUL: linalg.generic {{.*}} attrs = {tile.vectorize}
// MATMUL: vector.transfer_read {{.*}} : tensor<1x1x8x32xf32>, vector<1x1x8x32xf32>
// MATMUL: vector.transfer_write {{.*}} : vector<8x32xf32>, tensor<8x32xf32>
// MATMUL-NOT: linalg.unpack
func.func private @packed_accumulate(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", pack = 4 : i64, tile_sizes = array<i64: 32, 64, 32>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, vector_size = 16 : i64}} {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// The threads split the unpack of C along a dim they cut into whole micro-kernel tiles: N here
// (2 x 32 columns), not M (24 rows = 3 tiles of 8, 12 rows a thread: a partial tile, whose
// dynamic shape could not be vectorized).
// MATMUL-LABEL: func.func private @packed_unpack_split
// MATMUL: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<24x64xf32>)
// MATMUL: tensor.extract_slice %{{.*}}[0, %{{.*}}] [24, 32] [1, 1] : tensor<24x64xf32> to tensor<24x32xf32>
func.func private @packed_unpack_split(%a: tensor<24x64xf32>, %b: tensor<64x64xf32>) -> tensor<24x64xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", pack = 4 : i64, tile_sizes = array<i64: 24, 32, 32>, threads = 2 : i64,
                   thread_dim = 1 : i64, interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>,
                   vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<24x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<24x64xf32>) -> tensor<24x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<24x64xf32>, tensor<64x64xf32>) outs(%c : tensor<24x64xf32>) -> tensor<24x64xf32>
  return %r : tensor<24x64xf32>
}

// -----

// Constant weights are packed once, as the kernel is compiled, not on every call: A here (a
// dense_resource blob, 8 x 6) becomes a packed constant of 2 panels of 4 x 8, the depth padded
// from 6 to 8 with zeros; only B is packed in the kernel. The first panel holds A's first four
// columns, k-major (1, 7, 13, ...); the last two rows of the second panel are the zero pad.
// MATMUL-LABEL: func.func private @packed_constant_a
// MATMUL: arith.constant dense_resource<[[BLOB:packed[_0-9]*]]> : tensor<1x2x4x8xf32>
// MATMUL-NOT: linalg.pack
// MATMUL: tensor.empty() : tensor<1x2x4x32xf32>
// MATMUL: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x32xf32>)
// MATMUL: [[BLOB]]: "0x040000000000803F0000E04000005041000098410000C8410000F8410000144200002C42
// MATMUL-SAME: 00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
func.func private @packed_constant_a(%b: tensor<6x32xf32>) -> tensor<8x32xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", pack = 4 : i64, tile_sizes = array<i64: 8, 32, 8>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, vector_size = 16 : i64}} {
  %a = arith.constant dense_resource<weights> : tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8x6xf32>, tensor<6x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F84100000042000004420000084200000C4200001042000014420000184200001C4200002042000024420000284200002C4200003042000034420000384200003C4200004042"
    }
  }
#-}

// -----

// A constant B (inline dense elements) is packed as the kernel is compiled too: the micro-kernels
// read its panels (2 x 4 x 32) straight from the constant, with no block buffer to pack into.
// MATMUL-LABEL: func.func private @packed_constant_b
// MATMUL: arith.constant dense_resource<[[BLOB:packed[_0-9]*]]> : tensor<1x2x4x32xf32>
// MATMUL-NOT: tensor.empty() : tensor<1x2x4x32xf32>
// MATMUL: tensor.empty() : tensor<1x2x4x8xf32>
// MATMUL-NOT: tensor.empty() : tensor<1x2x4x32xf32>
// MATMUL: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x32xf32>)
// MATMUL-NOT: linalg.pack
// MATMUL: [[BLOB]]: "0x040000000000C0C10000BEC1
func.func private @packed_constant_b(%a: tensor<8x6xf32>) -> tensor<8x32xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", pack = 4 : i64, tile_sizes = array<i64: 8, 32, 8>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, vector_size = 16 : i64}} {
  %b = arith.constant dense<"0x0000C0C10000BEC10000BCC10000BAC10000B8C10000B6C10000B4C10000B2C10000B0C10000AEC10000ACC10000AAC10000A8C10000A6C10000A4C10000A2C10000A0C100009EC100009CC100009AC1000098C1000096C1000094C1000092C1000090C100008EC100008CC100008AC1000088C1000086C1000084C1000082C1000080C100007CC1000078C1000074C1000070C100006CC1000068C1000064C1000060C100005CC1000058C1000054C1000050C100004CC1000048C1000044C1000040C100003CC1000038C1000034C1000030C100002CC1000028C1000024C1000020C100001CC1000018C1000014C1000010C100000CC1000008C1000004C1000000C10000F8C00000F0C00000E8C00000E0C00000D8C00000D0C00000C8C00000C0C00000B8C00000B0C00000A8C00000A0C0000098C0000090C0000088C0000080C0000070C0000060C0000050C0000040C0000030C0000020C0000010C0000000C00000E0BF0000C0BF0000A0BF000080BF000040BF000000BF000080BE000000000000803E0000003F0000403F0000803F0000A03F0000C03F0000E03F0000004000001040000020400000304000004040000050400000604000007040000080400000884000009040000098400000A0400000A8400000B0400000B8400000C0400000C8400000D0400000D8400000E0400000E8400000F0400000F84000000041000004410000084100000C4100001041000014410000184100001C4100002041000024410000284100002C4100003041000034410000384100003C4100004041000044410000484100004C4100005041000054410000584100005C4100006041000064410000684100006C4100007041000074410000784100007C41000080410000824100008441000086410000884100008A4100008C4100008E41000090410000924100009441000096410000984100009A4100009C4100009E410000A0410000A2410000A4410000A6410000A8410000AA410000AC410000AE410000B0410000B2410000B4410000B6410000B8410000BA410000BC410000BE41"> : tensor<6x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8x6xf32>, tensor<6x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// Tiles that do not divide their dim are peeled: whole tiles in one loop, the partial tile
// after it, each with a static shape (10 = 8 + 2 rows, 40 = 32 + 8 columns). Single-tile
// loops fold away, leaving the k loops.
// MATMUL-LABEL: func.func private @partial
// MATMUL: scf.for {{.*}} to %c16 step %c1
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<1x32xf32>) outs(%{{.*}} : tensor<8x32xf32>)
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<2x1xf32>, tensor<1x32xf32>) outs(%{{.*}} : tensor<2x32xf32>)
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<1x8xf32>) outs(%{{.*}} : tensor<8x8xf32>)
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<2x1xf32>, tensor<1x8xf32>) outs(%{{.*}} : tensor<2x8xf32>)
// MATMUL-NOT: tensor<?x
func.func private @partial(%a: tensor<10x16xf32>, %b: tensor<16x40xf32>) -> tensor<10x40xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", tile_sizes = array<i64: 10, 40, 16>, interchange = array<i64: 1, 2, 0>,
                   register_tile = array<i64: 8, 32, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x40xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<10x40xf32>) -> tensor<10x40xf32>
  %r = linalg.matmul ins(%a, %b : tensor<10x16xf32>, tensor<16x40xf32>) outs(%c : tensor<10x40xf32>) -> tensor<10x40xf32>
  return %r : tensor<10x40xf32>
}

// -----

// A cache block wider than a thread's share of the rows (100 rows, 2 threads) is cut to the
// share: the 50 rows of each thread are whole 5-row micro-kernels of static shape.
// MATMUL-LABEL: func.func private @block_wider_than_share
// MATMUL: scf.forall (%{{.*}}) in (2)
// MATMUL: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<50x64xf32>)
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<5x1xf32>, tensor<1x32xf32>) outs(%{{.*}} : tensor<5x32xf32>)
func.func private @block_wider_than_share(%a: tensor<100x64xf32>, %b: tensor<64x64xf32>) -> tensor<100x64xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", tile_sizes = array<i64: 100, 64, 64>, threads = 2 : i64, thread_dim = 0 : i64,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 5, 32, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<100x64xf32>) -> tensor<100x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x64xf32>, tensor<64x64xf32>) outs(%c : tensor<100x64xf32>) -> tensor<100x64xf32>
  return %r : tensor<100x64xf32>
}

// -----

// K in two blocks (128 deep, blocks of 64): a C tile is visited once per block, so C is filled
// whole before the product and the micro-kernels accumulate into it.
// MATMUL-LABEL: func.func private @heads_two_blocks
// MATMUL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x16x64xf32>)
// MATMUL-NOT: linalg.fill
// MATMUL: linalg.batch_matmul {tile.vectorize}
func.func private @heads_two_blocks(%a: tensor<4x16x128xf32>, %b: tensor<4x128x64xf32>) -> tensor<4x16x64xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", tile_sizes = array<i64: 16, 64, 64>, threads = 2 : i64,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16x64xf32>) -> tensor<4x16x64xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x16x128xf32>, tensor<4x128x64xf32>) outs(%c : tensor<4x16x64xf32>) -> tensor<4x16x64xf32>
  return %r : tensor<4x16x64xf32>
}

// -----

// A batched matmul: the threads split the batches; each batch is blocked and cut into
// 8 x 32 micro-kernels with a batch of 1, as a 2-D matmul is. K is one block, so every C tile
// is visited once: each micro-kernel fills its own tile before its k loop, and C is not
// filled whole first.
// MATMUL-LABEL: func.func private @heads
// MATMUL: %[[EMPTY:.*]] = tensor.empty() : tensor<4x16x64xf32>
// MATMUL-NOT: linalg.fill
// MATMUL: scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}} = %[[EMPTY]])
// MATMUL: %[[TILE:.*]] = tensor.extract_slice %{{.*}} [1, 8, 32] [1, 1, 1]
// MATMUL-NEXT: %[[FILLED:.*]] = linalg.fill {tile.vectorize} ins(%{{.*}} : f32) outs(%[[TILE]] : tensor<1x8x32xf32>)
// MATMUL-NEXT: %[[START:.*]] = tensor.insert_slice %[[FILLED]]
// MATMUL-NEXT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[START]])
// MATMUL: linalg.batch_matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<1x8x1xf32>, tensor<1x1x32xf32>) outs(%{{.*}} : tensor<1x8x32xf32>)
func.func private @heads(%a: tensor<4x16x64xf32>, %b: tensor<4x64x64xf32>) -> tensor<4x16x64xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", tile_sizes = array<i64: 16, 64, 64>, threads = 2 : i64,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 32, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16x64xf32>) -> tensor<4x16x64xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x16x64xf32>, tensor<4x64x64xf32>) outs(%c : tensor<4x16x64xf32>) -> tensor<4x16x64xf32>
  return %r : tensor<4x16x64xf32>
}

// -----

// 25 columns in 16-wide micro-kernels: the partial tile of 9 is cut into one whole vector of 8
// and a column of 1 (a 9-wide vector row would be scalarized).
// MATMUL-LABEL: func.func private @ragged_columns
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// MATMUL: linalg.matmul {tile.vectorize} ins(%{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x1xf32>) outs(%{{.*}} : tensor<4x1xf32>)
// MATMUL-NOT: tensor<1x9xf32>
// CHECK-LABEL: func.func private @ragged_columns
func.func private @ragged_columns(%a: tensor<8x32xf32>, %b: tensor<32x25xf32>) -> tensor<8x25xf32> attributes {
    tile.kernel = "contraction",
    tile.config = {strategy = "matmul", tile_sizes = array<i64: 8, 25, 32>, interchange = array<i64: 1, 2, 0>,
                   register_tile = array<i64: 4, 16, 1>, vector_size = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x25xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x25xf32>) -> tensor<8x25xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8x32xf32>, tensor<32x25xf32>) outs(%c : tensor<8x25xf32>) -> tensor<8x25xf32>
  return %r : tensor<8x25xf32>
}

// -----

// A depthwise conv in an elementwise kernel: its output is cut into the config's tiles (4 rows
// of 8 columns) with one tap of the window at a time (the window's dims tiled by 1,
// innermost), and the unit dims dropped, so that each tile is a 2-D generic on rows of input
// pixels, marked.
#window = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d3 + d6)>
#weights = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#output = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func private @depthwise
// CHECK: linalg.fill {tile.vectorize} {{.*}} -> tensor<1x1x1x16xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1{{.*}} step
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8{{.*}} step
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16{{.*}} step %c4
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16{{.*}} step %c8
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1{{.*}} step
// CHECK: scf.for %{{.*}} = %{{.*}} to %c3{{.*}} step
// CHECK: scf.for %{{.*}} = %{{.*}} to %c3{{.*}} step
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<f32>) outs(%{{.*}} : tensor<4x8xf32>) attrs = {tile.vectorize}
func.func private @depthwise(%x: tensor<1x8x18x18xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x16x16xf32> attributes {tile.kernel = "convolution", tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 1, 4, 8>, vector_size = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x8x16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %r = linalg.generic {indexing_maps = [#window, #weights, #output], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x8x18x18xf32>, tensor<8x1x3x3xf32>) outs(%init : tensor<1x8x16x16xf32>) {
  ^bb0(%in: f32, %weight: f32, %acc: f32):
    %p = arith.mulf %in, %weight : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x8x16x16xf32>
  return %r : tensor<1x8x16x16xf32>
}

// -----

// A kernel declared without a body has nothing to tile: left as it is.
// CHECK-LABEL: func.func private @declared
// CHECK-SAME: tile.kernel = "reduction"
func.func private @declared(%x: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {tile.kernel = "reduction", tile.config = {strategy = "rows", threads = 2 : i64, tile_sizes = array<i64: 1, 0>, vector_size = 16 : i64}}

// -----

// A conv configured direct reads its padded input in place: the image goes into rows of 64
// pixels a channel (8 rows of 7: 6 pixels and a zero that is the right border of one row and
// the left of the next; then zeros for the reads past the last output row), and the product
// [O/8, 8, 48] (6 output rows of 7, 42 columns, rounded up to whole micro-kernels) sums
// w[o, c, i, j] times pixel i * 7 + j + n of channel c. Each 8 x 16 micro-kernel zeroes its C
// tile where it starts and takes the taps one at a time: a column of weights by a run of 16
// pixels (of the 32 that its taps read). The result keeps the first 6 pixels of each row.
// MATMUL-LABEL: func.func private @conv_direct
// MATMUL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x64xf32>)
// MATMUL: tensor.insert_slice %{{.*}} into %{{.*}}[0, 1, 1] [2, 6, 6] [1, 1, 1] : tensor<2x6x6xf32> into tensor<2x8x7xf32>
// MATMUL: scf.for
// MATMUL: tensor.extract_slice %{{.*}}[0, %{{.*}}] [2, 32] [1, 1] : tensor<2x64xf32> to tensor<2x32xf32>
// MATMUL: linalg.fill {tile.vectorize} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x8x16xf32>)
// MATMUL: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<16xf32>) outs(%{{.*}} : tensor<8x16xf32>) attrs = {tile.vectorize}
// MATMUL: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<1x8x48xf32> into tensor<8x48xf32>
// MATMUL: tensor.extract_slice %{{.*}}[0, 0, 0] [8, 6, 6] [1, 1, 1] : tensor<8x6x7xf32> to tensor<8x6x6xf32>
// MATMUL-NOT: linalg.conv_2d
func.func private @conv_direct(%x: tensor<1x2x6x6xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32> attributes {
    tile.kernel = "convolution",
    tile.config = {strategy = "matmul", direct = 1 : i64, tile_sizes = array<i64: 8, 48, 18>,
                   interchange = array<i64: 1, 2, 0>, register_tile = array<i64: 8, 16, 1>, vector_size = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<1x2x8x8xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %padded = tensor.insert_slice %x into %pz[0, 0, 1, 1] [1, 2, 6, 6] [1, 1, 1, 1] : tensor<1x2x6x6xf32> into tensor<1x2x8x8xf32>
  %e = tensor.empty() : tensor<1x8x6x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x2x8x8xf32>, tensor<8x2x3x3xf32>) outs(%init : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}
