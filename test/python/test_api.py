"""strata.compile: numpy in, numpy out, clear errors."""

import dataclasses

import numpy as np
import pytest
import strata
from strata.runtime import InvocationError

ADD = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>) {
  %0 = "graph.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "graph.reduce_sum"(%0) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2xf32>
}
"""


def test_compile_returns_tuple_of_results():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones(3, np.float32)
    total, sums = strata.compile(ADD)(a, b)
    np.testing.assert_array_equal(total, a + b)
    np.testing.assert_array_equal(sums, (a + b).sum(1))


def test_compiling_a_module_leaves_it_unchanged():
    from strata import source

    module = source.parse(ADD, source.make_context(), "add.mlir")
    before = str(module)
    first, second = strata.compile(module), strata.compile(module)
    assert str(module) == before
    a, b = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    np.testing.assert_array_equal(first(a, b)[0], second(a, b)[0])


def test_results_can_go_into_given_arrays():
    function = strata.compile(ADD)
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(3, np.float32)
    total, sums = np.empty((2, 3), np.float32), np.empty(2, np.float32)
    returned = function(a, b, out=(total, sums))
    assert returned[0] is total and returned[1] is sums
    np.testing.assert_array_equal(total, a + b)
    with pytest.raises(InvocationError, match=r"out\[1\] must be tensor<2xf32>"):
        function(a, b, out=(total, np.empty(3, np.float32)))
    with pytest.raises(InvocationError, match="has 2 result"):
        function(a, b, out=total)


RELU = """
func.func @main(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "graph.relu"(%a) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
"""


def test_arrays_of_any_layout_and_flags_pass_or_are_refused():
    """Calls of arrays exactly as compiled take a short path: views, read-only arrays and
    given outputs in a loop still get the right results or a clear error."""
    function = strata.compile(RELU)
    wide = np.arange(-12, 12, dtype=np.float32).reshape(4, 6)
    strided = wide[:, ::2]  # not contiguous: copied first
    np.testing.assert_array_equal(function(strided), np.maximum(strided, 0))
    frozen = np.ascontiguousarray(strided)
    frozen.flags.writeable = False
    np.testing.assert_array_equal(function(frozen), np.maximum(frozen, 0))
    out = np.empty((4, 3), np.float32)
    for sign in (1, -1, 1):
        assert function(frozen * sign, out=out) is out
        np.testing.assert_array_equal(out, np.maximum(frozen * sign, 0))
    read_only = np.empty((4, 3), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(InvocationError, match=r"out\[0\] is read-only"):
        function(frozen, out=read_only)
    with pytest.raises(InvocationError, match=r"out\[0\] must be a C-contiguous"):
        function(frozen, out=np.empty((3, 4), np.float32).T)
    with pytest.raises(InvocationError, match=r"out\[0\] must be tensor<4x3xf32>"):
        function(frozen, out=np.empty((4, 3), np.float64))


def test_empty_aligned_gives_64_byte_aligned_outputs():
    from strata.runtime import empty_aligned

    function = strata.compile(RELU)
    out = empty_aligned((4, 3), np.float32, always=True)
    assert out.ctypes.data % 64 == 0 and out.shape == (4, 3) and out.dtype == np.float32
    x = np.arange(-6, 6, dtype=np.float32).reshape(4, 3)
    assert function(x, out=out) is out
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    assert empty_aligned((1024, 1024), np.float32).ctypes.data % 64 == 0


def test_wrong_arguments_raise_invocation_errors():
    function = strata.compile(ADD)
    with pytest.raises(InvocationError, match="takes 2 input"):
        function(np.zeros((2, 3), np.float32))
    with pytest.raises(InvocationError, match=r"must have shape \[3\]"):
        function(np.zeros((2, 3), np.float32), np.zeros(4, np.float32))
    with pytest.raises(InvocationError, match="must have dtype float32"):
        function(np.zeros((2, 3), np.float32), np.zeros(3, np.float64))


def test_invalid_ir_raises_located_error():
    bad = """func.func @main(%a: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %0 = "graph.relu"(%a) : (tensor<2x3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}"""
    with pytest.raises(strata.CompileError, match=r"<input>:2:8: error: 'graph.relu' op result"):
        strata.compile(bad)


def test_entry_selection():
    text = ADD + ADD.replace("@main", "@other")
    assert strata.compile(text, entry="other").signature.name == "other"
    with pytest.raises(strata.CompileError, match="no public function 'missing'"):
        strata.compile(text, entry="missing")


def test_non_host_target_cannot_run():
    with pytest.raises(strata.CompileError, match="cannot run in this process"):
        strata.compile(ADD, target="cpu:aarch64")


def test_shared_library_runs_without_the_compiler(tmp_path):
    from strata import compiler, source
    from strata.runtime import load

    module = source.parse(ADD, source.make_context())
    path = tmp_path / "add.so"
    path.write_bytes(compiler.emit(module, "so"))
    function = load(path)["main"]
    a = np.full((2, 3), 2.0, np.float32)
    total, sums = function(a, np.ones(3, np.float32))
    np.testing.assert_array_equal(total, a + 1)
    np.testing.assert_array_equal(sums, [9.0, 9.0])


PACKED = """
func.func @main(%a: tensor<64x256xf32>, %b: tensor<256x256xf32>) -> tensor<64x256xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %1 = "graph.relu"(%0) : (tensor<64x256xf32>) -> tensor<64x256xf32>
  return %1 : tensor<64x256xf32>
}
"""


def _compiled(text, target, artifact, tmp_path):
    """`main` of `text` for `target`, JIT-compiled or loaded from a shared library."""
    from strata import compiler, source
    from strata.runtime import load

    if artifact == "jit":
        return strata.compile(text, target=target)
    path = tmp_path / "module.so"
    path.write_bytes(compiler.emit(source.parse(text, source.make_context()), "so", target=target))
    return load(path)["main"]


@pytest.mark.parametrize("artifact", ["jit", "so"])
def test_workspace_is_per_thread(artifact, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from strata.dialects import target

    # B (256 KiB) is larger than this L2: A and C are packed into the workspace, and B block
    # by block into buffers of the workspace too.
    small_l2 = dataclasses.replace(target.host_cpu(), l2_bytes=1 << 16)
    function = _compiled(PACKED, small_l2, artifact, tmp_path)
    assert function.signature.workspace > 2 * 64 * 256 * 4
    rng = np.random.default_rng(0)
    cases = [
        (rng.standard_normal((64, 256), np.float32), rng.standard_normal((256, 256), np.float32))
        for _ in range(4)
    ]

    def check(case):
        a, b = case
        for _ in range(20):
            np.testing.assert_allclose(function(a, b), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(check, cases))


MATMUL_256 = """
func.func @main(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "graph.matmul"(%a, %b) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}
"""


@pytest.mark.parametrize("artifact", ["jit", "so"])
def test_kernels_split_over_the_targets_cores(artifact, tmp_path):
    from strata import compiler, source
    from strata.dialects import target

    four_cores = dataclasses.replace(target.host_cpu(), cores=4)
    llvm_ir = compiler.emit(source.parse(MATMUL_256, source.make_context()), "llvm", four_cores)
    assert b"@pthread_create" in llvm_ir and b"__strata_fork_main_kernel_0_task_0" in llvm_ir
    function = _compiled(MATMUL_256, four_cores, artifact, tmp_path)
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((256, 256), np.float32) for _ in range(2))
    for _ in range(5):
        np.testing.assert_allclose(function(a, b), a @ b, rtol=1e-4, atol=1e-3)


def _linear_of_weights(weights: np.ndarray) -> str:
    """x @ weights (a dense_resource constant, as frontends store weights) then relu."""
    (k, n), w = weights.shape, f"tensor<{weights.shape[0]}x{weights.shape[1]}xf32>"
    return f"""
func.func @main(%x: tensor<32x{k}xf32>) -> tensor<32x{n}xf32> {{
  %w = "graph.constant"() {{value = dense_resource<w> : {w}}} : () -> {w}
  %0 = "graph.matmul"(%x, %w) : (tensor<32x{k}xf32>, {w}) -> tensor<32x{n}xf32>
  %1 = "graph.relu"(%0) : (tensor<32x{n}xf32>) -> tensor<32x{n}xf32>
  return %1 : tensor<32x{n}xf32>
}}
{{-# dialect_resources: {{ builtin: {{ w: "0x10000000{weights.tobytes().hex()}" }} }} #-}}
"""


@pytest.mark.parametrize("artifact", ["jit", "so"])
def test_large_constants(artifact, tmp_path):
    """Weights of 1.5 MB (packed into panels as the kernel compiles, on a target whose L2 is
    smaller than them): a shared library gets their bytes into its object without printing
    them as LLVM IR; the JIT keeps them in arrays of its own (the module is gone when it
    runs). The caches are stated, so that the blocks (and the packing) are those of any host:
    a depth of 766, padded to 768, is 6 blocks of 128 for a 32 KiB L1."""
    import gc

    from strata import compiler, source
    from strata.dialects import target

    weights = np.random.default_rng(2).standard_normal((766, 512), np.float32)
    text = _linear_of_weights(weights)
    small_l2 = dataclasses.replace(target.host_cpu(), l1_bytes=1 << 15, l2_bytes=1 << 18)
    module = source.parse(text, source.make_context())
    compiler.lower(module, small_l2)
    compiler.constants_out_of_line(module, small_l2, tmp_path)
    assert "llvm.module_asm" in module.operation.attributes
    (blob,) = tmp_path.glob("*.bin")
    # The weights in panels, the depth padded with zeros from 766 to 768.
    packed = np.sort(np.fromfile(blob, np.float32))
    np.testing.assert_array_equal(packed, np.sort(np.append(weights, np.zeros(2 * 512))))

    function = _compiled(text, small_l2, artifact, tmp_path)
    gc.collect()
    x = np.random.default_rng(3).standard_normal((32, 766), np.float32)
    np.testing.assert_allclose(function(x), np.maximum(x @ weights, 0), rtol=1e-4, atol=1e-3)


def test_shared_library_needs_only_the_c_library(tmp_path):
    """A conv model (padding and im2col copies between strided buffers) links no MLIR runtime
    library: a fresh process without MLIR loads it."""
    import subprocess
    import sys
    from pathlib import Path

    from strata import compiler, source

    text = (Path(__file__).parents[2] / "examples" / "conv_block.mlir").read_text()
    path = tmp_path / "conv.so"
    path.write_bytes(compiler.emit(source.parse(text, source.make_context()), "so"))
    load = "import ctypes, sys; ctypes.CDLL(sys.argv[1])"
    done = subprocess.run([sys.executable, "-c", load, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
