"""`--streaming-stores`: kernels too large for the cache write their outputs around it.

A store to a line that is not in the cache first reads the line (read-for-ownership), so a
kernel streaming through buffers larger than the cache moves three bytes for every two it
needs. Non-temporal stores write whole lines through write-combining buffers instead: on a
2-core znver3 with a 32 MiB L3, negating 2^22 f32 runs at 38-42 GB/s with them and 24-26 GB/s
without; below half the L3 (where the output stays cached for whoever reads it next) plain
stores are faster.

A memory-bound kernel (a `tile.kernel` function of kind elementwise or reduction, which writes
its outputs as it streams through its inputs) qualifies when its buffers together take at
least half of the last-level cache of the module's target. A matmul or conv does not: its
epilogue writes the output last, after the operands went through the cache, so the output
stays there for the next kernel (a 64x1024 @ 1024x4096 + GELU kernel that streamed its 1 MiB
output made the next matmul read it back from memory). Each output that the kernel only
writes, with full-vector stores straight into the argument, gets non-temporal stores where
the stored address is a multiple of the vector's size whenever the buffer's base is; the pass
proves that from the index arithmetic (constants, loop steps, affine maps). The kernel then checks
the base addresses at run time and runs the streaming copy of its body when they are aligned,
the original otherwise (a view into the middle of an array, for one). Non-temporal stores
are weakly ordered: each parallel task, and the kernel, ends with a fence, before the fork's
join or the caller can read what was written.

A store aligned to 16 bytes only is split into 16-byte ones, each wider vector taking extract
instructions as well (on AVX-512, three per 64-byte vector). Where the stores allow a wider
alignment (up to the target's vector width), the streaming copy has a copy of its own for
bases aligned to it: strata's own result buffers start on 64-byte boundaries, numpy's large
arrays on 16-byte ones. On the AVX-512 Xeon, tanh(x*a+b) then relu on 2^22 f32 (1 thread) ran
at 24.5-24.9 GB/s with 16-byte streaming stores and 26.8-27.0 with 64-byte ones.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, llvm, memref, scf, vector

from ..dialects import target as target_dialect
from .ir_query import defining_op, top_level, user_op, vector_access
from .registry import register_pass
from .tile_configure import kernel_kind, kernels

# Streaming stores need addresses aligned to their width, or LLVM splits them into scalar
# ones. 16 bytes is what malloc guarantees (so numpy's arrays have it), and 16-byte streaming
# stores reach the bandwidth of 32-byte ones.
MIN_ALIGNMENT = 16

_STREAMING_KINDS = ("elementwise", "reduction")


def _buffer_bytes(t: ir.Type) -> int:
    """The bytes of a static buffer (bools count one byte each); 0 for anything else."""
    if not isinstance(t, ir.MemRefType) or not t.has_static_shape:
        return 0
    width = getattr(t.element_type, "width", 0)
    return math.prod(t.shape) * max(width // 8, 1) if width else 0


def _touched_bytes(kernel: ir.Operation) -> int:
    return sum(_buffer_bytes(a.type) for a in kernel.regions[0].blocks[0].arguments)


def _multiple(value: ir.Value) -> int:
    """A number that `value` (an index) is known to be a multiple of; 0 when it is 0."""
    owner = defining_op(value)
    if owner is None:
        return _induction_multiple(value)
    if owner.name == "arith.constant":
        return abs(ir.IntegerAttr(owner.attributes["value"]).value)
    if owner.name in ("arith.addi", "arith.subi"):
        return math.gcd(_multiple(owner.operands[0]), _multiple(owner.operands[1]))
    if owner.name == "arith.muli":
        return _multiple(owner.operands[0]) * _multiple(owner.operands[1])
    if owner.name == "affine.apply":
        affine_map = ir.AffineMapAttr(owner.attributes["map"]).value
        multiples = [_multiple(operand) for operand in owner.operands]
        return _expr_multiple(affine_map.results[0], multiples, affine_map.n_dims)
    return 1


def _induction_multiple(value: ir.Value) -> int:
    argument = ir.BlockArgument(value)
    loop = argument.owner.owner
    if loop.name == "scf.for" and argument.arg_number == 0:
        return math.gcd(_multiple(loop.operands[0]), _multiple(loop.operands[2]))
    if loop.name == "scf.forall":
        try:
            lower = list(ir.DenseI64ArrayAttr(loop.attributes["staticLowerBound"]))
            step = list(ir.DenseI64ArrayAttr(loop.attributes["staticStep"]))
        except (KeyError, ValueError):
            return 1
        position = argument.arg_number
        if position < len(step) and min(lower[position], step[position]) >= 0:
            return math.gcd(lower[position], step[position]) or 1
    return 1


def _expr_multiple(expr: ir.AffineExpr, multiples: list[int], n_dims: int) -> int:
    if isinstance(expr, ir.AffineConstantExpr):
        return abs(ir.AffineConstantExpr(expr).value)
    if isinstance(expr, ir.AffineDimExpr):
        return multiples[ir.AffineDimExpr(expr).position]
    if isinstance(expr, ir.AffineSymbolExpr):
        return multiples[n_dims + ir.AffineSymbolExpr(expr).position]
    if isinstance(expr, ir.AffineAddExpr):
        add = ir.AffineAddExpr(expr)
        return math.gcd(
            _expr_multiple(add.lhs, multiples, n_dims), _expr_multiple(add.rhs, multiples, n_dims)
        )
    if isinstance(expr, ir.AffineMulExpr):
        mul = ir.AffineMulExpr(expr)
        return _expr_multiple(mul.lhs, multiples, n_dims) * _expr_multiple(
            mul.rhs, multiples, n_dims
        )
    return 1


def _stored_vector(store: ir.Operation) -> ir.VectorType | None:
    """The vector that a full, in-bounds, contiguous store writes (all its dims but the last
    are 1); None for any other store."""
    access = vector_access(store)
    if access is None or not access.writes or any(d != 1 for d in access.vector.shape[:-1]):
        return None
    return access.vector


def _store_alignment(store: ir.Operation, widest: int) -> int:
    """The largest power of two up to `widest` that every address `store` writes a whole
    vector at is a multiple of, from the base (in bytes); 0 for a store that is not one."""
    vector_type = _stored_vector(store)
    if vector_type is None:
        return 0
    strides, _ = ir.MemRefType(store.operands[1].type).get_strides_and_offset()
    if ir.ShapedType.get_dynamic_stride_or_offset() in strides:
        return 0
    element_bytes = max(vector_type.element_type.width // 8, 1)
    linear = math.prod(vector_type.shape) * element_bytes
    for index, stride in zip(store.operands[2:], strides, strict=True):
        linear = math.gcd(linear, _multiple(index) * stride * element_bytes)
    return min(linear & -linear, widest)


def _streamed_outputs(kernel: ir.Operation, widest: int) -> tuple[list[int], int]:
    """The arguments that the kernel only writes, each with full-vector stores aligned to 16
    bytes at least, and the alignment that all those stores have."""
    found, common = [], widest
    for argument in kernel.regions[0].blocks[0].arguments:
        uses = list(argument.uses)
        if not uses or any(use.operand_number != 1 for use in uses):
            continue
        alignment = min(_store_alignment(user_op(use), widest) for use in uses)
        if alignment >= MIN_ALIGNMENT:
            found.append(argument.arg_number)
            common = min(common, alignment)
    return found, common


def _alignment_attr(alignment: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), alignment)


def _make_streaming(store: ir.Operation, alignment: int) -> None:
    value = store.operands[0]
    with ir.InsertionPoint(store), store.location:
        shape = ir.VectorType(value.type)
        flat = ir.VectorType.get([math.prod(shape.shape)], shape.element_type)
        if value.type != flat:
            value = vector.shape_cast(flat, value)
        vector.StoreOp(
            value,
            store.operands[1],
            list(store.operands[2:]),
            nontemporal=ir.BoolAttr.get(True),
            alignment=_alignment_attr(alignment),
        )
    store.erase()


def _fence_at_end(block: ir.Block, loc: ir.Location) -> None:
    with ir.InsertionPoint(block.operations[len(block.operations) - 1]):
        llvm.fence(llvm.AtomicOrdering.seq_cst, loc=loc)


def _bases_aligned(arguments, positions: list[int], alignment: int, loc: ir.Location) -> ir.Value:
    index = ir.IndexType.get()
    zero = arith.constant(index, 0, loc=loc)
    mask = arith.constant(index, alignment - 1, loc=loc)
    condition = None
    for position in positions:
        pointer = memref.extract_aligned_pointer_as_index(arguments[position], loc=loc)
        low = arith.andi(pointer, mask, loc=loc)
        aligned = arith.cmpi(arith.CmpIPredicate.eq, low, zero, loc=loc)
        condition = aligned if condition is None else arith.andi(condition, aligned, loc=loc)
    return condition


def _two_versions(block: ir.Block, loc: ir.Location, condition_of) -> scf.IfOp:
    """Wraps the ops of `block` (all but its terminator) in `scf.if condition { copy } else
    { ops }`."""
    ops = list(block.operations)[:-1]
    with ir.InsertionPoint(ops[0]):
        condition = condition_of()
        choice = scf.IfOp(condition, [], has_else=True, loc=loc)
    for branch in (choice.then_block, choice.else_block):
        with ir.InsertionPoint(branch):
            scf.yield_([], loc=loc)
    else_yield = choice.else_block.operations[0]
    for op in ops:
        op.move_before(else_yield)
    # A clone of the whole `scf.if` copies the body with its values mapped; its ops move over.
    copy = choice.operation.clone(ip=ir.InsertionPoint(choice.operation))
    then_yield = choice.then_block.operations[0]
    for op in list(copy.regions[1].blocks[0].operations)[:-1]:
        op.move_before(then_yield)
    copy.erase()
    return choice


def _enclosing_forall(op: ir.Operation, stop: ir.Operation) -> ir.Operation | None:
    while op != stop:
        op = op.parent
        if op.name == "scf.forall":
            return op
    return None


def _realign_streaming_stores(block: ir.Block, alignment: int) -> None:
    def visit(op):
        if op.name == "vector.store" and "nontemporal" in op.attributes:
            op.attributes["alignment"] = _alignment_attr(alignment)
        return ir.WalkResult.ADVANCE

    for op in block.operations:
        op.walk(visit)


def stream_kernel(kernel: ir.Operation, widest: int = MIN_ALIGNMENT) -> bool:
    """Gives `kernel` a streaming version of its body, and one with stores aligned to
    `widest` bytes (a power of two) where its stores allow that; False where it has no
    output for them."""
    body = kernel.regions[0].blocks[0]
    if len(body.operations[len(body.operations) - 1].operands) or len(body.operations) < 2:
        return False
    outputs, alignment = _streamed_outputs(kernel, max(widest, MIN_ALIGNMENT))
    if not outputs:
        return False
    loc = kernel.location
    choice = _two_versions(
        body, loc, lambda: _bases_aligned(body.arguments, outputs, MIN_ALIGNMENT, loc)
    )
    streaming = choice.operation.regions[0].blocks[0]
    tasks = []
    for position in outputs:
        for use in list(body.arguments[position].uses):
            store = user_op(use)
            if top_level(store, streaming) is None:
                continue
            task = _enclosing_forall(store, choice.operation)
            if task is not None and task not in tasks:
                tasks.append(task)
            _make_streaming(store, MIN_ALIGNMENT)
    for task in tasks:
        _fence_at_end(task.regions[0].blocks[0], loc)
    _fence_at_end(streaming, loc)
    if alignment > MIN_ALIGNMENT:
        wide = _two_versions(
            streaming, loc, lambda: _bases_aligned(body.arguments, outputs, alignment, loc)
        )
        _realign_streaming_stores(wide.then_block, alignment)
    return True


@register_pass("streaming-stores", "Non-temporal stores for kernel outputs larger than the cache")
def streaming_stores(module: ir.Operation) -> None:
    desc = target_dialect.of(module)
    if desc is None or desc.kind != "cpu" or not (desc.l3_bytes or desc.l2_bytes):
        return
    last_level = desc.l3_bytes or desc.l2_bytes
    for kernel in kernels(module):
        kind = kernel_kind(kernel)
        if kind not in _STREAMING_KINDS or not kernel.regions[0].blocks:
            continue
        if 2 * _touched_bytes(kernel) >= last_level:
            stream_kernel(kernel, widest=desc.vector_bits // 8)
