// RUN: strata-opt %s --split-input-file --verify-diagnostics
// Every verifier message of the graph dialect, one case each.

func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{not broadcast-compatible: 2x3, 4}}
  %0 = "graph.add"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @add_element_types(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+1 {{operands must have the same element type}}
  %0 = "graph.add"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>
  return
}

// -----

func.func @add_unsigned(%a: tensor<4xui8>) {
  // expected-error @+1 {{operand element type must be one of f16, bf16, f32, f64, i1, i8, i16, i32, i64, got ui8}}
  %0 = "graph.add"(%a, %a) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return
}

// -----

func.func @relu_f8(%a: tensor<4xf8E4M3FN>) {
  // expected-error @+1 {{operand element type must be one of f16, bf16, f32, f64, i1, i8, i16, i32, i64, got f8E4M3FN}}
  %0 = "graph.relu"(%a) : (tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  return
}

// -----

func.func @max_pool_i32_kernel(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{attribute 'kernel' must be an array<i64: ...> attribute}}
  %0 = "graph.max_pool2d"(%x) {kernel = array<i32: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @add_result_type(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{result type tensor<2x4xf32> does not match the inferred type tensor<2x3xf32>}}
  %0 = "graph.add"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @exp_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{operand element type must be floating point, got i32}}
  %0 = "graph.exp"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @dynamic(%a: tensor<?xf32>) {
  // expected-error @+1 {{operand must be a statically shaped ranked tensor, got tensor<?xf32>}}
  %0 = "graph.relu"(%a) : (tensor<?xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @gelu_mode(%a: tensor<4xf32>) {
  // expected-error @+1 {{'approximate' must be "none" or "tanh", got "fast"}}
  %0 = "graph.gelu"(%a) {approximate = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @gelu_attr_kind(%a: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'approximate' must be a string attribute}}
  %0 = "graph.gelu"(%a) {approximate = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @clamp_bounds(%a: tensor<4xf32>) {
  // expected-error @+1 {{'min' (2.0) must not exceed 'max' (1.0)}}
  %0 = "graph.clamp"(%a) {min = 2.0 : f32, max = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @clamp_missing(%a: tensor<4xf32>) {
  // expected-error @+1 {{attribute "max" is expected}}
  %0 = "graph.clamp"(%a) {min = 2.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{result type tensor<3xf16> does not match the inferred type tensor<4xf16>}}
  %0 = "graph.cast"(%a) : (tensor<4xf32>) -> tensor<3xf16>
  return
}

// -----

func.func @cast_complex(%a: tensor<4xcomplex<f32>>) {
  // expected-error @+1 {{operand element type must be one of f16, bf16, f32, f64, i1, i8, i16, i32, i64, got complex<f32>}}
  %0 = "graph.cast"(%a) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_k(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{contraction dimensions differ: lhs has 3 columns, rhs has 4 rows}}
  %0 = "graph.matmul"(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_rank0(%a: tensor<f32>) {
  // expected-error @+1 {{operands must have rank at least 1}}
  %0 = "graph.matmul"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x4xf32>, %b: tensor<3x4x4xf32>) {
  // expected-error @+1 {{not broadcast-compatible: 2, 3}}
  %0 = "graph.matmul"(%a, %b) : (tensor<2x4x4xf32>, tensor<3x4x4xf32>) -> tensor<2x4x4xf32>
  return
}

// -----

func.func @matmul_narrow(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{result element type f16 must be f32 or a wider float}}
  %0 = "graph.matmul"(%a, %a) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf16>
  return
}

// -----

func.func @conv_rank(%a: tensor<1x3x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{input and weight must have rank 4 (NCHW, OIHW)}}
  %0 = "graph.conv2d"(%a, %w) : (tensor<1x3x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_strides_len(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'strides' must have 2 elements, got 1}}
  %0 = "graph.conv2d"(%a, %w) {strides = array<i64: 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_strides_zero(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'strides' must be positive}}
  %0 = "graph.conv2d"(%a, %w) {strides = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_padding_negative(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'padding' must be non-negative}}
  %0 = "graph.conv2d"(%a, %w) {padding = array<i64: -1, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_groups(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{groups (2) must divide input channels (3) and output channels (4)}}
  %0 = "graph.conv2d"(%a, %w) {groups = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_channels(%a: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{weight has 2 input channels per group, expected 3 (3 channels in 1 groups)}}
  %0 = "graph.conv2d"(%a, %w) : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_bias(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{bias must have shape [4]}}
  %0 = "graph.conv2d"(%a, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_kernel_large(%a: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{the kernel is larger than the padded input}}
  %0 = "graph.conv2d"(%a, %w) : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  return
}

// -----

func.func @conv_dilations(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'dilations' must be positive}}
  %0 = "graph.conv2d"(%a, %w) {dilations = array<i64: 1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @pool_rank(%a: tensor<3x8x8xf32>) {
  // expected-error @+1 {{input must have rank 4 (NCHW)}}
  %0 = "graph.max_pool2d"(%a) {kernel = array<i64: 2, 2>} : (tensor<3x8x8xf32>) -> tensor<3x7x7xf32>
  return
}

// -----

func.func @pool_kernel(%a: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'kernel' must have 2 elements, got 3}}
  %0 = "graph.max_pool2d"(%a) {kernel = array<i64: 2, 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @pool_kernel_zero(%a: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'kernel' must be positive}}
  %0 = "graph.avg_pool2d"(%a) {kernel = array<i64: 0, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @pool_padding(%a: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{padding must be smaller than the kernel}}
  %0 = "graph.max_pool2d"(%a) {kernel = array<i64: 2, 2>, padding = array<i64: 2, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x9x7xf32>
  return
}

// -----

func.func @pool_padding_negative(%a: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'padding' must be non-negative}}
  %0 = "graph.max_pool2d"(%a) {kernel = array<i64: 2, 2>, padding = array<i64: 0, -1, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x6xf32>
  return
}

// -----

func.func @pool_large(%a: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{the kernel is larger than the padded input}}
  %0 = "graph.max_pool2d"(%a) {kernel = array<i64: 3, 3>} : (tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32>
  return
}

// -----

func.func @bn_rank(%a: tensor<3xf32>) {
  // expected-error @+1 {{input must have rank at least 2 (N, C, ...)}}
  %0 = "graph.batch_norm"(%a, %a, %a, %a, %a) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @bn_params(%x: tensor<1x3x4x4xf32>, %a: tensor<3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'mean' must have shape [3]}}
  %0 = "graph.batch_norm"(%x, %a, %a, %b, %a) : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = "graph.softmax"(%a) {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @layer_norm_gamma(%a: tensor<2x3xf32>, %g: tensor<2xf32>) {
  // expected-error @+1 {{'gamma' must have the normalized shape 3}}
  %0 = "graph.layer_norm"(%a, %g, %g) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @rms_norm_eps(%a: tensor<2x3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{'epsilon' must be non-negative}}
  %0 = "graph.rms_norm"(%a, %g) {epsilon = -1.0 : f32} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @reduce_axes_repeat(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'axes' must not repeat an axis}}
  %0 = "graph.reduce_sum"(%a) {axes = array<i64: 1, -1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @reduce_axes_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 5 is out of range for rank 2}}
  %0 = "graph.reduce_max"(%a) {axes = array<i64: 5>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @reduce_shape(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{result type tensor<3xf32> does not match the inferred type tensor<2xf32>}}
  %0 = "graph.reduce_mean"(%a) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape 6 elements into 8}}
  %0 = "graph.reshape"(%a) : (tensor<2x3xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @broadcast_to(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot broadcast tensor<2x3xf32> to tensor<4x3xf32>}}
  %0 = "graph.broadcast_to"(%a) : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @transpose_perm(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'perm' [0, 0] is not a permutation of 0..1}}
  %0 = "graph.transpose"(%a) {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @concat_empty(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{requires at least one input}}
  %0 = "graph.concat"() {axis = 0 : i64} : () -> tensor<2x3xf32>
  return
}

// -----

func.func @concat_variadic_types_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{expected 'tensor<2x3xf32>' but got 'tensor<3xf32>'}}
  %0 = "graph.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  return
}

// -----

func.func @concat_variadic_types_dims(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{expected 'tensor<2x3xf32>' but got 'tensor<2x4xf32>'}}
  %0 = "graph.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @slice_length(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'starts' must have 2 elements, got 1}}
  %0 = "graph.slice"(%a) {starts = array<i64: 0>, ends = array<i64: 1, 1>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  return
}

// -----

func.func @slice_steps(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'steps' must be positive}}
  %0 = "graph.slice"(%a) {starts = array<i64: 0, 0>, ends = array<i64: 1, 1>, steps = array<i64: -1, 1>} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  return
}

// -----

func.func @gather_indices(%a: tensor<2x3xf32>, %i: tensor<4xf32>) {
  // expected-error @+1 {{indices must be integers, got f32}}
  %0 = "graph.gather"(%a, %i) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @constant_type(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{result type tensor<3xf32> does not match the inferred type tensor<2xf32>}}
  %0 = "graph.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  return
}

// -----

func.func @constant_kind(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{attribute 'value' must be a dense or dense_resource elements attribute}}
  %0 = "graph.constant"() {value = 1.0 : f32} : () -> tensor<3xf32>
  return
}

// -----

func.func @attention_rank(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{q, k and v must have rank 4 ([B, H, S, D])}}
  %0 = "graph.attention"(%a, %a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<1x2x4x8xf32>, %k: tensor<1x3x4x8xf32>) {
  // expected-error @+1 {{q, k and v must agree on batch and heads}}
  %0 = "graph.attention"(%q, %k, %k) : (tensor<1x2x4x8xf32>, tensor<1x3x4x8xf32>, tensor<1x3x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{k has head dim 4, q has 8}}
  %0 = "graph.attention"(%q, %k, %k) : (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @attention_kv(%q: tensor<1x2x4x8xf32>, %v: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{k and v must have the same sequence length}}
  %0 = "graph.attention"(%q, %q, %v) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @irdl_operand_kind(%a: f32) {
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.f32'}}
  %0 = "graph.relu"(%a) : (f32) -> f32
  return
}

// -----

func.func @compare_types(%a: tensor<2xf32>, %b: tensor<2xi64>) {
  // expected-error @+1 {{operands must have the same element type}}
  %0 = "graph.less"(%a, %b) : (tensor<2xf32>, tensor<2xi64>) -> tensor<2xi1>
  return
}

// -----

func.func @compare_result(%a: tensor<2xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{result type tensor<2xf32> does not match the inferred type tensor<2xi1>}}
  %0 = "graph.equal"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @logical_bool(%a: tensor<2xf32>, %b: tensor<2xi1>) {
  // expected-error @+1 {{operand element type must be i1, got f32}}
  %0 = "graph.logical_and"(%a, %b) : (tensor<2xf32>, tensor<2xi1>) -> tensor<2xi1>
  return
}

// -----

func.func @where_condition(%c: tensor<2xf32>, %a: tensor<2xf32>) {
  // expected-error @+1 {{condition element type must be i1, got f32}}
  %0 = "graph.where"(%c, %a, %a) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @pad_length(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'pads' must have 4 elements, got 2}}
  %0 = "graph.pad"(%a) {pads = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @pad_negative(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'pads' must not be negative}}
  %0 = "graph.pad"(%a) {pads = array<i64: 1, -1, 0, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @pad_mode(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'mode' must be "constant", "edge" or "reflect", got "wrap"}}
  %0 = "graph.pad"(%a) {pads = array<i64: 1, 0, 0, 0>, mode = "wrap"} : (tensor<2x3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @pad_reflect(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{reflect padding must be smaller than the padded dim}}
  %0 = "graph.pad"(%a) {pads = array<i64: 2, 0, 0, 0>, mode = "reflect"} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @pad_edge(%a: tensor<0x3xf32>) {
  // expected-error @+1 {{edge padding needs a nonempty dim}}
  %0 = "graph.pad"(%a) {pads = array<i64: 1, 0, 0, 0>, mode = "edge"} : (tensor<0x3xf32>) -> tensor<1x3xf32>
  return
}

// -----

func.func @lrn_rank(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{input must have rank 3 or more (N, C, ...), got 2}}
  %0 = "graph.lrn"(%a) {size = 3 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @lrn_size(%a: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'size' must be positive, got 0}}
  %0 = "graph.lrn"(%a) {size = 0 : i64} : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  return
}

// -----

// strata's ops parse only in generic form: their custom form gets a located error (MLIR's
// parser of an IRDL op fails without one).
func.func @custom_form(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{custom op 'graph.relu' cannot be parsed: strata's ops are written in generic form, "graph.relu"(operands) {attributes} : (operand types) -> result types}}
  %0 = graph.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
