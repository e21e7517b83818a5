"""PyTorch models into the graph dialect, through `torch.export`, and a `torch.compile` backend.

`import_module(module, example_inputs)` exports the module, decomposes it to core ATen and
converts every ATen op to graph ops; parameters and buffers become constants (weights as
`dense_resource`) or, with `params="arguments"`, leading function arguments. An ATen op without
a converter is reported by name, with the FX node that uses it.

`torch_backend(target="cpu")` is a `torch.compile` backend: each graph that Dynamo captures is
compiled by strata; a graph strata cannot compile runs eagerly, with a warning that says why.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import torch
from mlir import ir
from mlir.dialects import func

from ..diagnostics import CompileError
from ..dialects import graph as g
from ..runtime.abi import dtype_of
from ..source import make_context
from .builder import GraphBuilder, UnsupportedModel, ceil_mode_padding, is_bf16, tensor_type


class TorchImportError(UnsupportedModel):
    """The module cannot be imported; the message names the ATen op and the FX node."""


_DTYPES = {
    torch.float32: np.float32,
    torch.float64: np.float64,
    torch.float16: np.float16,
    torch.int64: np.int64,
    torch.int32: np.int32,
    torch.int16: np.int16,
    torch.int8: np.int8,
    torch.bool: np.bool_,
}


def numpy_dtype(dtype: torch.dtype) -> np.dtype:
    if dtype == torch.bfloat16:
        return dtype_of("bf16")
    if dtype not in _DTYPES:
        raise TorchImportError(f"element type {dtype} is not supported")
    return np.dtype(_DTYPES[dtype])


def _to_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:  # torch's numpy() has no bfloat16: its bits, as ml_dtypes'
        return t.view(torch.int16).numpy().view(dtype_of("bf16"))
    return t.numpy()


def _to_torch(array: np.ndarray) -> torch.Tensor:
    array = np.ascontiguousarray(array)
    if is_bf16(array.dtype):
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


class _Builder(GraphBuilder):
    resource_prefix = "torch_weight"

    def __init__(self):
        super().__init__()
        self._folded: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def layout(self, x, key: tuple, compute: Callable[[np.ndarray], np.ndarray]):
        """A layout change (transpose, reshape) of a parameter, computed at import time and
        once per parameter and change: `nn.Linear` exports its weight transposed, and at run
        time that transpose moved 28 MB per call of a GPT-2 block; an LSTM transposes each
        weight once per step. Values computed at run time get None (build the op)."""
        if not isinstance(x, np.ndarray):
            return None
        found = self._folded.setdefault((id(x), key), (x, np.ascontiguousarray(compute(x))))
        return found[1]


# ----------------------------------------------------------------------------------------------
# ATen converters: fn(builder, *args, **kwargs) -> value (or tuple of values).

ATEN: dict[str, Callable] = {}


def aten(*names: str):
    def register(fn):
        for name in names:
            ATEN[name] = fn
        return fn

    return register


def supported_ops() -> list[str]:
    return sorted(ATEN)


def _binary(build, swap: bool = False):
    def convert(b, x, y, alpha=1, **_):
        lhs = x if isinstance(x, ir.Value) else None
        like = lhs if lhs is not None else y
        x, y = b.operand(like, x), b.operand(like, y)
        if alpha != 1:
            y = g.mul(y, b.scalar(y, alpha))
        return build(y, x) if swap else build(x, y)

    return convert


for _names, _build in {
    ("aten.add.Tensor", "aten.add.Scalar"): g.add,
    ("aten.sub.Tensor", "aten.sub.Scalar"): g.sub,
    ("aten.mul.Tensor", "aten.mul.Scalar"): g.mul,
    ("aten.div.Tensor", "aten.div.Scalar"): g.div,
    ("aten.maximum.default",): g.maximum,
    ("aten.minimum.default",): g.minimum,
    ("aten.eq.Tensor", "aten.eq.Scalar"): g.equal,
    ("aten.lt.Tensor", "aten.lt.Scalar"): g.less,
    ("aten.le.Tensor", "aten.le.Scalar"): g.less_equal,
    ("aten.gt.Tensor", "aten.gt.Scalar"): g.greater,
    ("aten.ge.Tensor", "aten.ge.Scalar"): g.greater_equal,
    ("aten.logical_and.default",): g.logical_and,
    ("aten.logical_or.default",): g.logical_or,
    ("aten.logical_xor.default",): g.logical_xor,
    ("aten.pow.Tensor_Tensor", "aten.pow.Tensor_Scalar"): g.pow,
}.items():
    aten(*_names)(_binary(_build))

aten("aten.rsub.Scalar", "aten.rsub.Tensor")(_binary(g.sub, swap=True))


@aten("aten.ne.Tensor", "aten.ne.Scalar")
def _ne(b, x, y):
    return g.logical_not(g.equal(b.operand(x, x), b.operand(x, y)))


_UNARY = {
    "aten.relu.default": g.relu,
    "aten.neg.default": g.neg,
    "aten.abs.default": g.abs,
    "aten.exp.default": g.exp,
    "aten.log.default": g.log,
    "aten.sqrt.default": g.sqrt,
    "aten.rsqrt.default": g.rsqrt,
    "aten.tanh.default": g.tanh,
    "aten.sigmoid.default": g.sigmoid,
    "aten.silu.default": g.silu,
    "aten.erf.default": g.erf,
    "aten.sin.default": g.sin,
    "aten.cos.default": g.cos,
    "aten.floor.default": g.floor,
    "aten.ceil.default": g.ceil,
    "aten.round.default": g.round,
    "aten.logical_not.default": g.logical_not,
    "aten.bitwise_not.default": g.logical_not,
}


def _unary(build):
    return lambda b, x: build(b.tensor(x))


for _name, _build in _UNARY.items():
    aten(_name)(_unary(_build))


@aten("aten.reciprocal.default")
def _reciprocal(b, x):
    return g.div(b.scalar(x, 1.0), b.tensor(x))


@aten("aten.gelu.default")
def _gelu(b, x, approximate="none"):
    return g.gelu(b.tensor(x), approximate=approximate)


@aten("aten.clamp.default", "aten.hardtanh.default", "aten.clamp.Tensor")
def _clamp(b, x, min=None, max=None):  # noqa: A002  (ATen's argument names)
    x = b.tensor(x)
    if min is not None:
        x = g.maximum(x, b.operand(x, min))
    if max is not None:
        x = g.minimum(x, b.operand(x, max))
    return x


@aten("aten.leaky_relu.default")
def _leaky_relu(b, x, negative_slope=0.01):
    x = b.tensor(x)
    return g.where(g.less(x, b.scalar(x, 0.0)), g.mul(x, b.scalar(x, negative_slope)), x)


@aten("aten.where.self")
def _where(b, condition, x, y):
    like = x if isinstance(x, ir.Value) else y
    return g.where(b.tensor(condition), b.operand(like, x), b.operand(like, y))


@aten("aten.masked_fill.Scalar", "aten.masked_fill.Tensor")
def _masked_fill(b, x, mask, value):
    x = b.tensor(x)
    return g.where(b.tensor(mask), b.operand(x, value), x)


@aten(
    "aten.clone.default",
    "aten.alias.default",
    "aten.detach.default",
    "aten.contiguous.default",
    "aten.lift_fresh_copy.default",
    "aten.dropout.default",
)
def _identity(b, x, *args, **kwargs):
    return x


@aten("aten._to_copy.default", "aten.to.dtype")
def _to_copy(b, x, *args, dtype=None, **kwargs):
    if args and isinstance(args[0], torch.dtype):
        dtype = args[0]
    return b.tensor(x) if dtype is None else b.cast(x, numpy_dtype(dtype))


# -- contractions, convolution, pooling, normalization ------------------------------------------


@aten("aten.mm.default", "aten.bmm.default", "aten.matmul.default")
def _matmul(b, x, y):
    return g.matmul(b.tensor(x), b.tensor(y))


@aten("aten.addmm.default")
def _addmm(b, bias, x, y, beta=1, alpha=1):
    product = g.matmul(b.tensor(x), b.tensor(y))
    if alpha != 1:
        product = g.mul(product, b.scalar(product, alpha))
    bias = b.tensor(bias)
    if beta != 1:
        bias = g.mul(bias, b.scalar(bias, beta))
    return g.add(product, bias)


@aten("aten.convolution.default")
def _convolution(b, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    if transposed:
        raise TorchImportError("transposed convolution is not supported")
    rank = len(stride)
    x, w = b.tensor(x), b.tensor(w)
    if rank == 1:
        x, w = b.as_2d(x), b.as_2d(w)
        stride, padding, dilation = [1, *stride], [0, *padding], [1, *dilation]
    elif rank != 2:
        raise TorchImportError(f"{rank}-D convolution is not supported (1-D and 2-D are)")
    operands = (x, w) if bias is None else (x, w, b.tensor(bias))
    result = g.conv2d(
        *operands,
        strides=list(stride),
        padding=[padding[0], padding[1], padding[0], padding[1]],
        dilations=list(dilation),
        groups=groups,
    )
    return b.from_2d(result) if rank == 1 else result


def _pool_padding(in_hw, kernel, stride, padding, ceil_mode):
    pads = [padding[0], padding[1], padding[0], padding[1]]
    return ceil_mode_padding(pads, in_hw, kernel, stride) if ceil_mode else pads


def _pair(v):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * 2 if len(v) == 1 else v


@aten("aten.max_pool2d_with_indices.default", "aten.max_pool2d.default")
def _max_pool2d(b, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    if any(d != 1 for d in _pair(dilation)):
        raise TorchImportError("max pooling with dilation is not supported")
    kernel, padding = _pair(kernel), _pair(padding)
    stride = _pair(stride) if stride else kernel
    x = b.tensor(x)
    pads = _pool_padding(b.shape(x)[2:], kernel, stride, padding, ceil_mode)
    out = g.max_pool2d(x, kernel=kernel, strides=stride, padding=pads)
    return (out, _Unsupported("the indices of max_pool2d_with_indices"))


@aten("aten.avg_pool2d.default")
def _avg_pool2d(
    b,
    x,
    kernel,
    stride=(),
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    if divisor_override is not None:
        raise TorchImportError("avg_pool2d with divisor_override is not supported")
    kernel, padding = _pair(kernel), _pair(padding)
    stride = _pair(stride) if stride else kernel
    x = b.tensor(x)
    pads = _pool_padding(b.shape(x)[2:], kernel, stride, padding, ceil_mode)
    return g.avg_pool2d(
        x, kernel=kernel, strides=stride, padding=pads, count_include_pad=count_include_pad
    )


@aten("aten._native_batch_norm_legit_no_training.default")
def _batch_norm(b, x, weight, bias, mean, var, momentum, eps):
    x = b.tensor(x)
    channels = b.shape(x)[1]
    weight = b.tensor(weight) if weight is not None else b.tensor(np.ones(channels, b.dtype(x)))
    bias = b.tensor(bias) if bias is not None else b.tensor(np.zeros(channels, b.dtype(x)))
    out = g.batch_norm(x, weight, bias, b.tensor(mean), b.tensor(var), epsilon=eps)
    unsupported = _Unsupported("the saved statistics of batch norm")
    return (out, unsupported, unsupported)


@aten("aten.native_layer_norm.default")
def _layer_norm(b, x, normalized_shape, weight, bias, eps):
    x = b.tensor(x)
    shape = list(normalized_shape)
    dtype = b.dtype(x)
    weight = b.tensor(weight) if weight is not None else b.tensor(np.ones(shape, dtype))
    bias = b.tensor(bias) if bias is not None else b.tensor(np.zeros(shape, dtype))
    axis = len(b.shape(x)) - len(shape)
    out = g.layer_norm(x, weight, bias, axis=axis, epsilon=eps)
    unsupported = _Unsupported("the saved statistics of layer norm")
    return (out, unsupported, unsupported)


@aten("aten._softmax.default", "aten.softmax.int")
def _softmax(b, x, dim, *args):
    x = b.tensor(x)
    return g.softmax(x, axis=dim % len(b.shape(x)))


@aten("aten._safe_softmax.default")
def _safe_softmax(b, x, dim, dtype=None):
    x = b.tensor(x) if dtype is None else b.tensor(_to_copy(b, x, dtype=dtype))
    return g.softmax(x, axis=dim % len(b.shape(x)), safe=True)


@aten("aten._log_softmax.default", "aten.log_softmax.int")
def _log_softmax(b, x, dim, *args):
    x = b.tensor(x)
    axis = dim % len(b.shape(x))
    shifted = g.sub(x, g.reduce_max(x, axes=[axis], keepdims=True))
    return g.sub(shifted, g.log(g.reduce_sum(g.exp(shifted), axes=[axis], keepdims=True)))


def _reduction(build):
    def convert(b, x, dims=None, keepdim=False, *, dtype=None):
        x = b.tensor(x)
        if dtype is not None:
            x = b.cast(x, numpy_dtype(dtype))
        rank = len(b.shape(x))
        if dims is None or (isinstance(dims, (list, tuple)) and not dims):
            dims = list(range(rank))
        dims = [dims] if isinstance(dims, int) else list(dims)
        return build(x, axes=[d % rank for d in dims], keepdims=bool(keepdim))

    return convert


for _names, _build in {
    ("aten.mean.dim", "aten.mean.default"): g.reduce_mean,
    ("aten.sum.dim_IntList", "aten.sum.default"): g.reduce_sum,
    ("aten.amax.default",): g.reduce_max,
    ("aten.amin.default",): g.reduce_min,
    ("aten.any.dim", "aten.any.dims"): g.reduce_max,
    ("aten.prod.dim_int",): g.reduce_prod,
}.items():
    aten(*_names)(_reduction(_build))


# -- data movement ------------------------------------------------------------------------------


@aten("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default")
def _view(b, x, shape):
    shape = [int(d) for d in shape]
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        shape[shape.index(-1)] = math.prod(b.shape(x)) // known
    folded = b.layout(x, ("reshape", *shape), lambda a: a.reshape(shape))
    return folded if folded is not None else b.reshape(x, shape)


def _transposed(b, x, perm: list[int]):
    folded = b.layout(x, ("transpose", *perm), lambda a: a.transpose(perm))
    return folded if folded is not None else g.transpose(b.tensor(x), perm=perm)


@aten("aten.permute.default")
def _permute(b, x, dims):
    rank = len(b.shape(x))
    return _transposed(b, x, [d % rank for d in dims])


@aten("aten.t.default")
def _t(b, x):
    return _transposed(b, x, [1, 0]) if len(b.shape(x)) == 2 else x


@aten("aten.transpose.int")
def _transpose(b, x, dim0, dim1):
    rank = len(b.shape(x))
    perm = list(range(rank))
    perm[dim0 % rank], perm[dim1 % rank] = perm[dim1 % rank], perm[dim0 % rank]
    return _transposed(b, x, perm)


@aten("aten.expand.default")
def _expand(b, x, sizes, *args, **kwargs):
    shape = b.shape(x)
    offset = len(sizes) - len(shape)
    target = [
        (shape[i - offset] if i >= offset else 1) if s == -1 else s for i, s in enumerate(sizes)
    ]
    if target == shape:
        return x
    return g.broadcast_to(b.tensor(x), result_type=tensor_type(target, b.dtype(x)))


@aten("aten.unsqueeze.default")
def _unsqueeze(b, x, dim):
    shape = b.shape(x)
    shape.insert(dim % (len(shape) + 1), 1)
    return b.reshape(x, shape)


@aten("aten.squeeze.dims", "aten.squeeze.dim", "aten.squeeze.default")
def _squeeze(b, x, dims=None):
    shape = b.shape(x)
    if dims is None:
        dims = [i for i, d in enumerate(shape) if d == 1]
    dims = {d % len(shape) for d in ([dims] if isinstance(dims, int) else dims)}
    return b.reshape(x, [d for i, d in enumerate(shape) if i not in dims or d != 1])


@aten("aten.slice.Tensor")
def _slice(b, x, dim=0, start=None, end=None, step=1):
    shape = b.shape(x)
    rank = len(shape)
    dim %= rank
    first, last, _ = slice(start, end, step).indices(shape[dim])
    if first >= last:
        raise TorchImportError("slices with no elements are not supported")
    if first == 0 and last == shape[dim] and step == 1:
        return x
    starts, ends, steps = [0] * rank, list(shape), [1] * rank
    starts[dim], ends[dim], steps[dim] = first, last, step
    return g.slice(b.tensor(x), starts=starts, ends=ends, steps=steps)


@aten("aten.as_strided.default", "aten.as_strided_copy.default")
def _as_strided(b, x, size, stride, storage_offset=None, *, source_layout):
    """`as_strided` over a tensor laid out densely (its dims in some order) is a view of its
    elements when the result's dims, by decreasing stride, walk one contiguous run of that
    memory: the elements in memory order, sliced to the run, reshaped and transposed into the
    result's dims, broadcast along its stride-0 dims (channels-last pooling exports as a
    mean and such a view). Any other strides read memory as values do not model it."""
    strides, base_offset = source_layout
    shape, size, stride = b.shape(x), [int(d) for d in size], [int(d) for d in stride]
    offset = (base_offset if storage_offset is None else int(storage_offset)) - base_offset
    described = f"sizes {size}, strides {stride} and offset {offset} over a {shape} tensor"
    order = _dense_order(shape, strides)
    live = sorted(
        (d for d in range(len(size)) if size[d] > 1 and stride[d]), key=lambda d: -stride[d]
    )
    run = 1
    for d in reversed(live):
        if order is None or stride[d] != run:
            raise TorchImportError(f"as_strided with {described} is not a view of its elements")
        run *= size[d]
    elements = math.prod(shape)
    if offset < 0 or offset + run > elements:
        raise TorchImportError(f"as_strided with {described} reads outside its elements")
    memory = g.transpose(b.tensor(x), perm=order) if order != sorted(order) else x
    flat = _slice(b, b.reshape(memory, [elements]), 0, offset, offset + run, 1)
    y = b.reshape(flat, [size[d] for d in live])
    perm = [live.index(d) for d in sorted(live)]
    if perm != sorted(perm):
        y = g.transpose(b.tensor(y), perm=perm)
    y = b.reshape(y, [size[d] if d in live else 1 for d in range(len(size))])
    return _expand(b, y, size)


def _dense_order(shape: list[int], strides: list[int]) -> list[int] | None:
    """The dims in memory order (outermost first) when the tensor's elements are dense in
    memory, each in one place; None when they leave gaps or overlap."""
    live = sorted((d for d in range(len(shape)) if shape[d] > 1), key=lambda d: -strides[d])
    step = 1
    for d in reversed(live):
        if strides[d] != step:
            return None
        step *= shape[d]
    return [d for d in range(len(shape)) if shape[d] <= 1] + live


@aten("aten.select.int")
def _select(b, x, dim, index):
    shape = b.shape(x)
    dim %= len(shape)
    index %= shape[dim]
    part = _slice(b, x, dim, index, index + 1, 1)
    return b.reshape(part, shape[:dim] + shape[dim + 1 :])


@aten("aten.cat.default", "aten.concat.default")
def _cat(b, tensors, dim=0):
    values = [b.tensor(t) for t in tensors if math.prod(b.shape(t)) != 0]
    return g.join(values, dim)


@aten("aten.split_with_sizes.default", "aten.split.Tensor")
def _split(b, x, sizes, dim=0):
    shape = b.shape(x)
    dim %= len(shape)
    if isinstance(sizes, int):
        sizes = [min(sizes, shape[dim] - i) for i in range(0, shape[dim], sizes)]
    parts, start = [], 0
    for size in sizes:
        parts.append(_slice(b, x, dim, start, start + size, 1))
        start += size
    return tuple(parts)


@aten("aten.embedding.default")
def _embedding(b, weight, indices, *args):
    return g.gather(b.tensor(weight), b.tensor(indices), axis=0)


def _default_dtype(value) -> np.dtype:
    """torch's dtype for a Python fill value when none is given."""
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    return np.dtype(np.int64 if isinstance(value, int) else np.float32)


@aten("aten.full.default")
def _full(b, size, value, *, dtype=None, **kwargs):
    dtype = numpy_dtype(dtype) if dtype is not None else _default_dtype(value)
    return np.full([int(s) for s in size], value, dtype=dtype)


def _filled_like(fill):
    def convert(b, x, value=None, *, dtype=None, **kwargs):
        dtype = numpy_dtype(dtype) if dtype is not None else b.dtype(x)
        return np.full(b.shape(x), fill if fill is not None else value, dtype=dtype)

    return convert


aten("aten.full_like.default")(_filled_like(None))
aten("aten.zeros_like.default")(_filled_like(0))
aten("aten.ones_like.default")(_filled_like(1))


@aten("aten.scalar_tensor.default")
def _scalar_tensor(b, value, *, dtype=None, **kwargs):
    return np.array(value, dtype=numpy_dtype(dtype) if dtype is not None else np.float32)


@aten("aten.arange.start_step", "aten.arange.default", "aten.arange.start")
def _arange(b, *args, dtype=None, **kwargs):
    values = np.arange(*args)
    return values.astype(numpy_dtype(dtype)) if dtype is not None else values


class _Unsupported:
    """A result that strata does not compute; using it is an error naming it."""

    def __init__(self, what: str):
        self.what = what


# ----------------------------------------------------------------------------------------------
# Export and conversion.


def export(module: torch.nn.Module, example_inputs: Sequence) -> torch.export.ExportedProgram:
    """torch.export to core ATen, but `_safe_softmax` (scaled_dot_product_attention's) kept
    whole: decomposed, its guard for rows of -inf is an i1 row reduction that runs as a scalar
    loop over every score (9% of a GPT-2 block at sequence 512); graph.softmax has it as
    `safe`."""
    with torch.no_grad():
        program = torch.export.export(module, tuple(example_inputs), strict=False)
    table = torch.export.default_decompositions()
    del table[torch.ops.aten._safe_softmax.default]
    return program.run_decompositions(table)


def import_module(
    module: torch.nn.Module | torch.export.ExportedProgram,
    example_inputs: Sequence = (),
    *,
    params: str = "constants",
    context: ir.Context | None = None,
    name: str = "main",
) -> ir.Module:
    """Exports `module` with `example_inputs` and converts it to a graph-dialect module.

    `params="constants"` folds parameters and buffers into the module as constants;
    `params="arguments"` makes them the leading function arguments, in the order of
    `program.graph_signature.input_specs`, before the user inputs.
    """
    if params not in ("constants", "arguments"):
        raise ValueError(f"params must be 'constants' or 'arguments', got {params!r}")
    if isinstance(module, torch.export.ExportedProgram):
        program = module
    else:
        if isinstance(module, torch.nn.Module):
            module = module.eval()
        program = export(module, example_inputs)
    context = context or make_context()
    with context, ir.Location.unknown():
        return _convert_program(program, params, name)


def _placeholder_values(program, params: str) -> tuple[dict, list]:
    """Constants for lifted parameters/buffers/constants; the placeholders that are arguments."""
    from torch.export.graph_signature import InputKind

    state = dict(program.state_dict)
    state.update(getattr(program, "constants", {}))
    constants, arguments = {}, []
    for spec in program.graph_signature.input_specs:
        lifted = spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)
        if lifted and params == "constants":
            value = state[spec.target]
            constants[spec.arg.name] = (
                _to_numpy(value) if isinstance(value, torch.Tensor) else value
            )
        elif spec.kind in (InputKind.USER_INPUT,) or lifted:
            arguments.append(spec.arg.name)
        else:
            raise TorchImportError(f"inputs of kind {spec.kind.name} are not supported")
    return constants, arguments


def _meta_type(node) -> ir.RankedTensorType:
    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor):
        raise TorchImportError(f"input '{node.name}' is not a tensor")
    return tensor_type(value.shape, numpy_dtype(value.dtype))


def _convert_program(program, params: str, name: str) -> ir.Module:
    graph = program.graph_module.graph
    constants, argument_names = _placeholder_values(program, params)
    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    arg_types = [_meta_type(placeholders[a]) for a in argument_names]
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        fn = func.FuncOp(name, (arg_types, []))
    block = fn.add_entry_block()
    values: dict = dict(constants)
    for arg_name, arg in zip(argument_names, block.arguments, strict=True):
        values[arg_name] = arg
    builder = _Builder()
    with ir.InsertionPoint(block):
        results = None
        for node in graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                results = [_use(builder, values, r, node) for r in _flatten(node.args[0])]
                break
            with ir.Location.name(node.name):
                values[node.name] = _convert_node(builder, values, node)
        func.ReturnOp(results)
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(arg_types, [r.type for r in results])
    )
    fn.attributes["arg_names"] = ir.ArrayAttr.get([ir.StringAttr.get(a) for a in argument_names])
    if not module.operation.verify():
        raise TorchImportError("the imported module does not verify")
    return module


def _flatten(args):
    if isinstance(args, (list, tuple)):
        return [a for item in args for a in _flatten(item)]
    return [args]


def _use(builder, values, arg, user):
    value = values[arg.name]
    if isinstance(value, _Unsupported):
        raise TorchImportError(f"node '{user.name}' uses {value.what}, which is not supported")
    return builder.tensor(value)


def _argument(values, arg):
    """Node arguments to converter arguments: FX nodes become their values."""
    if isinstance(arg, torch.fx.Node):
        return values[arg.name]
    if isinstance(arg, (list, tuple)):
        return type(arg)(_argument(values, a) for a in arg)
    return arg


# Ops whose result from constants the converters compute themselves, once per parameter.
_LAYOUT_OPS = {
    "aten.view.default",
    "aten._unsafe_view.default",
    "aten.reshape.default",
    "aten.permute.default",
    "aten.t.default",
    "aten.transpose.int",
}
_FOLD_LIMIT = 1 << 22  # elements: larger results of constants are computed at run time


def _fold_constant(node, target: str, args, kwargs) -> np.ndarray | None:
    """An op whose operands are all known at import time (a causal mask built from aranges
    and comparisons) is computed by PyTorch itself, with its exact semantics, and becomes a
    constant: no kernel computes it at run time (the 512 x 512 mask of a GPT-2 block, scalar
    because of its i64 operands, took 1.3 ms a call). Random ops are never folded."""
    if target in _LAYOUT_OPS or target in _READS_MEMORY:
        return None
    operands = [*_flatten(list(args)), *_flatten(list(kwargs.values()))]
    if any(isinstance(v, (ir.Value, _Unsupported)) for v in operands):
        return None
    result = node.meta.get("val")
    if not isinstance(result, torch.Tensor) or result.numel() > _FOLD_LIMIT:
        return None
    if torch.Tag.nondeterministic_seeded in getattr(node.target, "tags", ()):
        return None

    def to_torch(value):
        if isinstance(value, np.ndarray):
            return _to_torch(value)
        if isinstance(value, (list, tuple)):
            return type(value)(to_torch(v) for v in value)
        return value

    with torch.no_grad():
        computed = node.target(*to_torch(args), **{k: to_torch(v) for k, v in kwargs.items()})
    return _to_numpy(computed) if isinstance(computed, torch.Tensor) else None


# Converters of ops defined on a tensor's memory rather than its values.
_READS_MEMORY = {"aten.as_strided.default", "aten.as_strided_copy.default"}


def _convert_node(builder, values, node):
    if node.op != "call_function":
        raise TorchImportError(f"node '{node.name}': {node.op} nodes are not supported")
    if node.target is operator.getitem:
        source, index = node.args
        return values[source.name][index]
    target = str(node.target)
    if target.startswith("aten._assert") or target == "aten.sym_constrain_range_for_size.default":
        return None
    args = _argument(values, node.args)
    kwargs = {k: _argument(values, v) for k, v in node.kwargs.items()}
    folded = _fold_constant(node, target, args, kwargs)  # any op, converted or not
    if folded is not None:
        return folded
    convert = ATEN.get(target)
    if convert is None:
        raise TorchImportError(f"node '{node.name}': ATen op '{target}' is not supported")
    if target in _READS_MEMORY:  # values carry no strides: the source's come from its meta
        source = node.args[0].meta["val"]
        kwargs["source_layout"] = (list(source.stride()), source.storage_offset())
    kwargs.pop("device", None)
    kwargs.pop("layout", None)
    kwargs.pop("pin_memory", None)
    kwargs.pop("memory_format", None)
    for value in [*args, *kwargs.values()]:
        if isinstance(value, _Unsupported):
            raise TorchImportError(f"node '{node.name}' uses {value.what}, which is not supported")
    try:
        return convert(builder, *args, **kwargs)
    except TorchImportError as error:
        raise TorchImportError(f"node '{node.name}' ({target}): {error}") from None
    except (ValueError, TypeError) as error:
        raise TorchImportError(f"node '{node.name}' ({target}): {error}") from None


# ----------------------------------------------------------------------------------------------
# torch.compile backend.


class CompiledGraph:
    """A Dynamo graph compiled by strata: called with the graph's tensors, returns its outputs."""

    def __init__(self, executable, returns_list: bool):
        self.executable = executable
        self.returns_list = returns_list

    def __call__(self, *tensors):
        arrays = [_to_numpy(t) for t in tensors]
        outputs = self.executable(*arrays)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        results = [_to_torch(o) for o in outputs]
        return results if self.returns_list else tuple(results)


def compile_graph(gm: torch.fx.GraphModule, example_inputs: Sequence, target: str = "cpu"):
    """Compiles one Dynamo-captured graph; raises when strata cannot compile it."""
    from .. import compile as compile_module

    if not all(isinstance(x, torch.Tensor) for x in example_inputs):
        raise TorchImportError(
            "the graph has symbolic sizes; strata compiles static shapes "
            "(pass dynamic=False to torch.compile)"
        )
    output = next(n for n in gm.graph.nodes if n.op == "output")
    returns_list = isinstance(output.args[0], list)
    module = import_module(gm, example_inputs, params="constants")
    return CompiledGraph(compile_module(module, target=target), returns_list)


def torch_backend(target: str = "cpu") -> Callable:
    """A `torch.compile` backend: `torch.compile(model, backend=strata.torch_backend())`."""

    def backend(gm: torch.fx.GraphModule, example_inputs):
        try:
            return compile_graph(gm, example_inputs, target)
        except (TorchImportError, CompileError) as error:
            warnings.warn(f"strata: running a graph eagerly: {error}", stacklevel=2)
            return gm.forward

    return backend
