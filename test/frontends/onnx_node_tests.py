"""Which of ONNX's backend node tests belong to which op, and which variants are left out.

`OP_TESTS` maps each op the importer supports to the regex of its node tests' names;
`EXCLUDED` lists variants outside what strata supports, each with the reason.
"""

import re

OP_TESTS = {
    "Abs": r"abs",
    "Add": r"add(_bcast|_uint8)?",
    "And": r"and\d.*|and_bcast.*",
    "AveragePool": r"averagepool_.*",
    "BatchNormalization": r"batchnorm_.*",
    "Cast": r"cast_.*",
    "CastLike": r"castlike_.*",
    "Ceil": r"ceil(_example)?",
    "Celu": r"celu(_bfloat16)?(_expanded)?",
    "Clip": r"clip(_.*)?",
    "Concat": r"concat_.*",
    "Constant": r"constant",
    "ConstantOfShape": r"constantofshape_.*",
    "Conv": r"conv_.*|basic_conv_.*",
    "Cos": r"cos(_example)?",
    "Div": r"div(_bcast|_example|_uint8)?",
    "Dropout": r"dropout_default(_old|_ratio)?|dropout_random_old",
    "Elu": r"elu(_default|_example)?(_expanded.*)?",
    "Equal": r"equal(_bcast)?",
    "Erf": r"erf",
    "Exp": r"exp(_example)?",
    "Expand": r"expand_.*",
    "Flatten": r"flatten_.*",
    "Floor": r"floor(_example)?",
    "Gather": r"gather_[0-9].*|gather_negative_indices",
    "Gelu": r"gelu_.*",
    "Gemm": r"gemm_.*",
    "GlobalAveragePool": r"globalaveragepool(_precomputed)?",
    "GlobalMaxPool": r"globalmaxpool(_precomputed)?",
    "Greater": r"greater(_bcast)?",
    "GreaterOrEqual": r"greater_equal(_bcast)?(_expanded)?",
    "HardSigmoid": r"hardsigmoid(_default|_example)?(_expanded.*)?",
    "HardSwish": r"hardswish(_expanded)?",
    "Identity": r"identity",
    "InstanceNormalization": r"instancenorm_.*",
    "LRN": r"lrn(_default)?",
    "LayerNormalization": r"layer_normalization_.*",
    "LeakyRelu": r"leakyrelu(_default|_example)?(_expanded)?",
    "Less": r"less(_bcast)?",
    "LessOrEqual": r"less_equal(_bcast)?(_expanded)?",
    "Log": r"log(_example)?",
    "LogSoftmax": r"logsoftmax_.*",
    "MatMul": r"matmul_.*",
    "Max": r"max_.*",
    "MaxPool": r"maxpool_.*",
    "Mean": r"mean_.*",
    "Min": r"min_.*",
    "Mish": r"mish(_expanded)?",
    "Mul": r"mul(_bcast|_example|_uint8)?",
    "Neg": r"neg(_example)?",
    "Not": r"not_.*",
    "Or": r"or\d.*|or_bcast.*",
    "PRelu": r"prelu_.*",
    "Pad": r"constant_pad.*|edge_pad|reflect_pad",
    "Pow": r"pow(_.*)?",
    "Reciprocal": r"reciprocal(_example)?",
    "ReduceL1": r"reduce_l1_.*",
    "ReduceL2": r"reduce_l2_.*",
    "ReduceLogSum": r"reduce_log_sum(_(?!exp)[a-z_]+)?",
    "ReduceLogSumExp": r"reduce_log_sum_exp_.*",
    "ReduceMax": r"reduce_max_.*",
    "ReduceMean": r"reduce_mean_.*",
    "ReduceMin": r"reduce_min_.*",
    "ReduceProd": r"reduce_prod_.*",
    "ReduceSum": r"reduce_sum_(?!square).*",
    "ReduceSumSquare": r"reduce_sum_square_.*",
    "Relu": r"relu(_expanded_ver18)?",
    "Reshape": r"reshape_.*",
    "Round": r"round",
    "Selu": r"selu(_default|_example)?(_expanded.*)?",
    "Shape": r"shape(_.*)?",
    "Sigmoid": r"sigmoid(_example)?",
    "Sign": r"sign",
    "Sin": r"sin(_example)?",
    "Size": r"size(_example)?",
    "Slice": r"slice(_.*)?",
    "Softmax": r"softmax_.*",
    "Softplus": r"softplus(_example)?(_expanded.*)?",
    "Softsign": r"softsign(_example)?(_expanded.*)?",
    "Split": r"split_(?!to_sequence).*",
    "Sqrt": r"sqrt(_example)?",
    "Squeeze": r"squeeze(_negative_axes)?",
    "Sub": r"sub(_bcast|_example|_uint8)?",
    "Sum": r"sum_.*",
    "Tanh": r"tanh(_example)?",
    "ThresholdedRelu": r"thresholdedrelu(_default|_example)?(_expanded.*)?",
    "Tile": r"tile(_precomputed)?",
    "Transpose": r"transpose_.*",
    "Unsqueeze": r"unsqueeze(_.*)?",
    "Where": r"where_.*",
    "Xor": r"xor\d.*|xor_bcast.*",
}

EXCLUDED = {
    r".*(FLOAT8|FLOAT4|INT4|UINT4|INT2|UINT2|E8M0|e8m0).*": "8-, 4- and 2-bit element types",
    r".*(STRING|string).*": "string tensors",
    r".*uint(8|16|32|64).*|.*_u?int8_.*|.*UINT(8|16|32|64).*": "unsigned element types",
    r"test_(averagepool|maxpool)_3d_.*": "3-D pooling",
    r"test_(averagepool|maxpool)_2d_dilations_cpu": "pooling with dilations",
    r"test_maxpool_with_argmax_.*": "MaxPool's Indices output",
    r"test_batchnorm_.*_training_mode_cpu": "training-mode batch normalization",
    r"test_slice_start_out_of_bounds_cpu": "zero-size tensors",
}


def op_of(test_name: str) -> str | None:
    """The op whose node tests include `test_name` (test_<name>_cpu), or None."""
    name = re.sub(r"^test_|_cpu$", "", test_name)
    for op, pattern in OP_TESTS.items():
        if re.fullmatch(pattern, name):
            return op
    return None


def exclusion_reason(test_name: str) -> str | None:
    for pattern, reason in EXCLUDED.items():
        if re.fullmatch(pattern, test_name):
            return reason
    return None
