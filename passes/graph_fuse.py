"""`--graph-fuse`: groups graph ops into kernels and outlines each kernel into a function.

A kernel is one unit of code generation: a private `func.func @<caller>_kernel_<i>` marked
`tile.kernel = "<kind>"` and called from where its ops were. The groups:

- an **anchor** (matmul, conv2d, softmax, layer_norm, rms_norm, reductions, pooling, lrn,
  attention) with the elementwise ops that consume it in a chain (bias, activation, residual:
  the epilogue), and with a chain of elementwise ops that only feed it (the prologue);
- a chain of **elementwise** ops on its own; chains that meet again (a value used by two
  elementwise chains that join, as in `sigmoid(v) + silu(v)`, or an input of a chain
  computed by another) become one kernel when together they still have one result and no op
  outside them sits between them in the data flow.

Data movement (reshape, transpose, concat, slice, gather, pad, broadcast_to) stays in the caller
between kernels. Constants used by a kernel are copied into it, so that code generation sees
them. A chain only grows through values with one use, and merged chains keep every other value
inside, so every kernel has one result.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func

from .ir_query import defining_op, user_op
from .registry import register_pass

ELEMENTWISE = {
    *"add sub mul div maximum minimum pow".split(),
    *"neg abs exp log sqrt rsqrt tanh sigmoid relu silu erf gelu clamp cast".split(),
    *"floor ceil round sin cos".split(),
    *"equal less less_equal greater greater_equal".split(),
    *"logical_and logical_or logical_xor logical_not where batch_norm".split(),
}

ANCHORS = {
    "matmul": "contraction",
    "conv2d": "convolution",
    "softmax": "reduction",
    "layer_norm": "reduction",
    "rms_norm": "reduction",
    "reduce_sum": "reduction",
    "reduce_mean": "reduction",
    "reduce_max": "reduction",
    "reduce_min": "reduction",
    "reduce_prod": "reduction",
    "max_pool2d": "window",
    "avg_pool2d": "window",
    "lrn": "window",
    "attention": "attention",
}


def _mnemonic(op: ir.Operation) -> str | None:
    dialect, _, mnemonic = op.name.partition(".")
    return mnemonic if dialect == "graph" else None


def _single_use(value: ir.Value) -> ir.Operation | None:
    uses = list(value.uses)
    return user_op(uses[0]) if len(uses) == 1 else None


class _Group:
    def __init__(self, first: ir.Operation, kind: str):
        self.ops = [first]
        self.kind = kind
        # The groups that used this one when a merge with them was refused: the same groups
        # give the same answer, so it is not asked again until they change.
        self.refused_with: list[_Group] | None = None
        self._user_ops: list[ir.Operation] | None = None

    def user_ops(self) -> list[ir.Operation]:
        """The ops that use the group's result (asked once its ops are complete)."""
        if self._user_ops is None:
            self._user_ops = [user_op(use) for use in self.last.results[0].uses]
        return self._user_ops

    @property
    def last(self) -> ir.Operation:
        return self.ops[-1]


def _groups(block: ir.Block) -> list[_Group]:
    """Kernels of one function body, in order; every group ends at its only result."""
    group_of: dict = {}  # op -> group, keyed by the operation's hash
    groups: list[_Group] = []
    for op in block.operations:
        op = op.operation
        mnemonic = _mnemonic(op)
        if mnemonic is None or (mnemonic not in ELEMENTWISE and mnemonic not in ANCHORS):
            continue
        producer = _fusable_producer(op, group_of)
        if mnemonic in ELEMENTWISE and producer is not None:
            producer.ops.append(op)
            group_of[op] = producer
            continue
        if mnemonic in ANCHORS and producer is not None and producer.kind == "elementwise":
            # The prologue chain joins the anchor's kernel.
            producer.ops.append(op)
            producer.kind = ANCHORS[mnemonic]
            group_of[op] = producer
            continue
        group = _Group(op, ANCHORS.get(mnemonic, "elementwise"))
        groups.append(group)
        group_of[op] = group
    position = {op.operation: i for i, op in enumerate(block.operations)}
    while _merge_one(groups, group_of, position):
        pass
    return groups


def _merge_one(groups: list[_Group], group_of: dict, position: dict) -> bool:
    """Merges one elementwise group whose result only elementwise groups use with those
    groups, when the union is a kernel (see the module docstring); whether it did."""
    for group in groups:
        if group.kind != "elementwise":
            continue
        users = [group_of.get(op) for op in group.user_ops()]
        if not users or any(u is None or u is group or u.kind != "elementwise" for u in users):
            continue
        merged = [group] + [u for i, u in enumerate(users) if u not in users[:i]]
        if group.refused_with is not None and _same_groups(group.refused_with, merged[1:]):
            continue
        ops = sorted((op for g in merged for op in g.ops), key=position.__getitem__)
        if not _one_result(ops) or _leaves_and_returns(ops, position):
            group.refused_with = merged[1:]
            continue
        union = _Group(ops[0], "elementwise")
        union.ops = ops
        for op in ops:
            group_of[op] = union
        at = min(groups.index(g) for g in merged)
        groups[:] = [g for g in groups if g not in merged]
        groups.insert(at, union)
        return True
    return False


def _same_groups(these: list[_Group], those: list[_Group]) -> bool:
    return len(these) == len(those) and all(a is b for a, b in zip(these, those, strict=True))


def _one_result(ops: list[ir.Operation]) -> bool:
    """Whether only the last op's result is used outside `ops`."""
    inside = set(ops)
    for op in ops[:-1]:
        for result in op.results:
            if any(user_op(use) not in inside for use in result.uses):
                return False
    return True


def _leaves_and_returns(ops: list[ir.Operation], position: dict) -> bool:
    """Whether some op outside `ops`, between the first and the last, depends on one of them
    and one of them on it: the kernel would need its own result as an input."""
    inside = set(ops)
    tainted = set()  # results of outside ops that depend on an inside op
    block = ops[0].block.operations
    for index in range(position[ops[0]] + 1, position[ops[-1]]):
        op = block[index].operation
        depends = any(defining_op(v) in inside or v in tainted for v in op.operands)
        if op in inside:
            if any(v in tainted for v in op.operands):
                return True
        elif depends:
            tainted.update(op.results)
    return any(v in tainted for v in ops[-1].operands)


def _fusable_producer(op: ir.Operation, group_of: dict) -> _Group | None:
    """The group whose only result `op` consumes as its only use, if any."""
    for operand in op.operands:
        owner = defining_op(operand)
        if owner is None:
            continue
        group = group_of.get(owner)
        if group is None or group.last != owner:
            continue
        user = _single_use(operand)
        if user is not None and user == op:
            return group
    return None


def _outline(group: _Group, caller: ir.Operation, index: int) -> None:
    inside = set(group.ops)
    inputs: list[ir.Value] = []
    constants: list[ir.Operation] = []
    for op in group.ops:
        for operand in op.operands:
            owner = defining_op(operand)
            if owner is not None and owner in inside:
                continue
            if owner is not None and owner.name == "graph.constant":
                if owner not in constants:
                    constants.append(owner)
                continue
            if operand not in inputs:
                inputs.append(operand)
    result = group.last.results[0]
    name = f"{ir.StringAttr(caller.attributes['sym_name']).value}_kernel_{index}"
    # Before the caller: passes that walk functions in order (buffer-results-to-out-params)
    # then see a kernel's new signature before they reach its call.
    with ir.InsertionPoint(caller), group.last.location:
        kernel = func.FuncOp(name, ([v.type for v in inputs], [result.type]), visibility="private")
        kernel.attributes["tile.kernel"] = ir.StringAttr.get(group.kind)
    block = kernel.add_entry_block(arg_locs=[group.last.location] * len(inputs))
    mapping = dict(zip(inputs, block.arguments, strict=True))
    with ir.InsertionPoint(block):
        for op in [*constants, *group.ops]:
            clone = op.clone()
            for i, operand in enumerate(op.operands):
                if operand in mapping:
                    clone.operands[i] = mapping[operand]
            for old, new in zip(op.results, clone.results, strict=True):
                mapping[old] = new
        func.ReturnOp([mapping[result]], loc=group.last.location)
    with ir.InsertionPoint(group.last), group.last.location:
        call = func.CallOp([result.type], ir.FlatSymbolRefAttr.get(name), inputs)
    result.replace_all_uses_with(call.result)
    for op in reversed(group.ops):
        op.erase()


@register_pass("graph-fuse", "Group graph ops into kernels and outline each into a function")
def graph_fuse(module: ir.Operation) -> None:
    body = module.regions[0].blocks[0]
    callers = [
        op.operation
        for op in body.operations
        if op.operation.name == "func.func"
        and "tile.kernel" not in op.operation.attributes
        and op.operation.regions[0].blocks
    ]
    for caller in callers:
        groups = _groups(caller.regions[0].blocks[0])
        for index, group in enumerate(groups):
            _outline(group, caller, index)
        _drop_dead_constants(caller)


def _drop_dead_constants(caller: ir.Operation) -> None:
    for op in reversed(list(caller.regions[0].blocks[0].operations)):
        op = op.operation
        if op.name == "graph.constant" and not list(op.results[0].uses):
            op.erase()
