"""`--workspace-buffers`: temporary buffers become views of one workspace the caller provides.

Bufferization allocates every temporary (packed matmul panels, im2col patches, the tensors
between kernels) with `memref.alloc` on each call. Large allocations go to mmap, and each call
then pays page faults for them: at n = 2048, packing A, B and C allocates 48 MiB and runs at
0.82x OpenBLAS; with the buffers kept mapped, 0.98x. So each function gets a trailing
`memref<Nxi8>` argument, and each static, non-escaping allocation becomes a `memref.view` of
it at an offset planned here:

- a buffer is live from its allocation to its last use (uses through views count), measured
  in ops of the function's body; buffers nested in a loop are live for the whole loop;
- a call to a function that needs a workspace is a buffer of that size live at the call, and
  the callee receives a view of it;
- buffers whose live ranges overlap get disjoint 64-byte-aligned ranges (first fit, largest
  first), others may share bytes.

Public functions record their workspace size as `tile.workspace` (bytes): whoever calls them
(the runtime) passes that many bytes, 64-byte aligned, after the outputs. It allocates them once
per thread, so calls stay thread-safe. Allocations inside parallel loops, dynamic ones and
buffers that leave their function (returned, yielded) stay `memref.alloc`, except a static one
at the top of an `scf.forall` body (each parallel task's own buffer, such as a thread's block
of packed B): it gets one slot of the workspace per iteration, indexed by the induction
variable. Run it after bufferization and before deallocation is inserted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from . import linalg_builders as lb
from .ir_query import (
    attributes_of,
    callee_name,
    find_ops,
    symbol_name,
    top_level,
    user_op,
    users_through_views,
)
from .registry import register_pass

WORKSPACE_ATTR = "tile.workspace"
ALIGNMENT = 64

_PARALLEL = {"scf.forall", "scf.parallel"}


@dataclass
class _Buffer:
    op: ir.Operation  # a memref.alloc, or a func.call whose callee needs a workspace
    size: int
    first: int  # live range in ops of the function body, inclusive
    last: int
    offset: int = 0
    slot: tuple[ir.Value, int] | None = None  # (induction variable, bytes per iteration)


def _inside_parallel_loop(op: ir.Operation) -> bool:
    parent = op.parent
    while parent.name != "func.func":
        if parent.name in _PARALLEL:
            return True
        parent = parent.parent
    return False


def _task_slot(op: ir.Operation) -> tuple[ir.Value, int] | None:
    """For an op at the top of a 1-D, static, outermost scf.forall's body: the forall's
    induction variable and trip count."""
    forall = op.parent
    if forall.name != "scf.forall" or _inside_parallel_loop(forall):
        return None
    attrs = forall.attributes
    bounds = [list(ir.DenseI64ArrayAttr(attrs[k])) for k in ("staticLowerBound", "staticStep")]
    upper = list(ir.DenseI64ArrayAttr(attrs["staticUpperBound"]))
    if bounds != [[0], [1]] or len(upper) != 1 or upper[0] < 1:
        return None
    return forall.regions[0].blocks[0].arguments[0], upper[0]


def _static_bytes(memref: ir.MemRefType) -> int | None:
    identity = ir.AffineMap.get_identity(memref.rank)
    layout = memref.layout
    if not memref.has_static_shape or not isinstance(layout, ir.AffineMapAttr):
        return None
    if layout.value != identity:
        return None
    if memref.memory_space is not None:
        return None
    bits = memref.element_type.width if hasattr(memref.element_type, "width") else None
    if not bits:
        return None
    return math.prod(memref.shape) * max(1, bits // 8)


def _plan(buffers: list[_Buffer]) -> int:
    """Assigns offsets (first fit, largest first); returns the bytes needed."""
    placed: list[_Buffer] = []
    for buf in sorted(buffers, key=lambda b: -b.size):
        overlapping = sorted(
            (p for p in placed if p.first <= buf.last and buf.first <= p.last),
            key=lambda p: p.offset,
        )
        offset = 0
        for other in overlapping:
            if offset + buf.size <= other.offset:
                break
            offset = max(offset, _align(other.offset + other.size))
        buf.offset = offset
        placed.append(buf)
    return max((_align(b.offset + b.size) for b in placed), default=0)


def _align(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


class _Planner:
    def __init__(self, module: ir.Operation):
        self.functions = {
            symbol_name(op): op
            for op in find_ops(module, lambda op: op.name == "func.func")
            if op.regions[0].blocks
        }
        self.needs: dict[str, int] = {}
        self.in_progress: set[str] = set()
        self.excluded = self._excluded()

    def _excluded(self) -> set[str]:
        """Functions that keep their allocations, with everything they call: those that may run
        on several threads at once, and those already lowered to several blocks."""
        names = set()
        pending = [
            callee_name(call)
            for fn in self.functions.values()
            for call in find_ops(fn, lambda op: op.name == "func.call")
            if _inside_parallel_loop(call)
        ]
        pending += [n for n, fn in self.functions.items() if len(fn.regions[0].blocks) != 1]
        while pending:
            name = pending.pop()
            if name in names or name not in self.functions:
                continue
            names.add(name)
            fn = self.functions[name]
            pending += [callee_name(c) for c in find_ops(fn, lambda op: op.name == "func.call")]
        return names

    def need(self, name: str) -> int:
        """Bytes of workspace `name` takes (planning and rewriting it on first request)."""
        if name in self.needs:
            return self.needs[name]
        if name in self.in_progress or name not in self.functions:
            return 0  # recursion or an external function: no workspace
        self.in_progress.add(name)
        self.needs[name] = self._rewrite(self.functions[name])
        return self.needs[name]

    def _buffers(self, fn: ir.Operation) -> list[_Buffer]:
        body = fn.regions[0].blocks[0]
        index = {op: i for i, op in enumerate(op.operation for op in body.operations)}
        buffers = []
        for op in find_ops(fn, lambda op: op.name in ("memref.alloc", "func.call")):
            task = None
            if _inside_parallel_loop(op):
                task = _task_slot(op) if op.name == "memref.alloc" else None
                if task is None:
                    continue
            if op.name == "func.call":
                size = self.need(callee_name(op))
                users = [op]
            else:
                size = _static_bytes(ir.MemRefType(op.results[0].type))
                users = users_through_views(op.results[0])
            if not size or users is None:
                continue
            slot = None
            if task is not None:  # one slot per iteration
                induction, trips = task
                slot = (induction, _align(size))
                size = trips * _align(size)
            spots = [index[top_level(u, body)] for u in [op, *users]]
            buffers.append(_Buffer(op, size, min(spots), max(spots), slot=slot))
        return buffers

    def _rewrite(self, fn: ir.Operation) -> int:
        name = symbol_name(fn)
        if name in self.excluded:
            return 0
        buffers = self._buffers(fn)
        total = _plan(buffers)
        if not total:
            return 0
        workspace = _add_workspace_argument(fn, total)
        for buf in buffers:
            _use_workspace(buf, workspace)
        if "sym_visibility" not in fn.attributes:
            fn.attributes[WORKSPACE_ATTR] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), total
            )
        return total


def _add_workspace_argument(fn: ir.Operation, size: int) -> ir.Value:
    fn_type = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    memref = ir.MemRefType.get([size], ir.IntegerType.get_signless(8))
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([*fn_type.inputs, memref], fn_type.results)
    )
    if "arg_attrs" in fn.attributes:
        old = ir.ArrayAttr(fn.attributes["arg_attrs"])
        fn.attributes["arg_attrs"] = ir.ArrayAttr.get([*old, ir.DictAttr.get({})])
    return fn.regions[0].blocks[0].add_argument(memref, fn.location)


def _view(
    workspace: ir.Value,
    offset: int,
    memref: ir.MemRefType,
    loc,
    slot: tuple[ir.Value, int] | None = None,
) -> ir.Value:
    with loc:
        index = ir.IndexType.get()
        start = lb.scalar(index, offset)
        if slot is not None:
            induction, stride = slot
            start = arith.addi(start, arith.muli(induction, lb.scalar(index, stride)))
        return ir.Operation.create(
            "memref.view", results=[memref], operands=[workspace, start]
        ).result


def _use_workspace(buf: _Buffer, workspace: ir.Value) -> None:
    op = buf.op
    with ir.InsertionPoint(op):
        if op.name == "memref.alloc":
            memref = ir.MemRefType(op.results[0].type)
            view = _view(workspace, buf.offset, memref, op.location, buf.slot)
            for use in list(op.results[0].uses):
                if user_op(use).name == "memref.dealloc":
                    user_op(use).erase()
            op.results[0].replace_all_uses_with(view)
            op.erase()
            return
        bytes_type = ir.MemRefType.get([buf.size], ir.IntegerType.get_signless(8))
        view = _view(workspace, buf.offset, bytes_type, op.location)
        call = ir.Operation.create(
            "func.call",
            results=[r.type for r in op.results],
            operands=[*op.operands, view],
            attributes=attributes_of(op),
            loc=op.location,
        )
        for old, new in zip(op.results, call.results, strict=True):
            old.replace_all_uses_with(new)
        op.erase()


@register_pass("workspace-buffers", "Temporary buffers as views of one caller-provided workspace")
def workspace_buffers(module: ir.Operation) -> None:
    with module.location:  # types are built with a location to report errors at
        planner = _Planner(module)
        for name in list(planner.functions):
            planner.need(name)
