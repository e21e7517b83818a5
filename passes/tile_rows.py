"""`--tile-rows`: a row kernel (softmax, layer_norm, rms_norm, a reduction over the innermost
dims, and their elementwise prologue; attention per batch and head) becomes one loop over rows
whose body computes one row with the same graph ops.

    %y = graph.softmax(%x) : tensor<RxN>            scf.for %i = 0 to R iter_args(%acc) {
                                            ->        %row = tensor.extract_slice %x[%i, 0] [1, N]
                                                      %s = graph.softmax(%row) : tensor<1xN>
                                                      tensor.insert_slice %s into %acc[%i, 0]
                                                    }

A row is the dims the op normalizes (from its `axis` on) or reduces; the loop runs over the
others. A reduction ends its kernel: its row result has the reduced shape (size 1 along the
leading dims, with the row's dims kept as 1s or dropped).
Each row is then read once from memory and its reductions, exponentials and normalization
run on data in L1; --tile-lower cuts the row ops into vectors. Doing this at the graph level
(rather than fusing linalg ops into a tiled loop) computes every value of the row once: tile
and fuse would recompute a producer (the exponentials of softmax) for each of its consumers.
Operands are aligned with the kernel's result as numpy broadcasting aligns them: along each
leading dim they have the full size (sliced at the row's index) or 1 (a padding mask of
batch x 1 x 1 x keys, sliced at the batch index only); operands with no leading dims (a norm's
scale and bias, scalars) are used as they are. Kernels of any other shape keep their strategy
and are left alone.

With `threads` in the config (--tile-configure sets it when the kernel moves enough memory),
an scf.forall wraps the loop: each of its `chunks` iterations (`threads` unless given) takes
an equal chunk of the first row dim, loops over its rows and writes its chunk of the result
(tensor.parallel_insert_slice); the threads claim chunks one at a time.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, scf, tensor

from . import linalg_builders as lb
from .ir_query import attributes_of
from .prefetch_rows import PREFETCH_ATTR
from .registry import PassFailure, register_pass
from .tile_configure import kernels, read_config

_DYNAMIC = ir.ShapedType.get_dynamic_size()


def _sliced_dims(value: ir.Value, full: ir.RankedTensorType, leading: int) -> list[int] | None:
    """The leading dims of the kernel whose row index slices `value`. Aligned with the
    kernel's result as numpy broadcasting aligns them (trailing dims first), each of its dims
    among the leading ones has the full size (sliced) or 1 (the same for every row, as a
    padding mask of batch x 1 x 1 x keys is for every head and query); its row dims are used
    whole. None: the value is not of that form."""
    if not isinstance(value.type, ir.RankedTensorType):
        return None
    t = ir.RankedTensorType(value.type)
    skip = full.rank - t.rank
    if skip < 0:
        return None
    sliced = []
    for dim in range(skip, leading):
        size = t.shape[dim - skip]
        if size == full.shape[dim]:
            sliced.append(dim)
        elif size != 1:
            return None
    return sliced


def _slice(value: ir.Value, indices: list[ir.Value], sliced: list[int], rank: int) -> ir.Value:
    """The row of `value` at `indices` (the kernel's leading dims, of a result of `rank`):
    size 1 along its leading dims, at the row's index where `sliced` says, else at 0."""
    t = ir.RankedTensorType(value.type)
    skip = rank - t.rank
    leading = len(indices)
    shape = [1 if skip + d < leading else size for d, size in enumerate(t.shape)]
    dynamic = [indices[skip + d] for d in range(t.rank) if skip + d in sliced]
    offsets = [_DYNAMIC if skip + d in sliced else 0 for d in range(t.rank)]
    row_type = ir.RankedTensorType.get(shape, t.element_type)
    return tensor.ExtractSliceOp(
        row_type, value, dynamic, [], [], offsets, shape, [1] * t.rank
    ).result


def _insert(row: ir.Value, into: ir.Value, indices: list[ir.Value]) -> ir.Value:
    row_type = ir.RankedTensorType(row.type)
    rank = row_type.rank
    offsets = [_DYNAMIC] * len(indices) + [0] * (rank - len(indices))
    return tensor.InsertSliceOp(
        row, into, indices, [], [], offsets, list(row_type.shape), [1] * rank
    ).result


def _row_loop(kernel: ir.Operation, leading_count: int, chunks: int = 1) -> None:
    """Loops over the first `leading_count` dims of the kernel's result; with `chunks`, an
    scf.forall splits the first of them into that many equal chunks, each a loop of its own."""
    block = kernel.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    terminator = ops[-1]
    graph_ops = [op for op in ops[:-1] if op.name != "graph.constant"]
    if len(terminator.operands) != 1 or not graph_ops or not leading_count:
        return
    result = ir.RankedTensorType(terminator.operands[0].type)
    *row_ops, last = graph_ops
    # Every op computes on full rows; a reduction may end the kernel, dropping its rows.
    reduces = last.name.startswith("graph.reduce_")
    full = ir.RankedTensorType(last.operands[0].type) if reduces else result
    if any(op.results[0].type != full for op in row_ops) or last.results[0].type != result:
        return
    produced = {op.results[0] for op in graph_ops}
    inputs = [v for op in graph_ops for v in op.operands if v not in produced]
    if any(_sliced_dims(v, full, leading_count) is None for v in inputs):
        return
    leading = list(full.shape[:leading_count])
    if chunks > 1 and leading[0] % chunks:
        chunks = 1
    body = _RowBody(graph_ops, inputs, full, leading_count)
    with ir.InsertionPoint(terminator), kernel.location:
        init = lb.empty(result.shape, result.element_type)
        if chunks == 1:
            result = body.loop(init, leading, None)
        else:
            result = _forall_over_chunks(body, init, leading, chunks)
    terminator.operands[0] = result
    for op in reversed(graph_ops):
        op.erase()


class _RowBody:
    """The kernel's graph ops, cloned to compute one row of `full` (the shape they compute
    on; a final reduction's result drops the row's reduced dims)."""

    def __init__(self, graph_ops, inputs, full: ir.RankedTensorType, leading_count: int):
        self.graph_ops, self.inputs, self.full = graph_ops, inputs, full
        self.leading_count = leading_count

    def row_type(self, value: ir.Value) -> ir.RankedTensorType:
        """The type of one row of `value`, a result of the kernel's graph ops."""
        t = ir.RankedTensorType(value.type)
        shape = [1] * self.leading_count + list(t.shape[self.leading_count :])
        return ir.RankedTensorType.get(shape, t.element_type)

    def loop(self, dest: ir.Value, leading: list[int], first: ir.Value | None) -> ir.Value:
        """An scf.for over the rows of `dest` (leading dims `leading`); row 0 of `dest` is row
        `first` (along the first leading dim) of the kernel's operands."""
        index = ir.IndexType.get()
        loop = scf.ForOp(
            lb.scalar(index, 0), lb.scalar(index, math.prod(leading)), lb.scalar(index, 1), [dest]
        )
        if self.leading_count == self.full.rank - 1:  # rows are the last dim: fetch the next
            loop.attributes[PREFETCH_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1)
        with ir.InsertionPoint(loop.body):
            local = lb.delinearize(loop.induction_variable, leading)
            indices = list(local)
            if first is not None:
                indices[0] = arith.AddIOp(first, local[0]).result
            rows = {}
            for value in self.inputs:
                if value not in rows:
                    sliced = _sliced_dims(value, self.full, self.leading_count)
                    rows[value] = (
                        _slice(value, indices, sliced, self.full.rank) if sliced else value
                    )
            for op in self.graph_ops:
                with op.location:
                    clone = ir.Operation.create(
                        op.name,
                        results=[self.row_type(op.results[0])],
                        operands=[rows[v] for v in op.operands],
                        attributes=attributes_of(op),
                    )
                rows[op.results[0]] = clone.results[0]
            last = rows[self.graph_ops[-1].results[0]]
            scf.YieldOp([_insert(last, loop.inner_iter_args[0], local)])
        return loop.results[0]


def _forall_over_chunks(body: _RowBody, init: ir.Value, leading: list[int], chunks: int):
    """scf.forall (%t) in (chunks): rows [t*c, (t+1)*c) of the first leading dim, c each."""
    index = ir.IndexType.get()
    chunk = leading[0] // chunks
    result = ir.RankedTensorType(init.type)
    shape = list(result.shape)
    chunk_shape = [chunk, *shape[1:]]
    offsets = [_DYNAMIC] + [0] * (len(shape) - 1)
    forall = scf.ForallOp([0], [chunks], [1], [init])
    with ir.InsertionPoint(forall.body):
        first = arith.MulIOp(forall.induction_variables[0], lb.scalar(index, chunk)).result
        shared = forall.inner_iter_args[0]
        part_type = ir.RankedTensorType.get(chunk_shape, result.element_type)
        part = tensor.ExtractSliceOp(
            part_type, shared, [first], [], [], offsets, chunk_shape, [1] * len(shape)
        ).result
        done = body.loop(part, [chunk, *leading[1:]], first)
        in_parallel = scf.InParallelOp()
        with ir.InsertionPoint(in_parallel.region.blocks[0]):
            tensor.ParallelInsertSliceOp(
                done, shared, [first], [], [], offsets, chunk_shape, [1] * len(shape)
            )
    return forall.results[0]


def _first_row_dim(kernel: ir.Operation) -> int:
    """The first dim that a row op of the kernel computes over as a whole: a row loop may
    only walk the dims before it."""
    first = math.inf
    for op in kernel.regions[0].blocks[0].operations:
        op = op.operation
        if not op.results or not isinstance(op.results[0].type, ir.RankedTensorType):
            continue
        rank = ir.RankedTensorType(op.results[0].type).rank
        if op.name == "graph.attention":
            first = min(first, rank - 2)
        elif op.name.startswith("graph.reduce_"):
            source = ir.RankedTensorType(op.operands[0].type).rank
            axes = ir.DenseI64ArrayAttr(op.attributes["axes"])
            first = min([first, *(axis % source for axis in axes)])
        elif "axis" in op.attributes and op.name.startswith("graph."):
            first = min(first, ir.IntegerAttr(op.attributes["axis"]).value % max(rank, 1))
    return first


@register_pass("tile-rows", "Row kernels (softmax, norms) as a loop of row-sized graph ops")
def tile_rows(module: ir.Operation) -> None:
    with module.context:
        for kernel in kernels(module):
            config = read_config(kernel)
            if config is not None and config.get("strategy") == "rows":
                leading_count = sum(1 for size in config["tile_sizes"] if size)
                first_row_dim = _first_row_dim(kernel)
                if leading_count > first_row_dim:
                    kernel.location.emit_error(
                        f"'tile.config' loops over {leading_count} leading dims, but the "
                        f"kernel's rows start at dim {first_row_dim}"
                    )
                    raise PassFailure("tile-rows")
                with kernel.location:
                    chunks = config.get("chunks", config.get("threads", 1))
                    _row_loop(kernel, leading_count, chunks)
