// RUN: strata-opt %s --tile-configure --verify-diagnostics --split-input-file
// RUN: strata-opt %s --target=cpu:x86-64-v4 --streaming-stores --verify-diagnostics --split-input-file
// A kernel's kind (`tile.kernel`, which --graph-fuse writes) is checked where it is read.

// expected-error @+1 {{'tile.kernel' must be a string (the kernel's kind), got 2.500000e+00 : f32}}
func.func private @kind_not_a_string(%x: tensor<4x96xf32>) -> tensor<4x96xf32> attributes {tile.kernel = 2.5 : f32} {
  %0 = "graph.exp"(%x) : (tensor<4x96xf32>) -> tensor<4x96xf32>
  return %0 : tensor<4x96xf32>
}

// -----

// expected-error @+1 {{'tile.kernel' must be a string (the kernel's kind), got array<i64: 1>}}
func.func private @kind_an_array(%x: tensor<4x96xf32>) -> tensor<4x96xf32> attributes {tile.kernel = array<i64: 1>} {
  %0 = "graph.exp"(%x) : (tensor<4x96xf32>) -> tensor<4x96xf32>
  return %0 : tensor<4x96xf32>
}
