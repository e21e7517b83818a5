"""`--elide-result-copies`: results written straight into the caller's out-parameters.

After buffer-results-to-out-params, a function that gets its result from a call still
allocates a buffer, passes it to the callee and copies it into its own out-parameter (the
callee's signature changes after the caller's results were rewritten). When the out-parameter
is used by that copy alone, the buffer is the out-parameter: the allocation and the copy go.
Run it before deallocation is inserted.
"""

from __future__ import annotations

from mlir import ir

from .ir_query import defining_op, find_ops, user_op
from .registry import register_pass


def _elide(copy: ir.Operation) -> bool:
    source, target = copy.operands
    alloc = defining_op(source)
    if alloc is None or alloc.name != "memref.alloc":
        return False
    if not isinstance(target.owner, ir.Block) or alloc.block != copy.block:
        return False
    if source.type != target.type or len(list(target.uses)) != 1:
        return False
    # Every other use of the buffer must be an op of this block that runs before the copy.
    for use in source.uses:
        user = user_op(use)
        if user == copy:
            continue
        if user.block != copy.block or not user.is_before_in_block(copy):
            return False
    source.replace_all_uses_with(target)
    copy.erase()
    alloc.erase()
    return True


@register_pass("elide-result-copies", "Write results into out-parameters instead of copying")
def elide_result_copies(module: ir.Operation) -> None:
    for copy in find_ops(module, lambda op: op.name == "memref.copy"):
        _elide(copy)
