"""Small builders for linalg/tensor/arith IR on tensors, used by the graph lowering.

They build at the current insertion point and location (the caller's `with ip, loc:`).
Indexing maps are written as lists of loop dims per operand; `None` stands for the constant 0
that a broadcast (size-1) dim reads.
"""

import math
from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor, vector

PARALLEL = "parallel"
REDUCTION = "reduction"


def affine_map(num_dims: int, dims: Sequence[int | ir.AffineExpr | None]) -> ir.AffineMap:
    exprs = []
    for d in dims:
        if d is None:
            exprs.append(ir.AffineConstantExpr.get(0))
        elif isinstance(d, int):
            exprs.append(ir.AffineDimExpr.get(d))
        else:
            exprs.append(d)
    return ir.AffineMap.get(num_dims, 0, exprs)


def broadcast_dims(in_shape: Sequence[int], out_shape: Sequence[int]) -> list[int | None]:
    """The map dims through which an operand of `in_shape` is read in an `out_shape` loop nest."""
    offset = len(out_shape) - len(in_shape)
    return [
        None if d == 1 and out_shape[offset + i] != 1 else offset + i
        for i, d in enumerate(in_shape)
    ]


def ranked(value: ir.Value) -> ir.RankedTensorType:
    return ir.RankedTensorType(value.type)


def empty(shape: Sequence[int], element_type: ir.Type) -> ir.Value:
    return tensor.EmptyOp(list(shape), element_type).result


def scalar(element_type: ir.Type, value: float | int) -> ir.Value:
    if isinstance(element_type, ir.FloatType):
        attr = ir.FloatAttr.get(element_type, float(value))
    else:
        attr = ir.IntegerAttr.get(element_type, int(value))
    return arith.ConstantOp(element_type, attr).result


def lowest(element_type: ir.Type) -> ir.Value:
    """The identity of max: -inf for floats, the smallest value for signed integers."""
    if isinstance(element_type, ir.FloatType):
        return scalar(element_type, float("-inf"))
    width = ir.IntegerType(element_type).width
    if width == 1:  # booleans order false < true
        return scalar(element_type, 0)
    return scalar(element_type, -(1 << (width - 1)))


def highest(element_type: ir.Type) -> ir.Value:
    """The identity of min: +inf for floats, the largest value for signed integers."""
    if isinstance(element_type, ir.FloatType):
        return scalar(element_type, float("inf"))
    width = ir.IntegerType(element_type).width
    if width == 1:
        return scalar(element_type, 1)
    return scalar(element_type, (1 << (width - 1)) - 1)


def filled(shape: Sequence[int], element_type: ir.Type, value: ir.Value) -> ir.Value:
    return linalg.fill(value, outs=[empty(shape, element_type)])


def generic(
    inputs: Sequence[ir.Value],
    init: ir.Value,
    maps: Sequence[Sequence[int | ir.AffineExpr | None]],
    iterators: Sequence[str],
    body: Callable[..., ir.Value],
) -> ir.Value:
    """A one-result linalg.generic; `maps` lists the inputs' maps, then the output's."""
    num_dims = len(iterators)
    op = linalg.GenericOp_(
        list(inputs),
        [init],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(affine_map(num_dims, m)) for m in maps]),
        ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{it}>") for it in iterators]),
    )
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*block.arguments)])
    return op.result


def elementwise(
    inputs: Sequence[ir.Value],
    out_shape: Sequence[int],
    out_element: ir.Type,
    body: Callable[..., ir.Value],
) -> ir.Value:
    """out[i] = body(inputs broadcast to out_shape like numpy)."""
    rank = len(out_shape)
    maps = [broadcast_dims(ranked(v).shape, out_shape) for v in inputs]
    maps.append(list(range(rank)))
    return generic(
        inputs,
        empty(out_shape, out_element),
        maps,
        [PARALLEL] * rank,
        lambda *args: body(*args[: len(inputs)]),
    )


def reduce(
    value: ir.Value,
    axes: Sequence[int],
    init: ir.Value,
    combine: Callable[[ir.Value, ir.Value], ir.Value],
) -> ir.Value:
    """Reduces `axes` of `value` (dropped from the result) starting from the scalar `init`."""
    t = ranked(value)
    kept = [i for i in range(t.rank) if i not in axes]
    out_shape = [t.shape[i] for i in kept]
    return generic(
        [value],
        filled(out_shape, t.element_type, init),
        [list(range(t.rank)), kept],
        [REDUCTION if i in axes else PARALLEL for i in range(t.rank)],
        lambda x, acc: combine(x, acc),
    )


def index(dim: int) -> ir.Value:
    return linalg.IndexOp(dim).result


def collapse(value: ir.Value, groups: list[list[int]], shape: Sequence[int]) -> ir.Value:
    t = ranked(value)
    result = ir.RankedTensorType.get(list(shape), t.element_type)
    return tensor.CollapseShapeOp(result, value, _reassociation(groups)).result


def expand(value: ir.Value, groups: list[list[int]], shape: Sequence[int]) -> ir.Value:
    t = ranked(value)
    result = ir.RankedTensorType.get(list(shape), t.element_type)
    return tensor.ExpandShapeOp(result, value, _reassociation(groups), [], list(shape)).result


def reshape(value: ir.Value, shape: Sequence[int]) -> ir.Value:
    """Row-major reshape through a rank-1 (or rank-0) intermediate."""
    t = ranked(value)
    if list(t.shape) == list(shape):
        return value
    flat = value
    if t.rank != 1:
        count = 1
        for d in t.shape:
            count *= d
        flat = (
            expand(value, [], [1])
            if t.rank == 0
            else collapse(value, [list(range(t.rank))], [count])
        )
    if len(shape) == 1:
        return flat
    if not shape:
        return collapse(flat, [], [])
    return expand(flat, [list(range(len(shape)))], shape)


def _reassociation(groups: list[list[int]]) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups]
    )


def loop_over(dims: Sequence[int], init: ir.Value) -> scf.ForOp:
    """One scf.for over every position of `dims` (row-major), carrying `init`; its body gets
    the position's indices from `delinearize(loop.induction_variable, dims)`."""
    index = ir.IndexType.get()
    count = scalar(index, math.prod(dims))
    return scf.ForOp(scalar(index, 0), count, scalar(index, 1), [init])


def delinearize(flat: ir.Value, dims: Sequence[int]) -> list[ir.Value]:
    """The index along each of `dims` of the row-major position `flat` (an index)."""
    index = ir.IndexType.get()
    indices, rest = [], flat
    for size in reversed(dims):
        size_value = scalar(index, size)
        indices.append(arith.remui(rest, size_value))
        rest = arith.divui(rest, size_value)
    return list(reversed(indices))


def pad(value: ir.Value, low: Sequence[int], high: Sequence[int], pad_value: ir.Value) -> ir.Value:
    """`value` with `low`/`high` elements of `pad_value` around each dim; `value` itself when
    there is nothing to pad. Only the border is filled (`bordered`) and the value inserted:
    tensor.pad bufferizes to a fill of the whole buffer before the copy, which doubled a
    depthwise conv's memory traffic."""
    if not any(low) and not any(high):
        return value
    t = ranked(value)
    return insert_slice(value, bordered(t.shape, low, high, pad_value), list(low))


def bordered(
    interior: Sequence[int], low: Sequence[int], high: Sequence[int], pad_value: ir.Value
) -> ir.Value:
    """A tensor of `interior` with `low`/`high` elements around each dim, whose border alone
    is filled with `pad_value`, slab by slab (dim d's slabs span the interior of the dims
    before it and all of the dims after it: each element once); the interior is left for the
    caller to write."""
    rank = len(interior)
    shape = [d + lo + hi for d, lo, hi in zip(interior, low, high, strict=True)]
    result = empty(shape, pad_value.type)
    for dim in range(rank):
        for start, size in ((0, low[dim]), (low[dim] + interior[dim], high[dim])):
            if not size:
                continue
            offsets = [low[d] if d < dim else 0 for d in range(rank)]
            sizes = [interior[d] if d < dim else shape[d] for d in range(rank)]
            offsets[dim], sizes[dim] = start, size
            slab = extract_slice(result, offsets, sizes, [1] * rank)
            result = insert_slice(linalg.fill(pad_value, outs=[slab]), result, offsets)
    return result


def transpose(value: ir.Value, perm: Sequence[int]) -> ir.Value:
    t = ranked(value)
    init = empty([t.shape[p] for p in perm], t.element_type)
    return linalg.transpose(value, outs=[init], permutation=list(perm)).results[0]


def insert_slice(source: ir.Value, dest: ir.Value, offsets: Sequence[int]) -> ir.Value:
    shape = list(ranked(source).shape)
    return tensor.InsertSliceOp(
        source, dest, [], [], [], list(offsets), shape, [1] * len(shape)
    ).result


def slice_along(value: ir.Value, dim: int, first: ir.Value, size: int) -> ir.Value:
    """`size` elements of `value` along `dim` from the index `first` (a Value: a thread's or
    a row's), all of it along the other dims."""
    t = ranked(value)
    shape = [size if d == dim else extent for d, extent in enumerate(t.shape)]
    offsets = [ir.ShapedType.get_dynamic_size() if d == dim else 0 for d in range(t.rank)]
    result = ir.RankedTensorType.get(shape, t.element_type)
    return tensor.ExtractSliceOp(
        result, value, [first], [], [], offsets, shape, [1] * t.rank
    ).result


def parallel_insert_along(source: ir.Value, dest: ir.Value, dim: int, first: ir.Value) -> None:
    """An scf.forall's write of its part `source` into `dest` at index `first` along `dim`
    (the inverse of `slice_along`), at the current insertion point (an in_parallel block)."""
    t = ranked(dest)
    shape = list(ranked(source).shape)
    offsets = [ir.ShapedType.get_dynamic_size() if d == dim else 0 for d in range(t.rank)]
    tensor.ParallelInsertSliceOp(source, dest, [first], [], [], offsets, shape, [1] * t.rank)


def read_run(source: ir.Value, indices: Sequence[ir.Value], length: int) -> ir.Value:
    """A vector of `length` consecutive elements of `source`'s last dim from `indices` (all
    in bounds)."""
    rank = ranked(source).rank
    element = ranked(source).element_type
    return vector.TransferReadOp(
        ir.VectorType.get([length], element),
        source,
        list(indices),
        _last_dim(rank),
        scalar(element, 0),
        ir.ArrayAttr.get([ir.BoolAttr.get(True)]),
    ).result


def write_run(run: ir.Value, dest: ir.Value, indices: Sequence[ir.Value]) -> ir.Value:
    """`dest` with the vector `run` written along its last dim from `indices` (in bounds)."""
    return vector.TransferWriteOp(
        dest.type,
        run,
        dest,
        list(indices),
        _last_dim(ranked(dest).rank),
        ir.ArrayAttr.get([ir.BoolAttr.get(True)]),
    ).result


def _last_dim(rank: int) -> ir.AffineMap:
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(rank - 1)])


def extract_slice(
    value: ir.Value, offsets: Sequence[int], sizes: Sequence[int], strides: Sequence[int]
) -> ir.Value:
    t = ranked(value)
    result = ir.RankedTensorType.get(list(sizes), t.element_type)
    return tensor.ExtractSliceOp(
        result, value, [], [], [], list(offsets), list(sizes), list(strides)
    ).result
