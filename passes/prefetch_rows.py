"""`--prefetch-rows`: software prefetches of the next rows that a row loop reads and writes.

A row kernel (softmax, layer_norm, rms_norm) reads a row of its input from memory, then
computes on it in L1 (exponentials, reductions) before it reads the next row: the reads wait
on memory and the arithmetic waits on the reads, one row after the other. --tile-rows marks
its row loop with `tile.prefetch_rows = k`; this pass gives every vector read of a kernel
argument (a buffer of rank 2 or more) in that loop a prefetch of the same columns `k` rows
further down (the row index clamped to the last row), one per 64-byte line, so the next row
arrives while this one is computed. Only the last loop that reads an argument prefetches
it, and only where an earlier loop of the row read or wrote it: by then this row's own reads
hit L1, so the next row's lines do not compete with them for the core's outstanding misses,
and softmax's last read of its input is its exponentials, whose arithmetic the fetches
overlap.
Prefetching in the first loop (softmax's max, a layer_norm's sums) instead measured 10-15%
slower on a znver4, medians, 1024x1024: softmax 0.314 vs 0.350 ms on 1 thread and 0.181 vs
0.199 on 2, layer_norm 0.160 vs 0.180 and 0.111 vs 0.128; a row sum, whose one loop reads
the row once, 57 -> 47 us on 1 thread and 38 -> 33 on 2 without its prefetches (the
hardware's own prefetcher follows the rows; torch 50 on 1).

Writes of a result argument get the same, with write intent (prefetchw on x86), in the last
loop that writes it: a store to a line that is not in the cache has to fetch it first, and a
row's stores, one line after the other, otherwise wait for it in the store buffer. Writes
through a subview of the argument (a row of it, as --tile-rows leaves them) are prefetched in
the argument. Softmax and layer_norm 1024x1024 on the Emerald Rapids Xeon, 1 thread,
medians, with prefetches and without: 652 -> 593 us and 570 -> 542 us (onnxruntime 727 and
974); 4096x1024: 2858 -> 2238 and 2314 -> 2065.

The rows come into L1 when the prefetched ones take at most a quarter of the target's L1
(the current row's inputs and outputs beside them), else into L2: softmax 1024x1024 on the
AVX-512 Xeon, 1 thread, ran at 20-21.5 GB/s with its next row in L2 and 21-26.6 in L1
(onnxruntime 18.4-25.5 in the same runs).

Run it on vectorized buffers (after --tile-vectorize), where the reads index the kernel's
arguments themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, memref

from ..dialects import target as target_dialect
from .ir_query import defining_op, enclosing, find_ops
from .registry import register_pass

PREFETCH_ATTR = "tile.prefetch_rows"
# memref.prefetch locality: 3 is L1 (prefetcht0 on x86), 2 is L2 (prefetcht1).
_L1, _L2 = 3, 2
_LINE = 64
_L1_WITHOUT_TARGET = 32 * 1024
_READS = ("vector.transfer_read", "vector.load")
_WRITES = ("vector.transfer_write", "vector.store")


@dataclass(frozen=True)
class _Access:
    """A vector read or write of a kernel argument, directly or through a subview of it."""

    op: ir.Operation
    buffer: ir.Value  # the kernel argument
    view: ir.Operation | None  # the memref.subview the op indexes, if any
    write: bool

    def indices(self) -> list[ir.Value]:
        """The op's first element as indices into `buffer` (built before the op)."""
        rank = ir.MemRefType(self.buffer.type).rank
        first = 2 if self.write else 1
        indices = list(self.op.operands[first : first + rank])
        if self.view is None:
            return indices
        subview = self.view.opview
        dynamic = iter(subview.offsets)
        index = ir.IndexType.get()
        with ir.InsertionPoint(self.op), self.op.location:
            for d, offset in enumerate(ir.DenseI64ArrayAttr(subview.static_offsets)):
                if offset == ir.ShapedType.get_dynamic_stride_or_offset():
                    indices[d] = arith.addi(next(dynamic), indices[d])
                elif offset:
                    indices[d] = arith.addi(arith.constant(index, offset), indices[d])
        return indices


def _argument_access(op: ir.Operation, arguments: list[ir.Value]) -> _Access | None:
    if op.name in _READS:
        memory, write = op.operands[0], False
    elif op.name in _WRITES:
        memory, write = op.operands[1], True
    else:
        return None
    view = None if memory in arguments else defining_op(memory)
    if view is not None:
        if view.name != "memref.subview" or view.operands[0] not in arguments:
            return None
        strides = ir.DenseI64ArrayAttr(view.attributes["static_strides"])
        if ir.MemRefType(memory.type).rank != ir.MemRefType(view.operands[0].type).rank or any(
            stride != 1 for stride in strides
        ):
            return None  # rank-reducing or strided: its rows are not the buffer's rows
        memory = view.operands[0]
    elif memory not in arguments:
        return None
    buffer = ir.MemRefType(memory.type)
    if buffer.rank < 2 or not buffer.has_static_shape:
        return None
    return _Access(op, memory, view, write)


def _row_bytes(buffer: ir.Value) -> int:
    t = ir.MemRefType(buffer.type)
    return t.shape[-1] * max(t.element_type.width // 8, 1)


def line_offsets(vector: ir.VectorType) -> range:
    """The offsets, in elements, of the 64-byte lines that a row of `vector` spans: one
    prefetch each."""
    element_bytes = max(vector.element_type.width // 8, 1)
    lines = max(1, math.ceil(vector.shape[-1] * element_bytes / _LINE))
    return range(0, lines * _LINE // element_bytes, _LINE // element_bytes)


def _prefetch_ahead(access: _Access, rows_ahead: int, locality: int) -> None:
    """Prefetches the lines that `access` covers, `rows_ahead` rows further down."""
    shape = ir.MemRefType(access.buffer.type).shape
    indices = access.indices()
    vector = ir.VectorType((access.op.operands[0] if access.write else access.op.results[0]).type)
    index = ir.IndexType.get()
    with ir.InsertionPoint(access.op), access.op.location:
        ahead = arith.addi(indices[-2], arith.constant(index, rows_ahead))
        indices[-2] = arith.minsi(ahead, arith.constant(index, shape[-2] - 1))
        column = indices[-1]
        for offset in line_offsets(vector):
            indices[-1] = arith.addi(column, arith.constant(index, offset)) if offset else column
            memref.prefetch(access.buffer, list(indices), access.write, locality, True)


@register_pass("prefetch-rows", "Prefetch the next rows that a marked row loop reads and writes")
def prefetch_rows(module: ir.Operation) -> None:
    desc = target_dialect.of(module)
    l1_bytes = desc.l1_bytes if desc is not None and desc.l1_bytes else _L1_WITHOUT_TARGET
    with module.context:
        for loop in find_ops(module, lambda op: PREFETCH_ATTR in op.attributes):
            rows_ahead = ir.IntegerAttr(loop.attributes[PREFETCH_ATTR]).value
            kernel = enclosing(loop, "func.func")
            arguments = list(kernel.regions[0].blocks[0].arguments)
            accesses = [
                access
                for op in find_ops(loop, lambda op: op.name in _READS + _WRITES)
                if (access := _argument_access(op, arguments)) is not None
            ]
            last_loop = {access.buffer: access.op.parent for access in accesses}
            loops = {}
            for access in accesses:
                loops.setdefault(access.buffer, set()).add(access.op.parent)
            prefetched = [
                access
                for access in accesses
                if last_loop[access.buffer] == access.op.parent
                and (access.write or len(loops[access.buffer]) > 1)
            ]
            ahead_bytes = rows_ahead * sum(
                _row_bytes(buffer) for buffer in {access.buffer for access in prefetched}
            )
            locality = _L1 if 4 * ahead_bytes <= l1_bytes else _L2
            for access in prefetched:
                _prefetch_ahead(access, rows_ahead, locality)
            del loop.attributes[PREFETCH_ATTR]
