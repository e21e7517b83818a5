// conv3x3 (+bias) -> batch_norm -> relu -> max_pool 2x2, NCHW.
func.func @main(%x: tensor<2x3x16x16xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>,
                %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>,
                %var: tensor<8xf32>) -> tensor<2x8x8x8xf32> {
  %0 = "graph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x16x16xf32>
  %1 = "graph.batch_norm"(%0, %scale, %shift, %mean, %var) {epsilon = 1.0e-5 : f32} : (tensor<2x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x16x16xf32>
  %2 = "graph.relu"(%1) : (tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %3 = "graph.max_pool2d"(%2) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x8x16x16xf32>) -> tensor<2x8x8x8xf32>
  return %3 : tensor<2x8x8x8xf32>
}
