"""GPU configurations for `--tile-configure` (nvvm and rocdl targets), from the target's
facts: warp size, shared memory, SM count and matrix instructions.

- `strategy = "gpu_matmul"`: a matmul (batched ones per batch) as a grid of `block_tile`
  (BM, BN, BK) tiles, each block's warps computing `warp_tile` (WM, WN) of it, the K loop
  fed through `stages` shared-memory buffers, on `mma` units: `wgmma` (sm_90a warpgroups,
  TMA), `mma.sync` (sm_80 and later) or `simt` (FMAs, f32 and targets without a matrix
  unit the lowering uses). `vector_size` is the elements of one 16-byte global access.
- `strategy = "gpu_elementwise"`: one element vector (`vector_size`, 16 bytes) per thread,
  `block_threads` threads a block, the grid covering the kernel.
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
    config = {"strategy": "gpu_matmul", "vector_size": vector_size(element)}
    if half and "wgmma" in units:
        block, warp, stage_bytes = [128, 128, 64], [64, 128], (128 * 64 + 64 * 128) * 2
        config.update(mma="wgmma", stages=min(4, desc.shared_memory_bytes // stage_bytes))
    elif half and "mma.sync" in units:
        block, warp = [128, 128, 32], [64, 64]
        if math.ceil(m / 128) * math.ceil(n / 128) < desc.sm_count:
            block, warp = [64, 64, 32], [32, 32]
        stage_bytes = (block[0] * block[2] + block[2] * block[1]) * 2
        config.update(mma="mma.sync", stages=min(3, _STATIC_SHARED // stage_bytes))
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


MMA_UNITS = ("wgmma", "mma.sync", "simt")


def config_problem(config: dict) -> str | None:
    """What makes a GPU `tile.config` unusable, or None (its keys are present)."""
    if any(config.get(key, 1) < 1 for key in ("stages", "block_threads", "rows_per_block")):
        return "'tile.config' stages, block_threads and rows_per_block must be positive"
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
