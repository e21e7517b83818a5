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
    ptx = compiler.emit(compiler.load(gpu_cases.CASES[name].text), "ptx", f"nvvm:{chip}").decode()
    assert f".target {chip}" in ptx and ".entry" in ptx
    assert ".local" not in ptx
