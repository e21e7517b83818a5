"""The `graph` dialect: tensor ops of ML models, with static shapes and numpy semantics.

Ops print in MLIR's generic syntax, e.g.
`%0 = "graph.softmax"(%x) {axis = 1 : i64} : (tensor<8x10xf32>) -> tensor<8x10xf32>`.
Elementwise ops broadcast like numpy; every result type is written out and verified against
the type the op's semantics infer. Builders are snake_case module functions named after the
mnemonics (`graph.softmax(x, axis=1)`), returning the result Value.
"""

import math

from mlir import ir
from mlir.dialects import tensor as tensor_dialect

from .dsl import (
    BoolAttr,
    Dialect,
    ElementsAttr,
    FloatAttr,
    I64ArrayAttr,
    IntAttr,
    Operand,
    OptionalOperand,
    Result,
    StrAttr,
    VariadicOperand,
    VerifyError,
)


class Graph(Dialect, name="graph"):
    """Tensor-level ops of models: what to compute, not how."""


# ----------------------------------------------------------------------------------------------
# Shape helpers shared by the verifiers and the lowering.


def is_float(t: ir.Type) -> bool:
    return isinstance(t, ir.FloatType)


def is_int(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType)


def tensor(shape, element_type: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element_type)


def broadcast_shapes(*shapes: list[int]) -> list[int]:
    """numpy broadcasting of static shapes; raises VerifyError when they are incompatible."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            shown = ", ".join("x".join(map(str, s)) or "scalar" for s in shapes)
            raise VerifyError(f"operand shapes are not broadcast-compatible: {shown}")
        out.append(dims.pop() if dims else 1)
    return out


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < max(rank, 1):
        raise VerifyError(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def _same_element_type(*types: ir.RankedTensorType) -> ir.Type:
    elements = {t.element_type for t in types}
    if len(elements) != 1:
        raise VerifyError("operands must have the same element type")
    return elements.pop()


def _require_float(t: ir.RankedTensorType, what: str = "operand") -> None:
    if not is_float(t.element_type):
        raise VerifyError(f"{what} element type must be floating point, got {t.element_type}")


def _check_length(name: str, values: list[int], length: int) -> None:
    if len(values) != length:
        raise VerifyError(f"'{name}' must have {length} elements, got {len(values)}")


def _check_positive(name: str, values: list[int]) -> None:
    if any(v <= 0 for v in values):
        raise VerifyError(f"'{name}' must be positive")


# ----------------------------------------------------------------------------------------------
# Elementwise ops.


def _define(mnemonic: str, doc: str, fields: dict, infer, defaults: dict | None = None):
    """Defines an op class from its fields, for families of ops that differ only in name."""
    namespace = {
        "__doc__": doc,
        "__annotations__": fields,
        "infer": staticmethod(infer),
        "__module__": __name__,
        **(defaults or {}),
    }
    class_name = "".join(p.capitalize() for p in mnemonic.split("_")) + "Op"
    return type(class_name, (Graph.Operation,), namespace, name=mnemonic)


def _binary(mnemonic: str, doc: str, float_only: bool = False):
    def infer(sig):
        element = _same_element_type(sig.lhs, sig.rhs)
        if float_only or not is_int(element):
            _require_float(sig.lhs)
        return tensor(broadcast_shapes(sig.lhs.shape, sig.rhs.shape), element)

    return _define(mnemonic, doc, {"lhs": Operand, "rhs": Operand, "result": Result}, infer)


AddOp = _binary("add", "lhs + rhs, broadcast like numpy.")
SubOp = _binary("sub", "lhs - rhs, broadcast like numpy.")
MulOp = _binary("mul", "lhs * rhs, broadcast like numpy.")
DivOp = _binary("div", "lhs / rhs (integers: truncating signed division), broadcast like numpy.")
MaximumOp = _binary("maximum", "Elementwise maximum (NaN-propagating for floats).")
MinimumOp = _binary("minimum", "Elementwise minimum (NaN-propagating for floats).")
PowOp = _binary("pow", "lhs ** rhs for floating-point tensors.", float_only=True)


def _unary(mnemonic: str, doc: str, allow_int: bool = False):
    def infer(sig):
        if not allow_int or not is_int(sig.input.element_type):
            _require_float(sig.input)
        return sig.input

    return _define(mnemonic, doc, {"input": Operand, "result": Result}, infer)


NegOp = _unary("neg", "-input.", allow_int=True)
AbsOp = _unary("abs", "|input|.", allow_int=True)
ExpOp = _unary("exp", "e ** input.")
LogOp = _unary("log", "Natural logarithm.")
SqrtOp = _unary("sqrt", "Square root.")
RsqrtOp = _unary("rsqrt", "1 / sqrt(input).")
TanhOp = _unary("tanh", "Hyperbolic tangent.")
SigmoidOp = _unary("sigmoid", "1 / (1 + exp(-input)).")
ReluOp = _unary("relu", "max(input, 0).")
SiluOp = _unary("silu", "input * sigmoid(input).")
ErfOp = _unary("erf", "The error function.")
FloorOp = _unary("floor", "Largest integer not greater than input.")
CeilOp = _unary("ceil", "Smallest integer not less than input.")
RoundOp = _unary("round", "Nearest integer, halfway cases to even (like numpy.round).")
SinOp = _unary("sin", "Sine.")
CosOp = _unary("cos", "Cosine.")


def _is_bool(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and t.width == 1


def _compare(mnemonic: str, doc: str):
    def infer(sig):
        _same_element_type(sig.lhs, sig.rhs)
        return tensor(
            broadcast_shapes(sig.lhs.shape, sig.rhs.shape), ir.IntegerType.get_signless(1)
        )

    return _define(mnemonic, doc, {"lhs": Operand, "rhs": Operand, "result": Result}, infer)


EqualOp = _compare("equal", "lhs == rhs (i1 result), broadcast like numpy.")
LessOp = _compare("less", "lhs < rhs (i1 result; integers signed), broadcast like numpy.")
LessEqualOp = _compare("less_equal", "lhs <= rhs (i1 result), broadcast like numpy.")
GreaterOp = _compare("greater", "lhs > rhs (i1 result), broadcast like numpy.")
GreaterEqualOp = _compare("greater_equal", "lhs >= rhs (i1 result), broadcast like numpy.")


def _require_bool(t: ir.RankedTensorType, what: str = "operand") -> None:
    if not _is_bool(t.element_type):
        raise VerifyError(f"{what} element type must be i1, got {t.element_type}")


def _logical(mnemonic: str, doc: str):
    def infer(sig):
        _require_bool(sig.lhs)
        _require_bool(sig.rhs)
        return tensor(broadcast_shapes(sig.lhs.shape, sig.rhs.shape), sig.lhs.element_type)

    return _define(mnemonic, doc, {"lhs": Operand, "rhs": Operand, "result": Result}, infer)


LogicalAndOp = _logical("logical_and", "lhs and rhs on i1 tensors, broadcast like numpy.")
LogicalOrOp = _logical("logical_or", "lhs or rhs on i1 tensors, broadcast like numpy.")
LogicalXorOp = _logical("logical_xor", "lhs xor rhs on i1 tensors, broadcast like numpy.")


class LogicalNotOp(Graph.Operation, name="logical_not"):
    """not input, on an i1 tensor."""

    input: Operand
    result: Result

    @staticmethod
    def infer(sig):
        _require_bool(sig.input)
        return sig.input


class WhereOp(Graph.Operation, name="where"):
    """condition ? x : y elementwise; the three operands broadcast like numpy."""

    condition: Operand
    x: Operand
    y: Operand
    result: Result

    @staticmethod
    def infer(sig):
        _require_bool(sig.condition, "condition")
        element = _same_element_type(sig.x, sig.y)
        shape = broadcast_shapes(sig.condition.shape, sig.x.shape, sig.y.shape)
        return tensor(shape, element)


class GeluOp(Graph.Operation, name="gelu"):
    """GELU: x * Phi(x) with `approximate = "none"` (erf) or `"tanh"` (the tanh formula)."""

    input: Operand
    approximate: StrAttr = "none"
    result: Result

    @staticmethod
    def infer(sig):
        _require_float(sig.input)
        if sig.approximate not in ("none", "tanh"):
            raise VerifyError(f'\'approximate\' must be "none" or "tanh", got "{sig.approximate}"')
        return sig.input


class ClampOp(Graph.Operation, name="clamp"):
    """min(max(input, min), max)."""

    input: Operand
    min: FloatAttr
    max: FloatAttr
    result: Result

    @staticmethod
    def infer(sig):
        _require_float(sig.input)
        if sig.min > sig.max:
            raise VerifyError(f"'min' ({sig.min}) must not exceed 'max' ({sig.max})")
        return sig.input


class CastOp(Graph.Operation, name="cast"):
    """Converts every element to the result element type (float or int; ints are signed)."""

    input: Operand
    result: Result

    @staticmethod
    def infer(sig):
        if sig.result is None:
            return None
        for t in (sig.input.element_type, sig.result.element_type):
            if not (is_float(t) or is_int(t)):
                raise VerifyError(f"cannot cast element type {t}")
        return tensor(sig.input.shape, sig.result.element_type)


# ----------------------------------------------------------------------------------------------
# Contractions, convolution, pooling, normalization.


def _matmul_shape(lhs: list[int], rhs: list[int]) -> list[int]:
    if not lhs or not rhs:
        raise VerifyError("operands must have rank at least 1")
    a = [1] + lhs if len(lhs) == 1 else lhs
    b = rhs + [1] if len(rhs) == 1 else rhs
    if a[-1] != b[-2]:
        raise VerifyError(
            f"contraction dimensions differ: lhs has {a[-1]} columns, rhs has {b[-2]} rows"
        )
    shape = broadcast_shapes(a[:-2], b[:-2]) + [a[-2], b[-1]]
    if len(lhs) == 1:
        del shape[-2]
    if len(rhs) == 1:
        del shape[-1]
    return shape


class MatmulOp(Graph.Operation, name="matmul"):
    """numpy.matmul: batch dims broadcast, 1-D operands are promoted and the unit dim dropped.

    The result element type may be a wider float than the inputs' (f16 x f16 -> f32
    accumulation); otherwise it is the inputs' element type.
    """

    lhs: Operand
    rhs: Operand
    result: Result

    @staticmethod
    def infer(sig):
        element = _same_element_type(sig.lhs, sig.rhs)
        _require_float(sig.lhs)
        shape = _matmul_shape(list(sig.lhs.shape), list(sig.rhs.shape))
        out = element
        if sig.result is not None and sig.result.element_type != element:
            wider = sig.result.element_type
            if not is_float(wider) or ir.FloatType(wider).width <= ir.FloatType(element).width:
                raise VerifyError(f"result element type {wider} must be {element} or a wider float")
            out = wider
        return tensor(shape, out)


def _window_output(size: int, window: int, stride: int, pad: int, dilation: int = 1) -> int:
    return (size + pad - dilation * (window - 1) - 1) // stride + 1


class Conv2dOp(Graph.Operation, name="conv2d"):
    """2-D convolution, NCHW input, OIHW weights (I = C / groups), optional bias [O].

    `padding` is [top, left, bottom, right]; `strides` and `dilations` are [h, w].
    """

    input: Operand
    weight: Operand
    bias: OptionalOperand
    strides: I64ArrayAttr = (1, 1)
    padding: I64ArrayAttr = (0, 0, 0, 0)
    dilations: I64ArrayAttr = (1, 1)
    groups: IntAttr = 1
    result: Result

    @staticmethod
    def infer(sig):
        element = _same_element_type(sig.input, sig.weight, *([sig.bias] if sig.bias else []))
        _require_float(sig.input)
        if sig.input.rank != 4 or sig.weight.rank != 4:
            raise VerifyError("input and weight must have rank 4 (NCHW, OIHW)")
        _check_length("strides", sig.strides, 2)
        _check_length("dilations", sig.dilations, 2)
        _check_length("padding", sig.padding, 4)
        _check_positive("strides", sig.strides)
        _check_positive("dilations", sig.dilations)
        if any(p < 0 for p in sig.padding):
            raise VerifyError("'padding' must be non-negative")
        n, c, h, w = sig.input.shape
        o, i, kh, kw = sig.weight.shape
        groups = sig.groups
        if groups <= 0 or c % groups or o % groups:
            raise VerifyError(
                f"groups ({groups}) must divide input channels ({c}) and output channels ({o})"
            )
        if i * groups != c:
            raise VerifyError(
                f"weight has {i} input channels per group, expected {c // groups} "
                f"({c} channels in {groups} groups)"
            )
        if sig.bias is not None and list(sig.bias.shape) != [o]:
            raise VerifyError(f"bias must have shape [{o}]")
        top, left, bottom, right = sig.padding
        oh = _window_output(h, kh, sig.strides[0], top + bottom, sig.dilations[0])
        ow = _window_output(w, kw, sig.strides[1], left + right, sig.dilations[1])
        if oh <= 0 or ow <= 0:
            raise VerifyError("the kernel is larger than the padded input")
        return tensor([n, o, oh, ow], element)


def _pool_infer(sig):
    _require_float(sig.input)
    if sig.input.rank != 4:
        raise VerifyError("input must have rank 4 (NCHW)")
    _check_length("kernel", sig.kernel, 2)
    _check_length("strides", sig.strides, 2)
    _check_length("padding", sig.padding, 4)
    _check_positive("kernel", sig.kernel)
    _check_positive("strides", sig.strides)
    top, left, bottom, right = sig.padding
    if any(p < 0 for p in sig.padding):
        raise VerifyError("'padding' must be non-negative")
    if max(top, bottom) >= sig.kernel[0] or max(left, right) >= sig.kernel[1]:
        raise VerifyError("padding must be smaller than the kernel")
    n, c, h, w = sig.input.shape
    oh = _window_output(h, sig.kernel[0], sig.strides[0], top + bottom)
    ow = _window_output(w, sig.kernel[1], sig.strides[1], left + right)
    if oh <= 0 or ow <= 0:
        raise VerifyError("the kernel is larger than the padded input")
    return tensor([n, c, oh, ow], sig.input.element_type)


class MaxPool2dOp(Graph.Operation, name="max_pool2d"):
    """Max over `kernel` windows of an NCHW tensor; padding never wins, a NaN in a window is
    its max, and the sign of a zero max is unspecified."""

    input: Operand
    kernel: I64ArrayAttr
    strides: I64ArrayAttr = (1, 1)
    padding: I64ArrayAttr = (0, 0, 0, 0)
    result: Result

    infer = staticmethod(_pool_infer)


class AvgPool2dOp(Graph.Operation, name="avg_pool2d"):
    """Mean over `kernel` windows of an NCHW tensor.

    Padded positions count towards the divisor only with `count_include_pad = true`.
    """

    input: Operand
    kernel: I64ArrayAttr
    strides: I64ArrayAttr = (1, 1)
    padding: I64ArrayAttr = (0, 0, 0, 0)
    count_include_pad: BoolAttr = False
    result: Result

    infer = staticmethod(_pool_infer)


class BatchNormOp(Graph.Operation, name="batch_norm"):
    """Inference batch norm over dim 1: (x - mean) / sqrt(var + epsilon) * scale + bias."""

    input: Operand
    scale: Operand
    bias: Operand
    mean: Operand
    var: Operand
    epsilon: FloatAttr = 1e-5
    result: Result

    @staticmethod
    def infer(sig):
        _same_element_type(sig.input, sig.scale, sig.bias, sig.mean, sig.var)
        _require_float(sig.input)
        if sig.input.rank < 2:
            raise VerifyError("input must have rank at least 2 (N, C, ...)")
        channels = sig.input.shape[1]
        for name in ("scale", "bias", "mean", "var"):
            if list(getattr(sig, name).shape) != [channels]:
                raise VerifyError(f"'{name}' must have shape [{channels}]")
        return sig.input


class SoftmaxOp(Graph.Operation, name="softmax"):
    """exp(x - max) / sum(exp(x - max)) along `axis` (numerically stable). With `safe`, a
    row whose inputs are all -inf gives 0 rather than NaN (PyTorch's `_safe_softmax`, which
    `scaled_dot_product_attention` uses for a query that may attend to no key)."""

    input: Operand
    axis: IntAttr = -1
    safe: BoolAttr = False
    result: Result

    @staticmethod
    def infer(sig):
        _require_float(sig.input)
        normalize_axis(sig.axis, sig.input.rank)
        return sig.input


def _norm_infer(sig, params):
    _same_element_type(sig.input, *[getattr(sig, p) for p in params])
    _require_float(sig.input)
    axis = normalize_axis(sig.axis, sig.input.rank)
    normalized = list(sig.input.shape[axis:])
    for name in params:
        if list(getattr(sig, name).shape) != normalized:
            shown = "x".join(map(str, normalized))
            raise VerifyError(f"'{name}' must have the normalized shape {shown}")
    if sig.epsilon < 0:
        raise VerifyError("'epsilon' must be non-negative")
    return sig.input


class LayerNormOp(Graph.Operation, name="layer_norm"):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta over axes axis..rank-1."""

    input: Operand
    gamma: Operand
    beta: Operand
    axis: IntAttr = -1
    epsilon: FloatAttr = 1e-5
    result: Result

    @staticmethod
    def infer(sig):
        return _norm_infer(sig, ("gamma", "beta"))


class RmsNormOp(Graph.Operation, name="rms_norm"):
    """x / sqrt(mean(x^2) + epsilon) * gamma over axes axis..rank-1."""

    input: Operand
    gamma: Operand
    axis: IntAttr = -1
    epsilon: FloatAttr = 1e-6
    result: Result

    @staticmethod
    def infer(sig):
        return _norm_infer(sig, ("gamma",))


# ----------------------------------------------------------------------------------------------
# Reductions.


def reduced_shape(shape: list[int], axes: list[int], keepdims: bool) -> list[int]:
    if keepdims:
        return [1 if i in axes else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in axes]


def normalize_axes(axes: list[int], rank: int) -> list[int]:
    normalized = sorted(normalize_axis(a, rank, "axis") for a in axes)
    if len(set(normalized)) != len(normalized):
        raise VerifyError("'axes' must not repeat an axis")
    return normalized


def _reduce(mnemonic: str, doc: str, allow_int: bool):
    def infer(sig):
        if not allow_int or not is_int(sig.input.element_type):
            _require_float(sig.input)
        axes = normalize_axes(sig.axes, sig.input.rank)
        return tensor(
            reduced_shape(list(sig.input.shape), axes, sig.keepdims), sig.input.element_type
        )

    fields = {"input": Operand, "axes": I64ArrayAttr, "keepdims": BoolAttr, "result": Result}
    return _define(mnemonic, doc, fields, infer, {"keepdims": False})


ReduceSumOp = _reduce("reduce_sum", "Sum over `axes`; `keepdims` keeps them as size 1.", True)
ReduceMeanOp = _reduce("reduce_mean", "Mean over `axes`; `keepdims` keeps them as size 1.", False)
ReduceMaxOp = _reduce("reduce_max", "Maximum over `axes`; `keepdims` keeps them as size 1.", True)
ReduceMinOp = _reduce("reduce_min", "Minimum over `axes`; `keepdims` keeps them as size 1.", True)
ReduceProdOp = _reduce("reduce_prod", "Product over `axes`; `keepdims` keeps them as size 1.", True)


class LrnOp(Graph.Operation, name="lrn"):
    """Local response normalization across channels (dim 1), like ONNX LRN:
    x / (bias + alpha / size * sum of x**2 over the `size` channels around c) ** beta."""

    input: Operand
    size: IntAttr
    alpha: FloatAttr = 1e-4
    beta: FloatAttr = 0.75
    bias: FloatAttr = 1.0
    result: Result

    @staticmethod
    def infer(sig):
        _require_float(sig.input)
        if sig.input.rank < 3:
            raise VerifyError(f"input must have rank 3 or more (N, C, ...), got {sig.input.rank}")
        if sig.size <= 0:
            raise VerifyError(f"'size' must be positive, got {sig.size}")
        return sig.input


# ----------------------------------------------------------------------------------------------
# Data movement.


class ReshapeOp(Graph.Operation, name="reshape"):
    """Same elements in row-major order, new shape (the result type)."""

    input: Operand
    result: Result

    @staticmethod
    def infer(sig):
        if sig.result is None:
            return None
        if math.prod(sig.input.shape) != math.prod(sig.result.shape):
            raise VerifyError(
                f"cannot reshape {math.prod(sig.input.shape)} elements into "
                f"{math.prod(sig.result.shape)}"
            )
        return tensor(sig.result.shape, sig.input.element_type)


class BroadcastToOp(Graph.Operation, name="broadcast_to"):
    """numpy.broadcast_to: the result type is the target shape."""

    input: Operand
    result: Result

    @staticmethod
    def infer(sig):
        if sig.result is None:
            return None
        target = list(sig.result.shape)
        try:
            compatible = broadcast_shapes(list(sig.input.shape), target) == target
        except VerifyError:
            compatible = False
        if not compatible:
            raise VerifyError(f"cannot broadcast {sig.input} to {sig.result}")
        return tensor(target, sig.input.element_type)


class TransposeOp(Graph.Operation, name="transpose"):
    """Permutes dims: result.shape[i] = input.shape[perm[i]]."""

    input: Operand
    perm: I64ArrayAttr
    result: Result

    @staticmethod
    def infer(sig):
        if sorted(sig.perm) != list(range(sig.input.rank)):
            raise VerifyError(f"'perm' {sig.perm} is not a permutation of 0..{sig.input.rank - 1}")
        return tensor([sig.input.shape[p] for p in sig.perm], sig.input.element_type)


class ConcatOp(Graph.Operation, name="concat"):
    """Joins the inputs along `axis`; all other dims must agree.

    IRDL binds every operand of a variadic group to one type, so the inputs must also have the
    same size along `axis` (IRDL reports "expected '<type>' but got ..."). Inputs of different
    sizes are written as upstream `tensor.concat`, which --graph-to-linalg lowers the same way.
    The checks below state the full contract for when that restriction is lifted.
    """

    inputs: VariadicOperand
    axis: IntAttr
    result: Result

    @staticmethod
    def infer(sig):
        if not sig.inputs:
            raise VerifyError("requires at least one input")
        element = _same_element_type(*sig.inputs)
        rank = sig.inputs[0].rank
        if any(t.rank != rank for t in sig.inputs):
            raise VerifyError("inputs must have the same rank")
        axis = normalize_axis(sig.axis, rank)
        shape = list(sig.inputs[0].shape)
        for t in sig.inputs[1:]:
            if any(t.shape[i] != shape[i] for i in range(rank) if i != axis):
                raise VerifyError(f"inputs must agree on every dim except the axis {axis}")
        shape[axis] = sum(t.shape[axis] for t in sig.inputs)
        return tensor(shape, element)


def slice_bounds(size: int, start: int, end: int, step: int) -> tuple[int, int]:
    """numpy's clamping of a positive-step slice: (first index, element count)."""
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(0, min(size, end + size if end < 0 else end))
    return start, max(0, -(-(end - start) // step))


class SliceOp(Graph.Operation, name="slice"):
    """x[starts:ends:steps] per dim, numpy semantics for negative and out-of-range bounds."""

    input: Operand
    starts: I64ArrayAttr
    ends: I64ArrayAttr
    steps: I64ArrayAttr
    result: Result

    @staticmethod
    def infer(sig):
        rank = sig.input.rank
        for name in ("starts", "ends", "steps"):
            _check_length(name, getattr(sig, name), rank)
        _check_positive("steps", sig.steps)
        shape = [
            slice_bounds(d, s, e, st)[1]
            for d, s, e, st in zip(sig.input.shape, sig.starts, sig.ends, sig.steps, strict=True)
        ]
        return tensor(shape, sig.input.element_type)


class PadOp(Graph.Operation, name="pad"):
    """Pads every dim: `pads` = [begin_0, ..., begin_n-1, end_0, ..., end_n-1] (ONNX order).

    `mode` "constant" fills with `value`; "edge" repeats the border element; "reflect" mirrors
    the input without repeating the border (numpy's "reflect").
    """

    input: Operand
    pads: I64ArrayAttr
    value: FloatAttr = 0.0
    mode: StrAttr = "constant"
    result: Result

    @staticmethod
    def infer(sig):
        rank = sig.input.rank
        _check_length("pads", sig.pads, 2 * rank)
        if any(p < 0 for p in sig.pads):
            raise VerifyError("'pads' must not be negative")
        if sig.mode not in ("constant", "edge", "reflect"):
            raise VerifyError(f'\'mode\' must be "constant", "edge" or "reflect", got "{sig.mode}"')
        shape = list(sig.input.shape)
        if sig.mode == "reflect" and any(
            max(sig.pads[i], sig.pads[rank + i]) >= shape[i] for i in range(rank)
        ):
            raise VerifyError("reflect padding must be smaller than the padded dim")
        if sig.mode == "edge" and any(
            shape[i] == 0 and sig.pads[i] + sig.pads[rank + i] for i in range(rank)
        ):
            raise VerifyError("edge padding needs a nonempty dim")
        padded = [d + sig.pads[i] + sig.pads[rank + i] for i, d in enumerate(shape)]
        return tensor(padded, sig.input.element_type)


class GatherOp(Graph.Operation, name="gather"):
    """numpy.take(x, indices, axis): negative indices count from the end."""

    input: Operand
    indices: Operand
    axis: IntAttr = 0
    result: Result

    @staticmethod
    def infer(sig):
        if not is_int(sig.indices.element_type):
            raise VerifyError(f"indices must be integers, got {sig.indices.element_type}")
        axis = normalize_axis(sig.axis, sig.input.rank)
        shape = list(sig.input.shape)
        return tensor(
            shape[:axis] + list(sig.indices.shape) + shape[axis + 1 :], sig.input.element_type
        )


class ConstantOp(Graph.Operation, name="constant"):
    """A constant tensor: `dense<...>` or `dense_resource<...>` (weights)."""

    value: ElementsAttr
    result: Result

    @staticmethod
    def infer(sig):
        return sig.value.type


class AttentionOp(Graph.Operation, name="attention"):
    """softmax(q @ k^T * scale [+ causal mask]) @ v on [B, H, S, D] tensors.

    `scale` defaults to 1 / sqrt(D). With `causal`, query i attends to keys j <= i + (Skv - S).
    """

    q: Operand
    k: Operand
    v: Operand
    causal: BoolAttr = False
    scale: FloatAttr = None
    result: Result

    @staticmethod
    def infer(sig):
        element = _same_element_type(sig.q, sig.k, sig.v)
        _require_float(sig.q)
        if any(t.rank != 4 for t in (sig.q, sig.k, sig.v)):
            raise VerifyError("q, k and v must have rank 4 ([B, H, S, D])")
        b, h, s, d = sig.q.shape
        if list(sig.k.shape[:2]) != [b, h] or list(sig.v.shape[:2]) != [b, h]:
            raise VerifyError("q, k and v must agree on batch and heads")
        if sig.k.shape[3] != d:
            raise VerifyError(f"k has head dim {sig.k.shape[3]}, q has {d}")
        if sig.v.shape[2] != sig.k.shape[2]:
            raise VerifyError("k and v must have the same sequence length")
        return tensor([b, h, s, sig.v.shape[3]], element)


def join(values: list[ir.Value], axis: int) -> ir.Value:
    """Concatenates along `axis`: graph.concat when the inputs share a type, else upstream
    tensor.concat (IRDL gives all of graph.concat's inputs one type; see ConcatOp)."""
    types = [ir.RankedTensorType(v.type) for v in values]
    axis = normalize_axis(axis, types[0].rank)
    if len({str(t) for t in types}) == 1:
        return ConcatOp.build(values, axis=axis)
    shape = list(types[0].shape)
    shape[axis] = sum(t.shape[axis] for t in types)
    return tensor_dialect.ConcatOp(tensor(shape, types[0].element_type), axis, values).result


def __getattr__(name: str):
    """Builders: `graph.<mnemonic>(*operands, result_type=..., loc=..., ip=..., **attrs)`."""
    op = Graph.ops.get(name)
    if op is None:
        raise AttributeError(name)
    return op.build


__all__ = ["Graph", "broadcast_shapes", "join", "normalize_axis", "normalize_axes", "reduced_shape"]
