"""The CPU pipeline: graph -> linalg on tensors -> bufferization -> loops -> LLVM dialect.

Functions keep their tensor signatures until bufferization; then results become trailing
out-parameters (`f(inputs..., outputs...)`, all memrefs with identity layouts) and every public
function gets a C interface (`_mlir_ciface_<name>` taking descriptor pointers), which is the
ABI the runtime calls, from the JIT or from a shared library.
"""

from mlir import ir

from ..passes.bf16_moves import bf16_moves
from ..passes.bf16_truncation import bf16_truncation
from ..passes.bool_storage import bool_storage
from ..passes.dedup_kernels import dedup_kernels
from ..passes.elide_result_copies import elide_result_copies
from ..passes.fuse_vector_loops import fuse_vector_loops
from ..passes.graph_cse import graph_cse
from ..passes.graph_fuse import graph_fuse
from ..passes.graph_split_groups import graph_split_groups
from ..passes.graph_to_linalg import graph_to_linalg
from ..passes.graph_verify import graph_verify
from ..passes.lower_copies import lower_copies
from ..passes.lower_fork_join import lower_fork_join
from ..passes.math_approximate import math_approximate
from ..passes.outline_parallel import outline_parallel
from ..passes.prefetch_panels import prefetch_panels
from ..passes.prefetch_rows import prefetch_rows
from ..passes.rows_in_place import rows_in_place
from ..passes.streaming_stores import streaming_stores
from ..passes.tile_configure import KERNEL_ATTR, tile_configure
from ..passes.tile_lower import tile_lower, tile_vectorize
from ..passes.tile_rows import tile_rows
from ..passes.workspace_buffers import workspace_buffers
from . import Pipeline, Stage

BUFFERIZE = (
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    # Tiled loops return their destination; canonicalization exposes the allocation beneath,
    # which becomes the out-parameter instead of being copied into it.
    "canonicalize, buffer-results-to-out-params{hoist-static-allocs modify-public-functions},"
    "canonicalize, cse"
)

LOWER_LOOPS = (
    "scf-forall-to-for, convert-linalg-to-loops, convert-vector-to-scf{full-unroll=true},"
    # Ops with an LLVM intrinsic (sqrt, fabs, floor, ...) become instructions first: libm
    # conversion would make each of them a call; only what has no intrinsic is left to libm.
    "convert-math-to-llvm, convert-math-to-libm, expand-strided-metadata, lower-affine,"
    "convert-scf-to-cf, canonicalize, cse"
)

TO_LLVM = (
    "convert-vector-to-llvm{enable-x86vector}, finalize-memref-to-llvm, convert-math-to-llvm,"
    "convert-arith-to-llvm, convert-index-to-llvm, convert-func-to-llvm, convert-cf-to-llvm,"
    "convert-ub-to-llvm,"
    "reconcile-unrealized-casts"
)


def emit_c_interface(module: ir.Operation) -> None:
    """Marks public functions `llvm.emit_c_interface`: the runtime calls their C wrappers."""
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name != "func.func" or "sym_visibility" in op.attributes:
            continue
        if op.regions[0].blocks:
            op.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()


def keep_kernels_apart(module: ir.Operation) -> None:
    """Marks kernels `no_inline`. LLVM would inline a kernel called once into its caller, where
    its micro-kernel ran at a tenth of its speed (a GPT-2 block's attention, inlined into a
    main of thousands of values), and a model of hundreds of calls into one function that
    takes LLVM minutes to optimize; a kernel is work enough that a call costs nothing."""
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "llvm.func" and KERNEL_ATTR in op.attributes:
            op.attributes["no_inline"] = ir.UnitAttr.get()


def _tile_contractions(module: ir.Operation) -> None:
    tile_lower(module, contractions=True)


def pipeline() -> Pipeline:
    return Pipeline(
        "cpu",
        [
            Stage("graph-verify", graph_verify, "check graph semantics"),
            Stage("graph-cse", graph_cse, "repeated graph ops computed once"),
            Stage("graph-split-groups", graph_split_groups, "grouped convs as a conv a group"),
            Stage("graph-fuse", graph_fuse, "group ops into kernels (functions)"),
            Stage("tile-configure", tile_configure, "tile and vector sizes per kernel"),
            Stage("dedup-kernels", dedup_kernels, "one function for identical kernels"),
            Stage("tile-rows", tile_rows, "row kernels as loops over rows"),
            Stage("graph-to-linalg", graph_to_linalg, "graph ops to linalg on tensors"),
            Stage("tile-contractions", _tile_contractions, "cache and register tiles"),
            Stage("linalg-fuse", "canonicalize, linalg-fuse-elementwise-ops, canonicalize, cse"),
            Stage("tile-lower", tile_lower, "tile the rest of each kernel as configured"),
            Stage("bufferize", BUFFERIZE, "tensors to buffers; results to out-parameters"),
            Stage("elide-result-copies", elide_result_copies, "results into out-parameters"),
            Stage("tile-vectorize", tile_vectorize, "vectorize the tiled ops"),
            Stage("rows-in-place", rows_in_place, "row temporaries in their result rows"),
            Stage("fuse-vector-loops", fuse_vector_loops, "a loop joins the loop it reads"),
            Stage(
                "hoist-buffers",
                "func.func(buffer-loop-hoisting)",
                "loop temporaries allocated once",
            ),
            Stage("prefetch-rows", prefetch_rows, "prefetch the rows row loops touch next"),
            Stage("prefetch-panels", prefetch_panels, "micro-kernels prefetch the next B block"),
            Stage("workspace-buffers", workspace_buffers, "temporaries in a reused workspace"),
            Stage("deallocate", "buffer-deallocation-pipeline", "free temporary buffers"),
            Stage("math-approximate", math_approximate, "exp as a vectorizable polynomial"),
            Stage("bf16-truncation", bf16_truncation, "f32 -> bf16 roundings without libcalls"),
            Stage("streaming-stores", streaming_stores, "outputs past the cache unread"),
            Stage("outline-parallel", outline_parallel, "parallel loops to forked tasks"),
            Stage("lower-copies", lower_copies, "strided copies to loops"),
            Stage("lower-loops", LOWER_LOOPS, "linalg to loops, math to libm calls"),
            Stage("bool-storage", bool_storage, "i1 buffers stored as i8"),
            Stage("c-interface", emit_c_interface, "C wrappers for the runtime"),
            Stage("to-llvm", TO_LLVM, "everything to the LLVM dialect"),
            Stage("bf16-moves", bf16_moves, "bf16 copies as i16 (x86's backend aborts on some)"),
            Stage("keep-kernels-apart", keep_kernels_apart, "kernels are not inlined"),
            Stage("lower-fork-join", lower_fork_join, "forks on POSIX threads"),
        ],
    )
