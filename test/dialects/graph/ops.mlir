// RUN: strata-opt %s | FileCheck %s
// RUN: strata-opt %s | strata-opt | FileCheck %s
// Every graph op parses, verifies and prints back in generic form.

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<2x3xi32>) -> tensor<2x3xf32> {
  // CHECK: "graph.add"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = "graph.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.sub"
  %1 = "graph.sub"(%0, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.mul"
  %2 = "graph.mul"(%1, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.div"
  %3 = "graph.div"(%2, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.maximum"
  %4 = "graph.maximum"(%3, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.minimum"
  %5 = "graph.minimum"(%4, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.pow"
  %6 = "graph.pow"(%5, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.add"({{.*}}) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %7 = "graph.add"(%i, %i) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  // CHECK: "graph.neg"
  %10 = "graph.neg"(%6) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.abs"
  %11 = "graph.abs"(%10) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.exp"
  %12 = "graph.exp"(%11) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.log"
  %13 = "graph.log"(%12) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.sqrt"
  %14 = "graph.sqrt"(%13) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.rsqrt"
  %15 = "graph.rsqrt"(%14) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.tanh"
  %16 = "graph.tanh"(%15) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.sigmoid"
  %17 = "graph.sigmoid"(%16) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.relu"
  %18 = "graph.relu"(%17) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.silu"
  %19 = "graph.silu"(%18) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.erf"
  %20 = "graph.erf"(%19) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.gelu"({{.*}}) {approximate = "tanh"}
  %21 = "graph.gelu"(%20) {approximate = "tanh"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.gelu"({{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %22 = "graph.gelu"(%21) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.clamp"({{.*}}) {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32}
  %23 = "graph.clamp"(%22) {min = 0.0 : f32, max = 6.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.cast"({{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %24 = "graph.cast"(%23) : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %25 = "graph.cast"(%24) : (tensor<2x3xf16>) -> tensor<2x3xf32>
  return %25 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @contractions
func.func @contractions(%x: tensor<2x3x4xf32>, %w: tensor<4x5xf32>, %v: tensor<4xf32>,
                        %h: tensor<8x16xf16>, %g: tensor<16x4xf16>) -> tensor<2x3x5xf32> {
  // CHECK: "graph.matmul"({{.*}}) : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %0 = "graph.matmul"(%x, %w) : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  // CHECK: "graph.matmul"({{.*}}) : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  %1 = "graph.matmul"(%x, %v) : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.matmul"({{.*}}) : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf32>
  %2 = "graph.matmul"(%h, %g) : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf32>
  return %0 : tensor<2x3x5xf32>
}

// CHECK-LABEL: func.func @vision
func.func @vision(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>,
                  %s: tensor<6xf32>) -> tensor<1x6x4x4xf32> {
  // CHECK: "graph.conv2d"({{.*}}) {dilations = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
  %0 = "graph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
  // CHECK: "graph.batch_norm"({{.*}}) {epsilon = 9.99999974E-6 : f32}
  %1 = "graph.batch_norm"(%0, %s, %b, %b, %s) {epsilon = 1.0e-5 : f32} : (tensor<1x6x8x8xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
  // CHECK: "graph.max_pool2d"({{.*}}) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
  %2 = "graph.max_pool2d"(%1) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x8x8xf32>) -> tensor<1x6x4x4xf32>
  // CHECK: "graph.avg_pool2d"({{.*}}) {count_include_pad = false, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
  %3 = "graph.avg_pool2d"(%2) {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : (tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32>
  // CHECK: "graph.conv2d"({{.*}}) : (tensor<1x4x8x8xf32>, tensor<6x4x5x5xf32>) -> tensor<1x6x4x4xf32>
  %w2 = "graph.constant"() {value = dense<0.5> : tensor<6x4x5x5xf32>} : () -> tensor<6x4x5x5xf32>
  %4 = "graph.conv2d"(%x, %w2) : (tensor<1x4x8x8xf32>, tensor<6x4x5x5xf32>) -> tensor<1x6x4x4xf32>
  return %3 : tensor<1x6x4x4xf32>
}

// CHECK-LABEL: func.func @normalization
func.func @normalization(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %g2: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  // CHECK: "graph.softmax"({{.*}}) {axis = -1 : i64}
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // CHECK: "graph.softmax"({{.*}}) {axis = -1 : i64, safe = true}
  %s = "graph.softmax"(%0) {axis = -1 : i64, safe = true} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // CHECK: "graph.layer_norm"({{.*}}) {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
  %1 = "graph.layer_norm"(%s, %g, %g) {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  // CHECK: "graph.layer_norm"({{.*}}) {axis = 1 : i64
  %2 = "graph.layer_norm"(%1, %g2, %g2) {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  // CHECK: "graph.rms_norm"
  %3 = "graph.rms_norm"(%2, %g) {axis = -1 : i64, epsilon = 1.0e-6 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %3 : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @comparisons_and_selection
func.func @comparisons_and_selection(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: "graph.less"({{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %0 = "graph.less"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: "graph.equal"
  %1 = "graph.equal"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: "graph.less_equal"
  %2 = "graph.less_equal"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: "graph.greater"
  %3 = "graph.greater"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: "graph.greater_equal"
  %4 = "graph.greater_equal"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: "graph.logical_and"
  %5 = "graph.logical_and"(%0, %1) : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: "graph.logical_or"
  %6 = "graph.logical_or"(%5, %2) : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: "graph.logical_xor"
  %7 = "graph.logical_xor"(%6, %3) : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: "graph.logical_not"
  %8 = "graph.logical_not"(%7) : (tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: "graph.where"({{.*}}) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %9 = "graph.where"(%8, %a, %b) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.floor"
  %10 = "graph.floor"(%9) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.ceil"
  %11 = "graph.ceil"(%10) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.round"
  %12 = "graph.round"(%11) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.sin"
  %13 = "graph.sin"(%12) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "graph.cos"
  %14 = "graph.cos"(%13) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %14 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @padding_and_lrn
func.func @padding_and_lrn(%x: tensor<1x4x5x5xf32>) -> (tensor<1x4x7x6xf32>, tensor<1x4x5x5xf32>, tensor<1x4xf32>) {
  // CHECK: "graph.pad"(%{{.*}}) {mode = "reflect", pads = array<i64: 0, 0, 1, 0, 0, 0, 1, 1>}
  %0 = "graph.pad"(%x) {pads = array<i64: 0, 0, 1, 0, 0, 0, 1, 1>, mode = "reflect"} : (tensor<1x4x5x5xf32>) -> tensor<1x4x7x6xf32>
  // CHECK: "graph.lrn"(%{{.*}}) {alpha = 9.99999974E-5 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32, size = 3 : i64}
  %1 = "graph.lrn"(%x) {size = 3 : i64, alpha = 1.0e-4 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  // CHECK: "graph.reduce_min"
  %2 = "graph.reduce_min"(%x) {axes = array<i64: 2, 3>} : (tensor<1x4x5x5xf32>) -> tensor<1x4xf32>
  // CHECK: "graph.reduce_prod"
  %3 = "graph.reduce_prod"(%x) {axes = array<i64: 2, 3>} : (tensor<1x4x5x5xf32>) -> tensor<1x4xf32>
  return %0, %1, %3 : tensor<1x4x7x6xf32>, tensor<1x4x5x5xf32>, tensor<1x4xf32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x4x8xf32>) -> (tensor<2x8xf32>, tensor<2x1x1xf32>, tensor<4x8xf32>) {
  // CHECK: "graph.reduce_sum"({{.*}}) {axes = array<i64: 1>, keepdims = false} : (tensor<2x4x8xf32>) -> tensor<2x8xf32>
  %0 = "graph.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = false} : (tensor<2x4x8xf32>) -> tensor<2x8xf32>
  // CHECK: "graph.reduce_mean"({{.*}}) -> tensor<2x1x1xf32>
  %1 = "graph.reduce_mean"(%x) {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x1x1xf32>
  // CHECK: "graph.reduce_max"
  %2 = "graph.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<2x4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2 : tensor<2x8xf32>, tensor<2x1x1xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @movement
func.func @movement(%x: tensor<2x3x4xf32>, %i: tensor<5xi64>, %r: tensor<3x1xf32>) -> tensor<6x4xf32> {
  // CHECK: "graph.reshape"({{.*}}) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %0 = "graph.reshape"(%x) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK: "graph.broadcast_to"({{.*}}) : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %1 = "graph.broadcast_to"(%r) : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // CHECK: "graph.transpose"({{.*}}) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %2 = "graph.transpose"(%1) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  // CHECK: "graph.concat"({{.*}}) {axis = 0 : i64} : (tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<18x4xf32>
  %3 = "graph.concat"(%0, %0, %0) {axis = 0 : i64} : (tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<18x4xf32>
  // CHECK: "graph.slice"({{.*}}) {ends = array<i64: 18, 4>, starts = array<i64: 0, 0>, steps = array<i64: 3, 1>} : (tensor<18x4xf32>) -> tensor<6x4xf32>
  %4 = "graph.slice"(%3) {starts = array<i64: 0, 0>, ends = array<i64: 18, 4>, steps = array<i64: 3, 1>} : (tensor<18x4xf32>) -> tensor<6x4xf32>
  // CHECK: "graph.gather"({{.*}}) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x5x4xf32>
  %5 = "graph.gather"(%x, %i) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x5x4xf32>
  return %4 : tensor<6x4xf32>
}

// CHECK-LABEL: func.func @constants_and_attention
func.func @constants_and_attention(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x3xf32>) -> tensor<1x2x4x3xf32> {
  // CHECK: "graph.constant"() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
  %c = "graph.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  // CHECK: "graph.constant"() {value = dense_resource<weights> : tensor<2xf32>}
  %w = "graph.constant"() {value = dense_resource<weights> : tensor<2xf32>} : () -> tensor<2xf32>
  // CHECK: "graph.attention"({{.*}}) {causal = true, scale = 1.250000e-01 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x3xf32>) -> tensor<1x2x4x3xf32>
  %0 = "graph.attention"(%q, %k, %v) {causal = true, scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x3xf32>) -> tensor<1x2x4x3xf32>
  return %0 : tensor<1x2x4x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F00000040"
    }
  }
#-}
