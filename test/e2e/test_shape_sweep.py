"""Every kernel class over awkward and standard sizes, compiled for 1 and 2 cores and checked
against numpy: linear layers (matmul + bias + activation), batched matmuls, convolutions and
row kernels. A configuration that cannot be realized must fall back, never fail a model."""

import dataclasses
import math

import numpy as np
import pytest
import strata
from strata.dialects import target
from strata.passes import tile_lower
from support import erf, tensor_type

SIZES = [1, 3, 7, 17, 64, 100, 127, 128, 129, 255, 256, 384, 768, 1000, 1024, 3072]
CORES = [1, 2]


def compile_for(text: str, cores: int):
    return strata.compile(text, target=dataclasses.replace(target.host_cpu(), cores=cores))


@pytest.fixture(autouse=True)
def fallbacks(monkeypatch):
    """The fallback remarks of tile-lower. A configuration that tile-configure chose must be
    realized as it is: the fallback guards against hand-written ones, it does not hide a
    configuration that cannot lower."""
    remarks = []
    monkeypatch.setattr(tile_lower, "remark", lambda location, message: remarks.append(message))
    yield remarks
    assert remarks == []


def check(actual, expected, rtol=1e-4):
    """Within `rtol` of the result's scale: sums of many products cancel, so elementwise
    relative error would demand more than f32 accumulation gives."""
    scale = max(float(np.abs(expected).max()), 1e-30)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * scale)


def function(args: list[tuple[str, list[int]]], body: list[str], result: list[int]) -> str:
    params = ", ".join(f"%{name}: {tensor_type(shape)}" for name, shape in args)
    lines = "\n".join(f"  {line}" for line in body)
    out = tensor_type(result)
    return f"func.func @main({params}) -> {out} {{\n{lines}\n  return %r : {out}\n}}\n"


ACTIVATIONS = {
    "relu": lambda x: np.maximum(x, 0),
    "gelu": lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))),
    "silu": lambda x: x / (1 + np.exp(-x)),
}


def linear_cases():
    """Each size as the sequence (M), the input width (K) and the output width (N)."""
    cases = [shape for s in SIZES for shape in ((s, 256, 768), (128, s, 256), (64, 768, s))]
    return [(*c, list(ACTIVATIONS)[i % 3]) for i, c in enumerate(cases)]


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("m,k,n,activation", linear_cases())
def test_linear_layer(m, k, n, activation, cores):
    rng = np.random.default_rng(m * 7 + k * 3 + n)
    x = rng.standard_normal((m, k), dtype=np.float32)
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    bias = rng.standard_normal(n, dtype=np.float32)
    mn = tensor_type([m, n])
    text = function(
        [("x", [m, k]), ("w", [k, n]), ("b", [n])],
        [
            f'%0 = "graph.matmul"(%x, %w) : ({tensor_type([m, k])}, {tensor_type([k, n])}) -> {mn}',
            f'%1 = "graph.add"(%0, %b) : ({mn}, {tensor_type([n])}) -> {mn}',
            f'%r = "graph.{activation}"(%1) : ({mn}) -> {mn}',
        ],
        [m, n],
    )
    expected = ACTIVATIONS[activation](x.astype(np.float64) @ w + bias)
    check(compile_for(text, cores)(x, w, bias), expected)


# The layers of GPT-2- and BERT-sized models (and awkward ones) that did not compile when M was
# short and the threads split N: matmul + bias + GELU over this grid.
LAYER_ROWS = [1, 7, 64, 100, 128, 129, 512]
LAYER_WIDTHS = [(256, 768), (768, 256), (256, 1024), (1024, 256), (512, 512), (384, 1000)]
LAYER_WIDTHS += [(768, 3072), (127, 65)]


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("k,n", LAYER_WIDTHS)
@pytest.mark.parametrize("m", LAYER_ROWS)
def test_transformer_linear_layer(m, k, n, cores):
    test_linear_layer(m, k, n, "gelu", cores)


BATCHED = [
    (12, 128, 64, 128),  # attention scores, 12 heads
    (12, 128, 128, 64),  # attention-weighted values
    (8, 512, 64, 512),
    (2, 7, 127, 65),
    (3, 1, 768, 17),
    (4, 100, 3, 129),
    (3, 127, 64, 129),  # partial micro-kernels in M and N
]


def check_product_into_a_used_buffer(x_shape, y_shape, cores):
    """x @ y written into an output buffer that holds NaN, then other numbers: products whose
    micro-kernels fill their own C tiles (K in one cache block) must write every element and
    must not add to what the buffer held."""
    rng = np.random.default_rng(sum(x_shape) + sum(y_shape))
    x = rng.standard_normal(x_shape, dtype=np.float32)
    y = rng.standard_normal(y_shape, dtype=np.float32)
    out_shape = [*x_shape[:-1], y_shape[-1]]
    lhs, rhs, out = tensor_type(x_shape), tensor_type(y_shape), tensor_type(out_shape)
    text = function(
        [("x", x_shape), ("y", y_shape)],
        [f'%r = "graph.matmul"(%x, %y) : ({lhs}, {rhs}) -> {out}'],
        out_shape,
    )
    fn = compile_for(text, cores)
    result = np.empty(out_shape, np.float32)
    for garbage in (np.nan, 3.0):
        result[...] = garbage
        fn(x, y, out=result)
        check(result, x.astype(np.float64) @ y)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("b,m,k,n", BATCHED)
def test_batched_matmul(b, m, k, n, cores):
    check_product_into_a_used_buffer([b, m, k], [b, k, n], cores)


# Unpacked products of one K block: each micro-kernel fills its own C tile (no fill of C).
ONE_BLOCK_DEPTHS = [(127, 64, 129), (7, 1, 1000), (1000, 33, 17), (768, 64, 768)]


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("m,k,n", ONE_BLOCK_DEPTHS)
def test_matmul_of_one_block_into_a_used_buffer(m, k, n, cores):
    check_product_into_a_used_buffer([m, k], [k, n], cores)


# B larger than L2 is packed in panels of 4 rows of K: depths that are not whole panels are
# padded with zeros as they are packed (the last panel's reads masked).
ODD_DEPTHS = [(8, 1, 262144), (16, 3, 65536), (24, 27, 8192), (6, 999, 2048)]


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("m,k,n", ODD_DEPTHS)
def test_packed_matmul_of_odd_depth(m, k, n, cores):
    rng = np.random.default_rng(m + k + n)
    x = rng.standard_normal((m, k), dtype=np.float32)
    # NaN rows right past B's last row: a pad read from memory instead of zeroed would show.
    y = np.full((k + 4, n), np.nan, dtype=np.float32)[:k]
    y[:] = rng.standard_normal((k, n), dtype=np.float32)
    lhs, rhs, out = tensor_type([m, k]), tensor_type([k, n]), tensor_type([m, n])
    text = function(
        [("x", [m, k]), ("y", [k, n])],
        [f'%r = "graph.matmul"(%x, %y) : ({lhs}, {rhs}) -> {out}'],
        [m, n],
    )
    check(compile_for(text, cores)(x, y), x.astype(np.float64) @ y)


# (batch, channels, height, width, out channels, kernel, stride, padding, groups)
CONVS = [
    (1, 64, 56, 56, 256, 1, 1, 0, 1),  # 1x1 expansion
    (1, 256, 14, 14, 64, 1, 1, 0, 1),  # 1x1 projection
    (1, 64, 56, 56, 64, 3, 1, 1, 1),  # ResNet 3x3
    (1, 64, 56, 56, 128, 3, 2, 1, 1),  # strided 3x3
    (1, 128, 28, 28, 128, 3, 1, 1, 1),  # direct: rows of 29, 832 columns
    (1, 128, 56, 56, 128, 3, 2, 1, 1),  # im2col's 784 columns (of stride 2): packed
    (1, 512, 28, 28, 256, 1, 1, 0, 1),  # the input itself packed in blocks of 112
    (1, 28, 28, 28, 28, 1, 1, 0, 1),  # a ShuffleNet group: 784 columns unpadded, unpacked
    (1, 16, 55, 55, 64, 3, 1, 1, 1),  # SqueezeNet's expand 3x3: direct, rows of 56
    (1, 64, 55, 55, 16, 1, 1, 0, 1),  # its squeeze: 3072 columns, split along N on 2 cores
    (1, 32, 27, 27, 128, 3, 1, 1, 1),  # direct, rows of 28
    (1, 32, 54, 54, 128, 3, 2, 1, 1),  # im2col's 729 columns: packed, padded to 768
    (1, 48, 28, 28, 48, 3, 1, 1, 1),  # direct, 48 channels: 3 micro-kernels a thread on 2
    (1, 48, 56, 56, 48, 3, 2, 1, 1),  # im2col's 784 columns padded to 832: 24 zeroed a thread
    (1, 512, 13, 13, 1000, 1, 1, 0, 1),  # SqueezeNet's classifier: 169 columns
    (1, 2048, 7, 7, 512, 1, 1, 0, 1),  # ResNet's last stage: 49 columns (padded on AVX2)
    (1, 512, 7, 7, 512, 3, 1, 1, 1),  # its 3x3 conv there
    (1, 256, 14, 14, 256, 3, 1, 1, 1),  # a 3x3 conv on 196 columns
    (1, 1024, 14, 14, 2048, 1, 2, 0, 1),  # its strided projection onto 7x7
    (1, 3, 224, 224, 64, 7, 2, 3, 1),  # a stem
    (1, 3, 224, 224, 64, 3, 2, 0, 1),  # SqueezeNet's: 111 rows, patches in 37 parts on 2 cores
    (1, 96, 28, 28, 96, 3, 1, 1, 96),  # depthwise
    (1, 144, 28, 28, 144, 3, 2, 1, 144),  # strided depthwise
    (1, 96, 112, 112, 96, 3, 2, 1, 96),  # MobileNetV2's first strided depthwise
    (1, 240, 28, 28, 240, 5, 2, 2, 240),  # EfficientNet's 5x5 of stride 2
    (1, 32, 57, 57, 64, 3, 2, 1, 32),  # strided, two outputs per channel, an odd width
    (2, 8, 15, 23, 8, 3, 3, 1, 8),  # stride 3 on two images
    (1, 96, 56, 56, 96, 7, 1, 3, 96),  # ConvNeXt's depthwise 7x7
    (2, 24, 14, 14, 24, 5, 1, 2, 24),  # depthwise on two images
    (1, 16, 20, 20, 32, 3, 1, 1, 16),  # depthwise, two outputs per channel
    (1, 8, 113, 113, 8, 3, 1, 1, 8),  # depthwise, rows of a prime width
    (1, 8, 30, 44, 16, 3, 1, 1, 1),  # direct (read in place): rows of 45, 1376 columns
    (1, 32, 40, 40, 24, 5, 1, 0, 1),  # direct 5x5, unpadded; 2 cores split its columns
    (1, 16, 33, 33, 8, 3, 1, 0, 1),  # direct, one micro-kernel of output channels
    (2, 17, 7, 7, 33, 3, 1, 1, 1),
    (1, 1, 127, 129, 7, 3, 1, 0, 1),
    (3, 100, 1, 1, 1000, 1, 1, 0, 1),  # a classifier as a 1x1 conv
    (1, 96, 27, 27, 256, 5, 1, 2, 2),  # AlexNet's grouped 5x5: a conv per group, joined
    (1, 240, 28, 28, 240, 1, 1, 0, 3),  # ShuffleNet's grouped 1x1
    (2, 12, 9, 11, 8, 3, 2, 1, 4),  # 4 groups of 3 channels, 2 outputs each, strided
]


def conv_reference(x, w, bias, stride, pad, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    per_group = o // groups
    for g in range(groups):
        xs = xp[:, g * cg : (g + 1) * cg]
        ws = w[g * per_group : (g + 1) * per_group].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                window = xs[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
                out[:, g * per_group : (g + 1) * per_group] += np.einsum(
                    "nchw,oc->nohw", window, ws[:, :, i, j]
                )
    return out + bias[None, :, None, None]


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("n,c,h,w,o,kernel,stride,pad,groups", CONVS)
def test_conv2d(n, c, h, w, o, kernel, stride, pad, groups, cores):
    rng = np.random.default_rng(c + h + o)
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    weight = rng.standard_normal((o, c // groups, kernel, kernel), dtype=np.float32)
    bias = rng.standard_normal(o, dtype=np.float32)
    expected = conv_reference(x, weight, bias, stride, pad, groups)
    attrs = (
        f"strides = array<i64: {stride}, {stride}>, "
        f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>, groups = {groups} : i64"
    )
    types = [tensor_type(a.shape) for a in (x, weight, bias)]
    text = function(
        [("x", list(x.shape)), ("w", list(weight.shape)), ("b", [o])],
        [
            f'%r = "graph.conv2d"(%x, %w, %b) {{{attrs}}} : ({", ".join(types)}) -> '
            f"{tensor_type(expected.shape)}"
        ],
        list(expected.shape),
    )
    check(compile_for(text, cores)(x, weight, bias), expected)


# A direct conv (stride 1, read in place) with padding on some sides only (ONNX's SAME_UPPER
# pads an even window more at the end), written into a buffer that held NaN: every output
# pixel is written, none of the computed-and-dropped columns of the padded rows.
@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("padding", [(0, 1, 1, 0), (1, 0, 2, 1), (2, 2, 0, 0)])
def test_direct_conv_with_uneven_padding(padding, cores):
    top, left, bottom, right = padding
    rng = np.random.default_rng(sum(padding))
    x = rng.standard_normal((1, 12, 29, 31), dtype=np.float32)
    weight = rng.standard_normal((16, 12, 4, 4), dtype=np.float32)
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    expected = conv_reference(padded, weight, np.zeros(16), 1, 0, 1)
    attrs = f"padding = array<i64: {top}, {left}, {bottom}, {right}>"
    types = [tensor_type(a.shape) for a in (x, weight)]
    text = function(
        [("x", list(x.shape)), ("w", list(weight.shape))],
        [
            f'%r = "graph.conv2d"(%x, %w) {{{attrs}}} : ({", ".join(types)}) -> '
            f"{tensor_type(expected.shape)}"
        ],
        list(expected.shape),
    )
    fn = compile_for(text, cores)
    out = np.full(expected.shape, np.nan, np.float32)
    check(fn(x, weight, out=out), expected)


def with_resources(text: str, blobs: dict[str, np.ndarray]) -> str:
    """`text` with each array of `blobs` as a dense_resource blob of that name (as frontends
    store weights)."""
    entries = ", ".join(f'{name}: "0x10000000{a.tobytes().hex()}"' for name, a in blobs.items())
    return f"{text}\n{{-#\n  dialect_resources: {{ builtin: {{ {entries} }} }}\n#-}}\n"


# Constant weights are laid out in micro-panels as the kernel compiles, not on every call: a
# conv's weights are the product's A (the stem's depth 3 * 7 * 7 = 147, padded to whole
# panels; SqueezeNet's classifier, 1000 filters, in blocks of 200 rows on 2 cores), a linear
# layer's are its B (a depth of 999 padded too; a decode step's one row walks each panel down
# all of K; a classifier's 1000 or 1001 columns leave B unpacked, read in whole rows).
CONSTANT_CONVS = [
    (3, 224, 64, 7, 2, 3, 1),
    (64, 56, 64, 3, 1, 1, 1),
    (512, 13, 1000, 1, 1, 0, 1),
    (256, 13, 384, 3, 1, 1, 2),  # AlexNet's grouped 3x3: each group's weights a constant
    (24, 30, 40, 3, 1, 1, 1),  # direct: weights in panels of 8 channels; 2 cores split N
]
CONSTANT_LINEARS = [(128, 768, 3072), (64, 999, 1024), (1, 1024, 2816), (1, 2816, 1024)]
CONSTANT_LINEARS += [(1, 2048, 1000), (1, 1280, 1001)]


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("c,size,o,kernel,stride,pad,groups", CONSTANT_CONVS)
def test_conv2d_of_constant_weights(c, size, o, kernel, stride, pad, groups, cores):
    rng = np.random.default_rng(c + o)
    x = rng.standard_normal((1, c, size, size), dtype=np.float32)
    weight = rng.standard_normal((o, c // groups, kernel, kernel), dtype=np.float32)
    expected = conv_reference(x, weight, np.zeros(o), stride, pad, groups)
    attrs = (
        f"strides = array<i64: {stride}, {stride}>, "
        f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>, groups = {groups} : i64"
    )
    w_type = tensor_type(weight.shape)
    body = [
        f'%w = "graph.constant"() {{value = dense_resource<conv_w> : {w_type}}} : () -> {w_type}',
        f'%r = "graph.conv2d"(%x, %w) {{{attrs}}} : ({tensor_type(x.shape)}, {w_type}) -> '
        f"{tensor_type(expected.shape)}",
    ]
    text = function([("x", list(x.shape))], body, list(expected.shape))
    check(compile_for(with_resources(text, {"conv_w": weight}), cores)(x), expected)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("m,k,n", CONSTANT_LINEARS)
def test_linear_of_constant_weights(m, k, n, cores):
    rng = np.random.default_rng(m + k + n)
    x = rng.standard_normal((m, k), dtype=np.float32)
    weight = rng.standard_normal((k, n), dtype=np.float32)
    w_type, out = tensor_type([k, n]), tensor_type([m, n])
    body = [
        f'%w = "graph.constant"() {{value = dense_resource<linear_w> : {w_type}}} : () -> {w_type}',
        f'%y = "graph.matmul"(%x, %w) : ({tensor_type([m, k])}, {w_type}) -> {out}',
        f'%r = "graph.relu"(%y) : ({out}) -> {out}',
    ]
    text = function([("x", [m, k])], body, [m, n])
    expected = np.maximum(x.astype(np.float64) @ weight, 0)
    check(compile_for(with_resources(text, {"linear_w": weight}), cores)(x), expected)


# (batch, channels, height, width, kind, kernel, stride, padding (top, left, bottom, right))
POOLS = [
    (1, 64, 112, 112, "max", 3, 2, (1, 1, 1, 1)),  # ResNet's stem pool
    (1, 96, 109, 109, "max", 3, 2, (0, 0, 0, 0)),  # SqueezeNet's: rows of 109 (a tail of 13)
    (1, 256, 27, 27, "max", 3, 2, (0, 0, 0, 0)),
    (1, 64, 56, 56, "max", 3, 1, (1, 1, 1, 1)),
    (1, 8, 20, 50, "max", 2, 2, (0, 0, 0, 0)),  # VGG's 2x2
    (2, 16, 31, 37, "avg", 3, 2, (1, 1, 1, 1)),  # two images, odd sizes, padded divisors
    (1, 4, 17, 29, "max", 5, 3, (2, 2, 1, 2)),  # stride 3, a left pad of 2 phases' worth
    (1, 12, 15, 16, "avg", 3, 3, (0, 1, 2, 1)),
    (1, 2048, 7, 7, "avg", 7, 1, (0, 0, 0, 0)),  # a global pool as a window
    (1, 3, 1, 1, "max", 1, 2, (0, 0, 0, 0)),
]


def pool_reference(x, kind, kernel, stride, padding):
    top, left, bottom, right = padding
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(
        x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill
    )
    windows = np.lib.stride_tricks.sliding_window_view(xp, (kernel, kernel), axis=(2, 3))
    windows = windows[:, :, ::stride, ::stride]
    if kind == "max":
        return windows.max(axis=(4, 5))
    ones = np.pad(np.ones(x.shape[2:]), ((top, bottom), (left, right)))
    counts = np.lib.stride_tricks.sliding_window_view(ones, (kernel, kernel))[::stride, ::stride]
    return windows.sum(axis=(4, 5)) / counts.sum(axis=(2, 3))


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("n,c,h,w,kind,kernel,stride,padding", POOLS)
def test_pool(n, c, h, w, kind, kernel, stride, padding, cores):
    """Pools are window ops vectorized along output rows: max pools, and pools of a
    horizontal stride over no padding, take their taps by shuffles of runs of the input
    (tails of rows, windows reaching into the padding); the others read the input padded,
    split into phases where strided (left pads that are not whole phases)."""
    rng = np.random.default_rng(c + h + w)
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    expected = pool_reference(x, kind, kernel, stride, padding)
    text = pool_function(x.shape, expected.shape, kind, kernel, stride, padding)
    check(compile_for(text, cores)(x), expected, rtol=1e-6)


def pool_function(in_shape, out_shape, kind, kernel, stride, padding) -> str:
    attrs = (
        f"kernel = array<i64: {kernel}, {kernel}>, strides = array<i64: {stride}, {stride}>, "
        f"padding = array<i64: {', '.join(map(str, padding))}>"
    )
    t_in, t_out = tensor_type(in_shape), tensor_type(out_shape)
    return function(
        [("x", list(in_shape))],
        [f'%r = "graph.{kind}_pool2d"(%x) {{{attrs}}} : ({t_in}) -> {t_out}'],
        list(out_shape),
    )


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize(
    "c,h,kernel,stride,padding",
    [(64, 112, 3, 2, (1, 1, 1, 1)), (16, 29, 3, 1, (1, 1, 1, 1)), (4, 17, 5, 3, (2, 2, 1, 2))],
)
def test_max_pool_keeps_nans_and_infinities(c, h, kernel, stride, padding, cores):
    """A NaN in a window is its max, infinities win or lose as values do, and a window row
    or column in the padding never wins (pools read the padding as the nearest input)."""
    rng = np.random.default_rng(c + h)
    x = rng.standard_normal((1, c, h, h), dtype=np.float32)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, size=3 * 24, replace=False).reshape(3, 24)
    flat[picks[0]], flat[picks[1]], flat[picks[2]] = np.nan, np.inf, -np.inf
    expected = pool_reference(x, "max", kernel, stride, padding).astype(np.float32)
    text = pool_function(x.shape, expected.shape, "max", kernel, stride, padding)
    np.testing.assert_array_equal(compile_for(text, cores)(x), expected)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("element", ["f16", "bf16"])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_of_narrow_floats(kind, element, cores):
    """f16 and bf16 pools combine their taps in f32 (bf16 vector shuffles stopped LLVM's
    instruction selection): a max is exact, an average rounds once."""
    dtype = narrow_dtype(element)
    x = np.random.default_rng(7).standard_normal((1, 24, 29, 29)).astype(dtype)
    padding = (1, 1, 1, 1)
    expected = pool_reference(x.astype(np.float32), kind, 3, 2, padding)
    text = pool_function(x.shape, expected.shape, kind, 3, 2, padding)
    text = text.replace("xf32>", f"x{element}>")
    actual = compile_for(text, cores)(x)
    assert actual.dtype == dtype
    if kind == "max":
        np.testing.assert_array_equal(actual, expected.astype(dtype))
    else:
        np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=2**-7, atol=2**-9)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_of_f64(kind, cores):
    """f64 pools combine their taps in f64 (taken to f32 like the narrow floats, they did not
    compile)."""
    x = np.random.default_rng(8).standard_normal((1, 24, 29, 29))
    padding = (1, 1, 1, 1)
    expected = pool_reference(x, kind, 3, 2, padding)
    text = pool_function(x.shape, expected.shape, kind, 3, 2, padding).replace("xf32>", "xf64>")
    actual = compile_for(text, cores)(x)
    assert actual.dtype == np.float64
    np.testing.assert_allclose(actual, expected, rtol=1e-15 if kind == "avg" else 0)


def narrow_dtype(element: str):
    import ml_dtypes

    return {"f16": np.float16, "bf16": ml_dtypes.bfloat16}[element]


def narrow_ulp(values, element: str):
    """The spacing of f16 (10 mantissa bits) or bf16 (7) numbers at `values` (normal ones)."""
    bits = {"f16": 10, "bf16": 7}[element]
    return np.spacing(np.abs(values).astype(np.float32)) * 2.0 ** (23 - bits)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# The float64 references of the ops that f16/bf16 compute in f32 and round once.
NARROW_UNARY = {
    "exp": np.exp,
    "log": np.log,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "tanh": np.tanh,
    "sigmoid": sigmoid,
    "silu": lambda x: x * sigmoid(x),
    "erf": erf,
    "gelu": lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))),
    "sin": np.sin,
    "cos": np.cos,
}


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("element", ["f16", "bf16"])
@pytest.mark.parametrize("op", sorted(NARROW_UNARY))
def test_unary_of_narrow_floats(op, element, cores):
    """f16 and bf16 transcendental and composite ops are computed in f32 and rounded once:
    within one ulp of the exact result (GELU's argument rounded in f16 had moved its result
    by 9 ulps)."""
    dtype = narrow_dtype(element)
    low = 0.1 if op in ("log", "rsqrt") else -4.0
    x = np.random.default_rng(3).uniform(low, 4.0, 4103).astype(dtype)
    t = f"tensor<4103x{element}>"
    text = (
        f"func.func @main(%x: {t}) -> {t} {{\n"
        f'  %0 = "graph.{op}"(%x) : ({t}) -> {t}\n  return %0 : {t}\n}}'
    )
    actual = compile_for(text, cores)(x)
    assert actual.dtype == dtype
    expected = NARROW_UNARY[op](x.astype(np.float64))
    error = np.abs(actual.astype(np.float64) - expected)
    assert np.all(error <= narrow_ulp(expected, element))


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("element", ["f16", "bf16"])
@pytest.mark.parametrize("op", ["reduce_sum", "reduce_mean"])
def test_reduction_of_narrow_floats(op, element, cores):
    """Sums of f16 and bf16 rows accumulate in f32 and round once (summed in f16, a row of
    1000 was 280 ulps of its result off)."""
    dtype = narrow_dtype(element)
    x = np.random.default_rng(4).standard_normal((64, 1000)).astype(dtype)
    t, r = f"tensor<64x1000x{element}>", f"tensor<64x{element}>"
    text = (
        f"func.func @main(%x: {t}) -> {r} {{\n"
        f'  %0 = "graph.{op}"(%x) {{axes = array<i64: 1>}} : ({t}) -> {r}\n  return %0 : {r}\n}}'
    )
    actual = compile_for(text, cores)(x).astype(np.float64)
    wide = x.astype(np.float64)
    expected = wide.sum(axis=1) if op == "reduce_sum" else wide.mean(axis=1)
    scale = np.abs(wide).sum(axis=1) / (1 if op == "reduce_sum" else 1000)
    assert np.all(np.abs(actual - expected) <= narrow_ulp(expected, element) + 2**-20 * scale)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("element", ["f16", "bf16"])
@pytest.mark.parametrize("weights", ["argument", "constant"])
def test_matmul_of_narrow_floats(weights, element, cores):
    """f16 and bf16 matmuls accumulate in f32 on the CPU (a depth of 1000 in f16 was off by
    three times the f32 sum's one rounding), as f32 matmuls: constant weights are widened
    once, when the kernel compiles."""
    dtype = narrow_dtype(element)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 1000)).astype(dtype)
    b = (rng.standard_normal((1000, 96)) * 0.05).astype(dtype)
    ta, tb, tr = (f"tensor<{s}x{element}>" for s in ("64x1000", "1000x96", "64x96"))
    if weights == "argument":
        params, body, args = f"%a: {ta}, %b: {tb}", "", (a, b)
    else:
        params, args = f"%a: {ta}", (a,)
        body = f'  %b = "graph.constant"() {{value = dense_resource<b> : {tb}}} : () -> {tb}\n'
    text = (
        f"func.func @main({params}) -> {tr} {{\n{body}"
        f'  %0 = "graph.matmul"(%a, %b) : ({ta}, {tb}) -> {tr}\n  return %0 : {tr}\n}}'
    )
    if weights == "constant":
        text = with_resources(text, {"b": b})
    actual = compile_for(text, cores)(*args).astype(np.float64)
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    expected = wide_a @ wide_b
    scale = np.abs(wide_a) @ np.abs(wide_b)
    assert np.all(np.abs(actual - expected) <= narrow_ulp(expected, element) + 2**-20 * scale)


PAIR_PRODUCTS = target.host_cpu().bf16_dot_products


# bf16 linear layers packed for the CPU's pair products (AVX-512 BF16): a prefill's layer
# (B packed in the kernel), a decode step's (constant weights packed as it compiles, one row
# of A), an odd depth (the last pair padded with zero), rows of a 3-D input with a bias and
# GELU after the product, and the 256-bit form of the instruction.
PAIR_CASES = [
    ("128x768x3072", "argument", 512),
    ("1x768x3072", "constant", 512),
    ("64x999x1024", "constant", 512),
    ("2x96x768x1024", "argument", 512),
    ("96x768x1024", "argument", 256),
]


@pytest.mark.skipif(not PAIR_PRODUCTS, reason="the host has no bf16 pair products")
@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("shape,weights,bits", PAIR_CASES)
def test_bf16_products_in_pairs(shape, weights, bits, cores):
    """bf16 products run as pair products (vdpbf16ps), summed in f32 as f32 FMAs would: within
    an ulp of the bf16 result and the f32 sum's rounding of the float64 product."""
    import ml_dtypes
    from strata import compiler

    *rows, k, n = (int(v) for v in shape.split("x"))
    rng = np.random.default_rng(k + n)
    x = rng.standard_normal((*rows, k)).astype(ml_dtypes.bfloat16)
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(ml_dtypes.bfloat16)
    bias = rng.standard_normal(n).astype(ml_dtypes.bfloat16)
    tx, tw, tb = (tensor_type(list(a.shape), "bf16") for a in (x, w, bias))
    tr = tensor_type([*rows, n], "bf16")
    epilogue = len(rows) > 1
    if weights == "argument":
        params, body, args = f"%x: {tx}, %w: {tw}", "", [x, w]
    else:
        params, args = f"%x: {tx}", [x]
        body = f'  %w = "graph.constant"() {{value = dense_resource<w> : {tw}}} : () -> {tw}\n'
    if epilogue:
        params, args = f"{params}, %b: {tb}", [*args, bias]
        body += (
            f'  %p = "graph.matmul"(%x, %w) : ({tx}, {tw}) -> {tr}\n'
            f'  %q = "graph.add"(%p, %b) : ({tr}, {tb}) -> {tr}\n'
            f'  %r = "graph.gelu"(%q) : ({tr}) -> {tr}\n'
        )
    else:
        body += f'  %r = "graph.matmul"(%x, %w) : ({tx}, {tw}) -> {tr}\n'
    text = f"func.func @main({params}) -> {tr} {{\n{body}  return %r : {tr}\n}}"
    if weights == "constant":
        text = with_resources(text, {"w": w})
    desc = dataclasses.replace(target.host_cpu(), cores=cores, vector_bits=bits)
    assembly = compiler.emit(compiler.load(text), "asm", target=desc).decode()
    assert "vdpbf16ps" in assembly
    actual = strata.compile(text, target=desc)(*args).astype(np.float64)
    wide_x, wide_w = x.astype(np.float64), w.astype(np.float64)
    product, scale = wide_x @ wide_w, np.abs(wide_x) @ np.abs(wide_w)
    expected = product
    if epilogue:
        # The product and the sum with the bias each round to bf16 (an ulp either way where
        # the f32 sum lands across a rounding boundary), then GELU's own ulp; |GELU'| < 1.2.
        rounded = product.astype(ml_dtypes.bfloat16).astype(np.float64)
        biased = rounded + bias.astype(np.float64)
        expected = ACTIVATIONS["gelu"](biased)
        inputs_error = narrow_ulp(product, "bf16") + narrow_ulp(biased, "bf16") + 2**-20 * scale
        tolerance = narrow_ulp(expected, "bf16") + 1.2 * inputs_error
    else:
        tolerance = narrow_ulp(expected, "bf16") + 2**-20 * scale
    assert np.all(np.abs(actual - expected) <= tolerance)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("element", ["f16", "bf16"])
@pytest.mark.parametrize("groups", [1, 48])
def test_conv2d_of_narrow_floats(groups, element, cores):
    """f16 and bf16 convs (and depthwise ones) are f32 convs between conversions: products
    accumulate in f32 (a 3x3 conv of 64 channels in f16 was off by 1.2% of its largest
    output)."""
    dtype = narrow_dtype(element)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 48, 28, 28)).astype(dtype)
    w = (rng.standard_normal((48, 48 // groups, 3, 3)) * 0.1).astype(dtype)
    b = rng.standard_normal(48).astype(dtype)
    tx, tw, tb = (f"tensor<{s}x{element}>" for s in ("1x48x28x28", f"48x{48 // groups}x3x3", "48"))
    attrs = (
        "strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, "
        f"dilations = array<i64: 1, 1>, groups = {groups} : i64"
    )
    text = (
        f"func.func @main(%x: {tx}, %w: {tw}, %b: {tb}) -> {tx} {{\n"
        f'  %0 = "graph.conv2d"(%x, %w, %b) {{{attrs}}} : ({tx}, {tw}, {tb}) -> {tx}\n'
        f"  return %0 : {tx}\n}}"
    )
    actual = compile_for(text, cores)(x, w, b)
    assert actual.dtype == dtype
    wide = [v.astype(np.float64) for v in (x, w, b)]
    expected = conv_reference(*wide, 1, 1, groups)
    scale = conv_reference(np.abs(wide[0]), np.abs(wide[1]), np.abs(wide[2]), 1, 1, groups)
    error = np.abs(actual.astype(np.float64) - expected)
    assert np.all(error <= narrow_ulp(expected, element) + 2**-20 * scale)


# bf16 convs packed for pair products: a ResNet 3x3 on 56x56 (whole patch rows), a 1x1 (the
# input is the matrix), a strided 3x3 of argument weights (packed in the kernel; 196 patches
# padded to 224) and a stem (depth 147: the last pair padded).
PAIR_CONVS = [
    (64, 64, 56, 3, 1, "constant"),
    (256, 64, 56, 1, 1, "constant"),
    (64, 128, 28, 3, 2, "argument"),
    (3, 64, 112, 7, 2, "constant"),
]


@pytest.mark.skipif(not PAIR_PRODUCTS, reason="the host has no bf16 pair products")
@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("c,o,size,k,stride,weights", PAIR_CONVS)
def test_bf16_convs_in_pairs(c, o, size, k, stride, weights, cores):
    """bf16 convs (groups 1) run as pair products on their bf16 patches, summed in f32: within
    an ulp of the bf16 result and the f32 sum's rounding of the float64 conv."""
    from strata import compiler

    dtype = narrow_dtype("bf16")
    rng = np.random.default_rng(c + o + k)
    x = rng.standard_normal((1, c, size, size)).astype(dtype)
    w = (rng.standard_normal((o, c, k, k)) / np.sqrt(c * k * k)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    out = (size + 2 * (k // 2) - k) // stride + 1
    tx, tw, tb, tr = (
        tensor_type(shape, "bf16")
        for shape in ([1, c, size, size], [o, c, k, k], [o], [1, o, out, out])
    )
    pad = k // 2
    attrs = (
        f"strides = array<i64: {stride}, {stride}>, "
        f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>"
    )
    if weights == "argument":
        params, body, args = f"%x: {tx}, %w: {tw}, %b: {tb}", "", (x, w, b)
    else:
        params, args = f"%x: {tx}, %b: {tb}", (x, b)
        body = f'  %w = "graph.constant"() {{value = dense_resource<w> : {tw}}} : () -> {tw}\n'
    text = (
        f"func.func @main({params}) -> {tr} {{\n{body}"
        f'  %0 = "graph.conv2d"(%x, %w, %b) {{{attrs}}} : ({tx}, {tw}, {tb}) -> {tr}\n'
        f"  return %0 : {tr}\n}}"
    )
    if weights == "constant":
        text = with_resources(text, {"w": w})
    desc = dataclasses.replace(target.host_cpu(), cores=cores)
    assembly = compiler.emit(compiler.load(text), "asm", target=desc).decode()
    assert "vdpbf16ps" in assembly
    actual = strata.compile(text, target=desc)(*args).astype(np.float64)
    wide = [v.astype(np.float64) for v in (x, w, b)]
    expected = conv_reference(*wide, stride, pad, 1)
    scale = conv_reference(np.abs(wide[0]), np.abs(wide[1]), np.abs(wide[2]), stride, pad, 1)
    assert np.all(np.abs(actual - expected) <= narrow_ulp(expected, "bf16") + 2**-20 * scale)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta


def rms_norm(x, gamma):
    return x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + 1e-6) * gamma


def row_cases():
    """Each size as the row width (128 rows) for every row op, and as the row count of
    768-wide softmax rows."""
    ops = ["softmax", "layer_norm", "rms_norm"]
    return [(op, 128, s) for s in SIZES for op in ops] + [("softmax", s, 768) for s in SIZES]


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("op,rows,width", row_cases())
def test_rows(op, rows, width, cores):
    rng = np.random.default_rng(rows + width)
    x = rng.standard_normal((rows, width), dtype=np.float32) * 3
    gamma = rng.standard_normal(width, dtype=np.float32)
    beta = rng.standard_normal(width, dtype=np.float32)
    t, v = tensor_type([rows, width]), tensor_type([width])
    x64 = x.astype(np.float64)
    if op == "softmax":
        args, operands, expected = [x], "%x", softmax(x64)
        types = t
    elif op == "layer_norm":
        args, operands, expected = [x, gamma, beta], "%x, %g, %b", layer_norm(x64, gamma, beta)
        types = f"{t}, {v}, {v}"
    else:
        args, operands, expected = [x, gamma], "%x, %g", rms_norm(x64, gamma)
        types = f"{t}, {v}"
    names = [("x", [rows, width]), ("g", [width]), ("b", [width])][: len(args)]
    text = function(names, [f'%r = "graph.{op}"({operands}) : ({types}) -> {t}'], [rows, width])
    actual = compile_for(text, cores)(*args)
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("element", ["f16", "bf16"])
@pytest.mark.parametrize("rows,width", [(128, 768), (7, 1000), (64, 4096)])
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
def test_rows_of_narrow_floats(op, rows, width, element, cores):
    """f16 and bf16 row ops run as row kernels that compute in f32 and round once: within an
    ulp of the exact result (as plain loops, a bf16 layer_norm of 128x768 took 8x its row
    kernel's time)."""
    dtype = narrow_dtype(element)
    rng = np.random.default_rng(rows + width)
    x = (rng.standard_normal((rows, width)) * 3).astype(dtype)
    gamma, beta = (rng.standard_normal(width).astype(dtype) for _ in range(2))
    wide = [v.astype(np.float64) for v in (x, gamma, beta)]
    args = {"softmax": [x], "layer_norm": [x, gamma, beta], "rms_norm": [x, gamma]}[op]
    t, v = f"tensor<{rows}x{width}x{element}>", f"tensor<{width}x{element}>"
    params = ", ".join(f"%a{i}: {t if i == 0 else v}" for i in range(len(args)))
    operands = ", ".join(f"%a{i}" for i in range(len(args)))
    types = ", ".join([t] + [v] * (len(args) - 1))
    text = (
        f"func.func @main({params}) -> {t} {{\n"
        f'  %0 = "graph.{op}"({operands}) : ({types}) -> {t}\n  return %0 : {t}\n}}'
    )
    actual = compile_for(text, cores)(*args)
    assert actual.dtype == dtype
    if op == "softmax":
        expected, scale = softmax(wide[0]), 0
    elif op == "layer_norm":
        expected = layer_norm(*wide)
        scale = np.abs(expected - wide[2]) + np.abs(wide[2])  # beta's sum may cancel
    else:
        expected, scale = rms_norm(*wide[:2]), 0
    # f16 results below 2^-14 are subnormals, spaced 2^-24 apart.
    spacing = narrow_ulp(expected, element) + (2**-24 if element == "f16" else 0)
    error = np.abs(actual.astype(np.float64) - expected)
    assert np.all(error <= spacing + 2**-20 * scale)


@pytest.mark.parametrize("cores", CORES)
def test_bf16_conversions_written_as_integer_ops(cores, monkeypatch):
    """On x86 CPUs without AVX-512 BF16, f32 <-> bf16 conversions are integer arithmetic (LLVM
    would call compiler-rt's __truncsfbf2): forced here on this host, they round as ml_dtypes
    does (to nearest even; ties, the largest finite values, subnormals, infinities), keep NaN
    a NaN, and a bf16 GELU through them stays within an ulp."""
    from strata.passes import bf16_truncation

    monkeypatch.setattr(bf16_truncation, "needs_expansion", lambda desc: True)
    dtype = narrow_dtype("bf16")
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 1.00390625, 1.01171875, -1.00390625]
    special += [3.3895e38, 3.3961e38, -3.4e38, 1e-40, -1e-45, 2.0**-126, 9.2e-41, 65504.0]
    x = np.concatenate([special, np.random.default_rng(10).standard_normal(4093) * 100])
    x = x.astype(np.float32)
    nan_payloads = np.array([0x7F800001, 0xFFC00001, 0x7FFFFFFF], np.uint32).view(np.float32)
    x = np.concatenate([x, nan_payloads])
    t, r = tensor_type([x.size]), f"tensor<{x.size}xbf16>"
    text = (
        f"func.func @main(%x: {t}) -> {r} {{\n"
        f'  %0 = "graph.cast"(%x) : ({t}) -> {r}\n  return %0 : {r}\n}}'
    )
    actual = compile_for(text, cores)(x)
    expected = x.astype(dtype)
    nan = np.isnan(expected.astype(np.float32))
    assert np.isnan(actual[nan].astype(np.float32)).all()
    np.testing.assert_array_equal(actual[~nan].view(np.uint16), expected[~nan].view(np.uint16))
    h = np.random.default_rng(11).uniform(-4, 4, 4103).astype(dtype)
    b = "tensor<4103xbf16>"
    gelu = (
        f"func.func @main(%x: {b}) -> {b} {{\n"
        f'  %0 = "graph.gelu"(%x) : ({b}) -> {b}\n  return %0 : {b}\n}}'
    )
    exact = NARROW_UNARY["gelu"](h.astype(np.float64))
    error = np.abs(compile_for(gelu, cores)(h).astype(np.float64) - exact)
    assert np.all(error <= narrow_ulp(exact, "bf16"))


def test_bf16_kernels_for_avx2_call_no_conversion_routine():
    """A bf16 model compiled for an AVX2 CPU (no bf16 conversion instruction) needs nothing
    beyond libc: an older libgcc (Debian 12's) has no __truncsfbf2."""
    from strata import compiler

    b, g = "tensor<64x1000xbf16>", "tensor<1000xbf16>"
    text = (
        f"func.func @main(%x: {b}, %g: {g}) -> {b} {{\n"
        f'  %0 = "graph.gelu"(%x) : ({b}) -> {b}\n'
        f'  %1 = "graph.rms_norm"(%0, %g) : ({b}, {g}) -> {b}\n'
        f'  %2 = "graph.softmax"(%1) {{axis = -1 : i64}} : ({b}) -> {b}\n'
        f'  %3 = "graph.pow"(%2, %0) : ({b}, {b}) -> {b}\n'
        f"  return %3 : {b}\n}}"
    )
    assembly = compiler.emit(compiler.load(text), "asm", target="cpu:x86-64-v3").decode()
    assert "bf2" not in assembly  # __truncsfbf2, __extendbfsf2


NARROW_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "maximum": np.maximum,
    "pow": np.power,
}


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("element", ["f16", "bf16"])
@pytest.mark.parametrize("op", sorted(NARROW_BINARY))
def test_binary_of_narrow_floats(op, element, cores):
    """f16 and bf16 binary ops vectorize as the f32 ones do (16 lanes of AVX-512 read as many
    half floats): each result within an ulp of the exact one."""
    dtype = narrow_dtype(element)
    rng = np.random.default_rng(9)
    a, b = (rng.uniform(0.5, 2.5, (3, 4103)).astype(dtype) for _ in range(2))
    t = f"tensor<3x4103x{element}>"
    text = (
        f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
        f'  %0 = "graph.{op}"(%a, %b) : ({t}, {t}) -> {t}\n  return %0 : {t}\n}}'
    )
    actual = compile_for(text, cores)(a, b)
    assert actual.dtype == dtype
    expected = NARROW_BINARY[op](a.astype(np.float64), b.astype(np.float64))
    error = np.abs(actual.astype(np.float64) - expected)
    assert np.all(error <= narrow_ulp(expected, element))


REDUCTIONS = {
    "reduce_sum": np.sum,
    "reduce_mean": np.mean,
    "reduce_max": np.max,
    "reduce_min": np.min,
    "reduce_prod": np.prod,
}


def reduction_cases():
    """Each size as the reduced width of 64 rows (by each op in turn), and as the row count
    of 768-wide sums; 1-D sums of each size; a sum over the leading dim; reductions over
    several trailing dims (a CNN's global pooling of 56x56 and 7x7 images, a sequence's
    tokens and features, every dim)."""
    ops = list(REDUCTIONS)
    cases = [(ops[i % len(ops)], [64, s], -1) for i, s in enumerate(SIZES)]
    cases += [("reduce_sum", [s, 768], 1) for s in SIZES if s != 768]
    cases += [("reduce_mean", [s], 0) for s in (7, 1000, 4096, 1 << 20)]
    cases += [("reduce_sum", [8, 128, 768], 2), ("reduce_max", [1000, 127], 0)]
    return cases + [
        ("reduce_mean", [1, 256, 56, 56], (2, 3)),
        ("reduce_sum", [2, 64, 7, 7], (-2, -1)),
        ("reduce_max", [4, 128, 768], (1, 2)),
        ("reduce_min", [3, 5, 127, 33], (1, 2, 3)),
        ("reduce_sum", [1000, 127], (0, 1)),
        ("reduce_prod", [7, 1, 1000], (0, 1, 2)),
    ]


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("op,shape,axis", reduction_cases())
def test_reductions(op, shape, axis, keepdims, cores):
    """A sum of squares (the reduction with an elementwise prologue, as a norm's mean square
    is exported). Products get values near 1, so that they stay finite."""
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape, dtype=np.float32)
    if op == "reduce_prod":
        x = np.float32(1) + x / np.float32(50)
    x64 = x.astype(np.float64)
    expected = REDUCTIONS[op](x64 * x64, axis=axis, keepdims=keepdims)
    t = tensor_type(shape)
    flag = str(keepdims).lower()
    axes = ", ".join(map(str, np.atleast_1d(axis)))
    body = [
        f'%s = "graph.mul"(%x, %x) : ({t}, {t}) -> {t}',
        f'%r = "graph.{op}"(%s) {{axes = array<i64: {axes}>, keepdims = {flag}}} '
        f": ({t}) -> {tensor_type(expected.shape)}",
    ]
    actual = compile_for(function([("x", shape)], body, list(expected.shape)), cores)(x)
    np.testing.assert_allclose(actual, expected, rtol=2e-5 * math.log2(max(shape)))


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize(
    "operand",
    [[256, 1, 1], [56], [1, 1, 56, 56]],
    ids=["per-channel", "per-column", "per-pixel"],
)
def test_reductions_over_images_with_broadcast_operands(operand, cores):
    """A global mean pool of x * s: a per-channel or per-pixel s spans the reduced dims or
    broadcasts along all of them (the image is reduced as one flat run); a per-column s spans
    only the last (the reduction walks the image's rows)."""
    rng = np.random.default_rng(len(operand))
    shape = [1, 256, 56, 56]
    x = rng.standard_normal(shape, dtype=np.float32)
    s = rng.standard_normal(operand, dtype=np.float32)
    expected = (x.astype(np.float64) * s).mean(axis=(2, 3))
    t, st, rt = tensor_type(shape), tensor_type(operand), tensor_type(expected.shape)
    body = [
        f'%p = "graph.mul"(%x, %s) : ({t}, {st}) -> {t}',
        f'%r = "graph.reduce_mean"(%p) {{axes = array<i64: 2, 3>}} : ({t}) -> {rt}',
    ]
    text = function([("x", shape), ("s", operand)], body, list(expected.shape))
    actual = compile_for(text, cores)(x, s)
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("shape", [[2, 64, 14, 14], [1, 1024, 7, 7]], ids=["14x14", "7x7"])
def test_global_pool_after_batch_norm(shape, cores):
    """DenseNet's head: batch norm, relu, then the mean over H and W, one kernel whose rows
    take their channel's scale, bias, mean and variance."""
    rng = np.random.default_rng(shape[1])
    x = rng.standard_normal(shape, dtype=np.float32)
    c = shape[1]
    scale, bias, mean = (rng.standard_normal(c, dtype=np.float32) for _ in range(3))
    var = rng.random(c, dtype=np.float32) + np.float32(0.5)
    per_channel = (slice(None), None, None)
    normed = (x - mean[per_channel]) / np.sqrt(var[per_channel] + 1e-5)
    expected = np.maximum(normed * scale[per_channel] + bias[per_channel], 0).mean(axis=(2, 3))
    t, ct, rt = tensor_type(shape), tensor_type([c]), tensor_type(expected.shape)
    body = [
        f'%n = "graph.batch_norm"(%x, %s, %b, %m, %v) : ({t}, {ct}, {ct}, {ct}, {ct}) -> {t}',
        f'%a = "graph.relu"(%n) : ({t}) -> {t}',
        f'%r = "graph.reduce_mean"(%a) {{axes = array<i64: 2, 3>}} : ({t}) -> {rt}',
    ]
    args = [("x", shape), ("s", [c]), ("b", [c]), ("m", [c]), ("v", [c])]
    text = function(args, body, list(expected.shape))
    actual = compile_for(text, cores)(x, scale, bias, mean, var)
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize(
    "shape,perm",
    [([768, 3072], (1, 0)), ([1, 12, 64, 512], (0, 1, 3, 2)), ([1, 1000, 1027], (0, 2, 1))],
    ids=["weights", "keys", "odd"],
)
def test_transposes_that_move_the_innermost_dim(shape, perm, cores):
    """A weight matrix, attention's keys turned to [head, dim, seq], an odd one (whose blocks
    leave ends along both dims): on 2 cores each thread transposes part of the columns."""
    x = np.random.default_rng(len(shape)).standard_normal(shape, dtype=np.float32)
    expected = x.transpose(perm)
    order = ", ".join(map(str, perm))
    body = [
        f'%r = "graph.transpose"(%x) {{perm = array<i64: {order}>}} : ({tensor_type(shape)})'
        f" -> {tensor_type(expected.shape)}"
    ]
    text = function([("x", shape)], body, list(expected.shape))
    np.testing.assert_array_equal(compile_for(text, cores)(x), expected)


UNREALIZABLE = """
func.func @main(%x: tensor<4x96xf32>) -> tensor<4x96xf32> {
  %r = func.call @chain(%x) : (tensor<4x96xf32>) -> tensor<4x96xf32>
  return %r : tensor<4x96xf32>
}
func.func private @chain(%x: tensor<4x96xf32>) -> tensor<4x96xf32> attributes {
    tile.kernel = "elementwise",
    tile.config = {strategy = "elementwise", tile_sizes = array<i64: 1, 48>, vector_size = 8 : i64,
                   threads = 5 : i64, thread_dim = 1 : i64, chunks = 5 : i64}} {
  %r = "graph.exp"(%x) : (tensor<4x96xf32>) -> tensor<4x96xf32>
  return %r : tensor<4x96xf32>
}
"""


def test_an_unrealizable_config_falls_back_and_computes(rng, fallbacks):
    """Five threads over 96 columns cut uneven pieces that do not vectorize: the kernel is
    compiled without threads instead of failing, and computes the same."""
    x = rng.standard_normal((4, 96), dtype=np.float32)
    check(compile_for(UNREALIZABLE, 2)(x), np.exp(x.astype(np.float64)), rtol=1e-6)
    assert len(fallbacks) == 1 and "kernel @chain" in fallbacks[0]
    fallbacks.clear()


@pytest.mark.parametrize("cores", CORES)
def test_causal_softmax_is_exactly_zero_where_masked(cores, rng):
    """Masked scores (-inf) give probabilities of exactly 0, as PyTorch's do, not subnormals:
    every product of a subnormal in the attention's weighted sum after the softmax takes a
    microcode assist, and half of a causal mask's entries are masked."""
    heads, seq = 12, 128
    x = rng.standard_normal((heads, seq, seq), dtype=np.float32) * 30
    above = np.triu_indices(seq, 1)
    x[:, above[0], above[1]] = -np.inf
    t = tensor_type([heads, seq, seq])
    text = function(
        [("x", [heads, seq, seq])],
        [f'%r = "graph.softmax"(%x) {{axis = 2 : i64}} : ({t}) -> {t}'],
        [heads, seq, seq],
    )
    actual = compile_for(text, cores)(x)
    np.testing.assert_allclose(actual, softmax(x.astype(np.float64)), rtol=1e-4, atol=1e-6)
    assert not np.any(actual[:, above[0], above[1]])
