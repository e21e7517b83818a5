"""`--lower-copies`: copies between strided buffers become loops in the module itself.

memref-to-llvm lowers a `memref.copy` between contiguous buffers (identity layouts, or static
shapes whose elements are one run in memory: a concat's part, a slice of whole rows) to a
memcpy, but any other one to a call of `memrefCopy`, a function of MLIR's runner-utils
library. A shared library built by strata must not depend on that library, so such copies
become `linalg.copy` ops, which --lower-loops turns into loops (that LLVM vectorizes when the
innermost stride is 1). Run it after bufferization.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import linalg

from .ir_query import find_ops
from .registry import register_pass


def contiguous(value: ir.Value) -> bool:
    """Whether memref-to-llvm copies `value` with a memcpy (its rule, restated: an identity
    layout, or a static, non-empty shape whose inner dims are packed and outer dims are 1)."""
    t = ir.MemRefType(value.type)
    layout = t.layout
    if isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(t.rank):
        return True
    if not t.has_static_shape or math.prod(t.shape) == 0:
        return False
    strides, _ = t.get_strides_and_offset()
    dim, packed = t.rank - 1, 1
    while dim >= 0 and strides[dim] == packed:
        packed *= t.shape[dim]
        dim -= 1
    return all(size == 1 for size in t.shape[: dim + 1])


@register_pass("lower-copies", "Strided memref.copy ops to linalg.copy (no runtime library)")
def lower_copies(module: ir.Operation) -> None:
    with module.context:
        for copy in find_ops(module, lambda op: op.name == "memref.copy"):
            source, target = copy.operands
            if contiguous(source) and contiguous(target):
                continue
            with ir.InsertionPoint(copy), copy.location:
                linalg.copy(source, outs=[target])
            copy.erase()
