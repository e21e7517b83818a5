// RUN: strata-opt %s --tile-configure --verify-diagnostics --split-input-file
// A target.desc written by hand is checked where a pass first reads it: an error at the module.

// expected-error @+1 {{target.desc key 'cores' must be an integer}}
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = array<i64>}} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "graph.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{target.desc key 'chip' must be a string}}
module attributes {target.desc = {kind = "nvvm", triple = "nvptx64-nvidia-cuda", chip = 90 : i64}} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "graph.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{target.desc has an unknown key 'lanes'}}
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", lanes = 8 : i64}} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "graph.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{target.desc needs 'triple'}}
module attributes {target.desc = {kind = "cpu"}} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "graph.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
