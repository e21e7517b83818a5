// A two-layer MLP: relu(x @ w1 + b1) @ w2 + b2, then softmax. Weights are arguments.
func.func @main(%x: tensor<32x64xf32>, %w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
                %w2: tensor<128x10xf32>, %b2: tensor<10xf32>) -> tensor<32x10xf32> {
  %0 = "graph.matmul"(%x, %w1) : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
  %1 = "graph.add"(%0, %b1) : (tensor<32x128xf32>, tensor<128xf32>) -> tensor<32x128xf32>
  %2 = "graph.relu"(%1) : (tensor<32x128xf32>) -> tensor<32x128xf32>
  %3 = "graph.matmul"(%2, %w2) : (tensor<32x128xf32>, tensor<128x10xf32>) -> tensor<32x10xf32>
  %4 = "graph.add"(%3, %b2) : (tensor<32x10xf32>, tensor<10xf32>) -> tensor<32x10xf32>
  %5 = "graph.softmax"(%4) {axis = -1 : i64} : (tensor<32x10xf32>) -> tensor<32x10xf32>
  return %5 : tensor<32x10xf32>
}
