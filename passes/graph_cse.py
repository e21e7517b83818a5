"""`--graph-cse`: a graph op that repeats an earlier one (same op, operands, attributes and
result types) is replaced by it.

Graph ops are pure, but ops defined through IRDL cannot say so, and MLIR's `--cse` leaves
them alone. Importers meet the repetition often: an exported LSTM transposes each weight once
per time step (128 transposes of the same 1 MiB), and a model that uses a parameter twice
gets its reshape twice.
"""

from __future__ import annotations

from mlir import ir

from .ir_query import attributes_of
from .registry import register_pass


def _key(op: ir.Operation) -> tuple:
    attributes = tuple(sorted(attributes_of(op).items()))
    results = tuple(result.type for result in op.results)
    return op.name, tuple(op.operands), attributes, results


def _deduplicate(block: ir.Block) -> None:
    seen: dict[tuple, ir.Operation] = {}
    for op in list(block.operations):
        op = op.operation
        if not op.name.startswith("graph.") or len(op.regions):
            continue
        first = seen.setdefault(_key(op), op)
        if first is op:
            continue
        for mine, theirs in zip(op.results, first.results, strict=True):
            mine.replace_all_uses_with(theirs)
        op.erase()


@register_pass("graph-cse", "Repeated graph ops (same operands and attributes) computed once")
def graph_cse(module: ir.Operation) -> None:
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and op.regions[0].blocks:
            for block in op.regions[0].blocks:
                _deduplicate(block)
