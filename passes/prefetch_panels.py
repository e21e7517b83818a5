"""`--prefetch-panels`: a packed matmul's micro-kernels prefetch the B block packed next.

A packed matmul (--tile-lower with `pack`) packs each (Kc, Nc) block of B in its block loop,
then runs the micro-kernels over it: the pack waits on memory while the FMA pipes idle, and
the micro-kernels compute while the memory idles. With few rows of A to share a pack (a
linear layer on a short sequence with its weights passed in, a conv's patches), the pack was
a fifth of the time: 64x1024 @ 1024x4096 on 1 thread of a znver4, 1.3 of 6.4 ms, B read at
the 12 GB/s of one core's misses. This pass spreads prefetches of the lines that the next
pack reads over the micro-kernels of the current block, a few lines each, so that those reads
overlap the arithmetic. The next block is the block loop's next iteration; after its last,
the first of the enclosing loop's next (the next columns of B); after the very last, the last
again.

On 1 thread of a znver4, medians of alternated calls: 64x1024 @ 1024x4096 1.04-1.06x,
64x4096 @ 4096x1024 1.05-1.08x, 64x1024 @ 1024x4032 (rows not a power of two apart, whose
blocks spread over the L2's sets) 1.09-1.11x, a 3x3 conv of 64 channels on 56x56 1.06-1.08x;
large square products, whose packs many micro-kernels share, are unchanged (as are
ResNet-50 and SqueezeNet); a bf16 3x3 conv of 64 channels on 56x56 on 2 threads 0.97x (its
patches were just written, mostly in the caches already).

--tile-lower marks the block loop `tile.prefetch_block` and the loop whose body is one
micro-kernel `tile.micro_kernel`. Run it on vectorized buffers (after --tile-vectorize); a
loop nest it does not understand keeps no prefetches.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, memref

from .ir_query import constant_value, defining_op, find_ops, within
from .prefetch_rows import line_offsets
from .registry import register_pass

BLOCK_ATTR = "tile.prefetch_block"
MICRO_KERNEL_ATTR = "tile.micro_kernel"
_L2 = 2  # memref.prefetch locality: prefetcht1 on x86
_INDEX_OPS = ("affine.apply", "affine.min", "arith.addi", "arith.muli", "arith.constant")


def _static_loop(loop: ir.Operation) -> tuple[int, int, int] | None:
    """(lower bound, step, trip count) of an scf.for with constant bounds."""
    if loop.name != "scf.for":
        return None
    values = []
    for operand in loop.operands[:3]:
        value = constant_value(operand)
        if not isinstance(value, int):
            return None
        values.append(value)
    lower, upper, step = values
    if step <= 0 or upper <= lower:
        return None
    return lower, step, -(-(upper - lower) // step)


def _loops_between(op: ir.Operation, outer: ir.Operation) -> list[ir.Operation] | None:
    """The scf.for loops that hold `op` inside `outer`, outermost first; None if another op
    stands between."""
    loops = []
    parent = op.parent
    while parent != outer:
        if parent.name != "scf.for":
            return None
        loops.append(parent)
        parent = parent.parent
    return loops[::-1]


def _induction_variable(loop: ir.Operation) -> ir.Value:
    return loop.regions[0].blocks[0].arguments[0]


class _Builder:
    """Index arithmetic at the current insertion point, folding the trivial cases."""

    def __init__(self):
        self.index = ir.IndexType.get()
        self.constants: dict[int, ir.Value] = {}

    def constant(self, value: int) -> ir.Value:
        if value not in self.constants:
            self.constants[value] = arith.constant(self.index, value)
        return self.constants[value]

    def affine(self, value: ir.Value, scale: int, offset: int) -> ir.Value:
        """value * scale + offset."""
        if scale != 1:
            value = arith.muli(value, self.constant(scale))
        return arith.addi(value, self.constant(offset)) if offset else value

    def position(self, loop: ir.Operation, shape: tuple[int, int, int]) -> ir.Value:
        """The iteration number of `loop` (0, 1, ...)."""
        lower, step, _ = shape
        position = _induction_variable(loop)
        if lower:
            position = arith.subi(position, self.constant(lower))
        return arith.divui(position, self.constant(step)) if step != 1 else position


class _Cloner:
    """Rebuilds a value computed inside `scope` from other values of its loop variables
    (where `_computable` holds)."""

    def __init__(self, scope: ir.Operation, mapping: dict):
        self.scope = scope
        self.mapping = mapping

    def __call__(self, value: ir.Value) -> ir.Value:
        if value in self.mapping:
            return self.mapping[value]
        op = defining_op(value)
        if op is None or not within(op, self.scope):
            return value
        operands = [self(operand) for operand in op.operands]
        clone = op.clone()
        for i, operand in enumerate(operands):
            clone.operands[i] = operand
        self.mapping[value] = clone.results[0]
        return clone.results[0]


def _pack_read(block_loop: ir.Operation, micro_loop: ir.Operation) -> ir.Operation | None:
    """The one vector read in the block loop, outside its micro-kernels, of a buffer from
    outside the block loop (B, or a conv's patches), read row by row; None if there is not
    exactly one."""
    reads = []
    for op in find_ops(block_loop, lambda op: op.name == "vector.transfer_read"):
        source = defining_op(op.operands[0])
        if within(op, micro_loop) or (source is not None and within(source, block_loop)):
            continue
        reads.append(op)
    if len(reads) != 1:
        return None
    read = reads[0]
    if not isinstance(read.operands[0].type, ir.MemRefType):
        return None
    buffer = ir.MemRefType(read.operands[0].type)
    vector = ir.VectorType(read.results[0].type)
    if buffer.rank < 2 or not buffer.has_static_shape or not _sized(vector.element_type):
        return None
    vector_rank = vector.rank
    permutation = ir.AffineMapAttr(read.attributes["permutation_map"]).value
    minor_identity = ir.AffineMap.get_minor_identity(buffer.rank, vector_rank)
    return read if permutation == minor_identity else None


def _sized(element: ir.Type) -> bool:
    return isinstance(element, ir.IntegerType | ir.FloatType)


def _block_loops(block_loop: ir.Operation) -> list[tuple[ir.Operation, tuple]] | None:
    """The block loop, after the loop over B's columns that holds it if that one has static
    bounds too, with their shapes, outermost first."""
    shape = _static_loop(block_loop)
    if shape is None:
        return None
    outer_shape = _static_loop(block_loop.parent)
    loops = [(block_loop, shape)]
    return loops if outer_shape is None else [(block_loop.parent, outer_shape), *loops]


def _next_block(loops: list[tuple[ir.Operation, tuple]], b: _Builder) -> dict:
    """The loop variables of the block packed after this one: the block loop's next
    iteration; after its last, the first of the outer loop's next (the next columns of B);
    after the very last, the last again."""
    *outer, (block_loop, (lower, step, trips)) = loops
    current = _induction_variable(block_loop)
    ahead = arith.addi(current, b.constant(step))
    last = b.constant(lower + step * (trips - 1))
    if not outer:
        return {current: arith.minsi(ahead, last)}
    (outer_loop, (outer_lower, outer_step, outer_trips)) = outer[0]
    outer_current = _induction_variable(outer_loop)
    wraps = arith.cmpi(arith.CmpIPredicate.sgt, ahead, last)
    outer_ahead = arith.minsi(
        arith.addi(outer_current, b.constant(outer_step)),
        b.constant(outer_lower + outer_step * (outer_trips - 1)),
    )
    return {
        current: arith.select(wraps, b.constant(lower), ahead),
        outer_current: arith.select(wraps, outer_ahead, outer_current),
    }


def _computable(value: ir.Value, scope: ir.Operation, variables: set) -> bool:
    """Whether `_Cloner` can rebuild `value` from the loop `variables` of `scope`."""
    if value in variables:
        return True
    op = defining_op(value)
    if op is None:
        return not within(value.owner.owner, scope)
    if not within(op, scope):
        return True
    return (
        op.name in _INDEX_OPS
        and len(op.results) == 1
        and all(_computable(operand, scope, variables) for operand in op.operands)
    )


def _spread_over(micro_loops: list[ir.Operation], shapes: list, reads: int) -> int:
    """How many of the loops (outermost first) the prefetches are spread over: the most
    whose iterations, together, are at most the pack's reads (so that no two iterations
    prefetch the same lines); at least one."""
    iterations, depth = 1, 1
    for i, (_, _, trips) in enumerate(shapes):
        iterations *= trips
        if iterations > reads:
            break
        depth = i + 1
    return depth


def _prefetch_next_block(block_loop: ir.Operation, micro_loop: ir.Operation) -> None:
    read = _pack_read(block_loop, micro_loop)
    inner = _loops_between(micro_loop, block_loop)
    pack_loops = _loops_between(read, block_loop) if read is not None else None
    if inner is None or not pack_loops:
        return
    micro_loops = [*inner, micro_loop]
    micro_shapes = [_static_loop(loop) for loop in micro_loops]
    pack_shapes = [_static_loop(loop) for loop in pack_loops]
    block_loops = _block_loops(block_loop)
    if None in micro_shapes or None in pack_shapes or block_loops is None:
        return
    scope = block_loops[0][0]
    variables = {_induction_variable(loop) for loop, _ in block_loops}
    variables |= {_induction_variable(loop) for loop in pack_loops}
    rank = ir.MemRefType(read.operands[0].type).rank
    if not all(_computable(v, scope, variables) for v in read.operands[1 : 1 + rank]):
        return
    reads = math.prod(trips for _, _, trips in pack_shapes)
    depth = _spread_over(micro_loops, micro_shapes, reads)
    iterations = math.prod(trips for _, _, trips in micro_shapes[:depth])
    per_iteration = -(-reads // iterations)
    host = micro_loops[depth - 1]
    with ir.InsertionPoint.at_block_begin(host.regions[0].blocks[0]), host.location:
        b = _Builder()
        loop_variables = _next_block(block_loops, b)
        iteration = None
        for loop, loop_shape in zip(micro_loops[:depth], micro_shapes[:depth], strict=True):
            position = b.position(loop, loop_shape)
            iteration = (
                position
                if iteration is None
                else arith.addi(arith.muli(iteration, b.constant(loop_shape[2])), position)
            )
        # The pack loops' positions at this iteration's first read, then one read further
        # for each next one: one division per pack loop per iteration, not per read.
        linear = b.affine(iteration, per_iteration, 0)
        positions = [linear]
        for _, _, trips in reversed(pack_shapes[1:]):
            outer = arith.divui(positions[0], b.constant(trips))
            positions[:1] = [outer, arith.remui(positions[0], b.constant(trips))]
        overrun = per_iteration * iterations > reads
        for r in range(per_iteration):
            if r:
                positions = _advance(positions, pack_shapes, b)
            if overrun:  # the last iteration's reads past the block prefetch its last
                positions[0] = arith.minsi(positions[0], b.constant(pack_shapes[0][2] - 1))
            mapping = dict(loop_variables)
            for loop, position, (lower, step, _) in zip(
                pack_loops, positions, pack_shapes, strict=True
            ):
                mapping[_induction_variable(loop)] = b.affine(position, step, lower)
            clone = _Cloner(scope, mapping)
            _prefetch_lines(read, [clone(v) for v in read.operands[1 : 1 + rank]], b)


def _prefetch_lines(read: ir.Operation, indices: list[ir.Value], b: _Builder) -> None:
    """Prefetches every line that `read` would cover at `indices`: each row of its vector,
    each line of a row. A padded pack reads past the last rows; its prefetches stay inside
    the buffer."""
    buffer = read.operands[0]
    shape = ir.MemRefType(buffer.type).shape
    vector = ir.VectorType(read.results[0].type)
    rows = vector.shape[-2] if vector.rank > 1 else 1
    clamped = _may_read_outside(read)
    for row in range(rows):
        for column in line_offsets(vector):
            at = list(indices)
            for dim, offset in ((-2, row), (-1, column)):
                at[dim] = b.affine(at[dim], 1, offset)
                if clamped:
                    at[dim] = arith.minsi(at[dim], b.constant(shape[dim] - 1))
            memref.prefetch(buffer, at, False, _L2, True)


def _may_read_outside(read: ir.Operation) -> bool:
    """Whether a vector read may reach past its buffer (a padded pack's last rows), where its
    prefetches must not."""
    rank = ir.MemRefType(read.operands[0].type).rank
    masked = len(read.operands) > rank + 2
    in_bounds = [ir.BoolAttr(flag).value for flag in ir.ArrayAttr(read.attributes["in_bounds"])]
    return masked or not all(in_bounds)


def _advance(positions: list[ir.Value], shapes: list, b: _Builder) -> list[ir.Value]:
    """The positions of the pack loops one iteration of the innermost later."""
    advanced = list(positions)
    carry = None
    for dim in reversed(range(len(positions))):
        trips = shapes[dim][2]
        ahead = b.affine(advanced[dim], 1, 1)
        if dim == 0:
            advanced[dim] = ahead if carry is None else arith.select(carry, ahead, advanced[dim])
            break
        wraps = arith.cmpi(arith.CmpIPredicate.eq, ahead, b.constant(trips))
        if carry is not None:
            wraps = arith.andi(carry, wraps)
            ahead = arith.select(carry, ahead, advanced[dim])
        advanced[dim] = arith.select(wraps, b.constant(0), ahead)
        carry = wraps
    return advanced


@register_pass("prefetch-panels", "Packed matmuls prefetch the next B block in their micro-kernels")
def prefetch_panels(module: ir.Operation) -> None:
    with module.context:
        for block_loop in find_ops(module, lambda op: BLOCK_ATTR in op.attributes):
            micro = find_ops(block_loop, lambda op: MICRO_KERNEL_ATTR in op.attributes)
            if len(micro) == 1:
                _prefetch_next_block(block_loop, micro[0])
        for name in (BLOCK_ATTR, MICRO_KERNEL_ATTR):
            for loop in find_ops(module, lambda op, name=name: name in op.attributes):
                del loop.attributes[name]
