"""`--tile-lower` and `--tile-vectorize`: realize each kernel's `tile.config` with the transform
dialect.

`--tile-lower` runs on linalg on tensors (after --graph-to-linalg). Per kernel strategy:

- `matmul`: the linalg.matmul is tiled twice, into cache blocks (`tile_sizes`, in the loop
  order `interchange`) and into `register_tile` micro-kernels; its fill and the elementwise
  epilogue are tiled into vector-sized rows. A `direct` conv becomes a contraction over its
  input in place (direct_conv.py), tiled into micro-kernels over its taps. With `pack`, its
  operands are packed into micro-panels first, in the kernel, or, for constants (weights), as
  it is compiled. The contractions are tiled first (`contractions=true`), before elementwise
  fusion, which would otherwise fold the reshapes around a matmul into it and turn it into a
  generic.
- `elementwise`: each elementwise op is tiled into vector-sized rows of the innermost dim.
- `rows`: --tile-rows already made the loop over rows; each row op in it is vectorized whole
  (rows of up to two vectors) or cut into vector-wide pieces, reductions into vector-wide
  partial results combined at the end of the row.

Ops that will become vectors are marked `tile.vectorize`. `--tile-vectorize` runs after
bufferization: it vectorizes the marked ops, keeps the micro-kernel's accumulators in registers
across the k loop (hoisting), and lowers contractions to outer products (FMAs).
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, vector
from mlir.dialects.transform import interpreter
from mlir.passmanager import PassManager

from ..diagnostics import DiagnosticCollector, remark, source_pos
from ..dialects import target as targets
from . import constant_data, direct_conv
from . import linalg_builders as lb
from .hoist_accumulators import hoist_accumulators_in
from .ir_query import constant_value, defining_op, find_ops, user_op, within
from .lower_copies import contiguous
from .pair_products import write_pair_panels_whole, write_pair_products
from .prefetch_panels import BLOCK_ATTR, MICRO_KERNEL_ATTR
from .registry import PassFailure, register_pass
from .tile_configure import (
    CONFIG_ATTR,
    LANE_TYPES,
    claimed_parts,
    im2col_columns,
    kernels,
    largest_divisor,
    read_config,
    shaped_of,
    tile_size,
    to_attr,
)

VECTORIZE_ATTR = "tile.vectorize"
_OP_ATTR = "tile.op"
# A micro-kernel whose C tile starts from the kernel's fill of C (see `_start_tiles_filled`).
_FILL_START_ATTR = "tile.fill_start"

_SEQUENCE = """module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
{body}
    transform.yield
  }}
}}"""


def _structured(op: ir.Operation) -> bool:
    """A linalg op of its own (not one nested in a linalg op's body, like linalg.yield)."""
    return op.name.startswith("linalg.") and not op.parent.name.startswith("linalg.")


def _parallel_only(op: ir.Operation) -> bool:
    if op.name == "linalg.fill":
        return True
    if op.name != "linalg.generic":
        return False
    return all("parallel" in str(it) for it in ir.ArrayAttr(op.attributes["iterator_types"]))


def _window(op: ir.Operation, config: dict) -> bool:
    """A depthwise conv (a generic over the output's 4 dims, then its window's) of an
    elementwise kernel, whose output rows the config cuts into pieces."""
    if op.name != "linalg.generic" or config.get("strategy") != "elementwise":
        return False
    iterators = [str(it) for it in ir.ArrayAttr(op.attributes["iterator_types"])]
    rank = len(config.get("tile_sizes", []))
    return rank == 4 and len(iterators) > rank and all("parallel" in it for it in iterators[:4])


def _row_tiles(op: ir.Operation, lanes: int) -> list[int] | None:
    """Tile sizes that cut an elementwise op into vector-wide pieces of its innermost dim."""
    shaped = [v for v in [*op.operands, *op.results] if isinstance(v.type, ir.ShapedType)]
    if not all(shaped_of(v, LANE_TYPES) for v in shaped):
        return None
    shape = list(ir.RankedTensorType(op.results[0].type).shape)
    if not shape or not _plain_accesses(op):
        return None
    return [1] * (len(shape) - 1) + [tile_size(shape[-1], 4 * lanes, lanes)]


def _loop_ranges(op: ir.Operation) -> list[int]:
    """The static extent of each loop of a linalg op (its result's shape, for ops with no
    indexing maps)."""
    if "indexing_maps" not in op.attributes:
        return list(ir.ShapedType(op.results[0].type).shape)
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    ranges = [1] * maps[0].n_dims
    for value, indexing in zip([*op.operands], maps, strict=True):
        if not isinstance(value.type, ir.ShapedType):
            continue
        for size, expr in zip(ir.ShapedType(value.type).shape, indexing.results, strict=True):
            if isinstance(expr, ir.AffineDimExpr):
                ranges[expr.position] = size
    return ranges


def _plain_accesses(op: ir.Operation) -> bool:
    """Whether every operand is read along loop dims (no strided windows, which would need
    gathers): such ops vectorize into plain vector loads."""
    if "indexing_maps" not in op.attributes:
        return True
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    return all(m.is_projected_permutation for m in maps)


class _Script:
    def __init__(self):
        self.lines: list[str] = []
        self.count = 0

    def match(self, op: ir.Operation) -> str:
        self.count += 1
        op.attributes[_OP_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), self.count)
        name = f"%op{self.count}"
        self.lines.append(
            f"    {name} = transform.structured.match attributes{{{_OP_ATTR} = {self.count} : i64}}"
            " in %root : (!transform.any_op) -> !transform.any_op"
        )
        return name

    def tile(self, handle: str, sizes: list[int], interchange: list[int] | None = None) -> str:
        loops = sum(1 for s in sizes if s)
        if not loops:
            return handle
        self.count += 1
        results = ", ".join(["!transform.any_op"] * (1 + loops))
        order = f" interchange = {interchange}" if interchange else ""
        self.lines.append(
            f"    %t{self.count}, %l{self.count}:{loops} = transform.structured.tile_using_for "
            f"{handle} tile_sizes {sizes}{order} : (!transform.any_op) -> ({results})"
        )
        return f"%t{self.count}"

    def split(
        self,
        handle: str,
        threads: int,
        dim: int = 0,
        kind: str = "!transform.any_op",
        rank: int = 3,
    ) -> str:
        """Splits loop `dim` of the op into `threads` chunks run in parallel (an scf.forall)."""
        if threads <= 1:
            return handle
        self.count += 1
        name = f"%s{self.count}"
        counts = [0] * rank
        counts[dim] = threads
        self.lines.append(
            f"    {name}, {name}f = transform.structured.tile_using_forall {handle} "
            f"num_threads {counts} : ({kind}) -> (!transform.any_op, !transform.any_op)"
        )
        return name

    def start_filled(self, micro: str, product: ir.Operation, config: dict) -> None:
        """Marks the micro-kernels of an unpacked `product` whose C is a fill and whose K is
        one block: each C tile is then filled where its micro-kernel starts (see
        `_start_tiles_filled`)."""
        depth = lb.ranked(product.operands[0]).shape[-1]
        if _fill_of(product.operands[-1]) is not None and config["tile_sizes"][2] >= depth:
            self.lines.append(
                f'    transform.annotate {micro} "{_FILL_START_ATTR}" : !transform.any_op'
            )

    def vectorize_later(self, handle: str) -> None:
        self.lines.append(f'    transform.annotate {handle} "{VECTORIZE_ATTR}" : !transform.any_op')

    def vectorize_row_op(self, handle: str, op: ir.Operation, lanes: int) -> None:
        """A row op of up to two vectors is vectorized whole; a longer one is cut into
        vector-sized pieces of its innermost dim, its reduction (if any) into partial sums of
        that width combined after the loop. The op's other dims larger than 1 (a row of
        several dims) are walked one at a time: only the partial sums stay live."""
        shapes = [ir.ShapedType(v.type).shape for v in op.operands if shaped_of(v, ("f32",))]
        row = max((shape[-1] for shape in shapes if shape), default=1)
        ranges = _loop_ranges(op)
        if row <= 2 * lanes and math.prod(ranges[:-1]) == 1:
            self.vectorize_later(handle)
            return
        iterators = (
            [str(it) for it in ir.ArrayAttr(op.attributes["iterator_types"])]
            if ("iterator_types" in op.attributes)
            else None
        )
        if iterators is None and op.name != "linalg.fill":
            return
        reduces = iterators is not None and "reduction" in iterators[-1]
        # tile_reduction_using_for takes no tiles of parallel dims: those are 1 in a row.
        kinds = iterators or ["parallel"] * len(ranges)
        outer = [
            0 if size == 1 or (reduces and "parallel" in kind) else 1
            for size, kind in zip(ranges[:-1], kinds[:-1], strict=True)
        ]
        sizes = [*outer, tile_size(row, 4 * lanes, lanes)]
        if reduces:
            self.count += 1
            n = self.count
            self.lines.append(
                f"    %rf{n}, %rs{n}, %rc{n}, %rl{n} = transform.structured."
                f"tile_reduction_using_for {handle} by tile_sizes = {sizes} : "
                "(!transform.any_op) -> (!transform.any_op, !transform.any_op, "
                "!transform.any_op, !transform.any_op)"
            )
            for piece in (f"%rf{n}", f"%rs{n}", f"%rc{n}"):
                self.vectorize_later(piece)
            return
        self.vectorize_later(self.tile(handle, sizes))

    def packed_matmul(
        self, packed: _PackedProduct, config: dict, shape: tuple[int, int, int]
    ) -> None:
        """Tiles a packed contraction (see `_packed_product`) of an (M, N, K) `shape` into
        cache blocks (N and K, then M) and micro-kernels, and tiles the packs and the unpack;
        B's pack is fused into the K block loop (into each thread's)."""
        handle = self.match(packed.product)
        *c_packs, unpack = (self.match(op) for op in packed.c_movers)
        self.count += 1
        n = self.count
        mr, nr, _ = config["register_tile"]
        kr = config["pack"]
        mc, nc, kc = config["tile_sizes"]
        any_op = "!transform.any_op"
        generic, pack = (f'!transform.op<"linalg.{name}">' for name in ("generic", "pack"))
        self.lines.append(f"    %gc{n} = transform.cast {handle} : {any_op} to {generic}")
        for operand, (letter, packs) in enumerate((("a", packed.packs_a), ("b", packed.packs_b))):
            if packs:
                self.lines += [
                    f"    %p{letter}{n}t = transform.get_producer_of_operand %gc{n}[{operand}] : "
                    f"({generic}) -> {pack}",
                    f"    %p{letter}{n}ta = transform.cast %p{letter}{n}t : {pack} to {any_op}",
                ]
        fill = self.match(packed.c_fill) if packed.c_fill is not None else None
        threads, dim = config.get("threads", 1), config.get("thread_dim", 0)
        rows = self.split(f"%gc{n}", threads, dim, generic)
        rows_kind = generic if rows == f"%gc{n}" else any_op
        if fill is not None and rows != f"%gc{n}":
            # Each thread zeroes its own share of C: filled whole, before the threads fork,
            # the caller alone wrote all of it while the worker waited (SqueezeNet's 3x3
            # convs on 55x55, 0.8 MB each, on 2 threads).
            self.lines.append(
                f"    %fc{n}, %fc{n}l = transform.structured.fuse_into_containing_op {fill} "
                f"into {rows}f : ({any_op}, {any_op}) -> ({any_op}, {any_op})"
            )
        self.lines.append(
            f"    %tk{n}, %lk{n}:2 = transform.structured.tile_using_for {rows} tile_sizes "
            f"[0, {nc // nr}, {kc // kr}] interchange = [1, 2, 0] : ({rows_kind}) -> "
            f"({any_op}, {any_op}, {any_op})"
        )
        if packed.packs_b:
            # Each (Nc, Kc) block of B is packed in the block loop, into a block-sized buffer
            # that stays in L2 while the micro-kernels of every M block read it, not all of B
            # up front (written out to memory and read back): 64x1024 @ 1024x4096 on 1 thread
            # 58 -> 70 GFLOP/s. With N split over the threads each packs the blocks of its own
            # columns; with M split each packs every block for itself (B is read once per
            # thread, from L3), which beat packing B once for all of them up front by 1-3% at
            # 1024^3, 3-7% at 2048^3.
            producer = f"%pb{n}ta"
            if rows != f"%gc{n}":  # into the threads' forall first, with a buffer of each's own
                self.lines += [
                    f"    %pb{n}s, %pb{n}sl = transform.structured.fuse_into_containing_op "
                    f"{producer} into {rows}f : ({any_op}, {any_op}) -> ({any_op}, {any_op})",
                    f"    transform.apply_patterns to %pb{n}sl {{",
                    "      transform.apply_patterns.tensor.fold_tensor_empty",
                    f"    }} : {any_op}",
                ]
                producer = f"%pb{n}s"
            self.lines += [
                f"    %pb{n}f, %lb{n}f = transform.structured.fuse_into_containing_op "
                f"{producer} into %lk{n}#1 : ({any_op}, {any_op}) -> ({any_op}, {any_op})",
                f"    transform.apply_patterns to %lb{n}f {{",
                "      transform.apply_patterns.tensor.fold_tensor_empty",
                f"    }} : {any_op}",
                f'    transform.annotate %lb{n}f "{BLOCK_ATTR}" : {any_op}',
            ]
        self.lines += [
            f"    %tb{n}, %lb{n} = transform.structured.tile_using_for %tk{n} tile_sizes "
            f"[{mc // mr}, 0, 0] : ({any_op}) -> ({any_op}, {any_op})",
            f"    %tm{n}, %lm{n}:3 = transform.structured.tile_using_for %tb{n} tile_sizes "
            f"[1, 1, 1] interchange = [1, 0, 2] : ({any_op}) -> ({any_op}, {any_op}, {any_op}, "
            f"{any_op})",
            # The micro-kernel has unit outer dims; folding them lets its contraction become
            # outer products (FMAs) instead of a broadcast and a multi-reduction.
            f'    transform.annotate %lm{n}#1 "{MICRO_KERNEL_ATTR}" : {any_op}',
            f'    %km{n} = transform.get_parent_op %tm{n} {{op_name = "scf.for"}} : '
            f"({any_op}) -> {any_op}",
            f"    transform.apply_patterns to %km{n} {{",
            "      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices",
            f"    }} : {any_op}",
            f'    %mk{n} = transform.structured.match ops{{["linalg.generic"]}} in %km{n} : '
            f"({any_op}) -> {any_op}",
        ]
        self.vectorize_later(f"%mk{n}")
        # linalg.pack and linalg.unpack do not bufferize: they become vector transfers now.
        # Packing is a copy: split over the threads too, its outer dim into one chunk each.
        # B's panels are walked k-major: each step reads kr whole rows of B (contiguous)
        # rather than an nr-wide column strip down all of K (a page per row).
        # A last K panel cut short reads masked (the pad reads as zero): a mask of dynamic
        # bounds for every panel, as the bounds of each tile are not known to be whole.
        padded = shape[2] % kr != 0
        a_tile, b_tile = ([1, 1, *_panel_tile(r, kr, packed.pairs)] for r in (mr, nr))
        packs = [(f"%pa{n}ta", threads, None, a_tile)] if packed.packs_a else []
        packs += [(h, threads, None, None) for h in c_packs]
        if packed.packs_b:
            packs.append((f"%pb{n}f", 1, [1, 0], b_tile))
        for name, parts, order, sizes in packs:
            self.vectorize_now(
                self.tile(self.split(name, parts, rank=2), [1, 1], order),
                sizes if padded else None,
            )
        if padded and (packed.packs_a or packed.packs_b):
            self.lower_masks()
        # The unpack is cut into mr x nr tiles: the threads split it along a dim that they cut
        # into whole tiles (a partial tile would have a dynamic shape, which cannot vectorize).
        whole = [d for d in (dim, 1 - dim) if shape[d] % (threads * (mr, nr)[d]) == 0]
        parts, unpack_dim = (threads, whole[0]) if whole else (1, 0)
        self.vectorize_now(self.tile(self.split(unpack, parts, unpack_dim, rank=2), [mr, nr]))

    def unit_tiles(self, handle: str, sizes: list[int]) -> None:
        """Tiles an op by `sizes` (all positive: 1 but along a run) and drops the unit dims,
        so that each tile is a plain (vectorizable) op on a run of contiguous pixels: a run of
        an im2col copy, a depthwise conv's output row with one tap of its window."""
        self.count += 1
        n = self.count
        any_op = "!transform.any_op"
        loops = len(sizes)
        self.lines += [
            f"    %ug{n}g = transform.structured.generalize {handle} : ({any_op}) -> {any_op}",
            f"    %ut{n}, %ul{n}:{loops} = transform.structured.tile_using_for %ug{n}g "
            f"tile_sizes {sizes} : ({any_op}) -> ({', '.join([any_op] * (loops + 1))})",
            f"    transform.apply_patterns to %ul{n}#0 {{",
            "      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices",
            f"    }} : {any_op}",
            f'    %ug{n} = transform.structured.match ops{{["linalg.generic"]}} in '
            f"%ul{n}#{loops - 1} : ({any_op}) -> {any_op}",
        ]
        self.vectorize_later(f"%ug{n}")

    def vectorize_now(self, handle: str, masked_sizes: list[int] | None = None) -> None:
        """Vectorizes the op now; with `masked_sizes` (vector sizes of each of its dest dims),
        reads of a dynamic shape are masked to them."""
        sizes = f" vector_sizes {masked_sizes}" if masked_sizes else ""
        self.lines.append(f"    transform.structured.vectorize {handle}{sizes} : !transform.any_op")

    def lower_masks(self) -> None:
        """Masked reads as masked transfers: as vector.mask regions, folding the views they
        read later puts index math inside the region, which the verifier rejects."""
        self.lines += [
            "    transform.apply_patterns to %root {",
            "      transform.apply_patterns.vector.lower_masked_transfers",
            "    } : !transform.any_op",
        ]


_CONV = "linalg.conv_2d_nchw_fchw"


def _zero_filled(value: ir.Value) -> bool:
    fill = defining_op(value)
    return fill is not None and fill.name == "linalg.fill" and constant_value(fill.operands[0]) == 0


def _im2col(
    conv: ir.Operation, nr: int, packed: bool, columns: int | None = None
) -> tuple[ir.Operation, ir.Operation | None, bool]:
    """Rewrites an NCHW conv (zero-initialized) as weights [O, C*KH*KW] times patches
    [C*KH*KW, N*OH*OW], a linalg.matmul whose result is the output in [O, N, OH, OW] order (for
    N = 1, NCHW itself). Patches are K-major: the copy of one patch row reads a contiguous run
    of input pixels. Patch rows are padded with zero columns to `im2col_columns` (for
    micro-kernels `nr` wide, a `packed` product or not), or to `columns` where the config
    states them, and the product's extra columns dropped. A 1x1 conv of stride 1 on one image
    needs no patches: its input is the matrix.
    Returns the matmul, the patch copy (the conv and None if it does not apply, or there is no
    copy) and whether the copy's patch rows read contiguous runs (a stride of 1)."""
    x, w, init = conv.operands
    if not _zero_filled(init):
        return conv, None, False
    n, c = lb.ranked(x).shape[:2]
    o, _, kh, kw = lb.ranked(w).shape
    out = lb.ranked(conv.results[0])
    _, _, oh, ow = out.shape
    sh, sw = list(ir.DenseIntElementsAttr(conv.attributes["strides"]))
    dh, dw = list(ir.DenseIntElementsAttr(conv.attributes["dilations"]))
    # Patches keep the input's type (bf16 for pair products); the product sums in C's.
    element, patch_element = out.element_type, lb.ranked(x).element_type
    d = [ir.AffineDimExpr.get(i) for i in range(6)]  # c, kh, kw, n, oh, ow
    depth, cols = c * kh * kw, n * oh * ow
    padded = columns or im2col_columns(cols, nr, packed)
    by_patch = [[0, 1, 2], [3, 4, 5]]
    # The input as it is: ResNet-50's 1x1 convs copied 0.4-3.2 MB of it each.
    direct = n == 1 and (kh, kw, sh, sw) == (1, 1, 1, 1) and padded == cols
    with ir.InsertionPoint(conv), conv.location:
        zero = lb.scalar(element, 0)
        patches = None
        if direct:
            rhs = lb.collapse(x, [[0, 1], [2, 3]], [depth, cols])
        else:
            destination = lb.empty([c, kh, kw, n, oh, ow], patch_element)
            if padded > cols:
                # The patches are written into the padded rows in place; only the pad is zeroed.
                rows = lb.empty([depth, padded], patch_element)
                pad = lb.extract_slice(rows, [0, cols], [depth, padded - cols], [1, 1])
                pad = linalg.fill(lb.scalar(patch_element, 0), outs=[pad])
                rows = lb.insert_slice(pad, rows, [0, cols])
                view = lb.extract_slice(rows, [0, 0], [depth, cols], [1, 1])
                destination = lb.expand(view, by_patch, [c, kh, kw, n, oh, ow])
            patches = lb.generic(
                [x],
                destination,
                [[d[3], d[0], d[4] * sh + d[1] * dh, d[5] * sw + d[2] * dw], list(range(6))],
                [lb.PARALLEL] * 6,
                lambda v, _: v,
            )
            rhs = lb.collapse(patches, by_patch, [depth, cols])
            if padded > cols:
                rhs = lb.insert_slice(rhs, rows, [0, 0])
        lhs = lb.collapse(w, [[0], [1, 2, 3]], [o, depth])
        acc = lb.filled([o, padded], element, zero)
        product = linalg.matmul(lhs, rhs, outs=[acc])
        result = product
        if padded > cols:
            result = lb.extract_slice(product, [0, 0], [o, cols], [1, 1])
        if n == 1:  # [O, OH*OW] is NCHW already
            nchw = lb.expand(result, [[0, 1], [2, 3]], [1, o, oh, ow])
        else:
            onhw = lb.expand(result, [[0], [1, 2, 3]], [o, n, oh, ow])
            nchw = lb.transpose(onhw, [1, 0, 2, 3])
    conv.results[0].replace_all_uses_with(nchw)
    conv.erase()
    patch_copy = patches.owner.operation if patches is not None else None
    return product.owner.operation, patch_copy, sw == 1


@dataclasses.dataclass
class _PackedProduct:
    """The ops `_packed_product` made: the contraction, those that move C (its pack, if any,
    and the unpack), the fill of a zero C (if it is one), whether A and B are packed in the
    kernel (not constants packed at compile time) and whether their panels hold k in pairs."""

    product: ir.Operation
    c_movers: list[ir.Operation]
    c_fill: ir.Operation | None
    packs_a: bool
    packs_b: bool
    pairs: bool


def _panel_tile(r: int, kr: int, pairs: bool) -> list[int]:
    """A micro-panel's tile of r rows (or columns) by kr k steps: k-major [kr][r], or [r][kr]
    in pairs (each row's k steps side by side)."""
    return [r, kr] if pairs else [kr, r]


def _pack_operand(
    value: ir.Value, panels: list[int], k_dim: int, pairs: bool
) -> tuple[ir.Value, bool]:
    """A or B (`k_dim` 1 or 0) as micro-panels [X/r][K/kr][kr][r], or [X/r][K/kr][r][kr] in
    `pairs` (each row's k steps side by side), K padded with zeros to whole panels; `panels`
    is that shape. A constant is packed here, once: weights packed in the kernel cost a write
    and a re-read of every weight on every call (ResNet-50's convs pack 94 MB). Returns the
    packed value and whether the kernel packs it."""
    blocks, depth, *tile = panels
    kr, r = (tile[1], tile[0]) if pairs else tile
    element = lb.ranked(value).element_type
    k = lb.ranked(value).shape[k_dim]
    data = constant_data.constant_array(value)
    if data is None:
        pad = lb.scalar(element, 0) if k % kr else None
        dims = [1 - k_dim, k_dim] if pairs else [k_dim, 1 - k_dim]
        tiles = _panel_tile(r, kr, pairs)
        perm = [1, 0] if k_dim == 0 else None
        dest = lb.empty(panels, element)
        return linalg.pack(value, dest, dims, tiles, padding_value=pad, outer_dims_perm=perm), True
    rows = data if k_dim == 0 else data.T
    padded = np.zeros((depth * kr, rows.shape[1]), rows.dtype)
    padded[:k] = rows
    # [K/kr, kr, X/r, r] -> [X/r, K/kr, kr, r] (or [X/r, K/kr, r, kr] in pairs)
    order = (2, 0, 3, 1) if pairs else (2, 0, 1, 3)
    layout = padded.reshape(depth, kr, blocks, r).transpose(order)
    return constant_data.resource_constant(np.ascontiguousarray(layout), element, "packed"), False


def _packed_product(matmul: ir.Operation, config: dict) -> _PackedProduct:
    """Rewrites C += A @ B as a contraction of packed micro-panels: A in [M/mr][K/kr][kr][mr],
    B in [N/nr][K/kr][kr][nr] and C in [N/nr][M/mr][mr][nr], unpacked at the end. C is packed
    so that the tiles of consecutive micro-kernels are adjacent; accumulating into C itself
    (tile rows 4 KiB apart at N = 1024) measured 11% slower on 2 threads. A zero C is filled
    in its packed layout rather than filled and then packed. Loop dims (m1, n1, k1, m0, n0,
    k0).

    bf16 A and B summed into an f32 C (`bf16_pair_products`) are packed in pairs of k
    (config pack 2), as [M/mr][K/2][mr][2] and [N/nr][K/2][nr][2]: one row's two k steps
    are one 32-bit lane, as the pair products take them."""
    mr, nr, _ = config["register_tile"]
    kr = config["pack"]
    a, b, c = matmul.operands
    (m, k), n = lb.ranked(a).shape, lb.ranked(b).shape[1]
    element = lb.ranked(c).element_type
    pairs = str(lb.ranked(a).element_type) == "bf16" and str(element) == "f32"
    floats = isinstance(element, ir.FloatType)
    mul, add = (arith.mulf, arith.addf) if floats else (arith.muli, arith.addi)
    c_shape = [n // nr, m // mr, mr, nr]
    panels = -(-k // kr)

    def widened(x):
        return arith.extf(element, x) if x.type != element else x

    with ir.InsertionPoint(matmul), matmul.location:
        packed_a, packs_a = _pack_operand(
            a, [m // mr, panels, *_panel_tile(mr, kr, pairs)], 1, pairs
        )
        packed_b, packs_b = _pack_operand(
            b, [n // nr, panels, *_panel_tile(nr, kr, pairs)], 0, pairs
        )
        if _zero_filled(c):
            packed_c = lb.filled(c_shape, element, defining_op(c).operands[0])
        else:
            packed_c = linalg.pack(
                c, lb.empty(c_shape, element), [0, 1], [mr, nr], outer_dims_perm=[1, 0]
            )
        a_map, b_map = ([0, 2, 3, 5], [1, 2, 4, 5]) if pairs else ([0, 2, 5, 3], [1, 2, 5, 4])
        product = lb.generic(
            [packed_a, packed_b],
            packed_c,
            [a_map, b_map, [1, 0, 3, 4]],
            [lb.PARALLEL, lb.PARALLEL, lb.REDUCTION, lb.PARALLEL, lb.PARALLEL, lb.REDUCTION],
            lambda x, y, acc: add(acc, mul(widened(x), widened(y))),
        )
        result = linalg.unpack(
            product, lb.empty([m, n], element), [0, 1], [mr, nr], outer_dims_perm=[1, 0]
        )
    matmul.results[0].replace_all_uses_with(result)
    matmul.erase()
    c_op = packed_c.owner.operation
    movers = [c_op] if c_op.name == "linalg.pack" else []
    fill = c_op if c_op.name == "linalg.fill" else None
    return _PackedProduct(
        product.owner.operation, [*movers, result.owner.operation], fill, packs_a, packs_b, pairs
    )


def _plan_patch_copy(script: _Script, copy: ir.Operation, config: dict, lanes: int) -> None:
    """The im2col copy ([C, KH, KW, N, OH, OW]) split over the product's threads along C or
    OH, in parts they share evenly: alone on one thread it was 5-8% of a 3x3 conv on 2, and
    SqueezeNet's stem (3 channels, 111 rows) ran its patches on one thread. With `lanes`, each
    patch row is copied in vector runs; without (a strided conv, whose rows would gather), in
    plain loops."""
    shape = lb.ranked(copy.results[0]).shape
    threads = config.get("threads", 1)
    handle = script.match(copy)
    if threads > 1:
        split = next(((d, p) for d in (0, 4) if (p := claimed_parts(shape[d], threads))), None)
        if split is not None:
            handle = script.split(handle, split[1], split[0], rank=6)
    if lanes:
        run = tile_size(shape[-1], 4 * lanes, lanes)
        script.unit_tiles(handle, [1, 1, 1, 1, 1, run])


def _direct_conv(conv: ir.Operation, config: dict) -> ir.Operation:
    """Rewrites `conv` (on its padded input) as a direct contraction (see direct_conv.py),
    its columns in whole micro-kernels for each thread."""
    rows = config["register_tile"][0]
    problem = direct_conv.unsupported(conv, rows)
    if problem is None and not _zero_filled(conv.operands[2]):
        problem = "its result does not start from zeros"
    if problem is not None:
        raise TransformFailure(f"direct conv: {problem}")
    step = config["register_tile"][1]
    if config.get("thread_dim", 0) == 1:
        step *= config.get("threads", 1)
    return direct_conv.rewrite(conv, rows, step)


def _plan_direct_conv(script: _Script, product: ir.Operation, config: dict) -> None:
    """Tiles a direct conv into micro-kernels (M, then N) over its taps (C, KH, KW, each one at
    a time, an outer product of a weight column by a run of input pixels), each C tile zeroed
    where its micro-kernel starts, in registers across the taps (--tile-vectorize hoists it).
    M outside: on 1 thread of a znver4, 128 channels on 28x28 ran 1.05x and 16 -> 64 on 55x55
    1.03x faster than with N outside, the rest alike."""
    mr, nr, _ = config["register_tile"]
    any_op = "!transform.any_op"
    handle = script.match(product)
    fill = script.match(defining_op(product.operands[2]))
    threads, dim = config.get("threads", 1), config.get("thread_dim", 0)
    # The product's dims: (O/mr, mr, N, C, KH, KW); config dims M and N are its 0 and 2.
    rows = script.split(handle, threads, 2 * dim, rank=6)
    script.count += 1
    n = script.count
    if rows != handle:
        script.lines.append(
            f"    {fill}s, {fill}sl = transform.structured.fuse_into_containing_op {fill} "
            f"into {rows}f : ({any_op}, {any_op}) -> ({any_op}, {any_op})"
        )
        fill = f"{fill}s"
    # Tiling M and N fuses the fill of C: each micro-kernel zeroes its own C tile. Each
    # micro-kernel's weights (mr x C*KH*KW) stay in cache while it walks the image.
    script.lines += [
        f"    %dt{n}, %dl{n}:2 = transform.structured.fuse {rows} tile_sizes "
        f"[1, 0, {nr}, 0, 0, 0] : ({any_op}) -> ({any_op}, {any_op}, {any_op})",
        f"    transform.apply_patterns to %dl{n}#0 {{",
        "      transform.apply_patterns.tensor.fold_tensor_empty",
        f"    }} : {any_op}",
        f'    %df{n} = transform.structured.match ops{{["linalg.fill"]}} in %dl{n}#1 : '
        f"({any_op}) -> {any_op}",
        f"    %dm{n}, %dml{n}:3 = transform.structured.tile_using_for %dt{n} tile_sizes "
        f"[0, 0, 0, 1, 1, 1] : ({any_op}) -> ({any_op}, {any_op}, {any_op}, {any_op})",
        f"    transform.apply_patterns to %dml{n}#2 {{",
        "      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices",
        f"    }} : {any_op}",
        f'    %dg{n} = transform.structured.match ops{{["linalg.generic"]}} in %dml{n}#2 : '
        f"({any_op}) -> {any_op}",
    ]
    script.vectorize_later(f"%df{n}")
    script.vectorize_later(f"%dg{n}")


def _plan_kernel(kernel: ir.Operation, config: dict, script: _Script, contractions: bool) -> None:
    strategy = config.get("strategy", "loops")
    ops = [op.operation for op in kernel.regions[0].blocks[0].operations]
    linalg_ops = [op for op in ops if op.name.startswith("linalg.")]
    lanes = config.get("vector_size", 0)
    if contractions:
        if config.get("direct"):
            for op in linalg_ops:
                if op.name == _CONV:
                    _plan_direct_conv(script, _direct_conv(op, config), config)
            return
        if config.get("im2col"):
            rewritten = []
            for op in linalg_ops:
                if op.name != _CONV:
                    rewritten.append(op)
                    continue
                nr = config["register_tile"][1]
                product, patch_copy, runs = _im2col(op, nr, "pack" in config, config.get("columns"))
                rewritten.append(product)
                if patch_copy is not None:
                    _plan_patch_copy(script, patch_copy, config, lanes if runs else 0)
            linalg_ops = rewritten
        for op in linalg_ops:
            if strategy == "matmul" and op.name == "linalg.matmul" and config.get("pack"):
                shape = (*lb.ranked(op.results[0]).shape, lb.ranked(op.operands[0]).shape[1])
                script.packed_matmul(_packed_product(op, config), config, shape)
            elif strategy == "matmul" and op.name == "linalg.matmul":
                threads, dim = config.get("threads", 1), config.get("thread_dim", 0)
                handle = script.split(script.match(op), threads, dim)
                sizes = list(config["tile_sizes"])
                share = -(-lb.ranked(op.results[0]).shape[dim] // threads)
                sizes[dim] = min(sizes[dim], share)  # a block wider than a thread's share
                blocks = script.tile(handle, sizes, config["interchange"])
                micro = script.tile(blocks, config["register_tile"], [1, 0, 2])
                script.start_filled(micro, op, config)
                script.vectorize_later(micro)
            elif strategy == "matmul" and op.name == "linalg.batch_matmul":
                # The threads split the batches; each batch is blocked as a 2-D matmul, its
                # loops (batch, then the blocks' and the micro-kernels') as there.
                handle = script.split(script.match(op), config.get("threads", 1), 0, rank=4)
                order = [0, *(d + 1 for d in config["interchange"])]
                blocks = script.tile(handle, [1, *config["tile_sizes"]], order)
                micro = script.tile(blocks, [1, *config["register_tile"]], [0, 2, 1, 3])
                script.start_filled(micro, op, config)
                script.vectorize_later(micro)
        return
    if strategy == "rows":  # --tile-rows made the row loop; cut each row op into vectors
        for op in find_ops(kernel, _structured):
            script.vectorize_row_op(script.match(op), op, lanes)
        return
    if strategy not in ("matmul", "elementwise"):
        return
    chunks, dim = config.get("chunks", config.get("threads", 1)), config.get("thread_dim", 0)
    for op in linalg_ops:
        if _window(op, config):
            loops = len(ir.ArrayAttr(op.attributes["iterator_types"]))
            pieces = script.split(script.match(op), chunks, dim, rank=loops)
            script.unit_tiles(pieces, [*config["tile_sizes"], *[1] * (loops - 4)])
        elif _parallel_only(op):
            sizes = _row_tiles(op, lanes)
            if sizes is not None:
                # In a matmul kernel, an op beside the product that the threads cannot split
                # evenly (a conv's zeroed pad columns, the kernel split along N) runs whole:
                # unequal chunks have dynamic shapes.
                shape = lb.ranked(op.results[0]).shape
                uneven = dim >= len(shape) or shape[dim] % chunks
                parts = 1 if strategy == "matmul" and uneven else chunks
                if parts > 1 and dim == len(sizes) - 1:
                    # Split along its rows, each part is cut in pieces of its own width: a
                    # piece wider than the part (a conv's 48 zeroed pad columns, 24 a thread,
                    # in pieces of 48) has a dynamic size, which does not vectorize.
                    sizes[-1] = tile_size(shape[-1] // parts, 4 * lanes, lanes)
                pieces = script.split(script.match(op), parts, dim, rank=len(sizes))
                script.vectorize_later(script.tile(pieces, sizes))


class TransformFailure(Exception):
    """A transform script did not apply; the message is the interpreter's first error."""


def apply_transform(root: ir.Operation, lines: list[str]) -> None:
    """Applies a transform script to `root` (a module or a kernel function). The
    interpreter's diagnostics are caught here: the caller decides whether a failure is an
    error or a reason to fall back."""
    if not lines:
        return
    with root.context, DiagnosticCollector(root.context) as collector:
        sequence = ir.Module.parse(_SEQUENCE.format(body="\n".join(lines)))
        try:
            interpreter.apply_named_sequence(root, sequence.body.operations[0], sequence)
        except Exception as error:  # the interpreter reports through diagnostics too
            causes = [d.format() for d in collector.errors] or _interpreter_causes(str(error))
            raise TransformFailure("; ".join(causes)) from None


# The bindings raise the interpreter's diagnostics as text: `Diagnostic message at LOC: MSG`.
_CAUSE = re.compile(r'Diagnostic message at loc\("([^"]*)":(\d+):(\d+)\): (.*)')


def _interpreter_causes(text: str) -> list[str]:
    causes = [f"{m[4]} (at {m[1]}:{m[2]}:{m[3]})" for m in _CAUSE.finditer(text)]
    return causes or [text.splitlines()[0]]


def _constant_index(value: ir.Value) -> int | None:
    owner = defining_op(value)
    if owner is None or owner.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def _partial(loop: ir.Operation) -> bool:
    """Whether a static loop's last step is a partial tile."""
    bounds = [_constant_index(v) for v in list(loop.operands)[:3]]
    if None in bounds:
        return False
    lower, upper, step = bounds
    return step > 0 and upper - lower > step and (upper - lower) % step != 0


_SIMPLIFY_TILES = "func.func(canonicalize, scf-for-loop-canonicalization, canonicalize)"


def _peel_partial_loops(kernel: ir.Operation) -> None:
    """Splits every loop whose tiles do not divide its range into a loop of whole tiles and
    one partial tile, outer loops first, so that every tile has a static shape (vectorizable
    without masks). Loops inside a peeled partial tile are peeled in the next round."""
    for _ in range(8):  # nesting depth of tiled loops
        loops = find_ops(kernel, lambda op: op.name == "scf.for" and _partial(op))
        outermost = [op for op in loops if not any(o != op and within(op, o) for o in loops)]
        if not outermost:
            return
        script = _Script()
        for loop in outermost:
            handle = script.match(loop)
            script.lines += [
                f"    {handle}f = transform.cast {handle} : !transform.any_op to "
                '!transform.op<"scf.for">',
                f"    %peeled{script.count}, %rest{script.count} = transform.loop.peel "
                f'{handle}f : (!transform.op<"scf.for">) -> (!transform.any_op, '
                "!transform.any_op)",
            ]
        apply_transform(kernel, script.lines)
        _drop_op_ids(kernel)
        # Tile sizes inside the whole tiles become static with the loop bounds known.
        with kernel.context:
            PassManager.parse(_SIMPLIFY_TILES).run(kernel)


def _drop_op_ids(module: ir.Operation) -> None:
    for op in find_ops(module, lambda op: _OP_ATTR in op.attributes):
        del op.attributes[_OP_ATTR]


@register_pass(
    "tile-lower",
    "Tile each kernel as its tile.config says (transform dialect)",
    contractions=bool,
    strict=bool,
)
def tile_lower(module: ir.Operation, contractions: bool = False, strict: bool = False) -> None:
    """With `contractions`, tiles only the kernels' contractions (before elementwise fusion
    would fold reshapes into them); without, tiles everything else.

    A kernel whose configuration cannot be realized (a transform step fails, or an op marked
    for vectorization would not vectorize) is restored and lowered with the next simpler
    configuration: without packing, then without threads, then as plain loops; a remark names
    the kernel, its signature, the configuration that failed and why. With `strict` that is an
    error instead."""
    for kernel in kernels(module):
        config = read_config(kernel)
        if config is not None:
            _lower_kernel(kernel, config, contractions, strict)


def _fallbacks(config: dict) -> list[dict]:
    """The configuration, then ever simpler ones that realize the same kernel."""
    chain = [config]
    simpler = dict(config)
    if simpler.pop("pack", None) is not None:
        chain.append(dict(simpler))
    if [simpler.pop(key) for key in ("threads", "thread_dim", "chunks") if key in simpler]:
        chain.append(dict(simpler))
    if config.get("strategy", "loops") != "loops":
        chain.append({"strategy": "loops"})
    return chain


def describe_kernel(kernel: ir.Operation, config: dict | None) -> str:
    signature = ir.TypeAttr(kernel.attributes["function_type"]).value
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    with_config = f" with {CONFIG_ATTR} = {to_attr(config)}" if config is not None else ""
    return f"kernel @{name} {signature}{with_config}"


def _lower_kernel(kernel: ir.Operation, config: dict, contractions: bool, strict: bool) -> None:
    chain = _fallbacks(config)
    for number, candidate in enumerate(chain):
        scratch = ir.Module.create(kernel.location)
        backup = kernel.clone(ir.InsertionPoint(scratch.body))
        try:
            _realize(kernel, candidate, contractions)
        except TransformFailure as failure:
            described = describe_kernel(backup, candidate)
            if strict or number + 1 == len(chain):
                kernel.location.emit_error(f"tile-lower cannot realize {described}: {failure}")
                raise PassFailure("tile-lower") from None
            restored = backup.clone(ir.InsertionPoint(kernel))
            kernel.erase()
            kernel = restored
            simpler = to_attr(chain[number + 1])
            message = f"tile-lower falls back from {described} ({failure}) to {simpler}"
            remark(kernel.location, message)
            continue
        if number:
            kernel.attributes[CONFIG_ATTR] = to_attr(candidate)
        return


def _realize(kernel: ir.Operation, config: dict, contractions: bool) -> None:
    script = _Script()
    with kernel.location:
        _plan_kernel(kernel, config, script, contractions)
    try:
        apply_transform(kernel, script.lines)
    finally:
        _drop_op_ids(kernel)
    _start_tiles_filled(kernel)
    _peel_partial_loops(kernel)
    lanes = config.get("vector_size", 0)
    if lanes and _split_ragged_columns(kernel, lanes):
        _peel_partial_loops(kernel)
    _check_vectorizable(kernel)


def _fill_of(value: ir.Value) -> ir.Operation | None:
    """The linalg.fill that `value` is, directly or through the loops and slices that carry
    a tiled C down to its micro-kernels; None if it is anything else."""
    while True:
        op = defining_op(value)
        if op is not None:
            if op.name == "linalg.fill":
                return op
            if op.name != "tensor.extract_slice":
                return None
            value = op.operands[0]
            continue
        owner = value.owner.owner
        if owner.name == "scf.for":
            value = owner.opview.initArgs[value.arg_number - 1]
        elif owner.name == "scf.forall":
            forall = owner.opview
            value = forall.outputs[value.arg_number - forall.rank]
        else:
            return None


def _outside(loop: ir.Operation, values: list[ir.Value]) -> bool:
    """Whether every value is defined outside `loop` (the C tile's offsets do not move with
    k)."""
    return not any(within(defining_op(v) or v.owner.owner, loop) for v in values)


def _start_tiles_filled(kernel: ir.Operation) -> None:
    """An unpacked product whose C is a fill and whose K is one block visits each C tile
    once: each micro-kernel fills its own tile as it starts, in place of the fill of all of C
    before the product, which wrote C out to memory for the micro-kernels to read back (16
    heads of attention's 512x64 @ 64x512 scores: 16 MiB written, read and written again)."""
    for micro in find_ops(kernel, lambda op: _FILL_START_ATTR in op.attributes):
        del micro.attributes[_FILL_START_ATTR]
        k_loop = micro.parent
        fill = _fill_of(micro.operands[-1])
        tile = defining_op(micro.operands[-1])
        write_back = next(iter(micro.results[0].uses), None)
        if (
            k_loop.name != "scf.for"
            or fill is None
            or len(list(fill.results[0].uses)) != 1
            or tile is None
            or tile.name != "tensor.extract_slice"
            or write_back is None
            or user_op(write_back).name != "tensor.insert_slice"
            or not _outside(k_loop, [*tile.operands[1:], *user_op(write_back).operands[2:]])
        ):
            continue
        start = k_loop.opview.initArgs[0]
        with ir.InsertionPoint(k_loop), k_loop.location:
            fresh = tile.clone()
            fresh.operands[0] = start
            tile_fill = linalg.fill(fill.operands[0], outs=[fresh.results[0]])
            defining_op(tile_fill).attributes[VECTORIZE_ATTR] = ir.UnitAttr.get()
            placed = user_op(write_back).clone()
            placed.operands[0] = tile_fill
            placed.operands[1] = start
        k_loop.operands[3] = placed.results[0]
        fill.results[0].replace_all_uses_with(fill.operands[1])
        fill.erase()


def _split_ragged_columns(kernel: ir.Operation, lanes: int) -> bool:
    """Cuts each micro-kernel whose columns are not whole vectors (the partial tile peeled off
    N) into its whole vectors and the rest: LLVM scalarizes a 9-wide vector row element by
    element, which made the last 9 of a 13x13 conv's 169 columns 30% of its time. Returns
    whether any was cut (its partial loop still to be peeled)."""
    script = _Script()
    for op in find_ops(kernel, lambda op: op.name == "linalg.matmul"):
        if VECTORIZE_ATTR not in op.attributes:
            continue
        columns = lb.ranked(op.results[0]).shape[-1]
        if columns > lanes and columns % lanes:
            script.tile(script.match(op), [0, columns - columns % lanes, 0])
    if not script.lines:
        return False
    try:
        apply_transform(kernel, script.lines)
    finally:
        _drop_op_ids(kernel)
    return True


# The largest vector a configuration asks for is a 32 x 32 tile of attention scores (1024
# elements, two zmm registers a row). Anything larger was never meant: it spills whole, and
# unrolling it into single-vector ops takes the canonicalizer minutes (a whole 2x12x128x64
# tile of softmax that no row loop cut).
_MAX_VECTOR_ELEMENTS = 1024


def _static_elements(value: ir.Value) -> int:
    """The elements of a statically shaped value (0 for a scalar or a dynamic shape)."""
    if not isinstance(value.type, ir.ShapedType) or not ir.ShapedType(value.type).has_static_shape:
        return 0
    return math.prod(ir.ShapedType(value.type).shape)


def _check_vectorizable(kernel: ir.Operation) -> None:
    """Vectorizes a copy of the kernel's marked ops (on tensors) to learn now, while another
    configuration can still be chosen, whether --tile-vectorize will succeed on its buffers."""
    marked = find_ops(kernel, lambda op: VECTORIZE_ATTR in op.attributes)
    if not marked:
        return
    for op in marked:
        elements = max((_static_elements(v) for v in [*op.operands, *op.results]), default=0)
        if elements > _MAX_VECTOR_ELEMENTS:
            where = source_pos(op.location) or op.location
            raise TransformFailure(
                f"{op.name} at {where} would be one vector of {elements} elements"
            )
    scratch = ir.Module.create(kernel.location)
    trial = kernel.clone(ir.InsertionPoint(scratch.body))
    apply_transform(trial, _VECTORIZE_MARKED.format(attr=VECTORIZE_ATTR).splitlines())


_VECTORIZE_MARKED = """
    %marked = transform.structured.match attributes{{{attr}}} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %marked : !transform.any_op"""

_VECTORIZE = (
    _VECTORIZE_MARKED
    + """
    %funcs = transform.structured.match ops{{["func.func"]}} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {{
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
    }} : !transform.any_op"""
)

# Transfers must read their memrefs directly, with identical index values, for hoisting.
# As a pass: the same patterns applied greedily by the transform op can cycle forever on
# subviews of collapsed memrefs.
_FOLD_VIEWS = "builtin.module(fold-memref-alias-ops, canonicalize, cse)"

_LOWER_VECTORS = """
    %funcs = transform.structured.match ops{["func.func"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %hoisted = transform.structured.hoist_redundant_vector_transfers %funcs
        : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %hoisted {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerparallel"
    } : !transform.any_op
    transform.apply_patterns to %hoisted {
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_1d"
    } : !transform.any_op"""


# Floating-point reduction kinds and the op that combines two partial results of each.
_COMBINE = {
    "add": arith.addf,
    "mul": arith.mulf,
    "maxnumf": arith.maxnumf,
    "minnumf": arith.minnumf,
    "maximumf": arith.maximumf,
    "minimumf": arith.minimumf,
}


def _reduction_kind(op: ir.Operation) -> str:
    # Printed as `#vector.kind<add>`.
    return str(op.attributes["kind"]).partition("<")[2].rstrip(">")


def _reduce_in_halves(op: ir.Operation) -> None:
    """A row's vector of partial results (vector<1xNxf32> reduced over its last dim, or a
    vector<Nxf32> reduced to a scalar) folded in halves, log2(N) vector ops, instead of MLIR's
    lowering to N extracts and scalar ops. Partial results are already combined out of
    order; halving just picks another order."""
    source, accumulator = op.operands
    source_type = ir.VectorType(source.type)
    *outer, width = source_type.shape
    kind = _reduction_kind(op)
    dims = list(ir.DenseI64ArrayAttr(op.attributes["reduction_dims"]))
    if kind not in _COMBINE or dims != [len(outer)] or any(d != 1 for d in outer):
        return
    result_type = op.results[0].type
    scalar = not isinstance(result_type, ir.VectorType)  # a 1-D vector reduced whole
    if width < 2 or width & (width - 1):
        return
    if not scalar and list(ir.VectorType(result_type).shape) != (outer or [1]):
        return
    combine = _COMBINE[kind]
    element = source_type.element_type
    with ir.InsertionPoint(op), op.location:
        values = vector.shape_cast(ir.VectorType.get([width], element), source)
        while width > 1:
            width //= 2
            half = ir.VectorType.get([width], element)
            low = vector.extract_strided_slice(half, values, [0], [width], [1])
            high = vector.extract_strided_slice(half, values, [width], [width], [1])
            values = combine(low, high)
        last = vector.extract(values, [], [0]) if scalar else vector.shape_cast(result_type, values)
        result = combine(last, accumulator)
    op.results[0].replace_all_uses_with(result)
    op.erase()


# Copies of at most this many elements in a vectorized kernel become vectors whole; longer
# ones, runs of at most _COPY_RUN elements.
_VECTOR_COPY_ELEMENTS = 256
_COPY_RUN = 64


def _short_copy(op: ir.Operation) -> bool:
    if op.name != "memref.copy" or op.operands[0] == op.operands[1]:
        return False
    t = ir.MemRefType(op.operands[0].type)
    return t.has_static_shape and math.prod(t.shape) <= _VECTOR_COPY_ELEMENTS


def _row_copy(op: ir.Operation) -> int | None:
    """The run length to copy a strided copy by (rows of its innermost dim, which both sides
    hold contiguously, or pieces of them that divide it), or None."""
    if op.name != "memref.copy" or op.operands[0] == op.operands[1]:
        return None
    if all(contiguous(v) for v in op.operands):  # a memcpy
        return None
    types = [ir.MemRefType(v.type) for v in op.operands]
    if not types[0].has_static_shape or not types[0].rank:
        return None
    if any(t.get_strides_and_offset()[0][-1] != 1 for t in types):
        return None
    row = types[0].shape[-1]
    return row if row <= _COPY_RUN else largest_divisor(row, _COPY_RUN) or None


def _thread_split(kernel: ir.Operation) -> tuple[int, int]:
    """The parts the kernel's threads split its work into, and the dim (1 part without
    threads), from its tile.config as written (read_config checks it against the kernel's
    tensors, which bufferization has turned into arguments)."""
    attr = kernel.attributes[CONFIG_ATTR] if CONFIG_ATTR in kernel.attributes else None
    if not isinstance(attr, ir.DictAttr):
        return 1, 0
    keys = ("chunks", "threads", "thread_dim")
    values = {key: ir.IntegerAttr(attr[key]).value for key in keys if key in attr}
    return values.get("chunks", values.get("threads", 1)), values.get("thread_dim", 0)


def _vector_copies(kernel: ir.Operation) -> None:
    """Copies between buffers in a vectorized kernel become vector-wide runs: short ones
    whole, strided ones (an image into its padded buffer) row by row. As memref.copy they
    would be lowered to element-by-element loops (--lower-copies) that LLVM left scalar (it
    unrolls them fully, and may not reorder their loads and stores, which may alias): a 3x3
    conv on 56x56 spent a sixth of its time in its im2col runs (canonicalization folds the
    tiled copy into a slice insert, which bufferizes to memref.copy), a depthwise conv half of
    it copying its input into the padded buffer. A row copy at the kernel's top level is split
    as the kernel's threads split its work (a depthwise conv's channels): on one thread, the
    copy of 112 channels of 28x28 into their padded buffer left 2 threads no faster than 1."""
    script = _Script()
    parts, dim = _thread_split(kernel)
    for copy in find_ops(kernel, lambda op: op.name == "memref.copy"):
        short = _short_copy(copy)
        run = None if short else _row_copy(copy)
        if not short and run is None:
            continue
        with ir.InsertionPoint(copy), copy.location:
            replacement = linalg.copy(copy.operands[0], outs=[copy.operands[1]]).owner
        copy.erase()
        if short:
            replacement.attributes[VECTORIZE_ATTR] = ir.UnitAttr.get()
            continue
        shape = ir.MemRefType(replacement.operands[0].type).shape
        handle = script.match(replacement)
        top_level = replacement.parent.name == "func.func"
        if top_level and parts > 1 and dim < len(shape) - 1 and shape[dim] % parts == 0:
            handle = script.split(handle, parts, dim, rank=len(shape))
        script.unit_tiles(handle, [1] * (len(shape) - 1) + [run])
    apply_transform(kernel, script.lines)


@register_pass("tile-vectorize", "Vectorize the ops tile-lower marked and lower the vectors")
def tile_vectorize(module: ir.Operation) -> None:
    functions = [op.operation for op in module.regions[0].blocks[0].operations]
    marked = [f for f in functions if find_ops(f, lambda op: VECTORIZE_ATTR in op.attributes)]
    if not marked:
        return
    desc = targets.of(module)
    for kernel in marked:
        try:
            with module.context:
                write_pair_products(kernel, desc)
                _vector_copies(kernel)
            apply_transform(kernel, _VECTORIZE.format(attr=VECTORIZE_ATTR).splitlines())
        except TransformFailure as failure:
            described = describe_kernel(kernel, read_config(kernel))
            kernel.location.emit_error(f"tile-vectorize failed on {described}: {failure}")
            raise PassFailure("tile-vectorize") from None
    with module.context:
        PassManager.parse(_FOLD_VIEWS).run(module)
        write_pair_panels_whole(module)
        hoist_accumulators_in(module)
        for reduction in find_ops(module, lambda op: op.name == "vector.multi_reduction"):
            _reduce_in_halves(reduction)
    try:
        apply_transform(module, _LOWER_VECTORS.splitlines())
    except TransformFailure as failure:
        module.location.emit_error(f"tile-vectorize failed lowering vectors: {failure}")
        raise PassFailure("tile-vectorize") from None
