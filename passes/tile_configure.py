"""`--tile-configure`: picks how each kernel is tiled and vectorized, from the target.

Every kernel function (`tile.kernel`, made by --graph-fuse) gets a `tile.config` dictionary:

- `strategy = "matmul"`: a 2-D f32 matmul (with its epilogue); with `im2col = 1`, a conv2d
  computed as a matmul of its input patches by its weights; with `direct = 1`, a conv2d of
  stride 1 whose micro-kernels read its padded input in place (direct_conv.py: M = O, N = OH
  rows of the padded width, K = C*KH*KW, in one block); with `pack = kr`, A and B are first
  packed into micro-panels (mr x kr and kr x nr, k-major; K padded with zeros to whole
  panels), chosen when B does not fit in L2.
  `tile_sizes` are the cache blocks (Mc, Nc, Kc), walked in the loop order `interchange`
  (n, k, m: GotoBLAS's jc, pc, ic); `register_tile` (mr, nr, 1) is the micro-kernel, with
  mr x nr/lanes accumulators in vector registers; `vector_size` is the lanes of one f32 vector.
  A batched matmul (attention's scores and weighted values) is blocked per batch the same
  way, unpacked; its `threads` split the batches.
- `strategy = "elementwise"`: an elementwise chain of f32 (f16/bf16 too, computed in f32;
  comparisons and logic on i1),
  vectorized along the innermost dim in `vector_size`-wide steps; a depthwise conv and a pool
  likewise, their output rows cut into `tile_sizes` pieces accumulated over the window.
- `strategy = "rows"`: softmax and the norms (with their prologue): one loop over the rows
  they normalize (--tile-rows), each row's reductions and normalization vectorized; a
  reduction over the innermost dims likewise (one of every dim is a single row, with no
  loop, or in parts on several cores);
  attention with short sequences: one loop over (batch, head) pairs, each computed in vectors.
- `strategy = "loops"`: anything else, lowered to plain loops.

f16 and bf16 kernels take the f32 configurations: --graph-to-linalg computes what rounds
(products, transcendental ops, row reductions) in f32 between conversions, so their lanes
are f32 lanes.

On GPU targets (nvvm, rocdl) the strategies are `gpu_matmul`, `gpu_elementwise`, `gpu_rows`
and `gpu_attention`, with keys of their own (block and warp tiles, stages, the matrix unit,
threads a block): gpu_tiles.py states them and how they are chosen.

`threads` (with `thread_dim`) splits a matmul's M or N, an elementwise chain's outer dim or a
row kernel's leading dim into that many equal chunks run in parallel: for a matmul when it
has 2^20 flops per thread, for memory-bound kernels when they move 128 KiB per thread. Memory-
bound kernels are cut into `chunks` pieces (up to 4 per thread, each still moving 128 KiB),
which the threads claim one at a time: a thread that starts late (woken late, or sharing its
core) takes fewer, instead of holding up the others with a fixed share.

Partial tiles are peeled, so every tile is static and vectorizes without masks. The choice is
a heuristic from the target's vector width, register count, caches and cores (a tuner can
write `tile.config` instead; `read_config` checks what it wrote against CONFIG_KEYS).
"""

from __future__ import annotations

import dataclasses
import math

from mlir import ir

from ..dialects import target as targets
from . import direct_conv, gpu_tiles
from .graph_fuse import ELEMENTWISE
from .registry import PassFailure, register_pass

KERNEL_ATTR = "tile.kernel"
CONFIG_ATTR = "tile.config"


def largest_divisor(n: int, limit: int, multiple_of: int = 1) -> int:
    """The largest d <= limit dividing n with d % multiple_of == 0 (0 if none)."""
    for d in range(min(n, limit), 0, -1):
        if n % d == 0 and d % multiple_of == 0:
            return d
    return 0


def _graph_ops(kernel: ir.Operation) -> list[ir.Operation]:
    return [
        op.operation
        for op in kernel.regions[0].blocks[0].operations
        if op.operation.name.startswith("graph.") and op.operation.name != "graph.constant"
    ]


# Element types that vectorize in f32-wide lanes: i1 lanes are bytes in memory (--bool-storage);
# f16/bf16 lanes are widened to f32 where they round. As plain loops (LLVM's vectorizer on
# each conversion), a bf16 GELU of 2^20 took 1.67 ms against 1.06 as a chain of vectors.
LANE_TYPES = ("f32", "i1", "f16", "bf16")
# f16/bf16 products and row ops are f32 ones between conversions (--graph-to-linalg widens
# them). As plain loops, a bf16 layer_norm of 128x768 took 8.5x its row kernel's time.
_FLOAT_TYPES = ("f32", "f16", "bf16")


def shaped_of(value: ir.Value, element_types: tuple[str, ...]) -> bool:
    """Whether `value` is a tensor or buffer with one of these element types."""
    t = value.type
    return isinstance(t, (ir.RankedTensorType, ir.MemRefType)) and (
        str(t.element_type) in element_types
    )


_PACK_K = 4  # k steps per packed micro-panel row (k-major panels need at least 2)
_PAIRS = 2  # bf16 panels hold k steps in pairs, each pair one f32 lane's two products


def bf16_pair_products(desc: targets.TargetDesc, config: dict | None, *types: ir.Type) -> bool:
    """Whether a product of these tensors (a 2-D matmul's A, B and C; a conv's input, weights
    and result) is summed by the CPU's bf16 pair products: bf16 throughout, a target with them
    (`TargetDesc.bf16_dot_products`) and a kernel that packs its panels in pairs of k (`pack`
    2). graph-to-linalg then keeps its operands bf16 with an f32 C; other bf16 products are
    f32 ones (unpacked, a micro-kernel widens each element it reads either way)."""
    return (
        desc.bf16_dot_products
        and (config or {}).get("pack") == _PAIRS
        and all(str(t.element_type) == "bf16" for t in types)
    )


def _pair_options(desc: targets.TargetDesc, *types: ir.Type) -> dict:
    """`_matmul_config`'s options for a product that pair products can sum (none for others):
    panels in pairs of k, blocks of bf16, and packed wherever the blocks allow it (unpacked, a
    bf16 product is an f32 one, half the speed: 64x1000 @ 1000x96 0.15 -> 0.077 ms packed)."""
    if not bf16_pair_products(desc, {"pack": _PAIRS}, *types):
        return {}
    return {"pack_small": True, "kr": _PAIRS, "operand_bytes": 2}


def register_tile(desc: targets.TargetDesc) -> tuple[int, int]:
    """(mr, nr): the micro-kernel, using about half the vector registers as accumulators."""
    lanes = desc.vector_lanes_f32
    vectors_per_row = 2
    accumulators = max(4, desc.vector_registers // 2)
    return max(1, accumulators // vectors_per_row), vectors_per_row * lanes


def tile_size(n: int, limit: int, multiple_of: int = 1) -> int:
    """A tile for a dim of n: n itself when it is within `limit`; else a divisor of n (no
    remainder) when one of at least half the limit exists; else `limit` rounded down to
    `multiple_of`, and tile-lower peels the remainder into a loop of its own."""
    if n <= limit:
        return n
    divisor = largest_divisor(n, limit, multiple_of)
    if divisor * 2 >= limit:
        return divisor
    return max(multiple_of, limit - limit % multiple_of)


_BLOCK_COLUMNS = 256  # Nc: the columns of B that a packed block holds, at most
# Rows of an unpacked B that a matrix-vector product reads at once, each a sequential stream
# (4, 8 and 16 from memory on a znver4: 0.48, 0.35 and 0.42 ms at 2048 x 1000; 0.91, 0.68 and
# 0.65 at 4096 x 1000).
_STREAMED_ROWS = 8


def _matmul_config(
    desc,
    m: int,
    n: int,
    k: int,
    pack_small: bool = False,
    constant_b: bool = False,
    rows_for_threads: bool = True,
    kr: int = _PACK_K,
    operand_bytes: int = 4,
) -> dict | None:
    mr, nr = register_tile(desc)
    mr = tile_size(m, mr)
    # Whole vectors where N allows; a narrow N is one (partial) vector row of the micro-kernel.
    nr = tile_size(n, nr, desc.vector_lanes_f32)
    # Kc x nr elements of B stay in L1 (half of it) while the micro-kernel walks A's block;
    # Mc x Kc of A stays in L2. A block of a sixteenth of L2 measured best: larger ones are
    # evicted by the B panels and C tiles streaming past. Blocks of bf16 are as many bytes
    # (twice the elements): 1024^3 in pairs on 1 thread of a znver4, 193 -> 204 GFLOP/s.
    kc_limit = max(1, desc.l1_bytes // (operand_bytes * nr * 2))
    kc = tile_size(k, kc_limit)
    nc = tile_size(n, max(nr, _BLOCK_COLUMNS - _BLOCK_COLUMNS % nr), nr)
    mc = tile_size(m, max(mr, desc.l2_bytes // (operand_bytes * kc * 16)), mr)
    # When B outgrows L2, its rows (a power-of-two stride apart, often) thrash the caches and
    # TLB: pack A and B into contiguous micro-panels first (measured: 0.84x -> 0.9x OpenBLAS at
    # 2048). The packed buffers live in the workspace, so packing costs no allocation.
    large_b = 4 * k * n > desc.l2_bytes or pack_small
    # The packs pad K to whole panels with zeros: a stem conv on 3 channels (K = 147 for a 7x7
    # window) ran unpacked, ResNet-50's 1.18x and 1.17x on 1 and 2 threads packed, medians.
    panels_k = -(-k // kr) * kr
    packed_kc = kc if panels_k == k else tile_size(panels_k, kc_limit, kr)
    packed = large_b and _whole_blocks(m, n, panels_k, mc, nc, packed_kc, mr, nr, kr)
    narrower = largest_divisor(n, nc, nr)
    if large_b and not packed and 4 * narrower >= nc:
        # Narrower blocks that divide N, to pack: convs on 28x28 (784 columns in blocks of 112
        # for 256) 1.15-1.35x on 1 and on 2 threads, medians.
        packed = _whole_blocks(m, n, panels_k, mc, narrower, packed_kc, mr, nr, kr)
        nc = narrower if packed else nc
    rescued = False
    if rows_for_threads and desc.cores > 1 and large_b and not packed and m % mc:
        # Packed panels need blocks that divide M; where none near the L2 limit does (1000
        # classes: 40 or 200 rows, where the limit is 128), one of up to twice it, if the
        # threads then split the product. Unpacked, SqueezeNet's classifier (1000 x 512 by
        # 169 columns: no whole micro-kernels for 2 threads either way) ran on one thread at
        # 103 GFLOP/s; packed (192 columns, blocks of 200 rows), at 163 on 2, 93 on 1.
        rows = largest_divisor(m, 2 * mc, mr)
        if 2 * rows >= mc and _whole_blocks(m, n, panels_k, rows, nc, packed_kc, mr, nr, kr):
            mc, packed, rescued = rows, True, True
    kc = packed_kc if packed else kc
    streamed = large_b and not packed and m <= mr
    if streamed:
        # A matrix-vector product whose B stays unpacked (a classifier's 1 x 2048 @ 2048 x
        # 1000: no whole micro-kernels across 1000 columns) read B in nr-wide strips down kc
        # rows 4000 bytes apart, which the prefetchers do not follow: from memory (the
        # weights of a model's last layer) 0.79 ms on 1 thread of a znver4, numpy 0.41. Whole
        # rows, a few at a time, are that many sequential streams: 0.35 ms.
        nc, kc = n, min(k, _STREAMED_ROWS)
    config = {
        "strategy": "matmul",
        "tile_sizes": [mc, nc, kc],
        "interchange": [1, 2, 0],
        "register_tile": [mr, nr, 1],
        "vector_size": desc.vector_lanes_f32,
    }
    if packed:
        config["pack"] = kr
        short = _short_m_blocks(desc, m, n, k, mr, nr, kr, streamed=constant_b and m <= mr)
        if short is not None:
            config["tile_sizes"] = list(short)
            mc, nc, kc = short
    # Threads split M, or N when M is too short (a conv's output channels): packed, into whole
    # cache blocks; else into whole micro-kernels. A packed matmul with no more rows than
    # columns (a transformer's linear layers on a short sequence, a square one) splits N
    # first: each thread then packs only its own columns of B, where with M split each packs
    # all of B for its rows (A is packed once, up front, for both). 64x1024 @ 1024x4096 on 2
    # threads: 102 -> 104-113 GFLOP/s; on 2 threads of a znver3, medians of 8 rounds, 1024^3
    # 161-174 -> 174-180 GFLOP/s and 2048^3 132-178 -> 148-186 (numpy 172-181, 126-187).
    # Each thread's share is cut into blocks of its own (a block wider than the share leaves
    # every tile inside it of a dynamic size, which does not vectorize); packed panels need
    # whole blocks, so a share that no block divides is not split that way (2304 columns of
    # QKV on 2 threads: blocks of 192, not 256).
    order = [(1, n), (0, m)] if packed and m <= n else [(0, m), (1, n)]
    # A streamed product's threads take equal runs of whole rows, each with its own remainder.
    blocks, micro = config["tile_sizes"], (mr, 1 if streamed else nr)
    for dim, extent in order:
        threads = _threads(desc, m * n * k, extent, micro[dim])
        if threads <= 1:
            continue
        share = extent // threads
        block = tile_size(share, blocks[dim], micro[dim])
        if packed and share % block:
            continue
        blocks[dim] = block
        config["threads"] = threads
        config["thread_dim"] = dim
        break
    if rescued and "threads" not in config:
        return _matmul_config(desc, m, n, k, pack_small, constant_b, False, kr, operand_bytes)
    return config


def _batched_matmul_config(desc, lhs_shape: list[int], n: int) -> dict:
    """Each batch's matmul blocked and register-tiled as a 2-D one is, unpacked (one batch's
    operands are small: attention's per head); threads split the batches, whole ones each."""
    *batch_dims, m, k = lhs_shape
    batches = math.prod(batch_dims)
    config = _matmul_config(dataclasses.replace(desc, cores=1), m, n, k)
    config.pop("pack", None)
    # Batches share nothing (no packed B to build per thread): half the flops per thread of a
    # 2-D matmul pay for a thread (12 heads of 128x64 @ 64x128 on 2: 0.17 -> 0.08 ms).
    threads = _threads(desc, 2 * batches * m * n * k, batches, 1)
    if threads > 1:
        config["threads"] = threads
    return config


def _whole_blocks(m, n, k, mc, nc, kc, mr, nr, kr) -> bool:
    """Whether the blocks divide their dims (packed panels have no partial tiles)."""
    return (
        m % mc == 0
        and n % nc == 0
        and k % kc == 0
        and mc % mr == 0
        and nc % nr == 0
        and kc % kr == 0
    )


_SHORT_M = 64
_PAGE_FLOATS = 1024  # f32 in a 4 KiB page


def _short_m_blocks(
    desc, m, n, k, mr, nr, kr, streamed: bool = False
) -> tuple[int, int, int] | None:
    """Cache blocks for a packed matmul of few rows (a linear layer on a short sequence): each
    B block then serves one M block, so its pack is not amortized and, with 1 KiB block rows,
    ran at memory latency (30% of 64x4096 @ 4096x1024). One M block, block rows of up to a
    page (the L2 streamer prefetches within a page) per thread's columns and kc = 64: that
    shape 1.13-1.16x on 1 thread and 1.12x on 2, 64x1024 @ 1024x4096 1.06x and 1.03x; at M =
    128 and 256 the default blocks are as fast.

    `streamed`: B is packed already (constant weights) and read once (no second row of
    micro-kernels reuses it: a decode step's matrix-vector products). Each micro-kernel then
    walks its panel down all of K, one contiguous stream, where blocks of 64 deep had it
    hop between 32 panels 8 KiB at a time: 1 x 4096 @ 4096 x 4096 from memory on 1 thread
    of a znver4, 5.7 -> 2.4 ms (numpy 2.5)."""
    if m > _SHORT_M:
        return None
    columns = n // desc.cores if n % desc.cores == 0 else n
    depth = k if streamed else tile_size(k, 64, kr)
    blocks = (m, tile_size(columns, _PAGE_FLOATS, nr), depth)
    return blocks if _whole_blocks(m, n, k, *blocks, mr, nr, kr) else None


# Below this, waking a thread costs more than it saves. The pool's workers wake in microseconds:
# from 2^24, 2 threads, medians: 128^3 0.079 -> 0.057 ms, 128x64 @ 64x128 0.040 -> 0.029,
# 16x768 @ 768x768 0.31 -> 0.20, a decode step (sequence 1) of the GPT-2 block 2.47 -> 1.75 ms
# and of the LLaMA block 3.58 -> 2.26.
_FLOPS_PER_THREAD = 1 << 20


def _threads(desc, volume: int, extent: int, unit: int) -> int:
    """Threads that split a dim of `extent`, each getting whole `unit`s and enough work."""
    threads = min(desc.cores, (2 * volume) // _FLOPS_PER_THREAD)
    while threads > 1 and extent % (threads * unit):
        threads -= 1
    return max(threads, 1)


def im2col_columns(columns: int, nr: int, packed: bool) -> int:
    """The patch matrix's row length for `columns` patches and micro-kernels `nr` wide: rounded
    up to whole micro-kernels when that adds at most an eighth (or half, for a packed product).
    Padded, the rows start on cache lines, no micro-kernel is cut short and the blocks can
    divide them, so a large product is packed: as matmuls of those shapes on 1 thread,
    SqueezeNet's 3x3 convs on 55x55 (3025 columns, 3040 padded) went from 71 to 88 GFLOP/s at
    best. `_conv_config` decides whether a conv takes the packed padding (up to half)."""
    padded = -(-columns // nr) * nr
    if columns <= nr or 8 * (padded - columns) > (4 if packed else 1) * columns:
        return columns
    # A packed product is cut into blocks that divide its columns. Where no block of four
    # micro-kernels or more does, whole blocks of four do, at an eighth more at most: a 3x3
    # conv of 32 to 128 channels on 27x27 (SqueezeNet's: 729 columns, 23 micro-kernels
    # padded; 768 here) ran unpacked at 69 GFLOP/s on 1 thread of an AVX-512 Xeon, 102 on 2;
    # packed 135 and 208, medians.
    wide = 4 * nr
    if packed and largest_divisor(padded, _BLOCK_COLUMNS, nr) < wide:
        wider = -(-columns // wide) * wide
        if 8 * (wider - columns) <= columns:
            return wider
    return padded


def _grouped(conv: ir.Operation) -> bool:
    """Whether a conv has more than one group (its `groups` attribute, 1 where left out)."""
    return "groups" in conv.attributes and ir.IntegerAttr(conv.attributes["groups"]).value != 1


# A direct conv computes (and drops) the padded columns of each output row: on 1 thread of a
# znver4, medians, with rows of W + 2 pixels for a 3x3 window, 3x3 convs on 56x56 (3.6% more
# columns) ran 1.14x and 1.23x im2col's speed (64 and 16 -> 64 channels), on 28x28 (10%)
# 1.04x, on 14x14 (14%) 0.95x, on 7x7 (31%) 0.87x. Rows of W + 1 (the borders shared) took
# 2-6% off those of 56x56 to 27x27; 14x14 maps are still 14% more (224 columns: 14 rows of
# 15, rounded up to whole micro-kernels).
_DIRECT_WASTE = 1.125


def _direct_conv_config(desc, conv: ir.Operation) -> dict | None:
    """A conv of stride and dilation 1 on one image, in f32, with a window larger than 1x1:
    a contraction reading its padded input in place (see direct_conv.py), M = O, N = OH rows
    of the padded width (rounded up to whole micro-kernels), K = C*KH*KW. The threads split
    M where it divides into their micro-kernels, else N."""
    if _grouped(conv):
        return None
    types = [v.type for v in (*conv.operands[:2], conv.results[0])]
    if not all(str(ir.RankedTensorType(t).element_type) == "f32" for t in types):
        return None
    n, c, h, w = ir.RankedTensorType(conv.operands[0].type).shape
    o, _, kh, kw = ir.RankedTensorType(conv.operands[1].type).shape
    unit_steps = _pair(conv, "strides") == _pair(conv, "dilations") == [1, 1]
    if n != 1 or kh * kw == 1 or not unit_steps:
        return None
    padding = [0] * 4
    if "padding" in conv.attributes:
        padding = list(ir.DenseI64ArrayAttr(conv.attributes["padding"]))
    mr, nr = register_tile(desc)
    if o % mr:
        return None
    shape = direct_conv.layout((c, h, w), (kh, kw), padding, nr)
    if shape.columns > _DIRECT_WASTE * shape.out_height * shape.out_width:
        return None
    k = c * kh * kw
    threads = _threads(desc, o * shape.columns * k, o, mr)
    dim = 0
    if threads == 1 and desc.cores > 1:
        # The columns are padded to whole micro-kernels for each thread.
        threads, dim = _threads(desc, o * shape.columns * k, desc.cores * nr, nr), 1
        shape = direct_conv.layout((c, h, w), (kh, kw), padding, threads * nr)
    config = {
        "strategy": "matmul",
        "tile_sizes": [o, shape.columns, k],
        "interchange": [1, 2, 0],
        "register_tile": [mr, nr, 1],
        "vector_size": desc.vector_lanes_f32,
        "direct": 1,
    }
    if threads > 1:
        config.update(threads=threads, thread_dim=dim)
    return config


def _conv_config(desc, conv: ir.Operation) -> dict | None:
    """A grouped-free conv as a matmul of its weights by its input patches (im2col):
    M = O, N = N*OH*OW (padded: im2col_columns), K = C*KH*KW."""
    if _grouped(conv):
        return None
    weight = ir.RankedTensorType(conv.operands[1].type).shape
    out = ir.RankedTensorType(conv.results[0].type).shape
    m, n, k = weight[0], out[0] * out[2] * out[3], math.prod(weight[1:])
    nr = register_tile(desc)[1]
    padded = im2col_columns(n, nr, packed=True)
    pairs = _pair_options(desc, conv.operands[0].type, conv.operands[1].type, conv.results[0].type)
    config = _matmul_config(desc, m, n, k, **pairs)
    in_place = out[0] == 1 and weight[2:] == [1, 1] and _pair(conv, "strides") == [1, 1]
    if in_place and n % desc.vector_lanes_f32 == 0 and not pairs:
        # A 1x1 conv of stride 1 multiplies its input as it is, unless its columns are padded
        # (the input copied into padded rows, then packed): where they are whole vectors, no
        # micro-kernel needs the pad. 28x28 maps (784 = 24 x 32 + 16), 1 thread of a znver4,
        # medians: 28 -> 28 channels (a ShuffleNet group) 1.42x, ResNet-50's 1x1 convs there
        # 1.07-1.13x; on 2 threads 1.33x and 1.12-1.25x.
        padded = config["columns"] = n
    if padded != n:
        # Padded patches are packed even where B fits in L2 (the pad pays only in packed
        # panels), where the pad is at most an eighth, where unpadded the last micro-kernel
        # would hold under an eighth of its columns (a 7x7 map's 49 = 3 x 16 + 1 on AVX2:
        # ResNet-50's 1x1 convs there 1.14-1.26x padded on 1 thread of a znver3), or where
        # it lets more threads split the product (SqueezeNet's classifier: 169 columns, 192
        # padded, on 2 cores). A larger pad no longer pays for itself: on 1 thread of a
        # znver4 (49 = 32 + 17), medians, ResNet-50's 3x3 conv on 7x7 73 -> 87 GFLOP/s
        # unpadded (110 -> 170 on 2 threads), on 14x14 (196 = 6 x 32 + 4, 224 padded)
        # 95 -> 105, its 1x1 convs there 1.07-1.15x (1.05-1.35x on 2).
        wide = _matmul_config(desc, m, padded, k, **{"pack_small": True, **pairs})
        small = 8 * (padded - n) <= n
        sliver = 8 * (n % nr) < nr
        more_threads = wide.get("threads", 1) > config.get("threads", 1)
        # Pair products pay any pad im2col_columns allows (up to half): unpacked, a bf16
        # conv runs as an f32 one, half the speed.
        if "pack" in wide and (small or sliver or more_threads or pairs):
            config = wide
    split = _columns_for_threads(desc, m, n, k, nr, config, pairs)
    if split is not None:
        config = split
    config["im2col"] = 1
    return config


def _columns_for_threads(desc, m, n, k, nr, config: dict, pairs: dict) -> dict | None:
    """A packed config whose threads split N, the patches padded (by up to an eighth) to whole
    blocks for each thread, where `config` has them split M (or not at all) with no more rows
    than columns: each thread then packs all of B for a share of few rows. SqueezeNet's convs
    on 55x55 (3025 columns: 3040 split M, 16 or 64 rows; 3072 split N) on 2 threads of a
    znver4, medians: the whole model 6.07 -> 5.59 ms."""
    if desc.cores < 2 or m > n or config.get("thread_dim") == 1:
        return None
    step = desc.cores * nr
    columns = -(-n // step) * step
    if columns == n or 8 * (columns - n) > n:
        return None
    wide = _matmul_config(desc, m, columns, k, **{"pack_small": True, **pairs})
    if "pack" not in wide or wide.get("thread_dim") != 1 or wide["tile_sizes"][1] < 4 * nr:
        return None
    return {**wide, "columns": columns}


def _depthwise_config(desc, conv: ir.Operation) -> dict | None:
    """A conv of one input channel per group (depthwise: MobileNet's 3x3, ConvNeXt's 7x7)."""
    weight = ir.RankedTensorType(conv.operands[1].type).shape
    if weight[1] != 1:
        return None
    # A strided row is read from the input split into phases (--graph-to-linalg), unless the
    # window is dilated too: its taps would be gathers.
    if _pair(conv, "strides")[1] > 1 and _pair(conv, "dilations")[1] != 1:
        return None
    return _window_config(desc, conv)


def _pair(op: ir.Operation, name: str) -> list[int]:
    """A window op's [h, w] attribute (strides, dilations): [1, 1] where it is left out."""
    if name not in op.attributes:
        return [1, 1]
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _window_config(desc, op: ir.Operation) -> dict:
    """A window op (a depthwise conv, a pool): tiles of R output rows by W columns, R x
    W/lanes accumulators kept in registers over the window's taps (as plain loops each output
    was a chain of dependent FMAs). W is a power-of-two number of vectors where the rows are
    whole vectors: LLVM splits a vector of 7 (56 floats) into scalar loads and lane inserts
    (ConvNeXt's 7x7 on 56x56 at 14 GFLOP/s, against 41 for 64 columns); narrower rows are one
    tile row each, whole. With a vertical stride, a tile is one row (its rows would be
    strided reads)."""
    _, channels, oh, ow = ir.RankedTensorType(op.results[0].type).shape
    lanes = desc.vector_lanes_f32
    if ow % lanes == 0:
        width = lanes * (2 if ow % (2 * lanes) == 0 else 1)
        # Half the vector registers hold accumulators; the rest, inputs and taps.
        rows = largest_divisor(oh, max(1, desc.vector_registers // 2 * lanes // width))
    else:
        width = ow if ow <= 8 * lanes else largest_divisor(ow, 8 * lanes)
        rows = 1
    if _pair(op, "strides")[0] != 1:
        rows = 1
    config = {"strategy": "elementwise", "tile_sizes": [1, 1, rows, width], "vector_size": lanes}
    source, out = (ir.RankedTensorType(v.type).shape for v in (op.operands[0], op.results[0]))
    threads = memory_threads(desc, window_bytes(source, out), channels, 1)
    if threads > 1:  # chunks of the channels, claimed by the threads
        chunks = _chunks(threads, window_bytes(source, out), channels, 1)
        config.update(threads=threads, thread_dim=1, chunks=chunks)
    return config


def window_bytes(source: list[int], out: list[int]) -> int:
    """The memory a window op of f32 moves: its input read, its output written."""
    return 4 * (math.prod(source) + math.prod(out))


# Below this, waking a worker costs more than it saves: from 2^19, 2 threads, medians, a tanh
# chain on 2^16 f32 0.037 -> 0.023 ms, an add of 2^16 0.018 -> 0.012 and of 2^15 0.011 -> 0.009.
_BYTES_PER_THREAD = 1 << 17


def memory_threads(desc, moved_bytes: int, extent: int, unit: int) -> int:
    """Threads for memory-bound work moving `moved_bytes` whose split dim (`extent`, in pieces
    of `unit`) must divide evenly."""
    threads = min(desc.cores, moved_bytes // _BYTES_PER_THREAD)
    while threads > 1 and extent % (threads * unit):
        threads -= 1
    return max(threads, 1)


_CHUNKS_PER_THREAD = 4
_BYTES_PER_CHUNK = 1 << 17


def _chunks(threads: int, moved_bytes: int, extent: int, unit: int) -> int:
    """Pieces of the split dim for `threads` threads to claim: as many as divide it evenly, up
    to _CHUNKS_PER_THREAD each, while each piece still moves _BYTES_PER_CHUNK."""
    for per_thread in range(_CHUNKS_PER_THREAD, 1, -1):
        chunks = threads * per_thread
        if extent % (chunks * unit) == 0 and moved_bytes // chunks >= _BYTES_PER_CHUNK:
            return chunks
    return threads


def claimed_parts(extent: int, threads: int) -> int | None:
    """The fewest equal parts of `extent` that `threads` threads, claiming them one at a time,
    share within an eighth of an even split (an odd extent in more parts than threads: 111
    rows in 37 parts of 3, 19 and 18 a thread); None where no divisor does."""
    for parts in range(threads, extent + 1):
        if extent % parts == 0 and -(-parts // threads) * threads * 8 <= parts * 9:
            return parts
    return None


def _elementwise_config(desc, shape: list[int], buffers: int) -> dict | None:
    """Vector-wide pieces of the innermost dim; a chain that moves enough memory (`buffers`
    tensors of this size read or written) splits its outermost dim that divides evenly over
    the target's cores (memory-bound work scales with cores up to the memory bandwidth)."""
    if not shape:
        return None
    lanes = desc.vector_lanes_f32
    width = tile_size(shape[-1], 4 * lanes, lanes)
    tiles = [1] * (len(shape) - 1) + [width]
    config = {"strategy": "elementwise", "tile_sizes": tiles, "vector_size": lanes}
    moved = 4 * buffers * math.prod(shape)
    for dim, (extent, unit) in enumerate(zip(shape, tiles, strict=True)):
        threads = memory_threads(desc, moved, extent, unit)
        if threads > 1:
            config["threads"] = threads
            config["thread_dim"] = dim
            config["chunks"] = _chunks(threads, moved, extent, unit)
            break
    return config


def _root(ops: list[ir.Operation]) -> ir.Operation:
    """The op that decides a kernel's strategy: its first non-elementwise op, if any."""
    anchors = [op for op in ops if op.name.partition(".")[2] not in ELEMENTWISE]
    return anchors[0] if anchors else ops[0]


def configure(kernel: ir.Operation, desc: targets.TargetDesc) -> dict:
    by_kind = {"cpu": _cpu_config, "nvvm": _gpu_config, "rocdl": _gpu_config}
    choose = by_kind.get(desc.kind)
    # A kernel with no graph ops (one already lowered) has nothing to tile.
    if choose is None or not _graph_ops(kernel):
        return {"strategy": "loops"}
    return choose(kernel, desc)


_GPU_TYPES = ("f32", "f16", "bf16")


def _gpu_config(kernel: ir.Operation, desc: targets.TargetDesc) -> dict:
    kind = kernel_kind(kernel)
    ops = _graph_ops(kernel)
    loops = {"strategy": "loops"}
    if not all(shaped_of(v, _GPU_TYPES) for op in ops for v in [*op.operands, *op.results]):
        return loops
    root = _root(ops)
    result = ir.RankedTensorType(root.results[0].type)
    if kind == "elementwise":
        return gpu_tiles.elementwise_config(result.element_type, list(result.shape))
    if kind == "contraction":
        lhs, rhs = (ir.RankedTensorType(v.type) for v in root.operands)
        if lhs.element_type != rhs.element_type or lhs.rank < 2 or rhs.rank < 2:
            return loops
        m = math.prod(lhs.shape[:-1]) if rhs.rank == 2 else lhs.shape[-2]
        return gpu_tiles.matmul_config(desc, m, rhs.shape[-1], lhs.shape[-1], lhs.element_type)
    if root.name in ("graph.softmax", "graph.layer_norm", "graph.rms_norm") and result.rank:
        row = math.prod(result.shape[_row_start(root) :])
        return gpu_tiles.rows_config(desc, result.element_type, row)
    source = ir.RankedTensorType(root.operands[0].type) if root.operands else result
    if source.rank >= 2 and _trailing_axes(root) == source.rank - 1:
        return gpu_tiles.rows_config(desc, result.element_type, source.shape[-1])
    if root.name == "graph.attention":
        q, v = (ir.RankedTensorType(v.type).shape for v in (root.operands[0], root.operands[2]))
        heads = math.prod(q[:-2])
        element = ir.RankedTensorType(root.operands[0].type).element_type
        return gpu_tiles.attention_config(desc, heads, q[-2], (q[-1], v[-1]), element) or loops
    return loops


def _trailing_axes(op: ir.Operation) -> int | None:
    """The first reduced dim of a reduction over the innermost dims (a row kernel's rows),
    or None."""
    if not op.name.startswith("graph.reduce_"):
        return None
    rank = ir.RankedTensorType(op.operands[0].type).rank
    axes = sorted(a % rank for a in ir.DenseI64ArrayAttr(op.attributes["axes"]))
    return axes[0] if axes and axes == list(range(axes[0], rank)) else None


def _cpu_config(kernel: ir.Operation, desc: targets.TargetDesc) -> dict:
    kind = kernel_kind(kernel)
    ops = _graph_ops(kernel)
    values = [v for op in ops for v in [*op.operands, *op.results]]
    loops = {"strategy": "loops"}
    buffers = len(kernel.regions[0].blocks[0].arguments) + 1  # the inputs and the result
    if kind == "elementwise" and all(shaped_of(v, LANE_TYPES) for v in values):
        # Comparisons and logic vectorize like the f32 chains.
        shape = list(ir.RankedTensorType(ops[-1].results[0].type).shape)
        return _elementwise_config(desc, shape, buffers) or loops
    if not all(shaped_of(v, _FLOAT_TYPES) for v in values):
        return loops
    root = _root(ops)
    if kind == "contraction":
        lhs, rhs = (ir.RankedTensorType(v.type) for v in root.operands)
        if lhs.rank >= 2 and rhs.rank == 2:  # lowered as one 2-D matmul over all rows
            m, k, n = math.prod(lhs.shape[:-1]), lhs.shape[-1], rhs.shape[1]
            weights = root.operands[1].owner
            constant_b = isinstance(weights, ir.OpView) and weights.name == "graph.constant"
            pairs = _pair_options(desc, lhs, rhs, root.results[0].type)
            return _matmul_config(desc, m, n, k, constant_b=constant_b, **pairs) or loops
        if lhs.rank == rhs.rank >= 3 and lhs.shape[:-2] == rhs.shape[:-2]:
            return _batched_matmul_config(desc, lhs.shape, rhs.shape[-1])
        return loops
    if kind == "convolution" and root.name == "graph.conv2d":
        return (
            _direct_conv_config(desc, root)
            or _conv_config(desc, root)
            or _depthwise_config(desc, root)
            or loops
        )
    if root.name in ("graph.max_pool2d", "graph.avg_pool2d"):
        return _window_config(desc, root)
    if root.name in ("graph.softmax", "graph.layer_norm", "graph.rms_norm"):
        shape = ir.RankedTensorType(root.results[0].type).shape
        if len(shape) < 2 or _row_start(root) == 0:
            return loops
        return _rows_config(desc, shape, _row_start(root), len(shape), buffers)
    start = _trailing_axes(root)
    shape = ir.RankedTensorType(root.operands[0].type).shape if root.operands else []
    if start is not None and math.prod(shape[start:]) >= desc.vector_lanes_f32:
        # A reduction over the innermost dims: in plain loops its sum is one chain of
        # dependent adds (IEEE order), at a quarter of numpy's speed; a row kernel sums vector
        # partials, its rows flattened into one dim (--tile-rows). A reduction of every dim
        # is one row (no row loop).
        rank = ir.RankedTensorType(root.results[0].type).rank
        return _rows_config(desc, shape, start, rank, buffers)
    if root.name == "graph.attention":
        return _attention_config(desc, root) or loops
    return loops


def _rows_config(desc, shape: list[int], start: int, rank: int, buffers: int) -> dict:
    """A loop over the dims of `shape` before `start`, each row (the dims from `start` on) in
    vectors; the kernel's result has `rank` dims (a reduction may drop the row's). Chunks of
    the first leading dim that divides evenly (`thread_dim`) go to the threads when
    the kernel moves enough memory (`buffers` tensors of up to this shape read or written)."""
    config = {
        "strategy": "rows",
        "tile_sizes": [1] * start + [0] * (rank - start),
        "vector_size": desc.vector_lanes_f32,
    }
    moved = 4 * buffers * math.prod(shape)
    # Chunks of the first leading dim that splits (of dim 0, for a reduction of every dim),
    # claimed by the threads.
    for dim in range(max(start, 1)):
        threads = memory_threads(desc, moved, shape[dim], 1)
        if threads > 1:
            config["threads"] = threads
            config["thread_dim"] = dim
            config["chunks"] = _chunks(threads, moved, shape[dim], 1)
            break
    return config


def _attention_config(desc, root: ir.Operation) -> dict | None:
    """One (batch, head) pair at a time: its scores, softmax and weighted sum of values, in
    vectors when queries, keys and the head dim fit in two vectors each."""
    q, k = (ir.RankedTensorType(v.type).shape for v in root.operands[:2])
    limit = 2 * desc.vector_lanes_f32
    if len(q) < 3 or max(q[-2], q[-1], k[-2]) > limit:
        return None
    return {
        "strategy": "rows",
        "tile_sizes": [1] * (len(q) - 2) + [0, 0],
        "vector_size": desc.vector_lanes_f32,
    }


def _row_start(root: ir.Operation) -> int:
    """The first dim of the rows softmax or a norm works on (the dims from `axis` on)."""
    rank = ir.RankedTensorType(root.results[0].type).rank
    axis = ir.IntegerAttr(root.attributes["axis"]).value if "axis" in root.attributes else -1
    return axis % rank if root.name != "graph.softmax" or axis % rank == rank - 1 else 0


def to_attr(config: dict) -> ir.DictAttr:
    values = {}
    for key, value in config.items():
        if isinstance(value, str):
            values[key] = ir.StringAttr.get(value)
        elif isinstance(value, list):
            values[key] = ir.DenseI64ArrayAttr.get(value)
        else:
            values[key] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    return ir.DictAttr.get(values)


# What each key of a `tile.config` holds; a config written by hand is checked against it.
CONFIG_KEYS = {
    "strategy": str,
    "tile_sizes": list,
    "interchange": list,
    "register_tile": list,
    "vector_size": int,
    "threads": int,
    "thread_dim": int,
    "chunks": int,
    "pack": int,
    "im2col": int,
    "direct": int,
    "columns": int,
    # GPU strategies (gpu_tiles.py)
    "block_tile": list,
    "warp_tile": list,
    "stages": int,
    "mma": str,
    "block_threads": int,
    "rows_per_block": int,
}
STRATEGIES = (
    *("loops", "elementwise", "matmul", "rows"),
    *("gpu_matmul", "gpu_elementwise", "gpu_rows", "gpu_attention"),
)
_KIND_NAMES = {str: "a string", list: "an array<i64: ...>", int: "an integer"}


def read_config(kernel: ir.Operation) -> dict | None:
    """The `tile.config` of a kernel function as Python values, or None. A key that is
    unknown or holds the wrong kind of value is an error at the kernel (PassFailure)."""
    if CONFIG_ATTR not in kernel.attributes:
        return None
    problem = None
    attr = kernel.attributes[CONFIG_ATTR]
    if not isinstance(attr, ir.DictAttr):
        problem = f"'{CONFIG_ATTR}' must be a dictionary, got {attr}"
    config = {}
    for index in range(len(attr) if problem is None else 0):
        named = attr[index]
        value, kind = named.attr, CONFIG_KEYS.get(named.name)
        if isinstance(value, ir.StringAttr) and kind is str:
            config[named.name] = value.value
        elif isinstance(value, ir.IntegerAttr) and kind is int:
            config[named.name] = value.value
        elif isinstance(value, ir.DenseI64ArrayAttr) and kind is list:
            config[named.name] = list(value)
        elif kind is None:
            problem = f"'{CONFIG_ATTR}' has no key '{named.name}' ({', '.join(CONFIG_KEYS)})"
        else:
            problem = f"'{CONFIG_ATTR}' key '{named.name}' must be {_KIND_NAMES[kind]}, got {value}"
    if problem is None:
        problem = _config_problem(config, _result_rank(kernel))
    if problem is not None:
        kernel.location.emit_error(problem)
        raise PassFailure(CONFIG_ATTR)
    return config


def _result_rank(kernel: ir.Operation) -> int:
    fn_type = ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value)
    results = [t for t in fn_type.results if isinstance(t, ir.ShapedType)]
    return ir.ShapedType(results[0]).rank if results else 0


def _config_problem(config: dict, rank: int) -> str | None:
    """What makes a config unusable for a kernel whose result has `rank` dims, or None."""
    strategy = config.get("strategy", "loops")
    if strategy not in STRATEGIES:
        return f"'{CONFIG_ATTR}' strategy must be one of {', '.join(STRATEGIES)}"
    if any(config.get(k, 1) < 1 for k in ("threads", "chunks", "vector_size", "pack")):
        return f"'{CONFIG_ATTR}' threads, chunks, vector_size and pack must be positive"
    required = {"elementwise": ["tile_sizes"], "rows": ["tile_sizes"]}
    required["matmul"] = ["tile_sizes", "interchange", "register_tile"]
    required["gpu_matmul"] = ["block_tile", "warp_tile", "stages", "mma"]
    required["gpu_elementwise"] = ["block_threads", "vector_size"]
    required["gpu_rows"] = ["block_threads", "rows_per_block", "vector_size"]
    required["gpu_attention"] = ["block_tile", "block_threads"]
    missing = [k for k in required.get(strategy, []) if k not in config]
    if missing:
        return f"'{CONFIG_ATTR}' strategy '{strategy}' needs {', '.join(missing)}"
    if strategy.startswith("gpu_"):
        return gpu_tiles.config_problem(config)
    sizes, dims = config.get("tile_sizes", []), 3 if strategy == "matmul" else rank
    if strategy != "loops" and (len(sizes) != dims or any(t < 0 for t in sizes)):
        return f"'{CONFIG_ATTR}' tile_sizes must be {dims} non-negative sizes, got {sizes}"
    if not 0 <= config.get("thread_dim", 0) < max(dims, 1):
        return f"'{CONFIG_ATTR}' thread_dim must be a dim below {dims}"
    if strategy == "rows":
        leading = sum(1 for t in sizes if t)
        if sizes != [1] * leading + [0] * (rank - leading):
            return f"'{CONFIG_ATTR}' rows: tile_sizes must be 1s for the row loop, then 0s"
    if strategy == "matmul":
        register = config["register_tile"]
        if sorted(config["interchange"]) != [0, 1, 2]:
            return f"'{CONFIG_ATTR}' interchange must be a permutation of [0, 1, 2]"
        if len(register) != 3 or min(register) < 1 or min(sizes) < 1:
            return f"'{CONFIG_ATTR}' tile_sizes and register_tile must be 3 positive sizes each"
    return None


def kernel_kind(kernel: ir.Operation) -> str:
    """The kind a kernel function's `tile.kernel` names (elementwise, contraction, ...); any
    other value than a string is an error at the kernel (PassFailure)."""
    kind = kernel.attributes[KERNEL_ATTR]
    if not isinstance(kind, ir.StringAttr):
        message = f"'{KERNEL_ATTR}' must be a string (the kernel's kind), got {kind}"
        kernel.location.emit_error(message)
        raise PassFailure(KERNEL_ATTR)
    return kind.value


def kernels(module: ir.Operation) -> list[ir.Operation]:
    """The module's `tile.kernel` functions that have a body (a declaration has nothing to
    tile)."""
    return [
        op.operation
        for op in module.regions[0].blocks[0].operations
        if op.operation.name == "func.func"
        and KERNEL_ATTR in op.operation.attributes
        and op.operation.regions[0].blocks
    ]


@register_pass("tile-configure", "Choose tile sizes, vector sizes and loop order per kernel")
def tile_configure(module: ir.Operation) -> None:
    desc = targets.of(module) or targets.host_cpu()
    for kernel in kernels(module):
        if CONFIG_ATTR in kernel.attributes:  # written by hand or by a tuner: kept
            continue
        with kernel.location:
            kernel.attributes[CONFIG_ATTR] = to_attr(configure(kernel, desc))
