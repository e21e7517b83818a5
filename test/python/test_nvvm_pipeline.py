"""The NVVM pipeline compiles the example models to PTX and an artifact with a launch plan;
running them needs a GPU (see the GPU tests)."""

import sys
from pathlib import Path

import pytest
from strata import compiler, pipelines
from strata.runtime.gpu_artifact import Artifact

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_named_stages():
    pipeline = pipelines.get("nvvm", chip="sm_80")
    names = pipeline.names()
    for stage in ("graph-fuse", "tile-configure", "gpu-map-loops", "gpu-outline", "to-binary"):
        assert stage in names
    assert "chip=sm_80" in str(pipeline)


@pytest.mark.parametrize("chip", ["sm_80", "sm_90"])
@pytest.mark.parametrize("model", ["mlp", "conv_block", "transformer_block"])
def test_examples_compile_to_ptx(model, chip, tmp_path):
    text = (EXAMPLES / f"{model}.mlir").read_text()
    ptx = compiler.emit(compiler.load(text), "ptx", f"nvvm:{chip}").decode()
    assert f".target {chip}" in ptx
    assert ".entry" in ptx
    assert "__nv_" not in ptx  # no libdevice calls: self-contained PTX

    data = compiler.emit(compiler.load(text), "artifact", f"nvvm:{chip}")
    path = tmp_path / f"{model}.nvvm"
    path.write_bytes(data)
    artifact = Artifact.read(path)
    plan = artifact.functions["main"]
    assert plan.launches, "the plan launches kernels"
    kernels = {launch.kernel for launch in plan.launches}
    for kernel in kernels:
        assert f".entry {kernel}(" in artifact.ptx
    kinds = {buffer.kind for buffer in plan.buffers}
    assert {"input", "result"} <= kinds
    for launch in plan.launches:
        assert all(argument.buffer is not None for argument in launch.arguments)


def test_cpu_kinds_are_refused_for_nvvm():
    text = (EXAMPLES / "mlp.mlir").read_text()
    with pytest.raises(compiler.CompileError, match="not for nvvm targets"):
        compiler.emit(compiler.load(text), "so", "nvvm:sm_90")


sys.path.insert(0, str(EXAMPLES.parent / "test" / "e2e"))
import gpu_cases  # noqa: E402


@pytest.mark.parametrize("chip", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name", sorted(gpu_cases.CASES))
def test_gpu_cases_compile_to_ptx(name, chip):
    """The models and kernels the GPU runs (test/e2e/test_gpu.py) compile with no per-model
    code for both chips, with no local-memory spills in the PTX."""
    case = gpu_cases.CASES[name]
    ptx = compiler.emit(compiler.load(case.text), "ptx", f"nvvm:{chip}{case.options}").decode()
    assert f".target {chip}" in ptx and ".entry" in ptx
    assert ".local" not in ptx


def test_wgmma_plan_requests_tensormaps():
    """An sm_90a f16 matmul asks the runtime for the TMA descriptors of A and B: 128-byte
    workspace slots, the operand buffers, their shapes and strides, boxes of 128x64 (A) and
    64x64 (B, two a 128-wide tile) with 128-byte swizzling; one warpgroup a 128x128 tile."""
    case = gpu_cases.CASES["linear_f16_100x264x200"]
    artifact = Artifact.from_bytes(
        compiler.emit(compiler.load(case.text), "artifact", "nvvm:sm_90a")
    )
    plan = artifact.functions["main"]
    a, b = plan.tensormaps
    assert (a.source, a.shape, a.strides, a.box) == (0, (100, 264), (264, 1), (128, 64))
    assert (b.source, b.shape, b.strides, b.box) == (1, (264, 200), (200, 1), (64, 64))
    assert a.element == b.element == "f16" and a.swizzle == b.swizzle == 128
    for request in (a, b):
        slot = plan.buffers[request.slot]
        assert slot.kind == "temporary" and slot.bytes == 128 and slot.offset % 64 == 0
    (launch,) = plan.launches
    assert launch.block == (128, 1, 1) and launch.grid == (2, 1, 1)
    assert launch.shared_bytes == 4 * (128 * 64 + 64 * 128) * 2
    assert "wgmma.mma_async" in artifact.ptx
