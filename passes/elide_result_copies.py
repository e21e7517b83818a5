"""`--elide-result-copies`: results written straight into the caller's out-parameters.

After buffer-results-to-out-params, a function that gets its result from a call still
allocates a buffer, passes it to the callee and copies it into its own out-parameter (the
callee's signature changes after the caller's results were rewritten). When the out-parameter
is used by that copy alone, the buffer is the out-parameter: the allocation and the copy go.
The same holds inside loops: a row kernel computes each row into a buffer and copies it into
a subview of the out-parameter; when the subview can be formed where the buffer is allocated
(its operands exist there) and the buffer's users accept any strided layout, the row is
computed in place. A buffer copied in through an expand_shape (a conv's product, in [O, OH*OW])
is the out-parameter collapsed back. Copies of a buffer onto itself (left by tiling) are
dropped.
Run it before deallocation is inserted.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import memref

from .ir_query import attributes_of, defining_op, find_ops, user_op
from .registry import register_pass

# Users that take a strided view as well as the buffer itself.
_LAYOUT_AGNOSTIC = (
    "memref.subview",
    "memref.copy",
    "vector.transfer_read",
    "vector.transfer_write",
)


def _elide_into_subview(copy: ir.Operation, alloc: ir.Operation, target: ir.Value) -> bool:
    view = defining_op(target)
    if view is None or view.name != "memref.subview" or view.block != copy.block:
        return False
    # The view must lay the buffer out as the buffer does (same strides), so that every view
    # taken of the buffer keeps its type.
    buffer_type, view_type = ir.MemRefType(copy.operands[0].type), ir.MemRefType(target.type)
    if len(list(target.uses)) != 1 or buffer_type.shape != view_type.shape:
        return False
    if buffer_type.get_strides_and_offset()[0] != view_type.get_strides_and_offset()[0]:
        return False
    if not all(_layout_agnostic(use) for use in copy.operands[0].uses if user_op(use) != copy):
        return False
    # The view moves up to the allocation: what it is built from must exist there. Values of
    # enclosing blocks do (the view, in the allocation's block, uses them).
    for operand in view.operands:
        owner = defining_op(operand)
        if owner is not None and owner.block == alloc.block and not owner.is_before_in_block(alloc):
            return False
    for use in copy.operands[0].uses:
        user = user_op(use)
        if user != copy and user.block != copy.block and not _nested_before(user, copy):
            return False
    view.move_before(alloc)
    buffer = copy.operands[0]
    copy.erase()
    _retarget(buffer, target)
    alloc.erase()
    return True


def _layout_agnostic(use: ir.OpOperand) -> bool:
    user = user_op(use)
    if user.name == "memref.subview":
        return all(_layout_agnostic(u) for u in user.results[0].uses)
    return user.name in _LAYOUT_AGNOSTIC or user.name.startswith("linalg.")


def _retarget(old: ir.Value, new: ir.Value) -> None:
    """Replaces `old` by `new`, a view with the same strides but maybe another offset:
    subviews of it are rebuilt with the offset that follows from `new`'s."""
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    source_strides, source_offset = ir.MemRefType(new.type).get_strides_and_offset()
    for use in list(old.uses):
        user = user_op(use)
        if user.name != "memref.subview":
            continue
        result = ir.MemRefType(user.results[0].type)
        offsets = list(ir.DenseI64ArrayAttr(user.attributes["static_offsets"]))
        if source_offset == dynamic or dynamic in offsets:
            offset = "?"
        else:
            offset = str(
                source_offset + sum(o * st for o, st in zip(offsets, source_strides, strict=True))
            )
        strides = ", ".join(map(str, result.get_strides_and_offset()[0]))
        shape = "".join(f"{d}x" for d in result.shape)
        new_type = ir.Type.parse(
            f"memref<{shape}{result.element_type}, strided<[{strides}], offset: {offset}>>"
        )
        operands = [new if v == old else v for v in user.operands]
        with user.location, ir.InsertionPoint(user):
            rebuilt = ir.Operation.create(
                "memref.subview",
                results=[new_type],
                operands=operands,
                attributes=attributes_of(user),
            )
        _retarget(user.results[0], rebuilt.results[0])
        user.erase()
    old.replace_all_uses_with(new)


def _nested_before(user: ir.Operation, copy: ir.Operation) -> bool:
    """Whether `user` sits in an op of the copy's block that runs before the copy."""
    op = user
    while op.parent is not None and op.block != copy.block:
        op = op.parent
    return op.block == copy.block and op.is_before_in_block(copy)


def _elide_reshaped(copy: ir.Operation, reshape: ir.Operation) -> bool:
    """A buffer copied into the out-parameter through an expand_shape (a conv's [O, OH*OW]
    product, an NCHW result): the buffer is the out-parameter collapsed back."""
    source, target = copy.operands
    alloc = defining_op(reshape.operands[0])
    if alloc is None or alloc.name != "memref.alloc" or alloc.block != copy.block:
        return False
    if not isinstance(target.owner, ir.Block) or source.type != target.type:
        return False
    if len(list(target.uses)) != 1 or len(list(source.uses)) != 1:
        return False
    if not all(_runs_before(user_op(use), copy) for use in alloc.results[0].uses):
        return False
    with copy.location, ir.InsertionPoint(alloc):
        collapsed = memref.CollapseShapeOp(
            alloc.results[0].type, target, reshape.attributes["reassociation"]
        ).result
    copy.erase()
    reshape.erase()
    alloc.results[0].replace_all_uses_with(collapsed)
    alloc.erase()
    return True


def _runs_before(user: ir.Operation, copy: ir.Operation) -> bool:
    """Whether `user` is `copy`'s reshape or runs before `copy` in its block (or within an op
    of it that does)."""
    if user.name == "memref.expand_shape" and user.results[0] == copy.operands[0]:
        return True
    if user.block == copy.block:
        return user.is_before_in_block(copy)
    return _nested_before(user, copy)


def _elide(copy: ir.Operation) -> bool:
    source, target = copy.operands
    if source == target:
        copy.erase()
        return True
    reshape = defining_op(source)
    if reshape is not None and reshape.name == "memref.expand_shape":
        return _elide_reshaped(copy, reshape)
    alloc = defining_op(source)
    if alloc is None or alloc.name != "memref.alloc":
        return False
    if alloc.block == copy.block and not isinstance(target.owner, ir.Block):
        return _elide_into_subview(copy, alloc, target)
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
