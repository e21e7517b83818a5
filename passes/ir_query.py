"""Small questions the passes ask of the IR."""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir


def find_ops(root: ir.Operation, predicate: Callable[[ir.Operation], bool]) -> list[ir.Operation]:
    """Every op nested in `root` (root included) for which `predicate` holds, in pre-order."""
    found = []

    def visit(op):
        if predicate(op.operation):
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def defining_op(value: ir.Value) -> ir.Operation | None:
    """The op that produces `value`; None for a block argument."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return getattr(owner, "operation", owner)


def constant_value(value: ir.Value) -> float | int | None:
    """The number an `arith.constant` scalar or splat vector holds; None for anything else."""
    op = defining_op(value)
    if op is None or op.name != "arith.constant":
        return None
    attr = op.attributes["value"]
    if isinstance(attr, ir.DenseElementsAttr) and ir.DenseElementsAttr(attr).is_splat:
        attr = ir.DenseElementsAttr(attr).get_splat_value()
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value
    return None


def user_op(use: ir.OpOperand) -> ir.Operation:
    return getattr(use.owner, "operation", use.owner)


def within(op: ir.Operation, ancestor: ir.Operation) -> bool:
    """Whether `op` is `ancestor` or nested in it."""
    while op.name != "builtin.module":
        if op == ancestor:
            return True
        op = op.parent
    return False


def symbol_name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def attributes_of(op: ir.Operation) -> dict[str, ir.Attribute]:
    """The op's attributes by name (for rebuilding it with other operands or types)."""
    return {op.attributes[i].name: op.attributes[i].attr for i in range(len(op.attributes))}
