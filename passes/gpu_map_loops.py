"""`--gpu-map-loops`: every loop nest of bufferized linalg as a `gpu.launch`, one thread per
point of its parallel iteration space.

This is the GPU path that handles every kernel (convolutions, pools, gathers, reductions,
whatever a strategy of its own does not take): correct for any static shape, not fast. Each
linalg op (named ops generalized, parallel dims moved before reductions) becomes an
`scf.parallel` over its parallel dims with its reductions as `scf.for` inside; the parallel
nest becomes a 1-D grid of `block_threads`-thread blocks over the linearized points, each
thread delinearizing its index and running the loop body behind a bounds check. Work that
has no parallel dims (a reduction to a scalar, a rank-0 op) runs in a launch of one thread.

Host code keeps what the launch plan can express: allocations, views, constants, calls and
the launches; everything else is device work and goes into a launch.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, gpu, linalg, scf
from mlir.passmanager import PassManager

from .ir_query import find_ops
from .registry import PassFailure, register_pass, reject

DEFAULT_BLOCK_THREADS = 256

# Views of buffers: no device work, the host passes the base address.
VIEWS = frozenset(
    {
        "memref.subview",
        "memref.expand_shape",
        "memref.collapse_shape",
        "memref.reinterpret_cast",
        "memref.cast",
    }
)
# Ops that stay on the host: they allocate, view or name buffers, or are the plan itself.
HOST_OPS = VIEWS | {
    "arith.constant",
    "memref.alloc",
    "memref.alloca",
    "memref.dealloc",
    "memref.get_global",
    "func.call",
    "func.return",
    "gpu.launch",
    "gpu.launch_func",
}


def copies_to_linalg(module: ir.Operation) -> None:
    """memref.copy has no loop form; linalg.copy has."""
    for copy in find_ops(module, lambda op: op.name == "memref.copy"):
        with ir.InsertionPoint(copy), copy.location:
            linalg.copy(copy.operands[0], outs=[copy.operands[1]])
        copy.erase()


def _parallel_dims_first(module: ir.Operation) -> None:
    """Permutes each generic's iteration space so that its parallel dims lead: the loop nest
    of a reduction over a leading axis starts with a parallel loop the grid can take."""
    for op in find_ops(module, lambda op: op.name == "linalg.generic"):
        iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
        parallel = [d for d, it in enumerate(iterators) if "parallel" in it]
        order = parallel + [d for d in range(len(iterators)) if d not in parallel]
        if order == list(range(len(iterators))):
            continue
        new_position = {old: new for new, old in enumerate(order)}
        rename = ir.AffineMap.get(
            len(order), 0, [ir.AffineDimExpr.get(new_position[d]) for d in range(len(order))]
        )
        maps = []
        for attr in ir.ArrayAttr(op.attributes["indexing_maps"]):
            old = ir.AffineMapAttr(attr).value
            results = [expr.compose(rename) for expr in old.results]
            maps.append(ir.AffineMapAttr.get(ir.AffineMap.get(len(order), old.n_symbols, results)))
        op.attributes["indexing_maps"] = ir.ArrayAttr.get(maps)
        old_iterators = list(ir.ArrayAttr(op.attributes["iterator_types"]))
        op.attributes["iterator_types"] = ir.ArrayAttr.get([old_iterators[d] for d in order])
        for index in find_ops(op, lambda inner: inner.name == "linalg.index"):
            dim = ir.IntegerAttr(index.attributes["dim"]).value
            index.attributes["dim"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), new_position[dim]
            )


def _constant_index(value: ir.Value) -> int | None:
    owner = value.owner
    op = getattr(owner, "operation", None)
    if op is None or op.name != "arith.constant":
        return None
    return ir.IntegerAttr(op.attributes["value"]).value


VECTOR_ACCESS_BYTES = 16  # the widest global access: ld.global.v4.b32


def vector_alignment(memref: ir.MemRefType, vector: ir.VectorType) -> int | None:
    """The alignment in bytes of a 1-D vector access at a multiple of its length into
    `memref` (whose base is 16-byte aligned), or None where that is not known."""
    lanes = vector.shape[0]
    size = lanes * max(1, ir.FloatType(vector.element_type).width // 8)
    if vector.rank != 1 or size > VECTOR_ACCESS_BYTES or size & (size - 1):
        return None
    strides, offset = memref.get_strides_and_offset()
    if strides and (strides[-1] != 1 or any(s % lanes for s in strides[:-1])):
        return None
    return None if offset % lanes else size


def index_constant(value: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), value).result


def launch(threads: int, block_threads: int) -> tuple[ir.Operation, ir.Value, ir.Operation]:
    """A launch of `threads` threads in 1-D blocks; returns it, each thread's linear id and
    the op (inside the bounds check) before which the work goes."""
    block_threads = max(1, min(block_threads, threads))
    one = index_constant(1)
    grid = index_constant(math.ceil(threads / block_threads))
    launch = gpu.LaunchOp((grid, one, one), (index_constant(block_threads), one, one))
    body = launch.regions[0].blocks[0]
    with ir.InsertionPoint(body):
        block_id, thread_id = body.arguments[0], body.arguments[3]
        linear = arith.addi(arith.muli(block_id, index_constant(block_threads)), thread_id)
        if threads % block_threads:
            inside = arith.cmpi(arith.CmpIPredicate.ult, linear, index_constant(threads))
            guard = scf.IfOp(inside)
            with ir.InsertionPoint(guard.then_block):
                work = scf.YieldOp([])
            gpu.TerminatorOp()
        else:
            work = gpu.TerminatorOp()
    return launch.operation, linear, work


def _map_parallel(loop: ir.Operation, block_threads: int) -> None:
    bounds = [
        [_constant_index(v) for v in values]
        for values in (loop.opview.lowerBound, loop.opview.upperBound, loop.opview.step)
    ]
    if any(b is None for values in bounds for b in values):
        loop.location.emit_error("gpu-map-loops: loop bounds must be constants (static shapes)")
        raise PassFailure("gpu-map-loops")
    lows, highs, steps = bounds
    extents = [
        max(0, math.ceil((hi - lo) / st)) for lo, hi, st in zip(lows, highs, steps, strict=True)
    ]
    with ir.InsertionPoint(loop), loop.location:
        _, linear, work = launch(max(1, math.prod(extents)), block_threads)
        with ir.InsertionPoint(work):
            remaining, ivs = linear, []
            for extent, lo, st in reversed(list(zip(extents, lows, steps, strict=True))):
                point = arith.remui(remaining, index_constant(extent))
                remaining = arith.divui(remaining, index_constant(extent))
                ivs.append(arith.addi(arith.muli(point, index_constant(st)), index_constant(lo)))
    body = loop.regions[0].blocks[0]
    for arg, iv in zip(body.arguments, reversed(ivs), strict=True):
        arg.replace_all_uses_with(iv)
    for op in list(body.operations)[:-1]:  # the scf.reduce terminator stays behind
        op.move_before(work)
    loop.erase()


def _map_serial(ops: list[ir.Operation]) -> None:
    """Device work without parallel loops, in one thread."""
    with ir.InsertionPoint(ops[0]), ops[0].location:
        _, _, work = launch(1, 1)
    for op in ops:
        op.move_before(work)


def _map_function(fn: ir.Operation, block_threads: int) -> None:
    run: list[ir.Operation] = []
    # Operations, not their views: a view's `name` is an op's `name` attribute where it has
    # one (memref.get_global's symbol).
    for op in [view.operation for view in fn.regions[0].blocks[0].operations]:
        if op.name == "scf.parallel":
            if run:
                _map_serial(run)
                run = []
            _map_parallel(op, block_threads)
        elif op.name in HOST_OPS:
            if run:
                _map_serial(run)
                run = []
        else:
            run.append(op)
    if run:
        _map_serial(run)


def _block_threads(fn: ir.Operation, default: int) -> int:
    config = fn.attributes["tile.config"] if "tile.config" in fn.attributes else None
    if config is not None and "block_threads" in ir.DictAttr(config):
        return ir.IntegerAttr(ir.DictAttr(config)["block_threads"]).value
    return default


@register_pass(
    "gpu-map-loops",
    "Every linalg loop nest as a gpu.launch, a thread per parallel point",
    block_threads=int,
)
def gpu_map_loops(module: ir.Operation, block_threads: int = DEFAULT_BLOCK_THREADS) -> None:
    copies_to_linalg(module)
    PassManager.parse("builtin.module(func.func(linalg-generalize-named-ops))", module.context).run(
        module
    )
    _parallel_dims_first(module)
    PassManager.parse(
        "builtin.module(func.func(convert-linalg-to-parallel-loops, scf-forall-to-parallel))",
        module.context,
    ).run(module)
    reject(
        module,
        lambda op: op.name.startswith("linalg."),
        lambda op: f"gpu-map-loops: '{op.name}' has no loop form",
        "gpu-map-loops",
    )
    for fn in find_ops(module, lambda op: op.name == "func.func"):
        if fn.regions[0].blocks:
            _map_function(fn, _block_threads(fn, block_threads))
