"""`--gpu-tile`: realizes each kernel's GPU `tile.config` on bufferized linalg.

- `gpu_elementwise`: every parallel linalg op is tiled into `scf.forall` points of one
  `vector_size`-element vector along its innermost dim (one 16-byte access a thread) and
  vectorized; the accesses become `vector.load`/`vector.store` that carry their alignment,
  without which the NVPTX backend splits them into scalar accesses. `--gpu-map-loops` then
  makes each forall a launch of `block_threads`-thread blocks.

A kernel whose configuration cannot be realized (a transform step fails, or an access stays
a `vector.transfer_*` that would not lower) is restored and left to `--gpu-map-loops`'
thread-per-element form, with a remark naming the kernel, its configuration and why.
"""

from __future__ import annotations

from mlir import ir
from mlir.passmanager import PassManager

from ..diagnostics import remark
from .gpu_attention_kernels import AttentionKernel
from .gpu_attention_mma import MmaAttentionKernel
from .gpu_map_loops import copies_to_linalg, vector_alignment
from .gpu_matmul_kernels import realize_matmul
from .gpu_row_kernels import realize_rows
from .ir_query import find_ops
from .registry import register_pass
from .tile_configure import kernels, read_config
from .tile_lower import TransformFailure, apply_transform, describe_kernel

_OP_TAG = "gpu.tile_op"

_CLEANUP = """    %fn = transform.structured.match ops{["func.func"]} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fn {
      transform.apply_patterns.vector.drop_unit_dims_with_shape_cast
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_patterns to %fn {
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op"""


def _static_shape(value: ir.Value) -> list[int] | None:
    shaped = ir.ShapedType(value.type)
    return list(shaped.shape) if shaped.has_static_shape else None


def _elementwise_script(kernel: ir.Operation, vector_size: int) -> list[str]:
    lines = []
    ops = find_ops(kernel, lambda op: op.name == "linalg.generic")
    for number, op in enumerate(ops):
        iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
        if any("parallel" not in it for it in iterators):
            raise TransformFailure(f"'{op.name}' has reductions (not an elementwise op)")
        shape = _static_shape(op.operands[-1])
        if not shape:
            continue  # rank 0: one thread, left to gpu-map-loops
        lanes = vector_size
        while shape[-1] % lanes:
            lanes //= 2
        op.attributes[_OP_TAG] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), number)
        sizes = ", ".join(["1"] * (len(shape) - 1) + [str(lanes)])
        lines += [
            f"    %op{number} = transform.structured.match attributes{{{_OP_TAG} = {number} : i64}}"
            " in %root : (!transform.any_op) -> !transform.any_op",
            f"    %tiled{number}, %forall{number} = transform.structured.tile_using_forall "
            f"%op{number} tile_sizes [{sizes}] : (!transform.any_op) -> "
            "(!transform.any_op, !transform.any_op)",
            f"    transform.structured.vectorize %tiled{number} : !transform.any_op",
        ]
    return lines + _CLEANUP.splitlines() if lines else []


def _multiple_of(value: ir.Value, lanes: int) -> bool:
    """Whether an index is provably a multiple of `lanes` (the tiles' own index math)."""
    owner = value.owner
    op = getattr(owner, "operation", owner)
    if not isinstance(op, ir.Operation):
        return lanes == 1
    if op.name == "arith.constant":
        return ir.IntegerAttr(op.attributes["value"]).value % lanes == 0
    if op.name == "affine.apply":
        results = ir.AffineMapAttr(op.attributes["map"]).value.results
        if len(results) != 1:
            return False
        expr = results[0]
        if isinstance(expr, ir.AffineMulExpr) and isinstance(expr.rhs, ir.AffineConstantExpr):
            return expr.rhs.value % lanes == 0
    return False


def _set_alignment(kernel: ir.Operation) -> None:
    """Vector accesses at whole-vector indices carry their alignment."""
    for op in find_ops(kernel, lambda op: op.name in ("vector.load", "vector.store")):
        is_load = op.name == "vector.load"
        vector = ir.VectorType(op.result.type if is_load else op.operands[0].type)
        memref = op.operands[0] if is_load else op.operands[1]
        indices = list(op.operands[1:] if is_load else op.operands[2:])
        if not indices or vector.rank != 1:
            continue
        alignment = vector_alignment(ir.MemRefType(memref.type), vector)
        if alignment and _multiple_of(indices[-1], vector.shape[0]):
            op.attributes["alignment"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), alignment
            )


def _realize_elementwise(kernel: ir.Operation, config: dict) -> None:
    apply_transform(kernel, _elementwise_script(kernel, config.get("vector_size", 1)))
    left = find_ops(kernel, lambda op: op.name.startswith("vector.transfer"))
    if left:
        raise TransformFailure(f"'{left[0].name}' did not lower to loads and stores")
    _set_alignment(kernel)


def _realize_attention(kernel: ir.Operation, config: dict) -> None:
    generator = MmaAttentionKernel if config.get("mma") == "mma.sync" else AttentionKernel
    generator(kernel, config).generate()


_STRATEGIES = {
    "gpu_elementwise": _realize_elementwise,
    "gpu_rows": realize_rows,
    "gpu_matmul": realize_matmul,
    "gpu_attention": _realize_attention,
}


@register_pass("gpu-tile", "Realize each kernel's GPU tile.config (vector accesses, ...)")
def gpu_tile(module: ir.Operation) -> None:
    copies_to_linalg(module)
    PassManager.parse("builtin.module(func.func(linalg-generalize-named-ops))", module.context).run(
        module
    )
    for kernel in kernels(module):
        config = read_config(kernel)
        realize = _STRATEGIES.get((config or {}).get("strategy"))
        if realize is None:
            continue
        scratch = ir.Module.create(kernel.location)
        backup = kernel.clone(ir.InsertionPoint(scratch.body))
        try:
            with kernel.location:
                realize(kernel, config)
        except TransformFailure as failure:
            restored = backup.clone(ir.InsertionPoint(kernel))
            kernel.erase()
            message = f"gpu-tile leaves {describe_kernel(restored, config)} as loops: {failure}"
            remark(restored.location, message)
        finally:
            for op in find_ops(module, lambda op: _OP_TAG in op.attributes):
                del op.attributes[_OP_TAG]
