"""GPU configurations for `--tile-configure` (nvvm and rocdl targets), from the target's
facts: warp size, shared memory, SM count and matrix instructions.

- `strategy = "gpu_matmul"`: a matmul (batched ones per batch) as a grid of `block_tile`
  (BM, BN, BK) tiles, each block's warps computing `warp_tile` (WM, WN) of it, the K loop
  fed through `stages` shared-memory buffers, on `mma` units: `wgmma` (sm_90a warpgroups,
  TMA), `mma.sync` (sm_80 and later; f32 operands as TF32 where the target opts in with
  `+tf32`, e.g. `nvvm:sm_90a+tf32`) or `simt` (FMAs: f32, and targets without a matrix
  unit the lowering uses). `vector_size` is the elements of one 16-byte global access.
- `strategy = "gpu_elementwise"`: one element vector (`vector_size`, 16 bytes) per thread,
  `block_threads` threads a block, the grid covering the kernel.
- `strategy = "gpu_attention"`: a flash-style kernel, `block_tile` (BM, BN): BM query rows of
  one head a block, `register_tile` (R) rows a thread, `block_threads * R / BM` threads a
  row, keys staged BN at a time.
- `strategy = "gpu_rows"`: softmax and the norms, `rows_per_block` rows a block: one row per
  warp when a warp covers the row in at most 8 vectors a lane, else one row per block of
  `block_threads`.

The tiles follow what was measured on an H200 with these bindings (f16 x f16 -> f32):
mma.sync best at 128x128x32 with 4 warps of 64x64 and 3 stages of cp.async into swizzled
shared memory (357 TFLOP/s at 4096^3), 64x64x32 when 128x128 tiles leave SMs idle (165
TFLOP/s at 1024^3, where 128x128 gave 114); wgmma at 128x128x64, one warpgroup, 4 TMA stages
(600 TFLOP/s; 7 stages were no faster). Static shared memory is capped at 48 KiB a block,
which bounds the mma.sync stages; wgmma's ring lives in dynamic shared memory.
"""

from __future__ import annotations

import math

from mlir import ir

from ..dialects import target as targets

_ACCESS_BYTES = 16  # one global load or store per thread: ld.global.v4.b32
_STATIC_SHARED = 48 * 1024
_BLOCK_THREADS = 256
_WARP_ROW_VECTORS = 8  # vectors a lane handles before a row needs a whole block
_HALF_TYPES = ("f16", "bf16")
_ATTENTION_ROW_SHARE = 16  # head-dim elements of a row's q and output a thread holds
_ATTENTION_ROWS = 64  # query rows a block
_ATTENTION_THREAD_ROWS = 2
_ATTENTION_TILE_BYTES = 32 * 1024  # K's and V's f32 tiles together
_ATTENTION_WARP_ROWS = 16  # mma.sync: an m16 tile of query rows
_ATTENTION_MMA_WARPS = 4
_ATTENTION_MMA_KEYS = 64
_ATTENTION_MMA_HEAD_DIM = 128
_ATTENTION_MMA_REGISTERS = 160  # fragments a lane; the rest of 255 for addresses and temporaries


def vector_size(element: ir.Type) -> int:
    """Elements of one 16-byte access."""
    width = ir.FloatType(element).width if isinstance(element, ir.FloatType) else 32
    return max(1, _ACCESS_BYTES * 8 // width)


def _units(desc: targets.TargetDesc) -> set[str]:
    return {unit.strip() for unit in desc.matrix_instructions.split(",") if unit.strip()}


def matmul_config(desc: targets.TargetDesc, m: int, n: int, k: int, element: ir.Type) -> dict:
    """The tiles of an (M x K) @ (K x N) matmul of `element` operands."""
    half = str(element) in _HALF_TYPES
    units = _units(desc)
    # f32 operands go to the tensor cores as TF32 only where the target says so (+tf32).
    tf32 = str(element) == "f32" and "tf32" in units
    config = {"strategy": "gpu_matmul", "vector_size": vector_size(element)}
    if half and "wgmma" in units:
        block, warp, stage_bytes = [128, 128, 64], [64, 128], (128 * 64 + 64 * 128) * 2
        config.update(mma="wgmma", stages=min(4, desc.shared_memory_bytes // stage_bytes))
    elif (half or tf32) and "mma.sync" in units:
        block, warp = [128, 128, 32], [64, 64]
        if math.ceil(m / 128) * math.ceil(n / 128) < desc.sm_count:
            block, warp = [64, 64, 32], [32, 32]
        width = ir.FloatType(element).width // 8
        stage_bytes = (block[0] * block[2] + block[2] * block[1]) * width
        # The ring is in dynamic shared memory; two blocks of it fit an SM.
        stages = min(3, desc.shared_memory_bytes // (2 * stage_bytes))
        config.update(mma="mma.sync", stages=stages)
    else:
        block, warp, stage_bytes = [64, 64, 16], [32, 32], (64 * 16 + 16 * 64) * 4
        config.update(mma="simt", stages=min(2, _STATIC_SHARED // stage_bytes))
    config["block_tile"], config["warp_tile"] = block, warp
    return config


def elementwise_config(element: ir.Type, shape: list[int]) -> dict:
    lanes = vector_size(element)
    inner = shape[-1] if shape else 1
    return {
        "strategy": "gpu_elementwise",
        "block_threads": _BLOCK_THREADS,
        "vector_size": math.gcd(lanes, inner) or 1,  # whole vectors along the rows
    }


def rows_config(desc: targets.TargetDesc, element: ir.Type, row: int) -> dict:
    lanes = math.gcd(vector_size(element), row) or 1
    if row <= desc.warp_size * lanes * _WARP_ROW_VECTORS:
        warps = _BLOCK_THREADS // desc.warp_size
        return {
            "strategy": "gpu_rows",
            "rows_per_block": warps,
            "block_threads": _BLOCK_THREADS,
            "vector_size": lanes,
        }
    threads = min(1024, max(_BLOCK_THREADS, row // (lanes * _WARP_ROW_VECTORS)))
    threads -= threads % desc.warp_size
    return {
        "strategy": "gpu_rows",
        "rows_per_block": 1,
        "block_threads": threads,
        "vector_size": lanes,
    }


def attention_config(
    desc: targets.TargetDesc, heads: int, seq: int, head_dims: tuple[int, int], element: ir.Type
) -> dict | None:
    """f16/bf16 on mma.sync targets, head dims of whole k16 steps up to 128: tensor cores,
    FlashAttention-2's form, 4 warps a block and 64-key tiles; a warp takes 2 m16 tiles of
    query rows where their fragments (O, the scores, Q) fit 160 registers a lane, else 1.
    Measured on an H100 (f16 4x16x2048x64 causal): 2 tiles a warp 262 TFLOP/s, 1 tile 246,
    8 warps of 1 tile 200, 128-key tiles 200; at head dim 128 (bf16 1x32x2048x128) 2 tiles
    spill (187 against 265 TFLOP/s).

    Else (FMAs): blocks of 64 query rows of one head; each thread holds 2 rows' shares of
    about 16 head-dim elements (of q and of the output: `block_threads` = 32 x the threads a
    row); keys staged `block_tile[1]` at a time (K's and V's f32 tiles in at most 32 KiB of
    shared memory). Measured on an H100 at 1x12x1024x64 against 1 row of 64 elements a
    thread (2.6x slower: every key read from shared memory fed 4x fewer FMAs), 4 rows (1.8x
    slower: 250 registers, fewer warps) and 128-row blocks (no faster). None where a head
    dim (q's, v's) is not whole 4-element chunks."""
    if (
        str(element) in _HALF_TYPES
        and "mma.sync" in _units(desc)
        and all(dim % 16 == 0 and dim <= _ATTENTION_MMA_HEAD_DIM for dim in head_dims)
    ):
        # A lane's fragment registers per m16 tile: O's, a key tile's scores, Q's.
        d, dv = head_dims
        per_tile = dv // 2 + _ATTENTION_MMA_KEYS // 2 + d // 4
        tiles = max(1, min(2, _ATTENTION_MMA_REGISTERS // per_tile))
        return {
            "strategy": "gpu_attention",
            "mma": "mma.sync",
            "block_tile": [
                _ATTENTION_MMA_WARPS * _ATTENTION_WARP_ROWS * tiles,
                _ATTENTION_MMA_KEYS,
            ],
            "block_threads": _ATTENTION_MMA_WARPS * desc.warp_size,
        }
    share = 1  # threads a row: the largest power of two leaving whole chunks of >= 16
    while max(head_dims) >= _ATTENTION_ROW_SHARE * 2 * share and share < desc.warp_size:
        share *= 2
    while share > 1 and any(dim % (4 * share) for dim in head_dims):
        share //= 2
    if any(dim % 4 for dim in head_dims):
        return None
    keys = _ATTENTION_TILE_BYTES // (4 * sum(head_dims))
    keys = max(16, min(64, 1 << (keys.bit_length() - 1)))  # a power of two
    return {
        "strategy": "gpu_attention",
        "block_tile": [_ATTENTION_ROWS, keys],
        "block_threads": _ATTENTION_ROWS // _ATTENTION_THREAD_ROWS * share,
        "register_tile": [_ATTENTION_THREAD_ROWS],
    }


MMA_UNITS = ("wgmma", "mma.sync", "simt")


def config_problem(config: dict) -> str | None:
    """What makes a GPU `tile.config` unusable, or None (its keys are present)."""
    if any(config.get(key, 1) < 1 for key in ("stages", "block_threads", "rows_per_block")):
        return "'tile.config' stages, block_threads and rows_per_block must be positive"
    if config["strategy"] == "gpu_attention":
        return _attention_problem(config)
    if config["strategy"] != "gpu_matmul":
        return None
    block, warp = config["block_tile"], config["warp_tile"]
    if len(block) != 3 or len(warp) != 2 or min(block + warp) < 1:
        return "'tile.config' block_tile must be 3 positive sizes and warp_tile 2"
    if block[0] % warp[0] or block[1] % warp[1]:
        return f"'tile.config' warp_tile {warp} must divide the block tile {block[:2]}"
    if config["mma"] not in MMA_UNITS:
        return f"'tile.config' mma must be one of {', '.join(MMA_UNITS)}"
    return None


def _attention_problem(config: dict) -> str | None:
    tile, threads = config["block_tile"], config["block_threads"]
    if len(tile) != 2 or min(tile) < 1:
        return "'tile.config' gpu_attention: block_tile must be 2 positive sizes (rows, keys)"
    unit = config.get("mma", "simt")
    if unit == "mma.sync":
        warps, left = divmod(threads, 32)
        if left or not warps or tile[0] % (warps * _ATTENTION_WARP_ROWS) or tile[1] % 16:
            return (
                f"'tile.config' gpu_attention on mma.sync: {threads} threads must be warps of"
                f" whole {_ATTENTION_WARP_ROWS}-row tiles of the block's {tile[0]} rows, and key"
                " tiles whole 16s"
            )
        return None
    if unit != "simt":
        return "'tile.config' gpu_attention: mma must be mma.sync or simt"
    rows = config.get("register_tile", [1])
    if len(rows) != 1 or rows[0] < 1:
        return "'tile.config' gpu_attention: register_tile must be 1 size (rows a thread)"
    share, left = divmod(threads * rows[0], tile[0])  # threads a row
    if tile[0] % rows[0] or left or not share or share & (share - 1):
        return (
            f"'tile.config' gpu_attention: {threads} threads of {rows[0]} rows cannot"
            f" share a block's {tile[0]} rows in a power of two of threads a row"
        )
    return None
