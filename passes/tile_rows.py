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

Rows of several dims (a reduction over H and W, a norm over its last dims) are computed as
one flat dim when every op is elementwise or works on whole rows and every input either spans
the row dims or broadcasts along all of them: the inputs are collapsed before the loop and the
result expanded after it, so that each row is one contiguous run that --tile-lower cuts into
vectors (collapsed in the loop, linalg's reshape fusion would expand the row ops again).

With `threads` in the config (--tile-configure sets it when the kernel moves enough memory),
an scf.forall wraps the loop: each of its `chunks` iterations (`threads` unless given) takes
an equal chunk of leading dim `thread_dim` (0 unless given), loops over its rows and writes
its chunk of the result (tensor.parallel_insert_slice); the threads claim chunks one at a time.
A reduction of every dim (no leading dims) with `threads` is reduced in `chunks` parts, equal
slabs along dim 0, and then their results are.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, scf, tensor

from . import linalg_builders as lb
from .graph_fuse import ELEMENTWISE
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


def _row_loop(kernel: ir.Operation, leading_count: int, chunks: int = 1, thread_dim: int = 0):
    """Loops over the first `leading_count` dims of the kernel's result; with `chunks`, an
    scf.forall splits leading dim `thread_dim` into that many equal chunks, each a loop of its
    own. With no leading dims the kernel is one row, left as it is (collapsed, its row would
    be expanded again by reshape fusion; --tile-lower walks the row's dims instead), or, a
    reduction of every dim with `chunks`, reduced in parts (see `_reduce_in_parts`)."""
    block = kernel.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    terminator = ops[-1]
    graph_ops = [op for op in ops[:-1] if op.name != "graph.constant"]
    if len(terminator.operands) != 1 or not graph_ops:
        return
    result = ir.RankedTensorType(terminator.operands[0].type)
    *row_ops, last = graph_ops
    # Every op computes on full rows; a reduction may end the kernel, dropping its rows.
    reduces = last.name.startswith("graph.reduce_")
    full = ir.RankedTensorType(last.operands[0].type) if reduces else result
    if any(op.results[0].type != full for op in row_ops) or last.results[0].type != result:
        return
    produced = {op.results[0] for op in graph_ops}
    per_channel = _per_channel_operands(graph_ops)
    if per_channel and leading_count < 2:  # the channel dim must be a leading one
        return
    inputs = [v for op in graph_ops for v in op.operands if v not in produced]
    aligned = [v for v in inputs if v not in per_channel]
    if any(_sliced_dims(v, full, leading_count) is None for v in aligned):
        return
    if not leading_count:
        if not reduces or chunks == 1 or not full.rank or full.shape[0] % chunks:
            return
        with ir.InsertionPoint(terminator), kernel.location:
            value = lb.reshape(_reduce_in_parts(graph_ops, inputs, full, chunks), result.shape)
        terminator.operands[0] = value
        for op in reversed(graph_ops):
            op.erase()
        return
    leading = list(full.shape[:leading_count])
    if chunks > 1 and leading[thread_dim] % chunks:
        chunks = 1
    with ir.InsertionPoint(terminator), kernel.location:
        flat = _FlatRows.of(graph_ops, aligned, full, leading_count)
        body = _RowBody(graph_ops, inputs, per_channel, full, leading_count, flat)
        computed = flat.result_type(last) if flat else result
        if chunks == 1:
            value = body.loop(lb.empty(computed.shape, computed.element_type), leading)
        else:
            init = lb.empty(computed.shape, computed.element_type)
            value = _forall_over_chunks(body, init, leading, chunks, thread_dim)
        if computed != result:
            groups = [[d] for d in range(leading_count)] + [list(range(leading_count, result.rank))]
            value = lb.expand(value, groups, result.shape)
    terminator.operands[0] = value
    for op in reversed(graph_ops):
        op.erase()


def _reduce_in_parts(graph_ops, inputs, full: ir.RankedTensorType, chunks: int) -> ir.Value:
    """A reduction of every dim of `full` (with its prologue) as `chunks` reductions of equal
    slabs along dim 0, which the threads claim (scf.forall), then one of their results: the
    whole reduction as one row would run on one core. Partial means of equal slabs have the
    whole's mean. Returns the rank-0 result."""
    last = graph_ops[-1]
    rows = full.shape[0] // chunks
    slab = ir.RankedTensorType.get([rows, *full.shape[1:]], full.element_type)
    scalar = ir.RankedTensorType.get([], full.element_type)
    index = ir.IndexType.get()
    forall = scf.ForallOp([0], [chunks], [1], [lb.empty([chunks], full.element_type)])
    with ir.InsertionPoint(forall.body):
        part = forall.induction_variables[0]
        first = arith.MulIOp(part, lb.scalar(index, rows)).result
        values = {}
        for value in inputs:
            if value not in values:
                spans_rows = _sliced_dims(value, full, 1)
                values[value] = lb.slice_along(value, 0, first, rows) if spans_rows else value
        for op in graph_ops:
            attributes = attributes_of(op)
            if op == last:
                attributes["keepdims"] = ir.BoolAttr.get(False)
            with op.location:
                clone = ir.Operation.create(
                    op.name,
                    results=[scalar if op == last else slab],
                    operands=[values[v] for v in op.operands],
                    attributes=attributes,
                )
            values[op.results[0]] = clone.results[0]
        in_parallel = scf.InParallelOp()
        with ir.InsertionPoint(in_parallel.region.blocks[0]):
            tensor.ParallelInsertSliceOp(
                values[last.results[0]],
                forall.inner_iter_args[0],
                [part],
                [],
                [],
                [_DYNAMIC],
                [1],
                [1],
            )
    attributes = attributes_of(last)
    attributes["axes"] = ir.DenseI64ArrayAttr.get([0])
    attributes["keepdims"] = ir.BoolAttr.get(False)
    with last.location:
        total = ir.Operation.create(
            last.name, results=[scalar], operands=[forall.results[0]], attributes=attributes
        )
    return total.results[0]


def _per_channel_operands(graph_ops) -> set:
    """Operands that batch norms index by the channel (dim 1), not aligned as numpy aligns
    operands: their row is the channel's one value."""
    return {v for op in graph_ops if op.name == "graph.batch_norm" for v in op.operands[1:]}


class _FlatRows:
    """The row dims of `full` from `leading_count` on, as one: the kernel's graph ops compute
    on `full` with its rows flat, their inputs collapsed to match (`values`)."""

    def __init__(self, full: ir.RankedTensorType, leading_count: int, values: dict):
        self.leading_count, self.values = leading_count, values
        shape = [*full.shape[:leading_count], math.prod(full.shape[leading_count:])]
        self.full = ir.RankedTensorType.get(shape, full.element_type)

    @staticmethod
    def of(graph_ops, inputs, full: ir.RankedTensorType, leading_count: int):
        """The flat form of the kernel, with its inputs collapsed (ops built at the current
        insertion point), or None where rows are one dim already or cannot be flattened."""
        row_rank = full.rank - leading_count
        if row_rank < 2 or not all(_works_on_whole_rows(op, leading_count) for op in graph_ops):
            return None
        groups = {}
        for value in inputs:
            groups[value] = _flat_groups(ir.RankedTensorType(value.type), full, leading_count)
            if groups[value] is None:
                return None
        values = {}
        for value, (grouping, shape) in groups.items():
            same = ir.RankedTensorType(value.type).rank == len(shape)
            values[value] = value if same else lb.collapse(value, grouping, shape)
        return _FlatRows(full, leading_count, values)

    def result_type(self, op: ir.Operation) -> ir.RankedTensorType:
        """The type of `op`'s result with the kernel's rows flat."""
        t = ir.RankedTensorType(op.results[0].type)
        if not op.name.startswith("graph.reduce_"):
            return self.full
        kept = self.full.shape[: self.leading_count]
        shape = [*kept, 1] if t.rank > self.leading_count else kept
        return ir.RankedTensorType.get(shape, t.element_type)

    def attributes(self, op: ir.Operation) -> dict:
        """`op`'s attributes with its axes the flat row dim."""
        attributes = attributes_of(op)
        if op.name.startswith("graph.reduce_"):
            attributes["axes"] = ir.DenseI64ArrayAttr.get([self.leading_count])
        elif "axis" in attributes:
            attributes["axis"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), self.leading_count
            )
        return attributes


def _works_on_whole_rows(op: ir.Operation, leading_count: int) -> bool:
    """Whether `op` computes the same with the row dims from `leading_count` on flattened:
    elementwise ops, reductions over all the row dims, norms over them."""
    if op.name.startswith("graph.reduce_"):
        rank = ir.RankedTensorType(op.operands[0].type).rank
        axes = sorted(a % rank for a in ir.DenseI64ArrayAttr(op.attributes["axes"]))
        return axes == list(range(leading_count, rank))
    if op.name in ("graph.layer_norm", "graph.rms_norm"):
        rank = ir.RankedTensorType(op.results[0].type).rank
        return ir.IntegerAttr(op.attributes["axis"]).value % rank == leading_count
    return op.name.partition(".")[2] in ELEMENTWISE  # batch norms: their channel is leading


def _flat_groups(t: ir.RankedTensorType, full: ir.RankedTensorType, leading_count: int):
    """How to collapse an operand `t` of the kernel (aligned with `full` as numpy aligns it)
    so that `full`'s row dims (from `leading_count` on) become one: (reassociation, shape),
    or None where `t` spans some row dims and broadcasts along others."""
    first_row = max(0, leading_count - (full.rank - t.rank))  # t's first row dim
    row = list(t.shape[first_row:])
    whole = t.rank - first_row == full.rank - leading_count and row == full.shape[leading_count:]
    if not whole and any(size != 1 for size in row):
        return None
    if not row:
        return [[d] for d in range(t.rank)], list(t.shape)
    grouping = [[d] for d in range(first_row)] + [list(range(first_row, t.rank))]
    return grouping, [*t.shape[:first_row], math.prod(row)]


class _RowBody:
    """The kernel's graph ops, cloned to compute one row of `full` (the shape they compute
    on; a final reduction's result drops the row's reduced dims). With `flat`, they compute
    on rows flattened to one dim."""

    def __init__(
        self, graph_ops, inputs, per_channel, full: ir.RankedTensorType, leading_count: int, flat
    ):
        self.graph_ops, self.inputs, self.per_channel = graph_ops, inputs, per_channel
        self.leading_count, self.flat = leading_count, flat
        self.full = flat.full if flat else full

    def row_type(self, op: ir.Operation) -> ir.RankedTensorType:
        """The type of one row of `op`'s result."""
        t = self.flat.result_type(op) if self.flat else ir.RankedTensorType(op.results[0].type)
        shape = [1] * self.leading_count + list(t.shape[self.leading_count :])
        return ir.RankedTensorType.get(shape, t.element_type)

    def loop(self, dest: ir.Value, leading: list[int], offset=None) -> ir.Value:
        """An scf.for over the rows of `dest` (leading dims `leading`); with `offset` (dim,
        first), row 0 of `dest` along leading dim `dim` is row `first` of the kernel's
        operands."""
        loop = lb.loop_over(leading, dest)
        if self.leading_count == self.full.rank - 1:  # rows are the last dim: fetch the next
            loop.attributes[PREFETCH_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1)
        with ir.InsertionPoint(loop.body):
            local = lb.delinearize(loop.induction_variable, leading)
            indices = list(local)
            if offset is not None:
                dim, first = offset
                indices[dim] = arith.AddIOp(first, local[dim]).result
            rows = {}
            for value in self.inputs:
                if value in self.per_channel:
                    rows[value] = lb.slice_along(value, 0, indices[1], 1)
                elif value not in rows:
                    source = self.flat.values[value] if self.flat else value
                    sliced = _sliced_dims(source, self.full, self.leading_count)
                    rows[value] = (
                        _slice(source, indices, sliced, self.full.rank) if sliced else source
                    )
            last = self.compute(rows)
            scf.YieldOp([_insert(last, loop.inner_iter_args[0], local)])
        return loop.results[0]

    def compute(self, rows: dict) -> ir.Value:
        """The graph ops cloned on `rows` (a row of each input) at the current insertion
        point; the last one's row."""
        for op in self.graph_ops:
            with op.location:
                clone = ir.Operation.create(
                    op.name,
                    results=[self.row_type(op)],
                    operands=[rows[v] for v in op.operands],
                    attributes=self.flat.attributes(op) if self.flat else attributes_of(op),
                )
            rows[op.results[0]] = clone.results[0]
        return rows[self.graph_ops[-1].results[0]]


def _forall_over_chunks(body: _RowBody, init: ir.Value, leading: list[int], chunks: int, dim: int):
    """scf.forall (%t) in (chunks): rows [t*c, (t+1)*c) of leading dim `dim`, c each."""
    chunk = leading[dim] // chunks
    forall = scf.ForallOp([0], [chunks], [1], [init])
    with ir.InsertionPoint(forall.body):
        index = ir.IndexType.get()
        first = arith.MulIOp(forall.induction_variables[0], lb.scalar(index, chunk)).result
        shared = forall.inner_iter_args[0]
        part = lb.slice_along(shared, dim, first, chunk)
        done = body.loop(part, list(lb.ranked(part).shape[: len(leading)]), (dim, first))
        in_parallel = scf.InParallelOp()
        with ir.InsertionPoint(in_parallel.region.blocks[0]):
            lb.parallel_insert_along(done, shared, dim, first)
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
                    _row_loop(kernel, leading_count, chunks, config.get("thread_dim", 0))
