"""The CUDA runtime where there may be no GPU: it imports without the compiler, reads
artifacts, and says clearly when there is no GPU to run on."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import strata
from strata import compiler
from strata.runtime import cuda
from strata.runtime.gpu_artifact import Artifact

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MLP = (EXAMPLES / "mlp.mlir").read_text()


def _has_gpu() -> bool:
    try:
        cuda.Device.get()
    except cuda.CudaError:
        return False
    return True


needs_no_gpu = pytest.mark.skipif(_has_gpu(), reason="a GPU is present")


def test_runtime_imports_and_reads_artifacts_without_the_compiler(tmp_path):
    path = tmp_path / "mlp.nvvm"
    path.write_bytes(compiler.emit(compiler.load(MLP), "artifact", "nvvm:sm_90"))
    script = textwrap.dedent(
        f"""
        import importlib.abc, sys
        class Hidden(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("mlir", "llvmlite", "llvm"):
                    raise ImportError(f"{{name}} is hidden")
        sys.meta_path.insert(0, Hidden())
        from strata.runtime import cuda, load
        from strata.runtime.gpu_artifact import Artifact
        artifact = Artifact.read({str(path)!r})
        print(artifact.functions["main"].inputs[0])
        try:
            load({str(path)!r})
        except cuda.CudaError as error:
            print("CudaError", error)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "tensor<32x64xf32>" in done.stdout


def test_artifact_round_trips():
    data = compiler.emit(compiler.load(MLP), "artifact", "nvvm:sm_80")
    artifact = Artifact.from_bytes(data)
    assert artifact.chip == "sm_80" and ".target sm_80" in artifact.ptx
    assert Artifact.from_bytes(artifact.to_bytes()).functions == artifact.functions


def test_not_an_artifact(tmp_path):
    path = tmp_path / "junk.nvvm"
    path.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a strata GPU artifact"):
        Artifact.read(path)


@needs_no_gpu
def test_compile_for_nvvm_without_a_gpu_says_so():
    with pytest.raises(strata.CompileError, match="runs on a CUDA GPU"):
        strata.compile(MLP, target="nvvm:sm_90")


@needs_no_gpu
def test_strata_run_without_a_gpu_is_a_clean_error():
    done = subprocess.run(
        ["strata-run", str(EXAMPLES / "mlp.mlir"), "--target", "nvvm:sm_90"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "error:" in done.stderr and "CUDA GPU" in done.stderr
    assert "Traceback" not in done.stderr
