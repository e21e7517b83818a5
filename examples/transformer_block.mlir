// A pre-norm transformer block: x + attn(ln1(x)), then + mlp(ln2(.)) with GELU.
// Batch 2, sequence 16, model dim 32, 4 heads of 8, MLP hidden 64, causal attention.
func.func @main(%x: tensor<2x16x32xf32>,
                %g1: tensor<32xf32>, %be1: tensor<32xf32>,
                %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>,
                %wo: tensor<32x32xf32>,
                %g2: tensor<32xf32>, %be2: tensor<32xf32>,
                %w1: tensor<32x64xf32>, %b1: tensor<64xf32>,
                %w2: tensor<64x32xf32>, %b2: tensor<32xf32>) -> tensor<2x16x32xf32> {
  %h = "graph.layer_norm"(%x, %g1, %be1) {axis = -1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  %q = "graph.matmul"(%h, %wq) : (tensor<2x16x32xf32>, tensor<32x32xf32>) -> tensor<2x16x32xf32>
  %k = "graph.matmul"(%h, %wk) : (tensor<2x16x32xf32>, tensor<32x32xf32>) -> tensor<2x16x32xf32>
  %v = "graph.matmul"(%h, %wv) : (tensor<2x16x32xf32>, tensor<32x32xf32>) -> tensor<2x16x32xf32>
  %q4 = "graph.reshape"(%q) : (tensor<2x16x32xf32>) -> tensor<2x16x4x8xf32>
  %k4 = "graph.reshape"(%k) : (tensor<2x16x32xf32>) -> tensor<2x16x4x8xf32>
  %v4 = "graph.reshape"(%v) : (tensor<2x16x32xf32>) -> tensor<2x16x4x8xf32>
  %qh = "graph.transpose"(%q4) {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x8xf32>) -> tensor<2x4x16x8xf32>
  %kh = "graph.transpose"(%k4) {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x8xf32>) -> tensor<2x4x16x8xf32>
  %vh = "graph.transpose"(%v4) {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x8xf32>) -> tensor<2x4x16x8xf32>
  %a = "graph.attention"(%qh, %kh, %vh) {causal = true} : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %at = "graph.transpose"(%a) {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x16x8xf32>) -> tensor<2x16x4x8xf32>
  %a3 = "graph.reshape"(%at) : (tensor<2x16x4x8xf32>) -> tensor<2x16x32xf32>
  %o = "graph.matmul"(%a3, %wo) : (tensor<2x16x32xf32>, tensor<32x32xf32>) -> tensor<2x16x32xf32>
  %r1 = "graph.add"(%x, %o) : (tensor<2x16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %h2 = "graph.layer_norm"(%r1, %g2, %be2) {axis = -1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  %f1 = "graph.matmul"(%h2, %w1) : (tensor<2x16x32xf32>, tensor<32x64xf32>) -> tensor<2x16x64xf32>
  %f2 = "graph.add"(%f1, %b1) : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %f3 = "graph.gelu"(%f2) {approximate = "none"} : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  %f4 = "graph.matmul"(%f3, %w2) : (tensor<2x16x64xf32>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
  %f5 = "graph.add"(%f4, %b2) : (tensor<2x16x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  %y = "graph.add"(%r1, %f5) : (tensor<2x16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  return %y : tensor<2x16x32xf32>
}
