"""`--prefetch-rows`: software prefetches of the next rows of a row loop's inputs.

A row kernel (softmax, layer_norm, rms_norm) reads a row of its input from memory, then
computes on it in L1 (exponentials, reductions) before it reads the next row: the reads wait
on memory and the arithmetic waits on the reads, one row after the other. --tile-rows marks
its row loop with `tile.prefetch_rows = k`; this pass gives every vector read of a kernel
argument (a buffer of rank 2 or more) in that loop a prefetch of the same columns `k` rows
further down (the row index clamped to the last row), one per 64-byte line, so the next row
arrives while this one is computed. Only the first loop that reads an argument prefetches
it: a later loop over the same row (softmax's max, then its exponentials) would ask for
lines already on their way.

The rows come into L1 when the prefetched ones take at most a quarter of the target's L1
(the current row's inputs and outputs beside them), else into L2: softmax 1024x1024 on the
AVX-512 Xeon, 1 thread, ran at 20-21.5 GB/s with its next row in L2 and 21-26.6 in L1
(onnxruntime 18.4-25.5 in the same runs).

Run it on vectorized buffers (after --tile-vectorize), where the reads index the kernel's
arguments themselves.
"""

from __future__ import annotations

import math
from functools import partial

from mlir import ir
from mlir.dialects import arith, memref

from ..dialects import target as target_dialect
from .ir_query import find_ops
from .registry import register_pass

PREFETCH_ATTR = "tile.prefetch_rows"
# memref.prefetch locality: 3 is L1 (prefetcht0 on x86), 2 is L2 (prefetcht1).
_L1, _L2 = 3, 2
_LINE = 64
_L1_WITHOUT_TARGET = 32 * 1024
_READS = ("vector.transfer_read", "vector.load")


def _argument_read(op: ir.Operation, arguments: list[ir.Value]) -> bool:
    if op.name not in _READS or op.operands[0] not in arguments:
        return False
    source = ir.MemRefType(op.operands[0].type)
    return source.rank >= 2 and source.has_static_shape


def _row_bytes(buffer: ir.Value) -> int:
    t = ir.MemRefType(buffer.type)
    return t.shape[-1] * max(t.element_type.width // 8, 1)


def _prefetch_ahead(read: ir.Operation, rows_ahead: int, locality: int) -> None:
    """Prefetches the lines that `read` covers, `rows_ahead` rows further down."""
    source = read.operands[0]
    shape = ir.MemRefType(source.type).shape
    rank = len(shape)
    indices = list(read.operands[1 : 1 + rank])
    vector = ir.VectorType(read.results[0].type)
    element_bytes = max(vector.element_type.width // 8, 1)
    lines = max(1, math.ceil(vector.shape[-1] * element_bytes / _LINE))
    index = ir.IndexType.get()
    with ir.InsertionPoint(read), read.location:
        ahead = arith.addi(indices[-2], arith.constant(index, rows_ahead))
        indices[-2] = arith.minsi(ahead, arith.constant(index, shape[-2] - 1))
        column = indices[-1]
        for line in range(lines):
            offset = line * _LINE // element_bytes
            indices[-1] = arith.addi(column, arith.constant(index, offset)) if offset else column
            memref.prefetch(source, list(indices), False, locality, True)


@register_pass("prefetch-rows", "Prefetch the next rows that a marked row loop reads")
def prefetch_rows(module: ir.Operation) -> None:
    desc = target_dialect.of(module)
    l1_bytes = desc.l1_bytes if desc is not None and desc.l1_bytes else _L1_WITHOUT_TARGET
    with module.context:
        for loop in find_ops(module, lambda op: PREFETCH_ATTR in op.attributes):
            rows_ahead = ir.IntegerAttr(loop.attributes[PREFETCH_ATTR]).value
            kernel = loop
            while kernel.name != "func.func":
                kernel = kernel.parent
            reads = partial(_argument_read, arguments=list(kernel.regions[0].blocks[0].arguments))
            first_reader = {}
            prefetched = []
            for read in find_ops(loop, reads):
                if first_reader.setdefault(read.operands[0], read.parent) == read.parent:
                    prefetched.append(read)
            ahead_bytes = rows_ahead * sum(_row_bytes(source) for source in first_reader)
            locality = _L1 if 4 * ahead_bytes <= l1_bytes else _L2
            for read in prefetched:
                _prefetch_ahead(read, rows_ahead, locality)
            del loop.attributes[PREFETCH_ATTR]
