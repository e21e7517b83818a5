"""bf16 products in pairs: the part of `--tile-vectorize` that writes a packed bf16
contraction's micro-kernel with the CPU's instruction for it, which the vectorizer does not
know, and its panels' packs as whole runs.

A product of bf16 matrices on a CPU with `bf16_dot_products` is packed in pairs of k
(tile-lower's `_packed_product`, tile.config `pack` 2): its micro-kernel adds to each f32
accumulator (i, j) row i of A's [mr][2] tile times column j of B's [nr][2] tile. AVX-512
BF16's vdpbf16ps (`x86vector.avx512.dot`) does that for a register of lanes: lane j of the
result is acc[j] + a[2j] b[2j] + a[2j+1] b[2j+1], each product exact in f32 and each sum
rounded to nearest even, as two f32 FMAs would; bf16 subnormal inputs and f32 subnormal
results are flushed to zero by the instruction (magnitudes under 2^-126). B's tile is its
second operand as it lies in memory, and A's pair of row i, one 32-bit word, is broadcast to
every lane: twice an f32 FMA's multiply-adds an instruction, from panels of half the bytes.
Vectorized generically, the micro-kernel widened both tiles to f32 and summed each pair with
shuffles; written here, tile-vectorize's hoisting keeps its accumulators in registers as it
does for f32 micro-kernels. 1 thread of a znver4, 128x768 @ 768x3072: 92 -> 205 GFLOP/s
(PyTorch's oneDNN 203).

The packs write [r][2] tiles; lowered as they are, each pair (4 bytes) was a store of its
own and B's two rows were interleaved element by element (a B pack took longer than the
product of a row of A with it). `write_pair_panels_whole` writes each tile as one run, B's as
its two rows interleaved (one shuffle).
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, memref, vector

from ..dialects import target as targets
from .ir_query import constant_value, find_ops

# f32 lanes of the registers that x86vector.avx512.dot (vdpbf16ps) takes.
_LANES = (4, 8, 16)
_BODY = ["arith.extf", "arith.extf", "arith.mulf", "arith.addf", "linalg.yield"]
# Loop dims (m0, n0, k0), or (n0, k0) where a micro-kernel of one row dropped m0.
_MAPS = {
    3: ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d1, d2)", "(d0, d1, d2) -> (d0, d1)"],
    2: ["(d0, d1) -> (d1)", "(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)"],
}


def _tile_of(value: ir.Value, element: str) -> list[int] | None:
    """The shape of a tile of `element` whose trailing dim (if a pair) is contiguous."""
    t = value.type
    if not isinstance(t, ir.MemRefType) or str(t.element_type) != element:
        return None
    shape = list(ir.MemRefType(t).shape)
    if not shape:
        return None
    strides = ir.MemRefType(t).get_strides_and_offset()[0]
    contiguous = shape[-1] != 2 or strides[-2:] == [2, 1][-len(shape) :]
    return shape if contiguous else None


def _tiles(op: ir.Operation, lanes: int) -> tuple[int, int] | None:
    """(mr, nr) if `op` is a pair micro-kernel of whole registers, else None."""
    if op.name != "linalg.generic" or len(op.operands) != 3:
        return None
    a, b, c = (_tile_of(v, e) for v, e in zip(op.operands, ("bf16", "bf16", "f32"), strict=True))
    if a is None or b is None or c is None or a[-1] != 2 or len(b) != 2 or b[1] != 2:
        return None
    rows = a[:-1]
    if c != [*rows, b[0]] or b[0] % lanes or len(rows) > 1:
        return None
    maps = [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    body = [o.name for o in op.regions[0].blocks[0].operations]
    if maps != _MAPS[2 + len(rows)] or body != _BODY:
        return None
    return (rows[0] if rows else 1), b[0]


def _flat(tile: ir.Value) -> ir.Value:
    """A contiguous [r][2] tile (or [2]) as one run."""
    t = ir.MemRefType(tile.type)
    if t.rank == 1:
        return tile
    offset = t.get_strides_and_offset()[1]
    dynamic = offset == ir.ShapedType.get_dynamic_stride_or_offset()
    layout = ir.Attribute.parse(f"strided<[1], offset: {'?' if dynamic else offset}>")
    flat = ir.MemRefType.get([t.shape[0] * 2], t.element_type, layout, t.memory_space)
    return memref.collapse_shape(flat, tile, [[0, 1]])


def _read(source: ir.Value, offsets: list[int], t: ir.VectorType) -> ir.Value:
    index = ir.IndexType.get()
    indices = [arith.constant(index, o) for o in offsets]
    element = ir.MemRefType(source.type).element_type
    padding = ir.Operation.create("ub.poison", results=[element]).result
    return vector.transfer_read(
        t,
        source,
        indices,
        ir.AffineMap.get_minor_identity(len(offsets), 1),
        padding,
        in_bounds=[True],
    )


def _write(value: ir.Value, dest: ir.Value, offsets: list[int]) -> None:
    index = ir.IndexType.get()
    indices = [arith.constant(index, o) for o in offsets]
    vector.transfer_write(
        None,
        value,
        dest,
        indices,
        ir.AffineMap.get_minor_identity(len(offsets), 1),
        in_bounds=[True],
    )


def _rewrite(op: ir.Operation, mr: int, nr: int, lanes: int) -> None:
    a, b, c = op.operands
    mr_dims = ir.MemRefType(c.type).rank == 2
    with ir.InsertionPoint(op), op.location:
        f32, bf16, i32 = ir.F32Type.get(), ir.BF16Type.get(), ir.IntegerType.get_signless(32)
        accumulator = ir.VectorType.get([lanes], f32)
        pairs = ir.VectorType.get([2 * lanes], bf16)
        flat_a, flat_b = _flat(a), _flat(b)
        columns = [_read(flat_b, [2 * lanes * j], pairs) for j in range(nr // lanes)]
        for i in range(mr):
            pair = _read(flat_a, [2 * i], ir.VectorType.get([2], bf16))
            word = vector.extract(vector.bitcast(ir.VectorType.get([1], i32), pair), [], [0])
            row = vector.bitcast(pairs, vector.broadcast(ir.VectorType.get([lanes], i32), word))
            for j, column in enumerate(columns):
                at = [i, lanes * j] if mr_dims else [lanes * j]
                acc = _read(c, at, accumulator)
                total = ir.Operation.create(
                    "x86vector.avx512.dot", results=[accumulator], operands=[acc, row, column]
                ).result
                _write(total, c, at)
    op.erase()


def write_pair_products(kernel: ir.Operation, desc: targets.TargetDesc | None) -> None:
    """Writes the bf16 pair micro-kernels of `kernel` as pair products (see above) on targets
    with `bf16_dot_products`."""
    lanes = desc.vector_lanes_f32 if desc is not None and desc.bf16_dot_products else 0
    if lanes not in _LANES:
        return
    for op in find_ops(kernel, lambda op: _tiles(op, lanes) is not None):
        _rewrite(op, *_tiles(op, lanes), lanes)


def write_pair_panels_whole(module: ir.Operation) -> None:
    """Writes of whole pair panels ([..., r, 2] bf16 tiles into the trailing dims of a
    contiguous buffer) as one run of 2r elements. Lowered as they are, each pair (4 bytes) was
    a store of its own, and LLVM assembled B's interleaved rows element by element (a B pack
    took longer than the product of one row of A with it)."""
    for write in find_ops(module, _panel_write):
        _write_whole(write)


def _panel_write(op: ir.Operation) -> bool:
    if op.name != "vector.transfer_write" or len(op.operands) != 2 + _rank(op.operands[1]):
        return False  # masked
    value, dest = ir.VectorType(op.operands[0].type), op.operands[1].type
    if str(value.element_type) != "bf16" or value.shape[-1] != 2:
        return False
    if not isinstance(dest, ir.MemRefType) or not _row_major(ir.MemRefType(dest)):
        return False
    first = _first_wide(value.shape)
    indices = op.operands[2:]
    return (
        value.rank == ir.MemRefType(dest).rank
        and value.shape[first + 1 :] == ir.MemRefType(dest).shape[first + 1 :]
        and all(constant_value(i) == 0 for i in indices[first + 1 :])
        and str(op.attributes["permutation_map"])
        == str(ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(value.rank, value.rank)))
    )


def _row_major(t: ir.MemRefType) -> bool:
    """Whether `t` is a whole buffer in row-major order (no offset, no gaps)."""
    strides, offset = t.get_strides_and_offset()
    return offset == 0 and strides == [math.prod(t.shape[d + 1 :]) for d in range(t.rank)]


def _rank(value: ir.Value) -> int:
    return ir.ShapedType(value.type).rank


def _first_wide(shape: list[int]) -> int:
    """The first dim of `shape` that is not 1."""
    return next((d for d, size in enumerate(shape) if size != 1), len(shape) - 1)


def _interleaved(value: ir.Value) -> ir.Value | None:
    """A pair panel made by transposing two rows ([2][r] -> [r][2], B's pack) as the rows
    interleaved, one shuffle: vector.transpose lowered such a transpose element by element."""
    transpose = value.owner
    if not isinstance(transpose, ir.OpView) or transpose.name != "vector.transpose":
        return None
    source = transpose.operands[0]
    rows = [size for size in ir.VectorType(source.type).shape if size != 1]
    columns = [size for size in ir.VectorType(value.type).shape if size != 1]
    if len(rows) != 2 or rows[0] != 2 or columns != rows[::-1]:
        return None
    element = ir.VectorType(source.type).element_type
    pair = vector.shape_cast(ir.VectorType.get(rows, element), source)
    return vector.interleave(vector.extract(pair, [], [0]), vector.extract(pair, [], [1]))


def _write_whole(write: ir.Operation) -> None:
    value, dest = write.operands[0], write.operands[1]
    shape, dest_type = ir.VectorType(value.type).shape, ir.MemRefType(dest.type)
    first = _first_wide(shape)
    inner = math.prod(dest_type.shape[first + 1 :])
    with ir.InsertionPoint(write), write.location:
        run = ir.VectorType.get([math.prod(shape[first:])], dest_type.element_type)
        flat_type = ir.MemRefType.get(
            [*dest_type.shape[:first], dest_type.shape[first] * inner], dest_type.element_type
        )
        groups = [[d] for d in range(first)] + [list(range(first, dest_type.rank))]
        flat = memref.collapse_shape(flat_type, dest, groups)
        index = ir.IndexType.get()
        start = arith.muli(write.operands[2 + first], arith.constant(index, inner))
        indices = [*write.operands[2 : 2 + first], start]
        vector.transfer_write(
            None,
            _interleaved(value) or vector.shape_cast(run, value),
            flat,
            indices,
            ir.AffineMap.get_minor_identity(first + 1, 1),
            in_bounds=[True],
        )
    write.erase()
