"""The NVVM pipeline: graph -> linalg -> buffers -> `gpu.launch` per loop nest -> one
`gpu.module` of kernels -> NVVM -> PTX, in-process.

The graph stages are the CPU pipeline's (verification, CSE, fusion into kernels, tile
configuration from the target's facts). After bufferization, the kernels' loop nests become
launches (`--gpu-map-loops`), the kernels are inlined into their callers, and the launch
bodies are outlined into one `gpu.module`, which `gpu-module-to-binary` compiles to PTX
for `chip`. What stays in the public functions is the launch plan: allocations, views of
buffers, constants and `gpu.launch_func` ops, which `launch_plan.py` reads.

Math functions are written as arithmetic (`--math-approximate`) or LLVM intrinsics before
the NVVM conversion, which would otherwise call libdevice (`__nv_tanhf`, ...) that a
machine without the CUDA toolkit cannot link.
"""

from __future__ import annotations

from mlir import ir

from ..passes.dedup_kernels import dedup_kernels
from ..passes.elide_result_copies import elide_result_copies
from ..passes.gpu_map_loops import gpu_map_loops
from ..passes.gpu_tile import gpu_tile
from ..passes.graph_cse import graph_cse
from ..passes.graph_fuse import graph_fuse
from ..passes.graph_to_linalg import graph_to_linalg
from ..passes.graph_verify import graph_verify
from ..passes.math_approximate import math_approximate
from ..passes.math_to_ptx import math_to_ptx, takes
from ..passes.tile_configure import tile_configure
from . import Pipeline, Stage
from .cpu import BUFFERIZE

KERNEL_MODULE = "kernels"

TO_NVVM = (
    "gpu.module(convert-nvgpu-to-nvvm, convert-math-to-llvm, lower-affine, convert-scf-to-cf,"
    "convert-vector-to-llvm,"
    "expand-strided-metadata, lower-affine,"
    # Bare pointers: a kernel's buffer arguments are one pointer each (static shapes), the
    # launch plan passes buffer addresses and nothing else.
    "convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}, convert-nvvm-to-llvm,"
    "canonicalize, cse),"
    "reconcile-unrealized-casts"
)


def merge_gpu_modules(module: ir.Operation) -> None:
    """All kernels into one `gpu.module @kernels` (outlining makes a module per launch): one
    PTX file, loaded once, where a module per launch would cost a load (and a JIT) each.
    Identical kernels become one (an LSTM's time steps launch the same few kernels 128
    times each)."""
    body = module.regions[0].blocks[0]
    modules = [op for op in body.operations if op.operation.name == "gpu.module"]
    if not modules:
        return
    with module.context, module.location, ir.InsertionPoint(modules[0].operation):
        merged = ir.Operation.create(
            "gpu.module",
            attributes={"sym_name": ir.StringAttr.get(KERNEL_MODULE)},
            regions=1,
        )
        merged.regions[0].blocks.append()
    target_block = merged.regions[0].blocks[0]
    renamed = {}
    by_body: dict[str, str] = {}
    for gpu_module in modules:
        module_name = ir.StringAttr(gpu_module.attributes["sym_name"]).value
        for kernel in list(gpu_module.regions[0].blocks[0].operations):
            kernel_name = ir.StringAttr(kernel.attributes["sym_name"]).value
            # Outlining names a launch's kernel `<function>_kernel` and its module uniquely
            # after it (`<function>_kernel_<n>`).
            new_name = (
                module_name
                if module_name.startswith(kernel_name)
                else f"{module_name}_{kernel_name}"
            )
            kernel.attributes["sym_name"] = ir.StringAttr.get(KERNEL_MODULE, module.context)
            # Named alike, kernels print alike when they are alike. Printed in a scope of their
            # own: a nested op printed plainly first numbers the whole module (seconds each).
            body_text = kernel.operation.get_asm(use_local_scope=True)
            if body_text in by_body:
                renamed[(module_name, kernel_name)] = by_body[body_text]
                continue
            by_body[body_text] = renamed[(module_name, kernel_name)] = new_name
            kernel.attributes["sym_name"] = ir.StringAttr.get(new_name, module.context)
            _align_workgroup_memory(kernel.operation)
            target_block.append(kernel.operation)
        gpu_module.operation.erase()

    def retarget(op):
        if op.name == "gpu.launch_func":
            ref = str(op.attributes["kernel"])  # @module::@kernel
            module_name, kernel_name = (part.lstrip("@") for part in ref.split("::"))
            with module.context:
                op.attributes["kernel"] = ir.SymbolRefAttr.get(
                    [KERNEL_MODULE, renamed[(module_name, kernel_name)]]
                )
        return ir.WalkResult.ADVANCE

    module.walk(retarget)


WORKGROUP_ALIGNMENT = 16  # bytes: vector accesses to shared memory (ld.shared.v4) need it


def _align_workgroup_memory(kernel: ir.Operation) -> None:
    """Shared memory buffers 16-byte aligned: the default is their element's alignment, and
    the backend combines their accesses into 16-byte ones (ldmatrix, ld.shared.v4)."""
    if "workgroup_attributions" not in kernel.attributes:
        return
    count = ir.IntegerAttr(kernel.attributes["workgroup_attributions"]).value
    align = ir.DictAttr.get(
        {"llvm.align": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), WORKGROUP_ALIGNMENT)}
    )
    kernel.attributes["workgroup_attrib_attrs"] = ir.ArrayAttr.get([align] * count)


def inline_kernels(module: ir.Operation) -> None:
    """Every call of a kernel function replaced by the kernel's body. MLIR's inliner refuses
    bodies with ops of dialects that declare no inlining rules (nvgpu, the tensor-core
    kernels'), and a kernel here is one block that returns nothing: its body is cloned
    with the call's operands for its arguments."""
    kernels = {
        ir.StringAttr(op.attributes["sym_name"]).value: op.operation
        for op in module.regions[0].blocks[0].operations
        if op.operation.name == "func.func" and "tile.kernel" in op.operation.attributes
    }
    calls = []

    def collect(op):
        if (
            op.name == "func.call"
            and ir.FlatSymbolRefAttr(op.attributes["callee"]).value in kernels
        ):
            calls.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(collect)
    for call in calls:
        kernel = kernels[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
        body = kernel.regions[0].blocks[0]
        mapping = dict(zip(body.arguments, call.operands, strict=True))
        with ir.InsertionPoint(call), call.location:
            for op in body.operations:
                if op.operation.name == "func.return":
                    continue
                clone = op.operation.clone()
                for number, operand in enumerate(clone.operands):
                    if operand in mapping:
                        clone.operands[number] = mapping[operand]
                for old, new in zip(op.operation.results, clone.results, strict=True):
                    mapping[old] = new
                _remap_nested(clone, mapping)
        call.erase()


def _remap_nested(op: ir.Operation, mapping: dict) -> None:
    """Uses of the kernel's values inside a cloned op's regions, taken to the caller's."""

    def remap(inner):
        for number, operand in enumerate(inner.operands):
            if operand in mapping:
                inner.operands[number] = mapping[operand]
        return ir.WalkResult.ADVANCE

    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner.operation.walk(remap)


DYNAMIC_SHARED_ALIGNMENT = 1024  # bytes: what TMA's 128-byte swizzle needs of its buffers


def extern_dynamic_shared_memory(module: ir.Operation) -> None:
    """The kernels' dynamic shared memory as the `.extern .shared` array PTX means by it.

    The GPU lowering declares it as an internal zero-size global, which the NVPTX backend
    demotes to a static shared variable of its own: the block's dynamic memory then starts
    after the static variables while the kernel addresses it from that variable, over the
    mbarriers. External, it is the dynamic memory itself, aligned for swizzled TMA copies."""

    def fix(op):
        if op.name != "llvm.mlir.global":
            return ir.WalkResult.ADVANCE
        is_shared = (
            "addr_space" in op.attributes and ir.IntegerAttr(op.attributes["addr_space"]).value == 3
        )
        if is_shared and "!llvm.array<0 x" in str(op.attributes["global_type"]):
            with module.context:
                op.attributes["linkage"] = ir.Attribute.parse("#llvm.linkage<external>")
                op.attributes["alignment"] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(64), DYNAMIC_SHARED_ALIGNMENT
                )
        return ir.WalkResult.ADVANCE

    module.walk(fix)


def _math_approximate_for_ptx(module: ir.Operation) -> None:
    math_approximate(module, keep=takes)


def _elide_result_copies_for_gpu(module: ir.Operation) -> None:
    """Concat operands stay buffers of their own: --gpu-map-loops does not follow views of a
    byte allocation into the launches it makes (an LSTM's steps written into slices of its
    output failed to verify)."""
    elide_result_copies(module, slices=False)


def pipeline(chip: str = "sm_90", features: str = "+ptx80") -> Pipeline:
    attach = f"nvvm-attach-target{{chip={chip} features={features} O=3}}"
    return Pipeline(
        "nvvm",
        [
            Stage("graph-verify", graph_verify, "check graph semantics"),
            Stage("graph-cse", graph_cse, "repeated graph ops computed once"),
            Stage("graph-fuse", graph_fuse, "group ops into kernels (functions)"),
            Stage("tile-configure", tile_configure, "GPU strategies per kernel"),
            Stage("dedup-kernels", dedup_kernels, "one function for identical kernels"),
            Stage("graph-to-linalg", graph_to_linalg, "graph ops to linalg on tensors"),
            Stage("linalg-fuse", "canonicalize, linalg-fuse-elementwise-ops, canonicalize, cse"),
            Stage("bufferize", BUFFERIZE, "tensors to buffers; results to out-parameters"),
            Stage(
                "elide-result-copies",
                _elide_result_copies_for_gpu,
                "results into out-parameters",
            ),
            Stage("gpu-tile", gpu_tile, "kernels as their GPU tile.config says"),
            Stage(
                "math-approximate",
                _math_approximate_for_ptx,
                "math functions as arithmetic (but those math-to-ptx takes)",
            ),
            Stage("gpu-map-loops", gpu_map_loops, "loop nests to gpu.launch"),
            Stage("inline-kernels", inline_kernels, "one host function"),
            Stage("cleanup", "symbol-dce, canonicalize, cse"),
            Stage(
                "gpu-outline",
                "gpu-launch-sink-index-computations, gpu-kernel-outlining",
                "launch bodies to gpu.func kernels",
            ),
            Stage("merge-gpu-modules", merge_gpu_modules, "one gpu.module of kernels"),
            Stage("math-to-ptx", math_to_ptx, "sqrt, floor, bf16 tanh, ... as PTX instructions"),
            Stage("attach-target", attach, f"compile the kernels for {chip}"),
            Stage("to-nvvm", TO_NVVM, "kernels to the NVVM and LLVM dialects"),
            Stage(
                "extern-dynamic-shared-memory",
                extern_dynamic_shared_memory,
                "dynamic shared memory as PTX's .extern .shared",
            ),
            Stage("to-binary", "gpu-module-to-binary{format=isa}", "PTX of the kernels"),
        ],
    )
