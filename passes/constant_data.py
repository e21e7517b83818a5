"""The bytes of constant tensors at compile time, so that passes can lay weights out once, in
the compiler, rather than on every call.

Frontends put weights in `dense_resource` blobs. The Python bindings create those but cannot
read them back (the C API reads one element per call), so the blob is read through the C++
accessor `DenseResourceElementsAttr::getData()` that the bindings' library exports: zero-copy,
a view of the blob's memory. Where that symbol is missing (another MLIR build) or a blob has no
data (parsed without its resource section), `elements_of` answers None and callers keep the
work at run time.
"""

from __future__ import annotations

import ctypes
import functools
import math

import numpy as np
from mlir import ir
from mlir.dialects import arith

from .. import mlir_capi
from ..runtime.abi import dtype_of
from .ir_query import defining_op


class _ArrayRef(ctypes.Structure):
    _fields_ = (("data", ctypes.c_void_p), ("size", ctypes.c_size_t))


@functools.cache
def _blob_reader():
    try:
        get_data = mlir_capi.library()._ZN4mlir25DenseResourceElementsAttr7getDataEv
    except (OSError, AttributeError):
        return None
    # A member function: `this` points at the attribute, one pointer to its storage. The
    # result (pointer, length) comes back in two registers (x86-64 and AArch64 alike).
    get_data.restype = _ArrayRef
    get_data.argtypes = (ctypes.POINTER(ctypes.c_void_p),)

    def read(attr: ir.Attribute) -> memoryview | None:
        blob = get_data(ctypes.byref(ctypes.c_void_p(mlir_capi.pointer(attr))))
        if not blob.data or not blob.size:
            return None
        return memoryview((ctypes.c_char * blob.size).from_address(blob.data)).cast("B")

    return read


def elements_of(attr: ir.Attribute) -> np.ndarray | None:
    """The elements of a dense or dense_resource tensor attribute, read-only, in its shape;
    None where they cannot be read. A dense_resource array views the blob: keep the attribute
    (or the op holding it) alive while the array is used."""
    attr = attr.maybe_downcast()
    if isinstance(attr, ir.DenseElementsAttr):
        dense, data = attr, None
        if not attr.is_splat:
            try:
                data = memoryview(attr)
            except BufferError:  # the bindings give no buffer of bf16 (or other) elements
                return None
    else:
        try:
            dense = ir.DenseResourceElementsAttr(attr)  # no downcast is registered for it
        except ValueError:
            return None
        data = None if (read := _blob_reader()) is None else read(dense)
    shaped = ir.ShapedType(dense.type)
    dtype = dtype_of(str(shaped.element_type))
    # i1 is stored bit-packed in dense attributes
    if data is None or dtype is None or dtype == np.bool_:
        return None
    if data.nbytes != dtype.itemsize * math.prod(shaped.shape):
        return None
    return np.frombuffer(data, dtype).reshape(shaped.shape)


def constant_array(value: ir.Value) -> np.ndarray | None:
    """The elements of `value` if it is a constant (arith's or the graph dialect's), seen
    through reshapes (which keep the row-major bytes); None otherwise."""
    op = defining_op(value)
    if op is None:
        return None
    if op.name in ("tensor.collapse_shape", "tensor.expand_shape"):
        source = constant_array(op.operands[0])
        return None if source is None else source.reshape(ir.ShapedType(value.type).shape)
    if op.name not in ("arith.constant", "graph.constant"):
        return None
    return elements_of(op.attributes["value"])


def splat_value(value: ir.Value) -> float | None:
    """The one value of a splat float constant (arith's or the graph dialect's); None
    otherwise."""
    op = defining_op(value)
    if op is None or op.name not in ("arith.constant", "graph.constant"):
        return None
    attr = op.attributes["value"].maybe_downcast()
    if not isinstance(attr, ir.DenseFPElementsAttr) or not attr.is_splat:
        return None
    return ir.FloatAttr(attr.get_splat_value()).value


def resource_attr(array: np.ndarray, element: ir.Type, name: str) -> ir.Attribute:
    """`array` (C-contiguous, owned by the attribute from now on) as a dense_resource blob
    named after `name`."""
    shaped = ir.RankedTensorType.get(list(array.shape), element)
    try:
        buffer = memoryview(array)
    except ValueError:  # no buffer format (ml_dtypes' bfloat16): its bits, typed by `element`
        buffer = memoryview(array.view(f"u{array.dtype.itemsize}"))
    return ir.DenseResourceElementsAttr.get_from_buffer(buffer, name, shaped)


def resource_constant(array: np.ndarray, element: ir.Type, name: str) -> ir.Value:
    """An `arith.constant` of `array` as a dense_resource blob (see `resource_attr`), at the
    insertion point."""
    attr = resource_attr(array, element, name)
    return arith.constant(attr.type, attr)
