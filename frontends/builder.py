"""What the frontends share: element types, constants, and a builder over values that are
either MLIR Values or numpy arrays known at import time."""

from __future__ import annotations

import itertools
import math

import numpy as np
from mlir import ir

from ..dialects import graph as g
from ..runtime.abi import dtype_of

INLINE_ELEMENTS = 16
"""Constants up to this many elements are written inline; larger ones become resources."""


class UnsupportedModel(Exception):
    """The model uses something strata cannot import; the message says what and where."""


_ELEMENT_TYPES = {
    np.dtype(np.float32): lambda: ir.F32Type.get(),
    np.dtype(np.float64): lambda: ir.F64Type.get(),
    np.dtype(np.float16): lambda: ir.F16Type.get(),
    np.dtype(np.int8): lambda: ir.IntegerType.get_signless(8),
    np.dtype(np.int16): lambda: ir.IntegerType.get_signless(16),
    np.dtype(np.int32): lambda: ir.IntegerType.get_signless(32),
    np.dtype(np.int64): lambda: ir.IntegerType.get_signless(64),
    np.dtype(np.bool_): lambda: ir.IntegerType.get_signless(1),
}

_NUMPY_TYPES = {
    "f32": np.float32,
    "f64": np.float64,
    "f16": np.float16,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "i1": np.bool_,
}


def is_bf16(dtype: np.dtype) -> bool:
    """ml_dtypes' bfloat16, known by name: ml_dtypes is imported only for bf16 models."""
    return dtype.name == "bfloat16"


def element_type(dtype) -> ir.Type:
    dtype = np.dtype(dtype)
    if is_bf16(dtype):
        return ir.BF16Type.get()
    make = _ELEMENT_TYPES.get(dtype)
    if make is None:
        raise UnsupportedModel(f"element type {dtype} is not supported")
    return make()


def numpy_dtype(t: ir.Type) -> np.dtype:
    return dtype_of("bf16") if str(t) == "bf16" else np.dtype(_NUMPY_TYPES[str(t)])


def tensor_type(shape, dtype) -> ir.RankedTensorType:
    return ir.RankedTensorType.get([int(d) for d in shape], element_type(dtype))


def _is_splat(array: np.ndarray) -> bool:
    if array.size == 0:
        return False
    if all(s == 0 for s in array.strides):  # np.broadcast_to of one value
        return True
    flat = array.reshape(-1)
    return bool(np.all(flat == flat[0]))


_resource_ids = itertools.count()


def elements_attr(array: np.ndarray, resource_prefix: str = "weight") -> ir.Attribute:
    """`dense<v>` for splats, inline `dense<...>` for small arrays, else a `dense_resource`."""
    t = tensor_type(array.shape, array.dtype)
    if _is_splat(array):
        value = array.reshape(-1)[0]
        if isinstance(t.element_type, ir.FloatType):
            scalar = ir.FloatAttr.get(t.element_type, float(value))
        else:
            scalar = ir.IntegerAttr.get(t.element_type, int(value))
        return ir.DenseElementsAttr.get_splat(t, scalar)
    contiguous = np.ascontiguousarray(array)
    if is_bf16(array.dtype):  # no buffer format for bfloat16: its bits, typed by `t`
        contiguous = contiguous.view(np.uint16)
    if array.dtype == np.bool_:  # the bindings take i1 from numpy bools, without type=
        return ir.DenseElementsAttr.get(contiguous)
    if array.size <= INLINE_ELEMENTS:
        return ir.DenseElementsAttr.get(contiguous, type=t.element_type)
    name = f"{resource_prefix}_{next(_resource_ids)}"
    return ir.DenseResourceElementsAttr.get_from_buffer(memoryview(contiguous), name, t)


def constant(array: np.ndarray, resource_prefix: str = "weight") -> ir.Value:
    array = np.asarray(array)
    attr = elements_attr(array, resource_prefix)
    return g.constant(value=attr, result_type=tensor_type(array.shape, array.dtype))


class GraphBuilder:
    """Builds graph ops from values that are MLIR Values or numpy arrays (constants)."""

    resource_prefix = "weight"

    def __init__(self):
        # One graph.constant per array and block: an LSTM's weights are used once per step,
        # and a copy per use made 128 copies of each (900 MB of LLVM IR).
        self._constants: dict[tuple[int, ir.Block], tuple[np.ndarray, ir.Value]] = {}

    def tensor(self, x) -> ir.Value:
        """The Value of `x`, materializing numpy constants as graph.constant (once per array
        in a block)."""
        if isinstance(x, ir.Value):
            return x
        if not isinstance(x, np.ndarray):
            return constant(np.asarray(x), self.resource_prefix)
        key = (id(x), ir.InsertionPoint.current.block)
        if key not in self._constants:  # the array is kept, so its id is not reused
            self._constants[key] = (x, constant(x, self.resource_prefix))
        return self._constants[key][1]

    @staticmethod
    def shape(x) -> list[int]:
        if isinstance(x, ir.Value):
            return list(ir.RankedTensorType(x.type).shape)
        return list(np.shape(x))

    @staticmethod
    def dtype(x) -> np.dtype:
        if isinstance(x, ir.Value):
            return numpy_dtype(ir.RankedTensorType(x.type).element_type)
        return np.asarray(x).dtype

    def scalar(self, like, value) -> ir.Value:
        """A rank-0 constant of `like`'s element type (broadcasts in elementwise ops)."""
        return self.tensor(np.array(value, dtype=self.dtype(like)))

    def operand(self, like, value) -> ir.Value:
        """`value` as a tensor operand; a Python number becomes a scalar of `like`'s type."""
        if isinstance(value, (bool, int, float)):
            return self.scalar(like, value)
        return self.tensor(value)

    def reshape(self, x, shape) -> ir.Value:
        x = self.tensor(x)
        if self.shape(x) == list(shape):
            return x
        return g.reshape(x, result_type=tensor_type(shape, self.dtype(x)))

    def cast(self, x, dtype) -> ir.Value:
        if not isinstance(x, ir.Value):
            return self.tensor(np.asarray(x).astype(dtype))
        if self.dtype(x) == np.dtype(dtype):
            return x
        return g.cast(x, result_type=tensor_type(self.shape(x), dtype))

    def as_2d(self, x) -> ir.Value:
        """A 1-D spatial tensor [N, C, L] as a 2-D one [N, C, 1, L]."""
        shape = self.shape(x)
        return self.reshape(x, shape[:2] + [1] + shape[2:])

    def from_2d(self, x) -> ir.Value:
        """The inverse of `as_2d`."""
        shape = self.shape(x)
        return self.reshape(x, shape[:2] + shape[3:])


def ceil_mode_padding(pads: list[int], in_shape, kernel, strides) -> list[int]:
    """Pooling pads [begin..., end...] grown at the end so that the floor formula of the output
    size gives ceil_mode's; a window may not start in the end padding."""
    rank = len(kernel)
    pads = list(pads)
    for i in range(rank):
        padded = in_shape[i] + pads[i] + pads[rank + i]
        out = math.ceil((padded - kernel[i]) / strides[i]) + 1
        if (out - 1) * strides[i] >= in_shape[i] + pads[i]:
            out -= 1
        pads[rank + i] += max(0, (out - 1) * strides[i] + kernel[i] - padded)
    return pads
