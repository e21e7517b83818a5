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
dropped. A buffer copied whole into a contiguous slice of a larger one (each operand of a
concat along channels, one image) is that slice: both become views of one allocation of
bytes, so the kernels write their results where the concat wants them. The other way
round, a contiguous slice copied whole into a buffer that is only read after (each group of
a grouped conv's channels, handed to its kernel) is the slice: ShuffleNet's 128 such copies
go, 4.50 -> 4.41 ms on 1 thread of a znver4, 4.67 -> 4.50 on 2. A call only reads an
argument whose uses in the callee are all reads.
Run it before deallocation is inserted.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, memref

from .ir_query import (
    VIEW_OPS,
    attributes_of,
    buffer_root,
    callee_name,
    constant_value,
    defining_op,
    enclosing,
    find_ops,
    symbol_name,
    top_level,
    user_op,
    users_through_views,
)
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


def _identity_strides(shape: list[int]) -> list[int]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return strides[::-1]


def _identity(memref_type: ir.MemRefType) -> bool:
    plain = ir.MemRefType.get(memref_type.shape, memref_type.element_type)
    return memref_type.layout == plain.layout


def _contiguous_range(view: ir.Value) -> tuple[int, int] | None:
    """The elements [start, end) of its source that a static subview covers, when they are one
    contiguous run of it (a slice of an outer dim, the dims before it of size 1); else None."""
    op = defining_op(view)
    if op is None or op.name != "memref.subview":
        return None
    source, result = ir.MemRefType(op.operands[0].type), ir.MemRefType(view.type)
    if not source.has_static_shape or not _identity(source):
        return None
    strides, offset = result.get_strides_and_offset()
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    if offset == dynamic or not result.has_static_shape:
        return None
    expected = _identity_strides(list(result.shape))
    pairs = zip(result.shape, strides, expected, strict=True)
    if any(size > 1 and stride != step for size, stride, step in pairs):
        return None
    return offset, offset + math.prod(result.shape)


def _bytes_of(buffer: ir.Value, block: ir.Block) -> tuple[ir.Operation, int] | None:
    """The byte allocation of this block that `buffer` is a view of, and its offset there:
    a memref.view of an i8 memref.alloc (what the slice rewrite makes), or None."""
    view = defining_op(buffer)
    if view is None or view.name != "memref.view" or view.block != block:
        return None
    raw, offset = defining_op(view.operands[0]), constant_value(view.operands[1])
    if raw is None or raw.name != "memref.alloc" or raw.block != block or offset is None:
        return None
    return raw, int(offset)


def _byte_range(view: ir.Value) -> tuple[int, int] | None:
    """The bytes [start, end) of its root buffer (see `buffer_root`) that `view` covers, for
    static views of bytes and contiguous static subviews; None where not known."""
    memref_type = ir.MemRefType(view.type)
    if not memref_type.has_static_shape:
        return None
    op = defining_op(view)
    if op is None or op.name not in VIEW_OPS:
        return (0, _byte_size(memref_type)) if _identity(memref_type) else None
    base = _byte_range(op.operands[0])
    if base is None:
        return None
    if op.name == "memref.view":
        offset = constant_value(op.operands[1])
        return (
            None
            if offset is None
            else (base[0] + offset, base[0] + offset + _byte_size(memref_type))
        )
    elements = _contiguous_range(view) if op.name == "memref.subview" else None
    if elements is None:
        return None
    width = memref_type.element_type.width // 8
    return base[0] + elements[0] * width, base[0] + elements[1] * width


def _touches(op: ir.Operation, root: ir.Value, byte_range: tuple[int, int]) -> bool:
    """Whether `op` (or an op nested in it) may read or write the bytes `byte_range` of the
    buffer `root`; views are not accesses."""
    found = False

    def visit(inner):
        nonlocal found
        inner = inner.operation
        if found:
            return
        if inner.name not in VIEW_OPS:
            for value in inner.operands:
                if not isinstance(value.type, ir.MemRefType) or buffer_root(value) != root:
                    continue
                other = _byte_range(value)
                if other is None or (other[0] < byte_range[1] and byte_range[0] < other[1]):
                    found = True
                    return
        for region in inner.regions:
            for block in region.blocks:
                for nested in block.operations:
                    visit(nested)

    visit(op)
    return found


def _storage(source: ir.Value, block: ir.Block) -> ir.Operation | None:
    """The allocation of this block that holds all of `source` and nothing else: its own
    memref.alloc (identity layout), or the byte allocation it is the whole of (a concat's
    buffer after an earlier rewrite, copied into the next concat)."""
    op = defining_op(source)
    if op is not None and op.name == "memref.alloc" and op.block == block:
        return op if _identity(ir.MemRefType(source.type)) else None
    bytes_of = _bytes_of(source, block)
    if bytes_of is None or bytes_of[1] != 0:
        return None
    raw = bytes_of[0]
    if _byte_size(ir.MemRefType(source.type)) != ir.MemRefType(raw.results[0].type).shape[0]:
        return None
    views = [user_op(use) for use in raw.results[0].uses]
    return raw if all(view.name == "memref.view" for view in views) else None


def _elide_into_slice(copy: ir.Operation) -> bool:
    """A buffer copied whole into a contiguous slice of a larger buffer (an operand of a
    concat along channels, one image) is that slice. The larger buffer becomes a view of an
    allocation of bytes, and the buffer a view of the same bytes at the slice's offset, of its
    own type: the calls that write it keep their signatures. A buffer that is itself such a
    byte allocation (DenseNet's concat of the previous concat) moves into the slice whole.
    Nothing may touch the slice from the buffer's first use to the copy, nor the buffer after
    it."""
    source, target = copy.operands
    block = copy.block
    slice_range = _contiguous_range(target)
    storage = _storage(source, block)
    if slice_range is None or storage is None or defining_op(target).block != block:
        return False
    whole = defining_op(target).operands[0]
    whole_op = defining_op(whole)
    bytes_of = _bytes_of(whole, block)
    if bytes_of is None and (
        whole_op is None or whole_op.name != "memref.alloc" or whole_op.block != block
    ):
        return False
    found = users_through_views(storage.results[0])
    if found is None:
        return False
    users = [top_level(user, block) for user in found if user != copy]
    if any(user is None or not user.is_before_in_block(copy) for user in users):
        return False
    ops = [op.operation for op in block.operations]
    end = ops.index(copy)
    start = min((ops.index(user) for user in users), default=end)
    root, slice_bytes = buffer_root(whole), _byte_range(target)
    if slice_bytes is None or any(_touches(op, root, slice_bytes) for op in ops[start:end]):
        return False
    width = ir.MemRefType(source.type).element_type.width // 8
    view = _slice_view(whole, bytes_of, storage, slice_range[0] * width)
    copy.erase()
    storage.results[0].replace_all_uses_with(view)
    storage.erase()
    if not list(target.uses):
        defining_op(target).erase()
    return True


def _elide_from_slice(copy: ir.Operation) -> bool:
    """A contiguous slice of a buffer copied whole into a buffer that is only read after the
    copy (one group of a grouped conv's channels, handed to the group's kernel) is that
    slice: the buffer becomes a view of the larger buffer's bytes at the slice's offset.
    Nothing may touch the slice from the copy to the buffer's last use."""
    source, target = copy.operands
    block = copy.block
    alloc, slice_range = defining_op(target), _contiguous_range(source)
    if alloc is None or alloc.name != "memref.alloc" or alloc.block != block or not slice_range:
        return False
    whole = defining_op(source).operands[0]
    whole_op, bytes_of = defining_op(whole), _bytes_of(whole, block)
    if bytes_of is None and (
        whole_op is None or whole_op.name != "memref.alloc" or whole_op.block != block
    ):
        return False
    found = users_through_views(target)
    if found is None:
        return False
    readers = [user for user in found if user != copy and user.name not in VIEW_OPS]
    tops = [top_level(user, block) for user in readers]
    if any(top is None or not copy.is_before_in_block(top) for top in tops):
        return False
    if not all(_reads_only(user, target) for user in readers):
        return False
    ops = [op.operation for op in block.operations]
    start, end = ops.index(copy), max((ops.index(top) for top in tops), default=ops.index(copy))
    root, slice_bytes = buffer_root(whole), _byte_range(source)
    if slice_bytes is None or any(
        _touches(op, root, slice_bytes) for op in ops[start + 1 : end + 1]
    ):
        return False
    width = ir.MemRefType(target.type).element_type.width // 8
    view = _slice_view(whole, bytes_of, alloc, slice_range[0] * width)
    subview = defining_op(source)
    copy.erase()
    alloc.results[0].replace_all_uses_with(view)
    alloc.erase()
    if not list(subview.results[0].uses):
        subview.erase()
    return True


# Reads of a buffer operand: the operand positions each op only reads.
_READ_OPERANDS = {
    "memref.copy": (0,),
    "memref.load": (0,),
    "vector.load": (0,),
    "vector.transfer_read": (0,),
}


def _reads_only(user: ir.Operation, buffer: ir.Value, calls: frozenset = frozenset()) -> bool:
    """Whether `user` only reads the operands that are `buffer` or views of it (a call: its
    callee only reads those arguments; a call back into a function of `calls`, the chain
    that led here, counts as a write)."""
    positions = [i for i, value in enumerate(user.operands) if buffer_root(value) == buffer]
    if user.name in _READ_OPERANDS:
        return all(i in _READ_OPERANDS[user.name] for i in positions)
    if user.name.startswith("linalg.") and "operandSegmentSizes" in user.attributes:
        inputs = ir.DenseI32ArrayAttr(user.attributes["operandSegmentSizes"])[0]
        return all(i < inputs for i in positions)
    if user.name != "func.call":
        return False
    name = callee_name(user)
    callee = _function(user, name)
    if callee is None or name in calls:
        return False
    arguments = callee.regions[0].blocks[0].arguments
    return all(_argument_read_only(arguments[i], calls | {name}) for i in positions)


def _function(op: ir.Operation, name: str) -> ir.Operation | None:
    """The func.func with a body named `name` in the module that holds `op`, or None."""
    for candidate in enclosing(op, "builtin.module").regions[0].blocks[0].operations:
        candidate = candidate.operation
        if candidate.name == "func.func" and candidate.regions[0].blocks:
            if symbol_name(candidate) == name:
                return candidate
    return None


def _argument_read_only(argument: ir.Value, calls: frozenset) -> bool:
    found = users_through_views(argument)
    return found is not None and all(
        _reads_only(user, argument, calls) for user in found if user.name not in VIEW_OPS
    )


def _slice_view(
    whole: ir.Value, bytes_of: tuple[ir.Operation, int] | None, buffer: ir.Operation, start: int
) -> ir.Value:
    """A view, of the type of the allocation `buffer`, of the bytes of `whole` from byte
    `start` on, built where `buffer` is: `whole` (an allocation, or the byte view `bytes_of`
    describes) is made a view of an allocation of bytes first, which moves up to `buffer`
    where it comes later."""
    memref_type = ir.MemRefType(buffer.results[0].type)
    if bytes_of is None:
        whole_op = defining_op(whole)
        earliest = buffer if buffer.is_before_in_block(whole_op) else whole_op
        raw, base = _byte_allocation(whole_op, earliest), 0
    else:
        raw, base = bytes_of
        if buffer.is_before_in_block(raw):
            raw.move_before(buffer)
    with buffer.location, ir.InsertionPoint(buffer):
        return _byte_view(raw.results[0], base + start, memref_type)


def _byte_size(memref_type: ir.MemRefType) -> int:
    return math.prod(memref_type.shape) * memref_type.element_type.width // 8


def _byte_view(raw: ir.Value, offset: int, memref_type: ir.MemRefType) -> ir.Value:
    start = arith.constant(ir.IndexType.get(), offset)
    return ir.Operation.create("memref.view", results=[memref_type], operands=[raw, start]).result


def _byte_allocation(whole: ir.Operation, at: ir.Operation) -> ir.Operation:
    """Replaces the allocation `whole` by a view of an allocation of its bytes, made before
    `at`; returns the byte allocation."""
    memref_type = ir.MemRefType(whole.results[0].type)
    size = _byte_size(memref_type)
    alignment = whole.attributes["alignment"] if "alignment" in whole.attributes else None
    with whole.location, ir.InsertionPoint(at):
        raw = memref.AllocOp(
            ir.MemRefType.get([size], ir.IntegerType.get_signless(8)), [], [], alignment=alignment
        )
    with whole.location, ir.InsertionPoint(whole):
        view = _byte_view(raw.result, 0, memref_type)
    whole.results[0].replace_all_uses_with(view)
    whole.erase()
    return raw.operation


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


def _elide(copy: ir.Operation, slices: bool) -> bool:
    source, target = copy.operands
    if source == target:
        copy.erase()
        return True
    reshape = defining_op(source)
    if reshape is not None and reshape.name == "memref.expand_shape":
        return _elide_reshaped(copy, reshape)
    alloc = defining_op(source)
    if alloc is not None and alloc.name == "memref.view":
        return slices and _elide_into_slice(copy)
    if alloc is not None and alloc.name == "memref.subview":
        return slices and _elide_from_slice(copy)
    if alloc is None or alloc.name != "memref.alloc":
        return False
    if alloc.block == copy.block and not isinstance(target.owner, ir.Block):
        if _elide_into_subview(copy, alloc, target):
            return True
        return slices and _elide_into_slice(copy)
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


@register_pass(
    "elide-result-copies", "Write results into out-parameters instead of copying", slices=bool
)
def elide_result_copies(module: ir.Operation, slices: bool = True) -> None:
    """`slices`: buffers copied into or out of contiguous slices of others become views of
    their bytes (see `_elide_into_slice`, `_elide_from_slice`)."""
    with module.location:  # types are built with a location to report errors at
        for copy in find_ops(module, lambda op: op.name == "memref.copy"):
            _elide(copy, slices)
