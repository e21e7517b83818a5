"""Small questions the passes ask of the IR."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


def top_level(op: ir.Operation, block: ir.Block) -> ir.Operation | None:
    """The ancestor of `op` (or op itself) that sits in `block` of the same function; None if
    there is none."""
    while op.block != block:
        op = op.parent
        if op is None or op.name == "func.func":
            return None
    return op


def symbol_name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def callee_name(call: ir.Operation) -> str:
    """The name of the function a func.call calls."""
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def enclosing(op: ir.Operation, name: str) -> ir.Operation:
    """The nearest op named `name` that holds `op` (a kernel's func.func, say)."""
    parent = op.parent
    while parent.name != name:
        parent = parent.parent
    return parent


def attributes_of(op: ir.Operation) -> dict[str, ir.Attribute]:
    """The op's attributes by name (for rebuilding it with other operands or types)."""
    return {op.attributes[i].name: op.attributes[i].attr for i in range(len(op.attributes))}


@dataclass(frozen=True)
class VectorAccess:
    """A load or store of one whole vector along a buffer's trailing dims: no mask, nothing
    out of bounds, no permutation. `value` is the vector loaded or stored."""

    op: ir.Operation
    buffer: ir.Value
    indices: tuple[ir.Value, ...]
    value: ir.Value
    writes: bool

    @property
    def vector(self) -> ir.VectorType:
        return ir.VectorType(self.value.type)

    def extent(self, dim: int) -> int:
        """How many elements the access covers along the buffer's dim `dim`."""
        rank, shape = len(self.indices), self.vector.shape
        return shape[dim - rank + len(shape)] if dim >= rank - len(shape) else 1

    def span(self, dim: int) -> tuple[int, int] | None:
        """The elements of dim `dim` it covers, [start, end), over all the iterations of the
        `scf.for` right around it when the index there is that loop's induction variable (with
        constant bounds); None when not known."""
        index = self.indices[dim]
        start = constant_value(index)
        if start is not None:
            return start, start + self.extent(dim)
        loop = self.op.parent
        if loop.name != "scf.for" or index != loop.regions[0].blocks[0].arguments[0]:
            return None
        lower, upper, step = (constant_value(v) for v in loop.operands[:3])
        if None in (lower, upper, step):
            return None
        if upper <= lower:
            return lower, lower
        return lower, lower + (upper - lower - 1) // step * step + self.extent(dim)


def disjoint(a: VectorAccess, b: VectorAccess) -> bool:
    """Whether two accesses of one buffer provably touch no common element: along some dim
    their spans do not meet."""
    if a.buffer != b.buffer:
        return False
    for dim in range(len(a.indices)):
        span_a, span_b = a.span(dim), b.span(dim)
        if span_a and span_b and (span_a[1] <= span_b[0] or span_b[1] <= span_a[0]):
            return True
    return False


_VECTOR_ACCESSES = {
    # name: (position of the buffer, position of the stored value or None, writes)
    "vector.load": (0, None, False),
    "vector.store": (1, 0, True),
    "vector.transfer_read": (0, None, False),
    "vector.transfer_write": (1, 0, True),
}


def vector_access(op: ir.Operation) -> VectorAccess | None:
    """`op` as a VectorAccess; None for any other op, a masked, out-of-bounds or permuted
    transfer, or one of a tensor."""
    op = op.operation
    if op.name not in _VECTOR_ACCESSES:
        return None
    at, stored, writes = _VECTOR_ACCESSES[op.name]
    buffer = op.operands[at]
    if not isinstance(buffer.type, ir.MemRefType):
        return None
    rank = ir.MemRefType(buffer.type).rank
    indices = tuple(op.operands[at + 1 : at + 1 + rank])
    if op.name.startswith("vector.transfer_"):
        # A read also takes its padding: anything after that is a mask.
        if len(op.operands) != at + 1 + rank + (0 if writes else 1):
            return None
        if not all(ir.BoolAttr(flag).value for flag in ir.ArrayAttr(op.attributes["in_bounds"])):
            return None
        permutation = ir.AffineMapAttr(op.attributes["permutation_map"]).value
        if permutation != ir.AffineMap.get_minor_identity(rank, len(permutation.results)):
            return None
    value = op.operands[stored] if writes else op.results[0]
    return VectorAccess(op, buffer, indices, value, writes)


# Ops whose result is a view of their first operand's memory.
VIEW_OPS = (
    "memref.subview",
    "memref.cast",
    "memref.reinterpret_cast",
    "memref.expand_shape",
    "memref.collapse_shape",
    "memref.transpose",
    "memref.view",
)


# Ops through which a buffer leaves the region that made it.
_ESCAPES = {"func.return", "scf.yield", "scf.condition", "cf.br", "cf.cond_br"}


def users_through_views(value: ir.Value) -> list[ir.Operation] | None:
    """Every op using `value` or a view of it (the views too); None if the buffer escapes."""
    found, pending = [], [value]
    while pending:
        for use in pending.pop().uses:
            user = user_op(use)
            if user.name in _ESCAPES:
                return None
            found.append(user)
            if user.name in VIEW_OPS:
                pending.extend(user.results)
    return found


def buffer_root(buffer: ir.Value) -> ir.Value:
    """The buffer that `buffer` is a view of (through any chain of views), or itself."""
    op = defining_op(buffer)
    while op is not None and op.name in VIEW_OPS:
        buffer = op.operands[0]
        op = defining_op(buffer)
    return buffer


def may_alias(a: ir.Value, b: ir.Value) -> bool:
    """Whether two buffers may share memory. Distinct allocations do not, neither do distinct
    arguments of a function (bufferization's contract at function boundaries), nor globals
    of distinct names: strata's globals are bufferized constants (weights), reached through
    memref.get_global only, never passed in as an argument."""
    root_a, root_b = buffer_root(a), buffer_root(b)
    if root_a == root_b:
        return True
    ops = [defining_op(root) for root in (root_a, root_b)]
    if all(op is not None and op.name == "memref.get_global" for op in ops):
        return ops[0].attributes["name"] == ops[1].attributes["name"]
    known = [
        (op is not None and op.name in ("memref.alloc", "memref.alloca", "memref.get_global"))
        or (op is None and root.owner.owner.operation.name == "func.func")
        for op, root in zip(ops, (root_a, root_b), strict=True)
    ]
    return not all(known)
