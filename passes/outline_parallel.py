"""`--outline-parallel`: each parallel loop of a function becomes a task function and a fork.

An `scf.forall (%i) in (N)` (buffers only, no shared outputs) outside loops in function `@f`
(at its top level or in `scf.if` branches) becomes

    func.func private @f_task_0(%begin: index, %end: index, <captured values>) {
      scf.for %i = %begin to %end step 1 { <body> }
    }
    func.call @__strata_fork_f_task_0(N, <captured values>)

where `@__strata_fork_*` is declared here and defined by --lower-fork-join once everything is
in the LLVM dialect: it runs [0, N) split over threads, each calling the task on its range.
Values the body uses from outside are passed as arguments, except constants, which are cloned
into the task. Nested, multi-dimensional or dynamic parallel loops stay serial (they are
lowered to scf.for later).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from . import linalg_builders as lb
from .ir_query import defining_op, find_ops, user_op, within
from .registry import register_pass

FORK_PREFIX = "__strata_fork_"


def _static_trip_count(forall: ir.Operation) -> int | None:
    attrs = forall.attributes
    try:
        lower = list(ir.DenseI64ArrayAttr(attrs["staticLowerBound"]))
        upper = list(ir.DenseI64ArrayAttr(attrs["staticUpperBound"]))
        step = list(ir.DenseI64ArrayAttr(attrs["staticStep"]))
    except (KeyError, ValueError):
        return None
    if len(upper) != 1 or lower != [0] or step != [1] or upper[0] < 0:
        return None
    return upper[0]


def _defined_outside(value: ir.Value, region_op: ir.Operation) -> bool:
    owner = defining_op(value)
    if owner is None:  # a block argument: of the block's parent op
        owner = value.owner.owner
    return not within(owner, region_op)


def _captures(forall: ir.Operation) -> list[ir.Value]:
    """Values defined outside `forall` that its body uses, in first-use order."""
    captured = []
    for op in find_ops(forall, lambda _: True):
        for value in op.operands:
            if _defined_outside(value, forall) and value not in captured:
                captured.append(value)
    return captured


# Ops of no operands whose value is the op itself: cloned into a task, never passed in (a
# poison passed as an argument hides from LLVM that its lanes are undefined: the caller
# materializes a vector for it and the task reads it).
_CONSTANTS = ("arith.constant", "ub.poison")


def _is_constant(value: ir.Value) -> bool:
    owner = defining_op(value)
    return owner is not None and owner.name in _CONSTANTS


def _private_function(name: str, fn_type: ir.FunctionType) -> ir.Operation:
    """A private func.func with an empty body region (a declaration until a block is added)."""
    return ir.Operation.create(
        "func.func",
        attributes={
            "sym_name": ir.StringAttr.get(name),
            "function_type": ir.TypeAttr.get(fn_type),
            "sym_visibility": ir.StringAttr.get("private"),
        },
        regions=1,
    )


def _outline(forall: ir.Operation, fn: ir.Operation, name: str) -> None:
    count = _static_trip_count(forall)
    body = forall.regions[0].blocks[0]
    captures = _captures(forall)
    arguments = [v for v in captures if not _is_constant(v)]
    index = ir.IndexType.get()
    loc = forall.location
    module_body = fn.parent.regions[0].blocks[0]

    with ir.InsertionPoint(fn), loc:
        task_type = ir.FunctionType.get([index, index, *(v.type for v in arguments)], [])
        task = _private_function(name, task_type)
        entry = task.regions[0].blocks.append(*task_type.inputs)
    with ir.InsertionPoint(entry), loc:
        mapping = {}
        for value in captures:
            if _is_constant(value):
                mapping[value] = defining_op(value).clone().results[0]
        for value, arg in zip(arguments, list(entry.arguments)[2:], strict=True):
            mapping[value] = arg
        loop = scf.ForOp(entry.arguments[0], entry.arguments[1], lb.scalar(index, 1))
        with ir.InsertionPoint(loop.body):
            terminator = scf.YieldOp([])
        ir.Operation.create("func.return")
    for op in list(body.operations)[:-1]:  # all but scf.forall.in_parallel
        op.operation.move_before(terminator.operation)
    body.arguments[0].replace_all_uses_with(loop.induction_variable)
    for value, replacement in mapping.items():
        for use in list(value.uses):
            user = user_op(use)
            if within(user, task):
                user.operands[use.operand_number] = replacement

    fork_name = FORK_PREFIX + name
    with ir.InsertionPoint(module_body.operations[0]), loc:
        _private_function(fork_name, ir.FunctionType.get([index, *(v.type for v in arguments)], []))
    with ir.InsertionPoint(forall), loc:
        trips = ir.Operation.create(
            "arith.constant",
            results=[index],
            attributes={"value": ir.IntegerAttr.get(index, count)},
        ).result
        ir.Operation.create(
            "func.call",
            operands=[trips, *arguments],
            attributes={"callee": ir.FlatSymbolRefAttr.get(fork_name)},
        )
    forall.erase()


def _runs_once(op: ir.Operation, fn: ir.Operation) -> bool:
    """Whether `op` is in `fn` outside any loop: at its top level or under `scf.if`s."""
    op = op.parent
    while op != fn:
        if op.name != "scf.if":
            return False
        op = op.parent
    return True


def _outlinable(forall: ir.Operation, fn: ir.Operation) -> bool:
    return (
        _runs_once(forall, fn)
        and not forall.results
        and _static_trip_count(forall) is not None
        and len(forall.regions[0].blocks[0].arguments) == 1
    )


@register_pass("outline-parallel", "Parallel loops to task functions forked over threads")
def outline_parallel(module: ir.Operation) -> None:
    with module.context, module.location:
        functions = find_ops(
            module, lambda op: op.name == "func.func" and bool(op.regions[0].blocks)
        )
        for fn in functions:
            name = ir.StringAttr(fn.attributes["sym_name"]).value
            loops = find_ops(fn, lambda op: op.name == "scf.forall")
            for i, forall in enumerate(op for op in loops if _outlinable(op, fn)):
                _outline(forall, fn, f"{name}_task_{i}")
