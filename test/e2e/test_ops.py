"""Every graph op, compiled for the CPU and checked against numpy."""

import numpy as np
import pytest
import strata
from strata.dialects import target
from support import erf, run_op, tensor_type


def rand(rng, *shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def check(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_broadcasting(op, rng):
    a, b = rand(rng, 2, 3, 4), rand(rng, 3, 1, low=0.5, high=2.0)
    check(run_op(op, [a, b], tensor_type([2, 3, 4])), BINARY[op](a, b))


def test_binary_integers(rng):
    a = rng.integers(-50, 50, (4, 5)).astype(np.int32)
    b = rng.integers(1, 7, (5,)).astype(np.int32)
    check(run_op("add", [a, b], tensor_type([4, 5], "i32")), a + b)
    check(run_op("maximum", [a, b], tensor_type([4, 5], "i32")), np.maximum(a, b))
    check(run_op("div", [a, b], tensor_type([4, 5], "i32")), np.trunc(a / b).astype(np.int32))


def test_pow(rng):
    a, b = rand(rng, 3, 4, low=0.1, high=3.0), rand(rng, 4, low=-2.0, high=2.0)
    check(run_op("pow", [a, b], tensor_type([3, 4])), np.power(a, b), rtol=1e-5)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


UNARY = {
    "neg": (np.negative, None),
    "abs": (np.abs, None),
    "exp": (np.exp, None),
    "log": (np.log, (0.1, 5.0)),
    "sqrt": (np.sqrt, (0.0, 5.0)),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), (0.1, 5.0)),
    "tanh": (np.tanh, None),
    "sigmoid": (sigmoid, None),
    "relu": (lambda x: np.maximum(x, 0), None),
    "silu": (lambda x: x * sigmoid(x), None),
    "erf": (erf, None),
    "floor": (np.floor, None),
    "ceil": (np.ceil, None),
    "round": (np.round, None),
    "sin": (np.sin, None),
    "cos": (np.cos, None),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op, rng):
    fn, bounds = UNARY[op]
    x = rand(
        rng,
        3,
        17,
        *(() if bounds is None else ()),
        low=(bounds or (-4, 4))[0],
        high=(bounds or (-4, 4))[1],
    )
    check(run_op(op, [x], tensor_type([3, 17])), fn(x.astype(np.float64)), rtol=2e-5)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate, rng):
    x = rand(rng, 4, 33, low=-5, high=5)
    x64 = x.astype(np.float64)
    if approximate == "none":
        expected = 0.5 * x64 * (1 + erf(x64 / np.sqrt(2)))
    else:
        expected = 0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64**3)))
    actual = run_op("gelu", [x], tensor_type([4, 33]), f'approximate = "{approximate}"')
    check(actual, expected, rtol=1e-5, atol=1e-6)


def test_clamp(rng):
    x = rand(rng, 5, 6, low=-10, high=10)
    actual = run_op("clamp", [x], tensor_type([5, 6]), "min = 0.0 : f32, max = 6.0 : f32")
    check(actual, np.clip(x, 0, 6))


@pytest.mark.parametrize("width", [7, 1000])
def test_relu_and_clamp_keep_nan_and_bound_infinities(width, rng):
    x = rand(rng, 3, width, low=-10, high=10)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 7.0, -7.0], np.float32)
    x[1, : len(specials)] = specials
    relu = run_op("relu", [x], tensor_type([3, width]))
    clamp = run_op("clamp", [x], tensor_type([3, width]), "min = 0.0 : f32, max = 6.0 : f32")
    # The sign of a zero is free (numpy's maximum gives -0 for -0); NaN stays NaN.
    np.testing.assert_array_equal(relu, np.maximum(x, 0))
    np.testing.assert_array_equal(clamp, np.clip(x, 0, 6))
    assert np.isnan(relu[1, 0]) and np.isnan(clamp[1, 0])


def test_cast(rng):
    x = rand(rng, 4, 4, low=-100, high=100)
    check(run_op("cast", [x], tensor_type([4, 4], "f16")), x.astype(np.float16), rtol=1e-3)
    check(run_op("cast", [x], tensor_type([4, 4], "i32")), x.astype(np.int32))
    i = rng.integers(-9, 9, (3,)).astype(np.int64)
    check(run_op("cast", [i], tensor_type([3], "f32")), i.astype(np.float32))


def test_bools_cross_the_function_boundary():
    flags = np.array([True, False, True])
    check(run_op("cast", [flags], tensor_type([3], "f32")), flags.astype(np.float32))
    x = np.array([-1.5, 0.0, 2.0], np.float32)
    check(run_op("cast", [x], tensor_type([3], "i1")), x.astype(bool))


@pytest.mark.parametrize(
    "lhs,rhs",
    [
        ((8, 16), (16, 4)),
        ((2, 3, 8, 5), (5, 6)),
        ((3, 1, 4, 5), (2, 5, 7)),
        ((5,), (5, 3)),
        ((4, 5), (5,)),
        ((6,), (6,)),
    ],
)
def test_matmul(lhs, rhs, rng):
    a, b = rand(rng, *lhs), rand(rng, *rhs)
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    check(run_op("matmul", [a, b], tensor_type(expected.shape)), expected, rtol=1e-5, atol=1e-5)


def test_matmul_f16_accumulates_in_f32(rng):
    a, b = rand(rng, 8, 64).astype(np.float16), rand(rng, 64, 8).astype(np.float16)
    expected = a.astype(np.float32) @ b.astype(np.float32)
    check(run_op("matmul", [a, b], tensor_type([8, 8])), expected, rtol=1e-5, atol=1e-5)


def conv2d_ref(x, w, bias, strides, padding, dilations, groups):
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    top, left, bottom, right = padding
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh = (h + top + bottom - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + left + right - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    per_group = o // groups
    for oc in range(o):
        g = oc // per_group
        for y in range(oh):
            for z in range(ow):
                ys, zs = y * strides[0], z * strides[1]
                patch = xp[
                    :,
                    g * i : (g + 1) * i,
                    ys : ys + dilations[0] * (kh - 1) + 1 : dilations[0],
                    zs : zs + dilations[1] * (kw - 1) + 1 : dilations[1],
                ]
                out[:, oc, y, z] = (patch * w[oc]).sum(axis=(1, 2, 3))
    if bias is not None:
        out += bias[None, :, None, None]
    return out


@pytest.mark.parametrize(
    "strides,padding,dilations,groups,with_bias",
    [
        ((1, 1), (0, 0, 0, 0), (1, 1), 1, False),
        ((2, 1), (1, 2, 0, 1), (1, 1), 1, True),
        ((1, 1), (1, 1, 1, 1), (2, 2), 2, True),
        ((1, 1), (1, 1, 1, 1), (1, 1), 4, False),
    ],
)
def test_conv2d(strides, padding, dilations, groups, with_bias, rng):
    x = rand(rng, 2, 4, 9, 8)
    w = rand(rng, 8, 4 // groups, 3, 3)
    bias = rand(rng, 8) if with_bias else None
    expected = conv2d_ref(x, w, bias, strides, padding, dilations, groups)
    attrs = (
        f"strides = array<i64: {strides[0]}, {strides[1]}>, "
        f"padding = array<i64: {', '.join(map(str, padding))}>, "
        f"dilations = array<i64: {dilations[0]}, {dilations[1]}>, groups = {groups} : i64"
    )
    inputs = [x, w] + ([bias] if with_bias else [])
    actual = run_op("conv2d", inputs, tensor_type(expected.shape), attrs)
    check(actual, expected, rtol=1e-5, atol=1e-5)


def pool_ref(x, kernel, strides, padding, kind, count_include_pad=False):
    top, left, bottom, right = padding
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    ones = np.pad(np.ones(x.shape[2:]), ((top, bottom), (left, right)))
    oh = (xp.shape[2] - kernel[0]) // strides[0] + 1
    ow = (xp.shape[3] - kernel[1]) // strides[1] + 1
    out = np.zeros(x.shape[:2] + (oh, ow))
    for y in range(oh):
        for z in range(ow):
            ys, zs = y * strides[0], z * strides[1]
            win = xp[:, :, ys : ys + kernel[0], zs : zs + kernel[1]]
            if kind == "max":
                out[:, :, y, z] = win.max(axis=(2, 3))
            else:
                count = (
                    kernel[0] * kernel[1]
                    if count_include_pad
                    else ones[ys : ys + kernel[0], zs : zs + kernel[1]].sum()
                )
                out[:, :, y, z] = win.sum(axis=(2, 3)) / count
    return out


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize(
    "kernel,strides,padding",
    [
        ((2, 2), (2, 2), (0, 0, 0, 0)),
        ((3, 3), (1, 2), (1, 1, 1, 0)),
        ((3, 2), (2, 1), (0, 1, 2, 1)),
    ],
)
def test_pooling(kind, kernel, strides, padding, rng):
    x = rand(rng, 2, 3, 7, 8)
    expected = pool_ref(x, kernel, strides, padding, kind)
    attrs = (
        f"kernel = array<i64: {kernel[0]}, {kernel[1]}>, "
        f"strides = array<i64: {strides[0]}, {strides[1]}>, "
        f"padding = array<i64: {', '.join(map(str, padding))}>"
    )
    actual = run_op(f"{kind}_pool2d", [x], tensor_type(expected.shape), attrs)
    check(actual, expected)


def test_avg_pool_count_include_pad(rng):
    x = rand(rng, 1, 2, 5, 5)
    expected = pool_ref(x, (3, 3), (1, 1), (1, 1, 1, 1), "avg", count_include_pad=True)
    attrs = "kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true"
    check(run_op("avg_pool2d", [x], tensor_type(expected.shape), attrs), expected)


def test_batch_norm(rng):
    x = rand(rng, 2, 3, 4, 5)
    scale, bias, mean = rand(rng, 3), rand(rng, 3), rand(rng, 3)
    var = rand(rng, 3, low=0.5, high=2.0)
    c = (slice(None), None, None)
    expected = (x - mean[c]) / np.sqrt(var[c] + 1e-3) * scale[c] + bias[c]
    actual = run_op(
        "batch_norm", [x, scale, bias, mean, var], tensor_type(x.shape), "epsilon = 1.0e-3 : f32"
    )
    check(actual, expected, rtol=1e-5, atol=1e-5)


# Rows of one partial vector, of several vectors, and longer than one tile with a remainder
# (300 = 4 x 64 + 44): the row kernels' vectorized paths.
ROW_LENGTHS = [5, 40, 300]


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("row", ROW_LENGTHS)
def test_softmax_is_stable(axis, row, rng):
    x = rand(rng, 4, 6, row, low=-5, high=5) * 30  # large logits: exp overflows without the max
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
    expected = e / e.sum(axis=axis, keepdims=True)
    actual = run_op("softmax", [x], tensor_type(x.shape), f"axis = {axis} : i64")
    assert np.isfinite(actual).all()
    check(actual, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("shape", [(127, 768), (3, 1000), (1, 7)])
def test_elementwise_chains_that_meet_again(shape, rng):
    """One kernel for a DAG of elementwise ops: v = x*a + b feeds a sigmoid and a silu, and a
    row-broadcast tanh(b) joins them."""
    x, b = rand(rng, *shape), rand(rng, shape[-1])
    t, v = tensor_type(shape), tensor_type([shape[-1]])
    text = (
        f"func.func @main(%x: {t}, %b: {v}) -> {t} {{\n"
        '  %a = "graph.constant"() {value = dense<1.5> : tensor<f32>} : () -> tensor<f32>\n'
        f'  %0 = "graph.mul"(%x, %a) : ({t}, tensor<f32>) -> {t}\n'
        f'  %1 = "graph.add"(%0, %b) : ({t}, {v}) -> {t}\n'
        f'  %2 = "graph.sigmoid"(%1) : ({t}) -> {t}\n'
        f'  %3 = "graph.silu"(%1) : ({t}) -> {t}\n'
        f'  %4 = "graph.tanh"(%b) : ({v}) -> {v}\n'
        f'  %5 = "graph.mul"(%3, %4) : ({t}, {v}) -> {t}\n'
        f'  %6 = "graph.add"(%2, %5) : ({t}, {t}) -> {t}\n'
        f"  return %6 : {t}\n}}"
    )
    x64, b64 = x.astype(np.float64), b.astype(np.float64)
    u = x64 * 1.5 + b64
    sigmoid = 1 / (1 + np.exp(-u))
    expected = sigmoid + u * sigmoid * np.tanh(b64)
    check(strata.compile(text)(x, b), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("safe", [False, True])
@pytest.mark.parametrize("row", [127, 1000, 1024])
def test_softmax_rows_with_nan_and_inf(safe, row, rng):
    """A NaN makes its own row NaN and no other; a row of -inf is 0 in a safe softmax (NaN
    otherwise); -inf entries of other rows are exact zeros."""
    x = rand(rng, 6, row) * 10
    x[1, row // 2] = np.nan
    x[2, :] = -np.inf
    x[3, ::3] = -np.inf
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x64 - x64.max(axis=1, keepdims=True))
        expected = e / e.sum(axis=1, keepdims=True)
    if safe:
        expected[2] = 0.0
    attrs = "axis = 1 : i64" + (", safe = true" if safe else "")
    actual = run_op("softmax", [x], tensor_type(x.shape), attrs)
    assert np.isnan(actual[1]).all()
    assert (actual[3, ::3] == 0).all()
    rows = [0, 2, 3, 4, 5] if safe else [0, 3, 4, 5]
    check(actual[rows], expected[rows], rtol=1e-5, atol=1e-7)
    if not safe:
        assert np.isnan(actual[2]).all()


@pytest.mark.parametrize(
    "row,form,flushed_below",
    [(12, "polynomial", -86.995), (1000, "polynomial", -86.995), (1000, "table", -87.315)],
)
def test_softmax_flushes_only_what_could_be_subnormal(row, form, flushed_below, rng, monkeypatch):
    """Exponentials of x - max where exp may be under 2^-126 are exactly 0, so no subnormal
    reaches the normalization: below -86.99 with the polynomial (2^k = 2^-126 there), below
    -87.31 with AVX-512's table (2^k 2^(j/16) = 2^-126; 16-lane vectors, so not rows of 12);
    above, they keep their relative accuracy down to 2^-125.5. One entry is the max and the
    rest far below it: the row sums to 1."""
    from strata.passes import math_approximate

    if form == "polynomial":
        monkeypatch.setattr(math_approximate, "_has_avx512", lambda desc: False)
    elif not math_approximate._has_avx512(target.host_cpu()):
        pytest.skip("the host has no AVX-512")
    near = np.array([-86.9, -86.98, -86.995, -87.2, -87.3, -87.32, -87.34, -87.7, -88, -90, -103])
    x = rand(rng, 3, row, low=-80, high=-20)
    x[:, 0] = 0
    x[:, 1 : 1 + near.size] = near
    x[2] += 40  # the same differences from a larger max
    x64 = x.astype(np.float64)
    below = x64 - x64.max(axis=1, keepdims=True)
    expected = np.exp(below) / np.exp(below).sum(axis=1, keepdims=True)
    actual = run_op("softmax", [x], tensor_type(x.shape), "axis = 1 : i64")
    assert (actual[below < flushed_below] == 0).all()
    assert (actual[below > flushed_below + 0.005] > 0).all()
    assert (actual[np.abs(actual) < 2.0**-126] == 0).all()
    kept = expected >= 2.0**-125.5
    check(actual[kept], expected[kept], rtol=1e-5, atol=0)
    assert (expected[actual == 0] < 1.7e-38).all()


@pytest.mark.parametrize("axis", [-1, 1])
@pytest.mark.parametrize("row", ROW_LENGTHS)
def test_layer_norm(axis, row, rng):
    x = rand(rng, 3, 4, row) + 100.0  # a large mean: the two-pass variance keeps precision
    axes = tuple(range(axis % 3, 3))
    gamma, beta = rand(rng, *x.shape[axis % 3 :]), rand(rng, *x.shape[axis % 3 :])
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True)
    expected = (x64 - mean) / np.sqrt(var + 1e-5) * gamma + beta
    actual = run_op(
        "layer_norm",
        [x, gamma, beta],
        tensor_type(x.shape),
        f"axis = {axis} : i64, epsilon = 1.0e-5 : f32",
    )
    check(actual, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("row", ROW_LENGTHS)
def test_rms_norm(row, rng):
    x, gamma = rand(rng, 3, row), rand(rng, row)
    x64 = x.astype(np.float64)
    expected = x64 / np.sqrt((x64**2).mean(axis=-1, keepdims=True) + 1e-6) * gamma
    actual = run_op(
        "rms_norm", [x, gamma], tensor_type(x.shape), "axis = -1 : i64, epsilon = 1.0e-6 : f32"
    )
    check(actual, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "op,fn",
    [
        ("reduce_sum", np.sum),
        ("reduce_mean", np.mean),
        ("reduce_max", np.max),
        ("reduce_min", np.min),
        ("reduce_prod", np.prod),
    ],
)
@pytest.mark.parametrize("axes,keepdims", [((1,), False), ((0, 2), True), ((-1,), False)])
def test_reductions(op, fn, axes, keepdims, rng):
    x = rand(rng, 3, 4, 5)
    expected = fn(x.astype(np.float64), axis=axes, keepdims=keepdims)
    attrs = f"axes = array<i64: {', '.join(map(str, axes))}>, keepdims = {str(keepdims).lower()}"
    check(run_op(op, [x], tensor_type(expected.shape), attrs), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "src,dst", [((2, 3, 4), (6, 4)), ((24,), (2, 3, 4)), ((1, 1), ()), ((), (1, 1))]
)
def test_reshape(src, dst, rng):
    x = rand(rng, *src)
    check(run_op("reshape", [x], tensor_type(dst)), x.reshape(dst))


def test_broadcast_to(rng):
    x = rand(rng, 3, 1)
    check(run_op("broadcast_to", [x], tensor_type([2, 3, 4])), np.broadcast_to(x, (2, 3, 4)))


def test_transpose(rng):
    x = rand(rng, 2, 3, 4)
    check(
        run_op("transpose", [x], tensor_type([4, 2, 3]), "perm = array<i64: 2, 0, 1>"),
        x.transpose(2, 0, 1),
    )


@pytest.mark.parametrize(
    "shape,perm",
    [
        ((2, 12, 128, 64), (0, 2, 1, 3)),
        ((1, 127, 7, 100), (0, 2, 1, 3)),
        ((3, 5, 4, 16), (2, 1, 0, 3)),
        ((12, 64, 128), (0, 2, 1)),
        ((1000, 2048), (1, 0)),
        ((127, 33), (1, 0)),
        ((1, 64, 56, 56), (0, 2, 3, 1)),
        ((1, 56, 56, 64), (0, 3, 1, 2)),
        ((4, 16, 9, 24), (3, 1, 0, 2)),
        ((8, 1000, 7), (2, 1, 0)),
        ((1, 7), (1, 0)),
    ],
)
def test_transpose_at_layer_sizes(shape, perm, rng):
    """Attention's heads moved around the sequence (runs of the head dim copied whole), an
    awkward-sized one, and transposes that move the innermost dim (in blocks, with ends that
    whole blocks leave along either dim or both, images between NCHW and NHWC, dims between
    the two that move, a dim narrower than a block)."""
    x = rand(rng, *shape)
    expected = x.transpose(perm)
    attrs = f"perm = array<i64: {', '.join(map(str, perm))}>"
    np.testing.assert_array_equal(
        run_op("transpose", [x], tensor_type(expected.shape), attrs), expected
    )


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float16"])
def test_transpose_of_other_element_types(dtype, rng):
    """Blocked transposes move any element type: ids, masks, half-precision activations."""
    x = (rng.standard_normal((20, 36)) * 10).astype(dtype)
    element = {"int64": "i64", "int32": "i32", "bool": "i1", "float16": "f16"}[dtype]
    actual = run_op("transpose", [x], tensor_type([36, 20], element), "perm = array<i64: 1, 0>")
    np.testing.assert_array_equal(actual, x.T)


def test_concat(rng):
    a, b, c = rand(rng, 2, 3), rand(rng, 2, 3), rand(rng, 2, 3)
    actual = run_op("concat", [a, b, c], tensor_type([2, 9]), "axis = -1 : i64")
    check(actual, np.concatenate([a, b, c], axis=-1))


def test_concat_of_different_sizes(rng):
    a, b = rand(rng, 2, 3), rand(rng, 2, 5)
    text = """
    func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
      %0 = tensor.concat dim(1) %a, %b : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
      return %0 : tensor<2x8xf32>
    }
    """
    check(strata.compile(text)(a, b), np.concatenate([a, b], axis=1))


@pytest.mark.parametrize(
    "starts,ends,steps",
    [((0, 1), (4, 5), (1, 1)), ((1, -4), (100, -1), (2, 1)), ((-3, 0), (5, 6), (3, 4))],
)
def test_slice(starts, ends, steps, rng):
    x = rand(rng, 5, 6)
    expected = x[tuple(slice(s, e, st) for s, e, st in zip(starts, ends, steps, strict=True))]

    def arr(v):
        return "array<i64: " + ", ".join(map(str, v)) + ">"

    attrs = f"starts = {arr(starts)}, ends = {arr(ends)}, steps = {arr(steps)}"
    check(run_op("slice", [x], tensor_type(expected.shape), attrs), expected)


@pytest.mark.parametrize("axis", [0, 1])
def test_gather(axis, rng):
    x = rand(rng, 4, 5)
    indices = np.array([[0, -1], [2, 3]], dtype=np.int64)
    expected = np.take(x, indices, axis=axis)
    actual = run_op("gather", [x, indices], tensor_type(expected.shape), f"axis = {axis} : i64")
    check(actual, expected)


@pytest.mark.parametrize(
    "shape,indices_shape,axis",
    [((50257, 768), (1, 128), 0), ((1000, 16), (7,), 0), ((3, 100, 32), (2, 5), 1)],
)
def test_gather_of_slices(shape, indices_shape, axis, rng):
    """Slices of 16 elements or more are copied whole: an embedding lookup at GPT-2's vocab
    and width, a gather along a middle axis; negative indices count from the end."""
    x = rand(rng, *shape)
    indices = rng.integers(-shape[axis], shape[axis], indices_shape).astype(np.int64)
    expected = np.take(x, indices, axis=axis)
    actual = run_op("gather", [x, indices], tensor_type(expected.shape), f"axis = {axis} : i64")
    np.testing.assert_array_equal(actual, expected)


def test_constant():
    text = """
    func.func @main() -> tensor<2x2xf32> {
      %0 = "graph.constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>}
        : () -> tensor<2x2xf32>
      %1 = "graph.constant"() {value = dense_resource<w> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
      %2 = "graph.add"(%0, %1) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      return %2 : tensor<2x2xf32>
    }
    {-#
      dialect_resources: { builtin: { w: "0x040000000000803F000000400000404000008040" } }
    #-}
    """
    import strata

    check(strata.compile(text)(), np.array([[2.0, 4.0], [6.0, 8.0]], np.float32))


def attention_ref(q, k, v, causal, scale):
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    if causal:
        offset = k.shape[2] - q.shape[2]
        i = np.arange(q.shape[2])[:, None]
        j = np.arange(k.shape[2])[None, :]
        s = np.where(j > i + offset, -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhij,bhje->bhie", p, v)


@pytest.mark.parametrize("causal", [False, True])
def test_attention(causal, rng):
    q, k, v = rand(rng, 2, 3, 5, 8), rand(rng, 2, 3, 7, 8), rand(rng, 2, 3, 7, 4)
    expected = attention_ref(q.astype(np.float64), k, v, causal, 1 / np.sqrt(8))
    actual = run_op(
        "attention", [q, k, v], tensor_type(expected.shape), f"causal = {str(causal).lower()}"
    )
    check(actual, expected, rtol=1e-5, atol=1e-6)
    scaled = run_op("attention", [q, k, v], tensor_type(expected.shape), "scale = 0.5 : f32")
    check(scaled, attention_ref(q.astype(np.float64), k, v, False, 0.5), rtol=1e-5, atol=1e-6)


def test_attention_in_half_precision_sums_in_f32(rng):
    """f16 attention over 1000 keys: scores, softmax and the weighted sum in f32, rounded
    once (summed in f16, the 1000 weights of ~1e-3 would lose about 3 bits)."""
    q = rand(rng, 1, 2, 16, 64, low=-1, high=1).astype(np.float16)
    k = rand(rng, 1, 2, 1000, 64, low=-1, high=1).astype(np.float16)
    v = rand(rng, 1, 2, 1000, 64, low=-1, high=1).astype(np.float16)
    expected = attention_ref(q.astype(np.float64), k, v, True, 1 / 8)
    actual = run_op("attention", [q, k, v], tensor_type(expected.shape, "f16"), "causal = true")
    assert actual.dtype == np.float16
    # Half an f16 ulp of the result, plus the inputs' own rounding carried through.
    check(actual.astype(np.float64), expected, rtol=1e-3, atol=1e-3 * np.abs(expected).max())


def test_round_halves_to_even():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49], np.float32)
    check(run_op("round", [x], tensor_type([7])), np.round(x))


COMPARE = {
    "equal": np.equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
}


@pytest.mark.parametrize("op", sorted(COMPARE))
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_comparisons(op, dtype, rng):
    a = rng.integers(-3, 3, (3, 4)).astype(dtype)
    b = rng.integers(-3, 3, (4,)).astype(dtype)
    check(run_op(op, [a, b], tensor_type([3, 4], "i1")), COMPARE[op](a, b))


@pytest.mark.parametrize(
    "op,fn",
    [
        ("logical_and", np.logical_and),
        ("logical_or", np.logical_or),
        ("logical_xor", np.logical_xor),
    ],
)
def test_logical(op, fn, rng):
    a, b = rng.random((2, 5)) > 0.5, rng.random((5,)) > 0.5
    check(run_op(op, [a, b], tensor_type([2, 5], "i1")), fn(a, b))


def test_logical_not(rng):
    a = rng.random((2, 5)) > 0.5
    check(run_op("logical_not", [a], tensor_type([2, 5], "i1")), ~a)


def test_where(rng):
    c = rng.random((3, 1)) > 0.5
    x, y = rand(rng, 3, 4), rand(rng, 4)
    check(run_op("where", [c, x, y], tensor_type([3, 4])), np.where(c, x, y))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad(mode, rng):
    x = rand(rng, 3, 4)
    expected = np.pad(
        x, [(1, 2), (0, 3)], mode=mode, **({"constant_values": 1.5} if mode == "constant" else {})
    )
    attrs = f'pads = array<i64: 1, 0, 2, 3>, value = 1.5 : f32, mode = "{mode}"'
    check(run_op("pad", [x], tensor_type(expected.shape), attrs), expected)


def lrn_reference(x, size, alpha, beta, bias):
    squares = np.zeros_like(x, dtype=np.float64)
    channels = x.shape[1]
    for c in range(channels):
        lo, hi = max(0, c - (size - 1) // 2), min(channels - 1, c + size // 2)
        squares[:, c] = (x[:, lo : hi + 1].astype(np.float64) ** 2).sum(axis=1)
    return x / (bias + alpha / size * squares) ** beta


@pytest.mark.parametrize("size", [3, 4])
def test_lrn(size, rng):
    x = rand(rng, 2, 7, 3, 3)
    attrs = f"size = {size} : i64, alpha = 0.02 : f32, beta = 0.75 : f32, bias = 2.0 : f32"
    check(
        run_op("lrn", [x], tensor_type([2, 7, 3, 3]), attrs),
        lrn_reference(x, size, 0.02, 0.75, 2.0),
        rtol=1e-5,
    )


def test_large_splat_constants_are_filled_at_run_time():
    t = "tensor<100x100xf32>"
    text = f"""
    func.func @main(%x: {t}) -> {t} {{
      %w = "graph.constant"() {{value = dense<0.5> : {t}}} : () -> {t}
      %0 = "graph.matmul"(%x, %w) : ({t}, {t}) -> {t}
      return %0 : {t}
    }}
    """
    x = np.ones((100, 100), np.float32)
    check(strata.compile(text)(x), np.full((100, 100), 50.0, np.float32))


def test_erf_is_accurate_everywhere():
    x = np.concatenate(
        [
            np.linspace(-6, 6, 4001, dtype=np.float32),
            np.array([np.inf, -np.inf, np.nan, 0.0, 1e-30, -0.49999, 0.5], np.float32),
        ]
    )
    actual = run_op("erf", [x], tensor_type([x.size]))
    finite = np.isfinite(x)
    np.testing.assert_allclose(actual[finite], erf(x[finite].astype(np.float64)), rtol=1e-6)
    np.testing.assert_array_equal(actual[~finite], [1.0, -1.0, np.nan])
