"""`--lower-copies`: copies between strided buffers become loops in the module itself.

memref-to-llvm lowers a `memref.copy` between identity-layout buffers to a memcpy, but any
other one to a call of `memrefCopy`, a function of MLIR's runner-utils library. A shared
library built by strata must not depend on that library, so such copies become `linalg.copy`
ops, which --lower-loops turns into loops (that LLVM vectorizes when the innermost stride is
1). Run it after bufferization.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg

from .ir_query import find_ops
from .registry import register_pass


def _identity_layout(value: ir.Value) -> bool:
    layout = ir.MemRefType(value.type).layout
    return isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(
        ir.MemRefType(value.type).rank
    )


@register_pass("lower-copies", "Strided memref.copy ops to linalg.copy (no runtime library)")
def lower_copies(module: ir.Operation) -> None:
    with module.context:
        for copy in find_ops(module, lambda op: op.name == "memref.copy"):
            source, target = copy.operands
            if _identity_layout(source) and _identity_layout(target):
                continue
            with ir.InsertionPoint(copy), copy.location:
                linalg.copy(source, outs=[target])
            copy.erase()
