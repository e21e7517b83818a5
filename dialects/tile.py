"""The `tile` dialect: which ops form one kernel and how it is tiled and mapped.

This first version carries the tiling decision as data on an op: `tile.config` pins the tile
sizes of the kernel whose result it annotates (`tile.config(%x) {tile_sizes = array<i64: ...>}`
is a value-forwarding marker that lowering reads and erases). The CPU and GPU issues grow it
into kernel groups with mapping attributes.
"""

from .dsl import Dialect, I64ArrayAttr, Operand, Result, VerifyError


class Tile(Dialect, name="tile"):
    """Kernel formation and tiling decisions as IR."""


class ConfigOp(Tile.Operation, name="config"):
    """Forwards `input` unchanged and records the tile sizes chosen for its producer.

    `tile_sizes` has one entry per dim of `input`; 0 leaves a dim untiled.
    """

    input: Operand
    tile_sizes: I64ArrayAttr
    result: Result

    @staticmethod
    def infer(sig):
        if len(sig.tile_sizes) != sig.input.rank:
            raise VerifyError(
                f"'tile_sizes' must have one entry per dim ({sig.input.rank}), "
                f"got {len(sig.tile_sizes)}"
            )
        if any(t < 0 for t in sig.tile_sizes):
            raise VerifyError("'tile_sizes' must be non-negative")
        return sig.input


def __getattr__(name: str):
    op = Tile.ops.get(name)
    if op is None:
        raise AttributeError(name)
    return op.build
