"""`--graph-to-linalg`: lowers every graph op to linalg/tensor/arith/math on tensors.

One rewrite pattern per op, applied by the greedy driver. Elementwise ops become one
`linalg.generic` each (broadcasting through indexing maps); matmul and convolution become
named linalg ops where one fits, so later tiling can match them; reductions, softmax and the
norms are written in their numerically stable forms.
"""

import math

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor, vector
from mlir.dialects import math as mmath
from mlir.rewrite import RewritePatternSet, apply_patterns_and_fold_greedily

from ..dialects import target as targets
from ..dialects.graph import Graph, normalize_axes, normalize_axis, reduced_shape, slice_bounds
from . import constant_data, strided_windows
from . import linalg_builders as lb
from .ir_query import enclosing
from .registry import register_pass, reject
from .tile_configure import bf16_pair_products, memory_threads, read_config, window_bytes

# ----------------------------------------------------------------------------------------------
# Scalar arithmetic that picks the float or integer op from the element type.


def _is_float(v: ir.Value) -> bool:
    return isinstance(v.type, ir.FloatType)


def add(a, b):
    return arith.addf(a, b) if _is_float(a) else arith.addi(a, b)


def sub(a, b):
    return arith.subf(a, b) if _is_float(a) else arith.subi(a, b)


def mul(a, b):
    return arith.mulf(a, b) if _is_float(a) else arith.muli(a, b)


def div(a, b):
    return arith.divf(a, b) if _is_float(a) else arith.divsi(a, b)


def _is_bool(v: ir.Value) -> bool:
    return isinstance(v.type, ir.IntegerType) and ir.IntegerType(v.type).width == 1


_HALVES = ("f16", "bf16")


def in_f32(fn):
    """`fn` on f16/bf16 values computed in f32 and rounded once at the end. Each step in the
    narrow type rounds to 11 (8) bits: GELU's x / sqrt 2 rounded in f16 moved its result by
    up to 9 ulps at x = -2.8 (erfc multiplies the argument's error by 2 z^2), and x86, with no
    f16 arithmetic, widens and narrows around every op anyway."""

    def body(*values):
        if not any(str(v.type) in _HALVES for v in values):
            return fn(*values)
        f32 = ir.F32Type.get()
        wide = [arith.extf(f32, v) if str(v.type) in _HALVES else v for v in values]
        return arith.truncf(values[0].type, fn(*wide))

    return body


def maximum(a, b):
    if _is_float(a):
        return arith.maximumf(a, b)
    return arith.ori(a, b) if _is_bool(a) else arith.maxsi(a, b)


def minimum(a, b):
    if _is_float(a):
        return arith.minimumf(a, b)
    return arith.andi(a, b) if _is_bool(a) else arith.minsi(a, b)


def _any_zero_sign() -> ir.Attribute:
    """fastmath `nsz` for relu's and clamp's bounds: -0 against a bound of 0 may come out
    as either zero (numpy's maximum gives -0), NaN still propagates, and on x86 the max is
    one vmaxps where an exact zero sign takes a compare and a blend more."""
    return ir.Attribute.parse("#arith.fastmath<nsz>")


def const(like: ir.Value, value: float) -> ir.Value:
    return lb.scalar(like.type, value)


def rsqrt(x):
    # Written out: libm has no rsqrtf for convert-math-to-libm to call.
    return arith.divf(const(x, 1.0), mmath.sqrt(x))


def sigmoid(x):
    # exp(-|x|) never overflows: 1 / (1 + e) for x >= 0, e / (1 + e) below, so sigmoid(-100)
    # is the subnormal e^-100, not 1 / inf.
    one = const(x, 1.0)
    e = mmath.exp(arith.negf(mmath.absf(x)))
    r = arith.divf(one, arith.addf(one, e))
    negative = arith.cmpf(arith.CmpFPredicate.OLT, x, const(x, 0.0))
    return arith.select(negative, arith.mulf(e, r), r)


def gelu(x, approximate: str):
    if approximate == "tanh":
        # 0.5 (1 + tanh(u)) is sigmoid(2u): no cancellation where tanh(u) nears -1.
        inner = arith.mulf(
            const(x, 2.0 * math.sqrt(2.0 / math.pi)),
            arith.addf(x, arith.mulf(const(x, 0.044715), arith.mulf(x, arith.mulf(x, x)))),
        )
        return arith.mulf(x, sigmoid(inner))
    # 0.5 (1 + erf(x / sqrt 2)) is 0.5 erfc(-x / sqrt 2): no cancellation for negative x.
    phi = mmath.erfc(arith.mulf(x, const(x, -1.0 / math.sqrt(2.0))))
    return arith.mulf(arith.mulf(const(x, 0.5), x), phi)


def convert(x: ir.Value, to: ir.Type) -> ir.Value:
    src = x.type
    if src == to:
        return x
    src_float, to_float = isinstance(src, ir.FloatType), isinstance(to, ir.FloatType)
    if str(to) == "i1":  # like numpy's astype(bool): nonzero is true
        zero = arith.constant(src, 0.0 if src_float else 0)
        return (
            arith.cmpf(arith.CmpFPredicate.UNE, x, zero)
            if src_float
            else arith.cmpi(arith.CmpIPredicate.ne, x, zero)
        )
    if src_float and to_float:
        wider = ir.FloatType(to).width > ir.FloatType(src).width
        return arith.extf(to, x) if wider else arith.truncf(to, x)
    if src_float:
        return arith.fptosi(to, x)
    unsigned = ir.IntegerType(src).width == 1  # booleans convert as 0/1
    if to_float:
        return arith.uitofp(to, x) if unsigned else arith.sitofp(to, x)
    if ir.IntegerType(to).width > ir.IntegerType(src).width:
        return arith.extui(to, x) if unsigned else arith.extsi(to, x)
    return arith.trunci(to, x)


# ----------------------------------------------------------------------------------------------
# Patterns. Each receives the op's typed view and returns the replacement value.

_LOWERINGS = {}


def lowering(*mnemonics):
    def register(fn):
        for mnemonic in mnemonics:
            _LOWERINGS[mnemonic] = fn
        return fn

    return register


def _out(op) -> ir.RankedTensorType:
    return ir.RankedTensorType(op.result.type)


_BINARY = {
    "add": add,
    "sub": sub,
    "mul": mul,
    "div": div,
    "maximum": maximum,
    "minimum": minimum,
    "pow": mmath.powf,
}


# Ops whose result is exact in any float type: no wider arithmetic for f16/bf16.
_EXACT = {"neg", "abs", "relu", "floor", "ceil", "round", "maximum", "minimum", "logical_not"}


@lowering(*_BINARY)
def lower_binary(op):
    out = _out(op)
    fn = _BINARY[op.mnemonic]
    if op.mnemonic not in _EXACT:
        fn = in_f32(fn)
    return lb.elementwise([op.lhs, op.rhs], out.shape, out.element_type, fn)


_UNARY = {
    "neg": lambda x: arith.negf(x) if _is_float(x) else arith.subi(const(x, 0), x),
    "abs": lambda x: mmath.absf(x) if _is_float(x) else mmath.absi(x),
    "exp": mmath.exp,
    "log": mmath.log,
    "sqrt": mmath.sqrt,
    "rsqrt": rsqrt,
    "tanh": mmath.tanh,
    "sigmoid": sigmoid,
    "relu": lambda x: arith.maximumf(x, const(x, 0.0), fastmath=_any_zero_sign()),
    "silu": lambda x: arith.mulf(x, sigmoid(x)),
    "erf": mmath.erf,
    "floor": mmath.floor,
    "ceil": mmath.ceil,
    "round": mmath.roundeven,
    "sin": mmath.sin,
    "cos": mmath.cos,
    "logical_not": lambda x: arith.xori(x, lb.scalar(x.type, 1)),
}


_COMPARE = {
    "equal": (arith.CmpFPredicate.OEQ, arith.CmpIPredicate.eq),
    "less": (arith.CmpFPredicate.OLT, arith.CmpIPredicate.slt),
    "less_equal": (arith.CmpFPredicate.OLE, arith.CmpIPredicate.sle),
    "greater": (arith.CmpFPredicate.OGT, arith.CmpIPredicate.sgt),
    "greater_equal": (arith.CmpFPredicate.OGE, arith.CmpIPredicate.sge),
}


@lowering(*_COMPARE)
def lower_compare(op):
    out = _out(op)
    float_predicate, int_predicate = _COMPARE[op.mnemonic]

    def body(a, b):
        if _is_float(a):
            return arith.cmpf(float_predicate, a, b)
        return arith.cmpi(int_predicate, a, b)

    return lb.elementwise([op.lhs, op.rhs], out.shape, out.element_type, body)


_LOGICAL = {"logical_and": arith.andi, "logical_or": arith.ori, "logical_xor": arith.xori}


@lowering(*_LOGICAL)
def lower_logical(op):
    out = _out(op)
    return lb.elementwise([op.lhs, op.rhs], out.shape, out.element_type, _LOGICAL[op.mnemonic])


@lowering("where")
def lower_where(op):
    out = _out(op)
    return lb.elementwise(
        [op.condition, op.x, op.y],
        out.shape,
        out.element_type,
        lambda c, a, b: arith.select(c, a, b),
    )


@lowering(*_UNARY)
def lower_unary(op):
    out = _out(op)
    fn = _UNARY[op.mnemonic]
    if op.mnemonic not in _EXACT:
        fn = in_f32(fn)
    return lb.elementwise([op.input], out.shape, out.element_type, fn)


@lowering("gelu")
def lower_gelu(op):
    out = _out(op)
    return lb.elementwise(
        [op.input], out.shape, out.element_type, in_f32(lambda x: gelu(x, op.approximate))
    )


@lowering("clamp")
def lower_clamp(op):
    out = _out(op)

    def body(x):
        low = arith.maximumf(x, const(x, op.min), fastmath=_any_zero_sign())
        return arith.minimumf(low, const(x, op.max), fastmath=_any_zero_sign())

    return lb.elementwise([op.input], out.shape, out.element_type, body)


@lowering("cast")
def lower_cast(op):
    out = _out(op)
    return lb.elementwise(
        [op.input], out.shape, out.element_type, lambda x: convert(x, out.element_type)
    )


@lowering("matmul")
def lower_matmul(op):
    out = _out(op)
    lhs, rhs = lb.ranked(op.lhs), lb.ranked(op.rhs)
    if str(out.element_type) in _HALVES and not _for_gpu(op):
        # On the CPU, f16/bf16 products accumulate in f32 (a depth of 1000 summed in f16 was
        # off by 3x the f32 sum's rounding); GPUs' tensor cores take the narrow operands and
        # accumulate in f32 themselves. A 2-D bf16 product packed for the CPU's pair products
        # keeps its bf16 operands (tile-lower packs them in pairs); other products are f32
        # ones.
        desc, config = _target(op), read_config(enclosing(op.operation, "func.func"))
        if (
            desc is not None
            and rhs.rank == 2 <= lhs.rank
            and bf16_pair_products(desc, config, lhs, rhs, out)
        ):
            product = _rows_times_matrix(op.lhs, op.rhs, ir.F32Type.get())
            return narrow(product, out.element_type)
        return _lowered_in_f32(op, lower_matmul)
    same_element = lhs.element_type == rhs.element_type == out.element_type
    if lhs.rank >= 2 and rhs.rank == 2 and same_element:
        return _rows_times_matrix(op.lhs, op.rhs, out.element_type)
    zero = lb.scalar(out.element_type, 0)
    if lhs.rank == rhs.rank == out.rank >= 3 and same_element and lhs.shape[:-2] == rhs.shape[:-2]:
        # Batches of matmuls (attention's scores and weighted values, per batch and head):
        # one linalg.batch_matmul over the batch dims flattened, tiled per batch.
        batches = math.prod(out.shape[:-2])
        groups = [list(range(out.rank - 2)), [out.rank - 2], [out.rank - 1]]

        def flat(value, t):
            shape = [batches, *t.shape[-2:]]
            return lb.collapse(value, groups, shape) if t.rank > 3 else value

        init = lb.filled([batches, *out.shape[-2:]], out.element_type, zero)
        product = linalg.batch_matmul(flat(op.lhs, lhs), flat(op.rhs, rhs), outs=[init])
        return lb.expand(product, groups, out.shape) if out.rank > 3 else product
    init = lb.filled(out.shape, out.element_type, zero)
    # General numpy.matmul: loops are (batch..., [m], [n], k).
    batch = out.rank - (lhs.rank > 1) - (rhs.rank > 1)
    m = batch if lhs.rank > 1 else None
    n = batch + (lhs.rank > 1) if rhs.rank > 1 else None
    k = out.rank
    batch_shape = list(out.shape[:batch])

    def batch_dims(t):
        return lb.broadcast_dims(t.shape[:-2], batch_shape) if t.rank > 2 else []

    lhs_map = batch_dims(lhs) + ([m, k] if lhs.rank > 1 else [k])
    rhs_map = batch_dims(rhs) + ([k, n] if rhs.rank > 1 else [k])
    out_map = list(range(out.rank))
    element = out.element_type

    def body(a, b, acc):
        return add(acc, mul(convert(a, element), convert(b, element)))

    return lb.generic(
        [op.lhs, op.rhs],
        init,
        [lhs_map, rhs_map, out_map],
        [lb.PARALLEL] * out.rank + [lb.REDUCTION],
        body,
    )


def _rows_times_matrix(lhs: ir.Value, rhs: ir.Value, element: ir.Type) -> ir.Value:
    """[..., M, K] x [K, N] as one 2-D matmul over the rows of all batches, summed in
    `element`: linalg.matmul, which the CPU's matmul strategy tiles."""
    shape, columns = lb.ranked(lhs).shape, lb.ranked(rhs).shape[1]
    rows = math.prod(shape[:-1])
    groups = [list(range(len(shape) - 1)), [len(shape) - 1]]
    flat = lb.collapse(lhs, groups, [rows, shape[-1]]) if len(shape) > 2 else lhs
    init = lb.filled([rows, columns], element, lb.scalar(element, 0))
    product = linalg.matmul(flat, rhs, outs=[init])
    return lb.expand(product, groups, [*shape[:-1], columns]) if len(shape) > 2 else product


def _lowered_in_f32(op, lower) -> ir.Value:
    """`lower` of `op` (f16/bf16 operands and result) as the same op of f32: its operands
    widened (constants once, here), its result rounded once."""
    f32 = ir.F32Type.get()
    operation = op.operation
    wide = ir.Operation.create(
        operation.name,
        results=[ir.RankedTensorType.get(_out(op).shape, f32)],
        operands=[widen(v) for v in operation.operands],
        attributes={name: operation.attributes[name] for name in operation.attributes},
    )
    value = lower(Graph.view(wide))
    wide.erase()
    return narrow(value, _out(op).element_type)


@lowering("conv2d")
def lower_conv2d(op):
    out = _out(op)
    if str(out.element_type) in _HALVES and not _for_gpu(op):
        # Products of f16/bf16 accumulate in f32 on the CPU, as the f32 conv (a 3x3 conv of
        # 64 channels in f16 was off by 1.2% of its largest output, 25 f16 ulps); a bf16
        # conv packed for the CPU's pair products (as matmuls are) keeps its bf16 operands.
        desc, config = _target(op), read_config(enclosing(op.operation, "func.func"))
        types = (lb.ranked(op.input), lb.ranked(op.weight), out)
        if op.groups != 1 or desc is None or not bf16_pair_products(desc, config, *types):
            return _lowered_in_f32(op, lower_conv2d)
        return narrow(_conv_in(op, ir.F32Type.get()), out.element_type)
    return _conv_in(op, out.element_type)


def _conv_in(op, element: ir.Type) -> ir.Value:
    """The conv (and its bias) summed in `element`: its operands' own type, or f32 for bf16
    pair products."""
    out = _out(op)
    top, left, bottom, right = op.padding
    zero = lb.scalar(element, 0)
    init = lb.filled(out.shape, element, zero)
    if _phased_depthwise(op):
        conv = _phased_windows(op, zero, lb.ranked(op.weight).shape[3], _depthwise_taps(op), init)
    else:
        input_zero = lb.scalar(lb.ranked(op.input).element_type, 0)
        x = lb.pad(op.input, [0, 0, top, left], [0, 0, bottom, right], input_zero)
        if op.groups == 1:
            conv = linalg.conv_2d_nchw_fchw(
                x, op.weight, outs=[init], strides=op.strides, dilations=op.dilations
            )
        else:
            conv = _grouped_conv(op, x, init)
    if op.bias is None:
        return conv
    return lb.generic(
        [conv, op.bias],
        lb.empty(out.shape, element),
        [[0, 1, 2, 3], [1], [0, 1, 2, 3]],
        [lb.PARALLEL] * 4,
        lambda c, b, _: add(c, convert(b, element)),
    )


def _phased_depthwise(op) -> bool:
    """A depthwise conv (one input channel per group) of horizontal stride > 1, on a CPU: its
    input split into phases, its taps read contiguous runs (strided, they were gathers)."""
    in_per_group = lb.ranked(op.weight).shape[1]
    return (
        op.groups > 1
        and in_per_group == 1
        and op.strides[1] > 1
        and op.dilations[1] == 1
        and not _for_gpu(op)
    )


def _depthwise_taps(op):
    """`_phased_windows`' phase_taps for a depthwise conv: the weights of a phase's taps
    (every s-th column of the window from `first`) times its elements."""
    weight = lb.ranked(op.weight)
    out_per_group = weight.shape[0] // op.groups
    n, o, oy, ox, c, kh, kw = (ir.AffineDimExpr.get(i) for i in range(7))
    channel = ir.AffineFloorDivExpr.get(o, ir.AffineConstantExpr.get(out_per_group)) + c
    sh, sw = op.strides
    dh = op.dilations[0]

    def phase_taps(x_phase, first: int, count: int, result):
        sizes = [weight.shape[0], 1, weight.shape[2], count]
        taps = lb.extract_slice(op.weight, [0, 0, 0, first], sizes, [1, 1, 1, sw])
        return lb.generic(
            [x_phase, taps],
            result,
            [[n, channel, oy * sh + kh * dh, ox + kw], [o, c, kh, kw], [n, o, oy, ox]],
            [lb.PARALLEL] * 4 + [lb.REDUCTION] * 3,
            lambda a, b, acc: add(acc, mul(a, b)),
        )

    return phase_taps


def _grouped_conv(op, x, init):
    """out[n, o, y, x] += in[n, g*I + c, y*sh + kh*dh, x*sw + kw*dw] * w[o, c, kh, kw]."""
    out_per_group = lb.ranked(op.weight).shape[0] // op.groups
    in_per_group = lb.ranked(op.weight).shape[1]
    n, o, oy, ox, c, kh, kw = (ir.AffineDimExpr.get(i) for i in range(7))
    sh, sw = op.strides
    dh, dw = op.dilations
    channel = (
        ir.AffineFloorDivExpr.get(o, ir.AffineConstantExpr.get(out_per_group)) * in_per_group + c
    )
    x_map = [n, channel, oy * sh + kh * dh, ox * sw + kw * dw]
    return lb.generic(
        [x, op.weight],
        init,
        [x_map, [o, c, kh, kw], [n, o, oy, ox]],
        [lb.PARALLEL] * 4 + [lb.REDUCTION] * 3,
        lambda a, b, acc: add(acc, mul(a, b)),
    )


@lowering("max_pool2d")
def lower_max_pool2d(op):
    # A NaN in a window is its max; the sign of a zero max is left open, which makes each
    # max one instruction and a NaN test (both signs and NaNs kept took six on x86).
    def combine(a, b):
        return arith.maximumf(a, b, fastmath=_any_zero_sign())

    lowest = lb.lowest(_out(op).element_type)
    return _pooled(op, lowest, combine, linalg.pooling_nchw_max, clamps=True)


@lowering("avg_pool2d")
def lower_avg_pool2d(op):
    out = _out(op)
    element = out.element_type
    sums = _pooled(op, lb.scalar(element, 0), arith.addf, linalg.pooling_nchw_sum)
    counts = _pool_counts(op, lb.ranked(op.input).shape[2:], out.shape[2:])
    if counts is None:
        size = op.kernel[0] * op.kernel[1]
        return lb.elementwise([sums], out.shape, element, lambda s: div(s, const(s, size)))
    # The counts as f32 (small integers, exact in every float type; numpy has no bf16 array
    # for a constant of that type), converted to the element type in the division.
    f32 = ir.F32Type.get()
    divisor = arith.ConstantOp(
        ir.RankedTensorType.get(list(counts.shape), f32),
        ir.DenseElementsAttr.get(counts.astype(np.float32), type=f32),
    ).result

    def divide(s, d, _):
        return div(s, convert(d, element))

    return lb.generic(
        [sums, divisor],
        lb.empty(out.shape, element),
        [[0, 1, 2, 3], [2, 3], [0, 1, 2, 3]],
        [lb.PARALLEL] * 4,
        divide,
    )


def _pooled(op, pad_value: ir.Value, combine, named, clamps: bool = False) -> ir.Value:
    """`combine` over each window of the input padded with `pad_value`. For a CPU target the
    taps are taken in registers from the input in place (strided_windows.pooled), a padded
    row or column read as the nearest input one where the pool `clamps` (a max, which that
    leaves as it is), else as `pad_value`: SqueezeNet's 3x3 max pool of stride 2 0.27 ->
    0.10 ms on 1 thread of a znver4 (onnxruntime 0.16), ResNet's padded one 0.26 -> 0.10, a
    padded 3x3 average of stride 2 on 56x56 0.068 -> 0.028. Without a target, generics over
    the output's dims then the window's, which --tile-lower vectorizes along output rows (a
    named pooling op stayed plain loops: 3.7-9x onnxruntime's time); with a horizontal stride
    they read the input split into phases, one generic per phase over the taps it holds. On
    GPUs the named op (`named`), whose points the threads take."""
    out = _out(op)
    element = out.element_type
    top, left, bottom, right = op.padding
    init = lb.filled(out.shape, element, pad_value)
    if _for_gpu(op):
        x = lb.pad(op.input, [0, 0, top, left], [0, 0, bottom, right], pad_value)
        window = lb.empty(op.kernel, element)
        return named(x, window, outs=[init], strides=op.strides, dilations=[1, 1])
    (sh, sw), (height, width) = op.strides, op.kernel
    n, c, oy, ox, kh, kw = (ir.AffineDimExpr.get(i) for i in range(6))

    def taps(x, window: list[int], x_map, result):
        return lb.generic(
            [x, lb.empty(window, element)],
            result,
            [x_map, [kh, kw], [n, c, oy, ox]],
            [lb.PARALLEL] * 4 + [lb.REDUCTION] * 2,
            lambda v, _, acc: combine(acc, v),
        )

    desc = _target(op)
    if desc is not None:
        source = lb.ranked(op.input).shape
        threads = memory_threads(desc, window_bytes(source, out.shape), source[1], 1)
        return strided_windows.pooled(
            op.input,
            out.shape,
            op.kernel,
            op.strides,
            op.padding,
            combine,
            desc.vector_lanes_f32,
            threads,
            None if clamps else pad_value,
        )
    if sw == 1:
        x = lb.pad(op.input, [0, 0, top, left], [0, 0, bottom, right], pad_value)
        return taps(x, op.kernel, [n, c, oy * sh + kh, ox + kw], init)

    def phase_taps(x_phase, first: int, count: int, result):
        return taps(x_phase, [height, count], [n, c, oy * sh + kh, ox + kw], result)

    return _phased_windows(op, pad_value, width, phase_taps, init)


def _phased_windows(op, pad_value: ir.Value, width: int, phase_taps, init: ir.Value) -> ir.Value:
    """A window op of horizontal stride s > 1 (a pool, a depthwise conv) over its input split
    into s phases (strided_windows.deinterleaved): `phase_taps(x_phase, first, count, result)`
    builds the generic of the taps first, first + s, ... (`count` of a window `width` wide)
    that phase `x_phase` holds, where tap first + s*i of output column ox is x_phase's
    element ox + i, accumulating into `result` (`init` for the first)."""
    stride = op.strides[1]
    desc = _target(op)
    lanes, threads = 8, 1
    if desc is not None:
        # As many as the window op's own (tile-configure).
        source = lb.ranked(op.input).shape
        moved = window_bytes(source, _out(op).shape)
        lanes, threads = desc.vector_lanes_f32, memory_threads(desc, moved, source[1], 1)
    x, shift = strided_windows.deinterleaved(
        op.input, op.padding, stride, pad_value, lanes, threads
    )
    result = init
    for phase in range(stride):
        # Taps kw with (kw + shift) mod s = phase: first, first + s, ...; tap first + s*i of
        # output column ox is element ox + i + (first + shift) div s of the phase.
        first = (phase - shift) % stride
        count = -(-(width - first) // stride)
        if count > 0:
            x_phase = strided_windows.phase_from(x, phase, (first + shift) // stride)
            result = phase_taps(x_phase, first, count, result)
    return result


def _pool_counts(op, in_hw, out_hw):
    """Per output position, how many real (unpadded) inputs its window covers; None if all."""
    if op.count_include_pad or not any(op.padding):
        return None
    counts = []
    for axis in range(2):
        low = op.padding[axis]
        size, k, s = in_hw[axis], op.kernel[axis], op.strides[axis]
        starts = np.arange(out_hw[axis]) * s - low
        counts.append(np.minimum(starts + k, size) - np.maximum(starts, 0))
    return np.outer(counts[0], counts[1]).astype(np.float64)


@lowering("batch_norm")
def lower_batch_norm(op):
    out = _out(op)
    rank = out.rank
    eps = op.epsilon

    def body(x, scale, bias, mean, var, _):
        inv = rsqrt(arith.addf(var, const(var, eps)))
        return arith.addf(arith.mulf(arith.subf(x, mean), arith.mulf(scale, inv)), bias)

    full = list(range(rank))
    return lb.generic(
        [op.input, op.scale, op.bias, op.mean, op.var],
        lb.empty(out.shape, out.element_type),
        [full, [1], [1], [1], [1], full],
        [lb.PARALLEL] * rank,
        body,
    )


def softmax(x: ir.Value, axis: int, safe: bool = False) -> ir.Value:
    """`safe`: rows whose maximum is -inf (all of them -inf) are 0, selected in the
    normalization (their exponentials are NaN)."""
    t = lb.ranked(x)
    full = list(range(t.rank))
    kept = [i for i in full if i != axis]
    element = t.element_type
    # The max of a row that holds a NaN is left unspecified (no NaNs, no signed zeros: one
    # vmaxps per vector, where maxnumf takes three); such a row is NaN through its own
    # exponential whatever its max.
    no_nans = ir.Attribute.parse("#arith.fastmath<nnan,nsz>")
    peak = lb.reduce(
        x, [axis], lb.lowest(element), lambda v, m: arith.maximumf(v, m, fastmath=no_nans)
    )
    shifted = lb.generic(
        [x, peak],
        lb.empty(t.shape, element),
        [full, kept, full],
        [lb.PARALLEL] * t.rank,
        # Results under 2^-126 may flush: they vanish next to the row's sum, at least 1; and
        # none is infinite (v - max <= 0, or NaN).
        lambda v, m, _: mmath.exp(
            arith.subf(v, m), fastmath=ir.Attribute.parse("#arith.fastmath<ninf,afn>")
        ),
    )
    total = lb.reduce(shifted, [axis], lb.scalar(element, 0), add)
    inverse = once_per_row(linalg.reciprocal, total)
    operands, maps = (
        ([shifted, inverse, peak], [full, kept, kept])
        if safe
        else ([shifted, inverse], [full, kept])
    )

    def normalize(e, inverse, *rest):
        if not safe:
            return arith.mulf(e, inverse)
        masked = arith.cmpf(arith.CmpFPredicate.OEQ, rest[0], const(e, float("-inf")))
        return arith.select(masked, const(e, 0.0), arith.mulf(e, inverse))

    return lb.generic(
        operands, lb.empty(t.shape, element), [*maps, full], [lb.PARALLEL] * t.rank, normalize
    )


def once_per_row(named_op, reduced: ir.Value) -> ir.Value:
    """`named_op` (linalg.reciprocal, linalg.rsqrt) of a reduced tensor, as a named op: the
    elementwise fusion that follows merges generics only, so a generic here would be inlined
    into its broadcasting consumer and computed for every element instead of every row."""
    t = lb.ranked(reduced)
    return named_op(reduced, outs=[lb.empty(t.shape, t.element_type)])


def widen(x: ir.Value) -> ir.Value:
    """A half-precision (f16, bf16) tensor as f32, for ops that accumulate over rows: a sum of
    thousands of terms in 8 or 11 bits of mantissa is not the sum (PyTorch accumulates
    these in f32 too). Elementwise fusion folds the extension into the reading kernel."""
    t = lb.ranked(x)
    if str(t.element_type) not in _HALVES:
        return x
    f32 = ir.F32Type.get()
    # Weights are widened once, here, not on every call.
    data = constant_data.constant_array(x)
    if data is not None:
        return constant_data.resource_constant(data.astype(np.float32), f32, "widened")
    splat = constant_data.splat_value(x)
    if splat is not None:
        return lb.filled(t.shape, f32, lb.scalar(f32, splat))
    return lb.elementwise([x], t.shape, f32, lambda v: arith.extf(f32, v))


def narrow(x: ir.Value, element: ir.Type) -> ir.Value:
    """`x` rounded to the result's `element` type (the inverse of `widen`)."""
    t = lb.ranked(x)
    if t.element_type == element:
        return x
    return lb.elementwise([x], t.shape, element, lambda v: arith.truncf(element, v))


@lowering("softmax")
def lower_softmax(op):
    out = _out(op)
    result = softmax(widen(op.input), normalize_axis(op.axis, out.rank), safe=op.safe)
    return narrow(result, out.element_type)


def _mean_over(x: ir.Value, axes: list[int], count: int, plus: float = 0.0) -> ir.Value:
    """The mean over `axes` (+ `plus`). A product with 1 / count, not a division: where this
    is fused into a consumer it runs per element."""
    total = lb.reduce(x, axes, lb.scalar(lb.ranked(x).element_type, 0), add)
    out = lb.ranked(total)

    def mean(s):
        if not _is_float(s):
            return div(s, const(s, count))
        scaled = arith.mulf(s, const(s, 1.0 / count))
        return arith.addf(scaled, const(s, plus)) if plus else scaled

    return lb.elementwise([total], out.shape, out.element_type, mean)


@lowering("layer_norm", "rms_norm")
def lower_norm(op):
    t = _out(op)
    axis = normalize_axis(op.axis, t.rank)
    axes = list(range(axis, t.rank))
    full = list(range(t.rank))
    kept = full[:axis]
    count = math.prod(t.shape[axis:])
    x = widen(op.input)
    element = lb.ranked(x).element_type
    parallel = [lb.PARALLEL] * t.rank
    eps = op.epsilon
    if op.mnemonic == "layer_norm":
        mean = _mean_over(x, axes, count)
        x = lb.generic(
            [x, mean],
            lb.empty(t.shape, element),
            [full, kept, full],
            parallel,
            lambda v, m, _: arith.subf(v, m),
        )
    squares = lb.elementwise([x], t.shape, element, lambda v: arith.mulf(v, v))
    inverse_std = once_per_row(linalg.rsqrt, _mean_over(squares, axes, count, plus=eps))

    def normalize(v, inverse, gamma, *rest):
        scaled = arith.mulf(arith.mulf(v, inverse), gamma)
        return arith.addf(scaled, rest[0]) if len(rest) == 2 else scaled

    params = [widen(op.gamma)] + ([widen(op.beta)] if op.mnemonic == "layer_norm" else [])
    normalized = lb.generic(
        [x, inverse_std, *params],
        lb.empty(t.shape, element),
        [full, kept] + [axes] * len(params) + [full],
        parallel,
        normalize,
    )
    return narrow(normalized, t.element_type)


@lowering("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod")
def lower_reduce(op):
    t = lb.ranked(op.input)
    axes = normalize_axes(op.axes, t.rank)
    element = t.element_type
    if op.mnemonic == "reduce_max":
        reduced = lb.reduce(op.input, axes, lb.lowest(element), maximum)
    elif op.mnemonic == "reduce_min":
        reduced = lb.reduce(op.input, axes, lb.highest(element), minimum)
    else:
        # Sums and products of f16/bf16 accumulate in f32 (as PyTorch's do): a row of 1000
        # summed in f16 was 280 ulps of its result off.
        x = widen(op.input)
        wide = lb.ranked(x).element_type
        if op.mnemonic == "reduce_prod":
            reduced = lb.reduce(x, axes, lb.scalar(wide, 1), mul)
        elif op.mnemonic == "reduce_sum":
            reduced = lb.reduce(x, axes, lb.scalar(wide, 0), add)
        else:
            reduced = _mean_over(x, axes, math.prod(t.shape[a] for a in axes))
        reduced = narrow(reduced, element)
    return lb.reshape(reduced, reduced_shape(list(t.shape), axes, op.keepdims))


@lowering("reshape")
def lower_reshape(op):
    return lb.reshape(op.input, _out(op).shape)


@lowering("broadcast_to")
def lower_broadcast_to(op):
    out = _out(op)
    return lb.elementwise([op.input], out.shape, out.element_type, lambda x: x)


@lowering("transpose")
def lower_transpose(op):
    perm = list(op.perm)
    kept = 0  # trailing dims the permutation leaves in place: each output row is a run
    while kept < len(perm) and perm[-1 - kept] == len(perm) - 1 - kept:
        kept += 1
    outer = len(perm) - kept
    out = _out(op)
    if _for_gpu(op):
        return lb.transpose(op.input, perm)
    if not kept:
        return _blocked_transpose(op.input, perm, out, _target(op))
    if math.prod(out.shape[outer:]) < _WHOLE_RUN:
        return lb.transpose(op.input, perm)
    # Attention's heads to and from [batch, seq, heads, dim]: runs of a head's dim, copied
    # whole (element by element, LLVM left the copy scalar: 0.46x numpy at 12 heads of 64).
    return _copy_runs(
        op.input,
        out,
        list(out.shape[:outer]),
        lambda coords: [coords[perm.index(dim)] for dim in range(outer)],
    )


# The side of the square blocks a transpose that moves the innermost dim is done in: one
# vector per row of a block, transposed in registers. Blocks are walked in groups of up to
# _GROUP x _GROUP, whose rows stay in cache (and their pages in the TLB) until the group is
# done: the half lines a block reads or writes are completed by its neighbours in the group.
_BLOCK = 8
_GROUP = 4


def _blocked_transpose(source: ir.Value, perm: list[int], out, desc) -> ir.Value:
    """A transpose that moves the innermost dim, in _BLOCK x _BLOCK blocks: each reads
    _BLOCK runs of the input's last dim, transposes them in registers and writes _BLOCK runs
    of the output's last dim. Element by element, every store went to another row (another
    page, for rows of 4 KiB): 1.4 GB/s on 1024x1024, 0.6 ms in blocks. What whole blocks
    leave at the ends of the two dims is transposed element by element. One that moves
    enough memory splits the input's last dim over the target's cores."""
    t = lb.ranked(source)
    rank = t.rank
    across, along = perm[-1], rank - 1  # input dims: the output's last one, the input's last
    full = {d: t.shape[d] - t.shape[d] % _BLOCK for d in (across, along)}
    if min(full.values()) == 0:
        return lb.transpose(source, perm)
    blocks = {d: full[d] // _BLOCK for d in (across, along)}
    group = {d: max(g for g in range(1, _GROUP + 1) if blocks[d] % g == 0) for d in blocks}
    moved = 2 * math.prod(t.shape) * max(1, t.element_type.width // 8)
    threads = memory_threads(desc, moved, blocks[along] // group[along], 1) if desc else 1
    result = lb.empty(out.shape, out.element_type)
    if threads == 1:
        result = _transpose_blocks(source, perm, result, full, group)
    else:
        result = _transpose_blocks_in_parallel(source, perm, result, full, group, threads)
    for dim in (across, along):  # the ends whole blocks leave, along either dim
        if full[dim] == t.shape[dim]:
            continue
        offsets = [full[dim] if d == dim else 0 for d in range(rank)]
        sizes = [t.shape[d] - full[dim] if d == dim else t.shape[d] for d in range(rank)]
        if dim == along:  # the corner is in the other end already
            sizes[across] = full[across]
        rest = lb.extract_slice(source, offsets, sizes, [1] * rank)
        result = lb.insert_slice(lb.transpose(rest, perm), result, [offsets[d] for d in perm])
    return result


def _transpose_blocks_in_parallel(source, perm, dest, full, group, threads: int) -> ir.Value:
    """The whole blocks of `source` transposed into `dest` by an scf.forall whose iterations
    each take an equal part of the input's last dim (a range of the output's rows)."""
    along = lb.ranked(source).rank - 1
    placed, part = perm.index(along), full[along] // threads
    forall = scf.ForallOp([0], [threads], [1], [dest])
    with ir.InsertionPoint(forall.body):
        first = arith.muli(forall.induction_variables[0], lb.scalar(ir.IndexType.get(), part))
        shared = forall.inner_iter_args[0]
        done = _transpose_blocks(
            lb.slice_along(source, along, first, part),
            perm,
            lb.slice_along(shared, placed, first, part),
            {**full, along: part},
            group,
        )
        in_parallel = scf.InParallelOp()
        with ir.InsertionPoint(in_parallel.region.blocks[0]):
            lb.parallel_insert_along(done, shared, placed, first)
    return forall.results[0]


def _transpose_blocks(source, perm, dest, full, group) -> ir.Value:
    """`dest` with the blocks of `source` that lie within `full` (the extents along the two
    dims that move) transposed into it, in groups of `group` blocks along each."""
    t = lb.ranked(source)
    rank = t.rank
    across, along = perm[-1], rank - 1
    others = [d for d in perm if d not in (across, along)]  # input dims, in output order
    counts = [t.shape[d] for d in others] + [
        full[across] // (_BLOCK * group[across]),
        full[along] // (_BLOCK * group[along]),
        group[along],
        group[across],  # innermost: the blocks that complete the output's lines
    ]
    index = ir.IndexType.get()
    loop = lb.loop_over(counts, dest)
    with ir.InsertionPoint(loop.body):
        coords = lb.delinearize(loop.induction_variable, counts)
        at = dict(zip(others, coords, strict=False))
        for dim, outer, inner in (
            (across, coords[-4], coords[-1]),
            (along, coords[-3], coords[-2]),
        ):
            first_block = arith.addi(arith.muli(outer, lb.scalar(index, group[dim])), inner)
            at[dim] = arith.muli(first_block, lb.scalar(index, _BLOCK))

        def shifted(dim: int, by: int) -> dict:
            return {**at, dim: arith.addi(at[dim], lb.scalar(index, by)) if by else at[dim]}

        rows = []
        for r in range(_BLOCK):
            indices = shifted(across, r)
            rows.append(lb.read_run(source, [indices[d] for d in range(rank)], _BLOCK))
        result = loop.inner_iter_args[0]
        for c, column in enumerate(_transposed_8x8(rows)):
            indices = shifted(along, c)
            result = lb.write_run(column, result, [indices[d] for d in perm])
        scf.YieldOp([result])
    return loop.results[0]


def _transposed_8x8(rows: list[ir.Value]) -> list[ir.Value]:
    """The columns of 8 rows of 8, by three rounds of two-input shuffles (interleave pairs of
    rows, then pairs of pairs, then halves): the unpack, shuffle and 128-bit permute sequence
    that x86 backends select for them. A vector.transpose would be folded into the reads by
    canonicalization, making each a gather of single elements."""

    def round_of(values, low, high, pairs):
        out = [None] * 8
        for i, j in pairs:
            out[i] = vector.shuffle(values[i], values[j], low)
            out[j] = vector.shuffle(values[i], values[j], high)
        return out

    interleaved = round_of(
        rows,
        [0, 8, 1, 9, 4, 12, 5, 13],
        [2, 10, 3, 11, 6, 14, 7, 15],
        [(0, 1), (2, 3), (4, 5), (6, 7)],
    )
    # interleaved[0] = r0[0] r1[0] r0[1] r1[1] | r0[4] r1[4] r0[5] r1[5], [1] the same of 2, 3, 6, 7
    quads = [None] * 8
    for base in (0, 4):
        a, b, c, d = (interleaved[base + k] for k in range(4))  # (0,1)lo, (0,1)hi, (2,3)lo, (2,3)hi
        quads[base + 0] = vector.shuffle(a, c, [0, 1, 8, 9, 4, 5, 12, 13])  # column 0 | 4
        quads[base + 1] = vector.shuffle(a, c, [2, 3, 10, 11, 6, 7, 14, 15])  # column 1 | 5
        quads[base + 2] = vector.shuffle(b, d, [0, 1, 8, 9, 4, 5, 12, 13])  # column 2 | 6
        quads[base + 3] = vector.shuffle(b, d, [2, 3, 10, 11, 6, 7, 14, 15])  # column 3 | 7
    columns = [None] * 8
    for k in range(4):
        columns[k] = vector.shuffle(quads[k], quads[4 + k], [0, 1, 2, 3, 8, 9, 10, 11])
        columns[k + 4] = vector.shuffle(quads[k], quads[4 + k], [4, 5, 6, 7, 12, 13, 14, 15])
    return columns


@lowering("concat")
def lower_concat(op):
    return _insert_slices(op.inputs, op.axis, _out(op))


def _insert_slices(inputs, axis: int, out: ir.RankedTensorType) -> ir.Value:
    axis = normalize_axis(axis, out.rank)
    result = lb.empty(out.shape, out.element_type)
    offset = 0
    for value in inputs:
        offsets = [0] * out.rank
        offsets[axis] = offset
        result = lb.insert_slice(value, result, offsets)
        offset += lb.ranked(value).shape[axis]
    return result


@lowering("slice")
def lower_slice(op):
    shape = lb.ranked(op.input).shape
    bounds = [
        slice_bounds(d, s, e, st)
        for d, s, e, st in zip(shape, op.starts, op.ends, op.steps, strict=True)
    ]
    return lb.extract_slice(op.input, [b[0] for b in bounds], [b[1] for b in bounds], op.steps)


# Gathered slices and transposed runs of at least this many elements are copied whole.
_WHOLE_RUN = 16


def _target(op) -> targets.TargetDesc | None:
    """The target description of `op`'s module, if it has one."""
    parent = op.operation.parent
    while parent is not None and parent.name != "builtin.module":
        parent = parent.parent
    return targets.of(parent) if parent is not None else None


def _for_gpu(op) -> bool:
    """Whether `op`'s module targets a GPU, where --gpu-map-loops gives every point of a
    linalg op a thread of its own but runs a sequential loop on one."""
    desc = _target(op)
    return desc is not None and desc.kind != "cpu"


def _wrapped(position: ir.Value, size: int) -> ir.Value:
    """An index along a dim of `size` from a gather index (negative counts from the end)."""
    index = ir.IndexType.get()
    position = arith.index_cast(index, position)
    negative = arith.cmpi(arith.CmpIPredicate.slt, position, lb.scalar(index, 0))
    return arith.select(negative, arith.addi(position, lb.scalar(index, size)), position)


@lowering("gather")
def lower_gather(op):
    out = _out(op)
    t = lb.ranked(op.input)
    ind = lb.ranked(op.indices)
    axis = normalize_axis(op.axis, t.rank)
    if math.prod(t.shape[axis + 1 :]) >= _WHOLE_RUN and not _for_gpu(op):
        return _gather_slices(op.input, op.indices, axis, out)
    index_map = list(range(axis, axis + ind.rank))

    def body(i, _):
        position = _wrapped(i, t.shape[axis])
        coords = [lb.index(d) for d in range(axis)]
        coords.append(position)
        coords += [lb.index(axis + ind.rank + d) for d in range(t.rank - axis - 1)]
        return tensor.extract(op.input, coords)

    return lb.generic(
        [op.indices],
        lb.empty(out.shape, out.element_type),
        [index_map, list(range(out.rank))],
        [lb.PARALLEL] * out.rank,
        body,
    )


def _gather_slices(source: ir.Value, indices: ir.Value, axis: int, out) -> ir.Value:
    """A gather of slices (the dims after `axis`: an embedding's rows), each copied whole. An
    element-wise gather reloaded and checked the index for every element, at a third of
    numpy's speed on GPT-2's embedding."""
    t, ind = lb.ranked(source), lb.ranked(indices)

    def taken_from(coords: list[ir.Value]) -> list[ir.Value]:
        return [*coords[:axis], _wrapped(tensor.extract(indices, coords[axis:]), t.shape[axis])]

    return _copy_runs(source, out, [*t.shape[:axis], *ind.shape], taken_from)


def _copy_runs(source: ir.Value, out, outer: list[int], taken_from) -> ir.Value:
    """`out` written by one loop over the positions of its `outer` (leading) dims, row-major;
    each copies a run of `out`'s remaining dims whole (a memcpy when it is contiguous) from
    `source` at the offsets `taken_from(coords)` gives along `source`'s leading dims."""
    t = lb.ranked(source)
    run = list(out.shape[len(outer) :])
    dynamic = ir.ShapedType.get_dynamic_size()
    loop = lb.loop_over(outer, lb.empty(out.shape, out.element_type))
    with ir.InsertionPoint(loop.body):
        coords = lb.delinearize(loop.induction_variable, outer)
        offsets = taken_from(coords)
        lead = len(offsets)
        taken = tensor.ExtractSliceOp(
            ir.RankedTensorType.get(run, t.element_type),
            source,
            offsets,
            [],
            [],
            [dynamic] * lead + [0] * (t.rank - lead),
            [1] * lead + list(t.shape[lead:]),
            [1] * t.rank,
        ).result
        placed = tensor.InsertSliceOp(
            taken,
            loop.inner_iter_args[0],
            coords,
            [],
            [],
            [dynamic] * len(coords) + [0] * len(run),
            [1] * len(coords) + run,
            [1] * out.rank,
        ).result
        scf.YieldOp([placed])
    return loop.results[0]


# Splats larger than this are filled at run time: a constant would become an LLVM global with
# every element spelled out (weights of the light ONNX models are splats of 100M elements).
_LARGEST_SPLAT_CONSTANT = 4096


@lowering("constant")
def lower_constant(op):
    out = _out(op)
    value = op.value
    if (
        isinstance(value, ir.DenseElementsAttr)
        and value.is_splat
        and math.prod(out.shape) > _LARGEST_SPLAT_CONSTANT
    ):
        splat = arith.ConstantOp(out.element_type, value.get_splat_value()).result
        return lb.filled(out.shape, out.element_type, splat)
    return arith.ConstantOp(op.result.type, value).result


@lowering("pad")
def lower_pad(op):
    out = _out(op)
    t = lb.ranked(op.input)
    low, high = op.pads[: t.rank], op.pads[t.rank :]
    if op.mode == "constant":
        return lb.pad(op.input, low, high, lb.scalar(out.element_type, op.value))
    index = ir.IndexType.get()

    def source_index(dim: int) -> ir.Value:
        i = arith.subi(lb.index(dim), arith.ConstantOp(index, low[dim]).result)
        last = arith.ConstantOp(index, t.shape[dim] - 1).result
        zero = arith.ConstantOp(index, 0).result
        if op.mode == "edge":
            return arith.minsi(arith.maxsi(i, zero), last)
        # reflect: -i before the start, 2 * last - i after the end
        mirrored_low = arith.select(
            arith.cmpi(arith.CmpIPredicate.slt, i, zero), arith.subi(zero, i), i
        )
        twice_last = arith.addi(last, last)
        past_end = arith.cmpi(arith.CmpIPredicate.sgt, mirrored_low, last)
        return arith.select(past_end, arith.subi(twice_last, mirrored_low), mirrored_low)

    def body(_):
        return tensor.extract(op.input, [source_index(d) for d in range(t.rank)])

    return lb.generic(
        [],
        lb.empty(out.shape, out.element_type),
        [list(range(out.rank))],
        [lb.PARALLEL] * out.rank,
        body,
    )


@lowering("lrn")
def lower_lrn(op):
    out = _out(op)
    element = out.element_type
    rank = out.rank
    before, after = (op.size - 1) // 2, op.size // 2
    squares = lb.elementwise([op.input], out.shape, element, lambda v: arith.mulf(v, v))
    low, high = [0] * rank, [0] * rank
    low[1], high[1] = before, after
    padded = lb.pad(squares, low, high, lb.scalar(element, 0))
    window = lb.empty([op.size], element)
    dims = [ir.AffineDimExpr.get(i) for i in range(rank + 1)]
    padded_map = [dims[0], dims[1] + dims[rank], *dims[2:rank]]
    sums = lb.generic(
        [padded, window],
        lb.filled(out.shape, element, lb.scalar(element, 0)),
        [padded_map, [rank], list(range(rank))],
        [lb.PARALLEL] * rank + [lb.REDUCTION],
        lambda sq, _, acc: arith.addf(acc, sq),
    )

    def normalize(x, total):
        scaled = arith.mulf(total, const(total, op.alpha / op.size))
        denominator = mmath.powf(arith.addf(scaled, const(total, op.bias)), const(total, op.beta))
        return arith.divf(x, denominator)

    return lb.elementwise([op.input, sums], out.shape, element, normalize)


@lowering("attention")
def lower_attention(op):
    out = _out(op)
    q, k = lb.ranked(op.q), lb.ranked(op.k)
    b, h, s, d = q.shape
    kv = k.shape[2]
    # Half-precision attention computes in f32, as PyTorch's does: scores summed over the head
    # dim and weights summed over thousands of keys.
    element = ir.F32Type.get() if str(out.element_type) in ("f16", "bf16") else out.element_type
    scale = op.scale if op.scale is not None else 1.0 / math.sqrt(d)
    zero = lb.scalar(element, 0)
    # scores[b, h, i, j] = scale * sum_d q[b, h, i, d] * k[b, h, j, d]
    scores = lb.generic(
        [widen(op.q), widen(op.k)],
        lb.filled([b, h, s, kv], element, zero),
        [[0, 1, 2, 4], [0, 1, 3, 4], [0, 1, 2, 3]],
        [lb.PARALLEL] * 4 + [lb.REDUCTION],
        lambda a, c, acc: arith.addf(acc, arith.mulf(a, c)),
    )
    offset = kv - s

    def scale_and_mask(v, _):
        scaled = arith.mulf(v, const(v, scale))
        if not op.causal:
            return scaled
        i = arith.index_cast(ir.IntegerType.get_signless(64), lb.index(2))
        j = arith.index_cast(ir.IntegerType.get_signless(64), lb.index(3))
        limit = arith.addi(i, lb.scalar(ir.IntegerType.get_signless(64), offset))
        future = arith.cmpi(arith.CmpIPredicate.sgt, j, limit)
        return arith.select(future, const(v, float("-inf")), scaled)

    full = [0, 1, 2, 3]
    masked = lb.generic(
        [scores],
        lb.empty([b, h, s, kv], element),
        [full, full],
        [lb.PARALLEL] * 4,
        scale_and_mask,
    )
    probs = softmax(masked, 3)
    # out[b, h, i, e] = sum_j probs[b, h, i, j] * v[b, h, j, e]
    weighted = lb.generic(
        [probs, widen(op.v)],
        lb.filled(out.shape, element, zero),
        [[0, 1, 2, 4], [0, 1, 4, 3], [0, 1, 2, 3]],
        [lb.PARALLEL] * 4 + [lb.REDUCTION],
        lambda p, v, acc: arith.addf(acc, arith.mulf(p, v)),
    )
    return narrow(weighted, out.element_type)


# ----------------------------------------------------------------------------------------------
# The pass.


def _pattern(lower):
    def rewrite(operation, rewriter):
        op = Graph.view(operation)
        with rewriter.ip, operation.location:
            value = lower(op)
        rewriter.replace_op(operation, [value])

    return rewrite


def _lower_tensor_concat(operation, rewriter):
    # graph.concat's inputs share one type (an IRDL limit), so inputs of different sizes along
    # the axis come as upstream tensor.concat; it lowers the same way.
    op = operation.opview
    with rewriter.ip, operation.location:
        value = _insert_slices(op.inputs, op.dim.value, ir.RankedTensorType(op.result.type))
    rewriter.replace_op(operation, [value])


def patterns(context: ir.Context) -> RewritePatternSet:
    """The graph-to-linalg rewrite patterns, one per graph op, and one for tensor.concat."""
    missing = set(Graph.ops) - set(_LOWERINGS)
    assert not missing, f"graph ops without a lowering: {sorted(missing)}"
    pattern_set = RewritePatternSet(context)
    for mnemonic, lower in _LOWERINGS.items():
        pattern_set.add(f"graph.{mnemonic}", _pattern(lower))
    pattern_set.add("tensor.concat", _lower_tensor_concat)
    return pattern_set


@register_pass("graph-to-linalg", "Lower graph ops to linalg, tensor, arith and math on tensors")
def graph_to_linalg(module: ir.Operation) -> None:
    apply_patterns_and_fold_greedily(module, patterns(module.context).freeze())
    reject(
        module,
        lambda op: op.name.startswith("graph."),
        lambda op: f"failed to lower '{op.name}' to linalg",
        "graph-to-linalg",
    )
