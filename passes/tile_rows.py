"""`--tile-rows`: a row kernel (softmax, layer_norm, rms_norm and their elementwise prologue;
attention per batch and head) becomes one loop over rows whose body computes one row with the
same graph ops.

    %y = graph.softmax(%x) : tensor<RxN>            scf.for %i = 0 to R iter_args(%acc) {
                                            ->        %row = tensor.extract_slice %x[%i, 0] [1, N]
                                                      %s = graph.softmax(%row) : tensor<1xN>
                                                      tensor.insert_slice %s into %acc[%i, 0]
                                                    }

A row is the dims the op normalizes (from its `axis` on); the loop runs over the others.
Each row is then read once from memory and its reductions, exponentials and normalization
run on data in L1; --tile-lower cuts the row ops into vectors. Doing this at the graph level
(rather than fusing linalg ops into a tiled loop) computes every value of the row once: tile
and fuse would recompute a producer (the exponentials of softmax) for each of its consumers.
Operands with the kernel's leading dims are sliced by row; lower-rank operands (a norm's scale
and bias, scalars) broadcast along rows and are used as they are. Kernels of any other shape
keep their strategy and are left alone.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import scf, tensor

from . import linalg_builders as lb
from .ir_query import attributes_of
from .registry import register_pass
from .tile_configure import kernels, read_config

_DYNAMIC = ir.ShapedType.get_dynamic_size()


def _row_shaped(value: ir.Value, full: ir.RankedTensorType, leading: int) -> bool | None:
    """True: the value has the kernel's shape (sliced by row); False: it broadcasts along rows
    (used whole); None: neither."""
    if not isinstance(value.type, ir.RankedTensorType):
        return None
    t = ir.RankedTensorType(value.type)
    if t.rank == full.rank and t.shape[:leading] == full.shape[:leading]:
        return True
    if t.rank <= full.rank - leading:
        return False
    if t.rank == full.rank and all(d == 1 for d in t.shape[:leading]):
        return False
    return None


def _row_indices(flat: ir.Value, dims: list[int]) -> list[ir.Value]:
    """The index of row `flat` along each leading dim (row-major)."""
    index = ir.IndexType.get()
    indices, rest = [], flat
    for size in reversed(dims):
        size_value = lb.scalar(index, size)
        indices.append(ir.Operation.create("arith.remui", [index], [rest, size_value]).result)
        rest = ir.Operation.create("arith.divui", [index], [rest, size_value]).result
    return list(reversed(indices))


def _slice(value: ir.Value, indices: list[ir.Value]) -> ir.Value:
    """The row of `value` at `indices` (its leading dims), keeping the rank."""
    t = ir.RankedTensorType(value.type)
    row_type = ir.RankedTensorType.get(
        [1] * len(indices) + list(t.shape[len(indices) :]), t.element_type
    )
    rank = row_type.rank
    offsets = [_DYNAMIC] * len(indices) + [0] * (rank - len(indices))
    return tensor.ExtractSliceOp(
        row_type, value, indices, [], [], offsets, list(row_type.shape), [1] * rank
    ).result


def _insert(row: ir.Value, into: ir.Value, indices: list[ir.Value]) -> ir.Value:
    row_type = ir.RankedTensorType(row.type)
    rank = row_type.rank
    offsets = [_DYNAMIC] * len(indices) + [0] * (rank - len(indices))
    return tensor.InsertSliceOp(
        row, into, indices, [], [], offsets, list(row_type.shape), [1] * rank
    ).result


def _row_loop(kernel: ir.Operation, leading_count: int) -> None:
    """Loops over the first `leading_count` dims of the kernel's result."""
    block = kernel.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    terminator = ops[-1]
    graph_ops = [op for op in ops[:-1] if op.name != "graph.constant"]
    if len(terminator.operands) != 1 or not graph_ops or not leading_count:
        return
    full = ir.RankedTensorType(terminator.operands[0].type)
    if any(op.results[0].type != full for op in graph_ops):
        return
    produced = {op.results[0] for op in graph_ops}
    inputs = [v for op in graph_ops for v in op.operands if v not in produced]
    if any(_row_shaped(v, full, leading_count) is None for v in inputs):
        return
    leading = list(full.shape[:leading_count])
    row_shape = [1] * leading_count + list(full.shape[leading_count:])
    row_type = ir.RankedTensorType.get(row_shape, full.element_type)
    index = ir.IndexType.get()
    with ir.InsertionPoint(terminator), kernel.location:
        init = lb.empty(full.shape, full.element_type)
        loop = scf.ForOp(
            lb.scalar(index, 0), lb.scalar(index, math.prod(leading)), lb.scalar(index, 1), [init]
        )
    with ir.InsertionPoint(loop.body), kernel.location:
        indices = _row_indices(loop.induction_variable, leading)
        rows = {}
        for value in inputs:
            if value not in rows:
                sliced = _row_shaped(value, full, leading_count)
                rows[value] = _slice(value, indices) if sliced else value
        for op in graph_ops:
            with op.location:
                clone = ir.Operation.create(
                    op.name,
                    results=[row_type],
                    operands=[rows[v] for v in op.operands],
                    attributes=attributes_of(op),
                )
            rows[op.results[0]] = clone.results[0]
        scf.YieldOp([_insert(rows[terminator.operands[0]], loop.inner_iter_args[0], indices)])
    terminator.operands[0] = loop.results[0]
    for op in reversed(graph_ops):
        op.erase()


@register_pass("tile-rows", "Row kernels (softmax, norms) as a loop of row-sized graph ops")
def tile_rows(module: ir.Operation) -> None:
    with module.context:
        for kernel in kernels(module):
            config = read_config(kernel)
            if config is not None and config.get("strategy") == "rows":
                leading_count = sum(1 for size in config["tile_sizes"] if size)
                with kernel.location:
                    _row_loop(kernel, leading_count)
