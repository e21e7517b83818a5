"""`--fuse-vector-loops`: a loop that reads what the loop before it stored joins that loop.

After vectorization a row kernel is a sequence of loops over the same columns: softmax stores
`exp(x - max)` in one loop and sums it in the next; layer_norm stores `x - mean` and then sums
its squares. Each second loop reads back every vector the first one stored. Fused, the sum is
taken from the register the exponential is in, and the row is walked once less.

Two `scf.for` loops of one block are fused when
- they have the same bounds and step, neither holds a region, and the second does not use
  the first's results;
- the second loads a vector that the first stores (the reason to fuse);
- each op between them moves above the first loop (it does not use the first loop's results
  and touches none of the elements the first stores or stores to any it reads) or below the
  second (likewise, and the second does not use its results), keeping the order of any two
  that touch the same elements (accesses of one buffer are apart when their spans along some
  dim, over all iterations, do not meet: the remainder after a loop);
- every pair of accesses to one buffer, one of them a store, one from each loop, uses the same
  buffer and the same indices, the induction variable among them and each vector no wider than
  the step there: iteration i of the second loop then only touches what iteration i of the
  first did, and running them interleaved keeps every value.
The fused body is the first body then the second; the second's loads of what the first stored
at the same indices take the stored vector instead. The stores stay (later loops read them).

On a target with fewer than 32 vector registers, a first loop that computes a transcendental
(an op --math-approximate expands: a dozen constants beside the 4-vector-wide temporaries)
is left alone: the second loop's values (softmax's 4 partial sums) then spill around the
polynomial. Softmax 1024x1024 on 1 thread of a znver3 (AVX2, 16 registers), best of 150
calls: 477-481 us fused, 449 us apart (onnxruntime 458). layer_norm's centring, plain
arithmetic, still takes its squares (267 us fused, 291 apart).

Run it after --tile-vectorize (and --rows-in-place, whose views it sees through).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from ..dialects import target as target_dialect
from .ir_query import (
    VectorAccess,
    constant_value,
    disjoint,
    find_ops,
    may_alias,
    vector_access,
)
from .math_approximate import APPROXIMATED
from .registry import register_pass

# Enough vector registers for a transcendental's constants and temporaries and another loop's.
_REGISTERS_TO_FUSE_TRANSCENDENTALS = 32

_PURE_DIALECTS = ("arith.", "math.", "index.", "ub.", "vector.")
# Vector ops that touch memory: those that ir_query.VectorAccess does not describe (masked,
# permuted, gathered) keep the loops apart.
_VECTOR_MEMORY_OPS = (
    "vector.load",
    "vector.store",
    "vector.transfer_read",
    "vector.transfer_write",
    "vector.gather",
    "vector.scatter",
    "vector.maskedload",
    "vector.maskedstore",
    "vector.expandload",
    "vector.compressstore",
)


def _pure(op: ir.Operation) -> bool:
    return op.name.startswith(_PURE_DIALECTS) or op.name in ("affine.apply", "scf.yield")


def _accesses(ops: list[ir.Operation]) -> list[VectorAccess] | None:
    """The vector accesses among `ops`; None if any op touches memory in another way."""
    found = []
    for op in ops:
        access = vector_access(op)
        if access is not None:
            found.append(access)
        elif op.name in _VECTOR_MEMORY_OPS or not _pure(op):
            return None
    return found


def _conflict(a: VectorAccess, b: VectorAccess) -> bool:
    return (a.writes or b.writes) and may_alias(a.buffer, b.buffer)


def _same_bounds(first: ir.Operation, second: ir.Operation) -> bool:
    for x, y in zip(first.operands[:3], second.operands[:3], strict=True):
        if x != y and (constant_value(x) is None or constant_value(x) != constant_value(y)):
            return False
    return True


def _same_iteration(a: VectorAccess, b: VectorAccess, induction: ir.Value, step: int) -> bool:
    """Whether `a` and `b` touch the same elements in the same iteration and no element of
    each other's in any other iteration."""
    if a.buffer != b.buffer or a.indices != b.indices or a.vector != b.vector:
        return False
    dims = [d for d, index in enumerate(a.indices) if index == induction]
    return len(dims) == 1 and a.extent(dims[0]) <= step


def _overlap(a: VectorAccess, b: VectorAccess) -> bool:
    return _conflict(a, b) and not disjoint(a, b)


def _split_between(
    ops: list[ir.Operation],
    loops: tuple[ir.Operation, ir.Operation],
    accesses: tuple[list[VectorAccess], list[VectorAccess]],
) -> tuple[list[ir.Operation], list[ir.Operation]] | None:
    """The ops between the loops: those that can run before the first loop and those that can
    run after the second, in their order; None if some op can do neither."""
    first, second = loops
    in_first, in_second = accesses
    used_by_second = set(second.operands)
    for op in second.regions[0].blocks[0].operations:
        used_by_second.update(op.operands)
    if any(r in used_by_second for r in first.results):
        return None
    blocked = set(first.results)  # values that cannot be used above the first loop
    up, down, down_accesses = [], [], []
    for op in ops:
        if len(op.regions):
            return None
        mine = [] if op.name in ("memref.alloc", "memref.alloca") else _accesses([op])
        if mine is None:
            return None
        if not any(v in blocked for v in op.operands) and not any(
            _overlap(x, other) for x in mine for other in in_first + down_accesses
        ):
            up.append(op)
        elif not any(r in used_by_second for r in op.results) and not any(
            _overlap(x, other) for x in mine for other in in_second
        ):
            down.append(op)
            down_accesses += mine
            blocked.update(op.results)
        else:
            return None
    return up, down


def _fuse(first: ir.Operation, second: ir.Operation, transcendentals_apart: bool) -> bool:
    if not _same_bounds(first, second) or constant_value(first.operands[2]) is None:
        return False
    step = constant_value(first.operands[2])
    body_a, body_b = first.regions[0].blocks[0], second.regions[0].blocks[0]
    ops_a, ops_b = list(body_a.operations), list(body_b.operations)
    if any(len(op.regions) for op in ops_a + ops_b):
        return False
    if transcendentals_apart and any(op.name in APPROXIMATED for op in ops_a):
        return False
    in_a, in_b = _accesses(ops_a), _accesses(ops_b)
    if in_a is None or in_b is None:
        return False
    # In the second body, its own induction variable stands for the first's.
    induction_a, induction_b = body_a.arguments[0], body_b.arguments[0]
    renamed = [
        VectorAccess(
            b.op,
            b.buffer,
            tuple(induction_a if i == induction_b else i for i in b.indices),
            b.value,
            b.writes,
        )
        for b in in_b
    ]
    forwarded = {}
    for b in renamed:
        sources = [a for a in in_a if _conflict(a, b)]
        if not all(_same_iteration(a, b, induction_a, step) for a in sources):
            return False
        if not b.writes and sources:
            forwarded[b.op] = [a for a in sources if a.writes][-1].value
    if not forwarded:
        return False
    block_ops = list(first.block.operations)
    between = block_ops[block_ops.index(first) + 1 : block_ops.index(second)]
    split = _split_between(between, (first, second), (in_a, in_b))
    if split is None:
        return False
    up, down = split
    for op in up:
        op.move_before(first)
    for op in reversed(down):
        op.move_after(second)
    _merge(first, second, forwarded)
    return True


def _merge(first: ir.Operation, second: ir.Operation, forwarded: dict) -> None:
    """One loop that runs `first`'s body then `second`'s, the loads in `forwarded` replaced by
    the vectors stored."""
    count = len(first.results)
    inits = list(first.operands[3:]) + list(second.operands[3:])
    with ir.InsertionPoint(first), first.location:
        fused = scf.ForOp(first.operands[0], first.operands[1], first.operands[2], inits)
    parts = ((first, fused.inner_iter_args[:count]), (second, fused.inner_iter_args[count:]))
    for loop, iter_args in parts:
        arguments = list(loop.regions[0].blocks[0].arguments)
        arguments[0].replace_all_uses_with(fused.induction_variable)
        for old, new in zip(arguments[1:], iter_args, strict=True):
            old.replace_all_uses_with(new)
    bodies = [list(loop.regions[0].blocks[0].operations) for loop, _ in parts]
    with ir.InsertionPoint(fused.body), first.location:
        end = scf.YieldOp([v for ops in bodies for v in ops[-1].operands])
    for ops in bodies:
        for op in ops[:-1]:
            op.move_before(end)
    for load, value in forwarded.items():
        load.results[0].replace_all_uses_with(value)
        load.erase()
    for old, new in zip(list(first.results) + list(second.results), fused.results, strict=True):
        old.replace_all_uses_with(new)
    first.erase()
    second.erase()


def _next_loop(loop: ir.Operation) -> ir.Operation | None:
    ops = list(loop.block.operations)
    return next((op for op in ops[ops.index(loop) + 1 :] if op.name == "scf.for"), None)


@register_pass(
    "fuse-vector-loops", "A loop that loads what the loop before it stored joins that loop"
)
def fuse_vector_loops(module: ir.Operation) -> None:
    desc = target_dialect.of(module)
    apart = desc is not None and 0 < desc.vector_registers < _REGISTERS_TO_FUSE_TRANSCENDENTALS
    with module.context:
        fused = True
        while fused:
            loops = find_ops(module, lambda op: op.name == "scf.for")
            fused = any(
                (second := _next_loop(loop)) is not None and _fuse(loop, second, apart)
                for loop in loops
            )
