"""`--bf16-moves`: bf16 vectors that are only moved (loaded, then stored) move as i16.

Runs on the LLVM dialect. LLVM's x86 backend aborts the process on some plain copies of bf16
vectors: a load of `<N x bfloat>` stored as it is, for N of 8k + 1 above 8 (9, 17, 33, 49,
65, ...), is legalized through a bf16 `scalar_to_vector` that it cannot soft-promote ("Do
not know how to soft promote this operator's operand"). Such copies are common: a row of a
7x7 feature map, a patch row of a strided conv, a slice. As i16 they are the same bytes and
any length legalizes; loads with another use (arithmetic) keep their type, which the backend
handles.
"""

from __future__ import annotations

from mlir import ir

from .ir_query import attributes_of, find_ops
from .registry import register_pass


def _bf16_vector(t: ir.Type) -> bool:
    return isinstance(t, ir.VectorType) and str(ir.VectorType(t).element_type) == "bf16"


def _only_stored(load: ir.Operation) -> bool:
    """Whether every use of the load's value is as the value a store writes."""
    uses = list(load.results[0].uses)
    return bool(uses) and all(
        use.owner.name == "llvm.store" and use.operand_number == 0 for use in uses
    )


def _moved(op: ir.Operation) -> bool:
    return op.name == "llvm.load" and _bf16_vector(op.results[0].type) and _only_stored(op)


@register_pass("bf16-moves", "bf16 vectors only loaded and stored move as i16")
def bf16_moves(module: ir.Operation) -> None:
    for load in find_ops(module, _moved):
        lanes = ir.VectorType(load.results[0].type).shape
        with ir.InsertionPoint(load), load.location:
            words = ir.VectorType.get(lanes, ir.IntegerType.get_signless(16))
            moved = ir.Operation.create(
                "llvm.load",
                results=[words],
                operands=list(load.operands),
                attributes=attributes_of(load),
            ).result
        for use in list(load.results[0].uses):
            use.owner.operands[0] = moved
        load.erase()
