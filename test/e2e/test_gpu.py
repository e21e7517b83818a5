"""The GPU cases on a CUDA GPU through `strata.runtime`, against float64 numpy.

Skipped where there is no GPU. On a GPU machine without the compiler, point
`STRATA_GPU_CASES` at the artifacts `build_gpu_cases.py` wrote; with the compiler, each case
is compiled here for the device's chip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import gpu_cases  # noqa: E402
from strata.runtime import cuda, load  # noqa: E402

# A subprocess that cannot import the compiler's packages (the runtime must not need them).
WITHOUT_COMPILER = textwrap.dedent(
    """
    import importlib.abc, sys
    class Hidden(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("mlir", "llvmlite", "llvm"):
                raise ImportError(f"{name} is hidden")
    sys.meta_path.insert(0, Hidden())
    """
)


@pytest.fixture(scope="module")
def device():
    try:
        return cuda.Device.get()
    except cuda.CudaError as error:
        pytest.skip(str(error))


def _chip(device) -> str:
    major, minor = device.compute_capability
    # Hopper's own instructions (wgmma, TMA) are sm_90a's.
    return f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")


@pytest.fixture(scope="module")
def artifacts(device, tmp_path_factory):
    """name -> artifact path, prebuilt or compiled here on first use."""
    prebuilt = os.environ.get("STRATA_GPU_CASES")
    folder = Path(prebuilt) if prebuilt else tmp_path_factory.mktemp("gpu-cases")

    def path(name: str) -> Path:
        target = folder / f"{name}.nvvm"
        if not target.exists():
            if prebuilt:
                pytest.fail(f"{target} is missing: run build_gpu_cases.py for this case")
            from strata import compiler

            case = gpu_cases.CASES[name]
            chip = _chip(device)
            target_name = f"nvvm:{chip}{case.options}"
            target.write_bytes(compiler.emit(compiler.load(case.text), "artifact", target_name))
        return target

    return path


@pytest.mark.parametrize("name", sorted(gpu_cases.CASES))
def test_case_with_numpy_arrays(name, artifacts):
    case = gpu_cases.CASES[name]
    function = load(artifacts(name))["main"]
    for seed in (0, 1, 2):  # the first call launches; the others replay the graph
        arrays = case.inputs(seed)
        case.check(function(*arrays), arrays)


def _to_torch(torch, array: np.ndarray):
    """A CUDA tensor of `array`; ml_dtypes' bfloat16 goes through its bits."""
    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.view(np.uint16)).view(torch.bfloat16).cuda()
    return torch.from_numpy(array).cuda()


@pytest.mark.parametrize(
    "name", ["mlp", "transformer_block", "softmax_127x1000", "linear_bf16_512x1024x512"]
)
def test_case_with_device_arrays(name, artifacts):
    """torch tensors in (bfloat16 ones among them, which torch describes as 2 opaque
    bytes), DeviceArrays out."""
    torch = pytest.importorskip("torch")
    case = gpu_cases.CASES[name]
    function = load(artifacts(name))["main"]
    for seed in (0, 1, 2):  # new tensors each time: the graph's addresses are rebound
        arrays = case.inputs(seed)
        tensors = [_to_torch(torch, a) for a in arrays]
        result = function(*tensors)
        assert isinstance(result, cuda.DeviceArray)
        as_torch = torch.as_tensor(result, device="cuda")
        case.check(as_torch.cpu().numpy(), arrays)


def test_results_into_given_device_arrays(artifacts):
    torch = pytest.importorskip("torch")
    case = gpu_cases.CASES["mlp"]
    function = load(artifacts("mlp"))["main"]
    arrays = case.inputs(0)
    out = torch.empty(function.results[0].shape, device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        tensors = [torch.from_numpy(a).cuda() for a in arrays]
        assert function(*tensors, out=out, stream=stream) is out
    stream.synchronize()
    case.check(out.cpu().numpy(), arrays)


def test_wrong_inputs_are_refused(artifacts):
    function = load(artifacts("mlp"))["main"]
    arrays = gpu_cases.CASES["mlp"].inputs(0)
    with pytest.raises(ValueError, match="must have shape"):
        function(arrays[0][:3], *arrays[1:])
    with pytest.raises(ValueError, match="must have dtype float32"):
        function(arrays[0].astype(np.float64), *arrays[1:])
    with pytest.raises(ValueError, match="takes 5 input"):
        function(*arrays[1:])


def test_runtime_runs_without_the_compiler(artifacts, tmp_path):
    case = gpu_cases.CASES["mlp"]
    arrays = case.inputs(0)
    for i, array in enumerate(arrays):
        np.save(tmp_path / f"in{i}.npy", array)
    script = WITHOUT_COMPILER + textwrap.dedent(
        f"""
        import numpy as np
        from strata.runtime import load
        arrays = [np.load({str(tmp_path)!r} + f"/in{{i}}.npy") for i in range({len(arrays)})]
        result = load({str(artifacts("mlp"))!r})["main"](*arrays)
        np.save({str(tmp_path / "out.npy")!r}, result)
        assert not any(m.split(".")[0] in ("mlir", "llvmlite") for m in sys.modules)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    case.check(np.load(tmp_path / "out.npy"), arrays)


def _model_names() -> list[str]:
    try:
        from model_suite import MODELS
    except ImportError:  # no torch
        return []
    return list(MODELS)


@pytest.mark.parametrize("name", _model_names())
def test_torch_model_matches_eager_on_the_gpu(name, device, tmp_path):
    """A model of examples/model_suite.py, compiled with its parameters as arguments, on
    device tensors against PyTorch eager on the same GPU (TF32 off), within 1e-4 of the
    output's scale."""
    torch = pytest.importorskip("torch")
    import model_suite

    prebuilt = os.environ.get("STRATA_GPU_CASES")
    if prebuilt:
        folder = Path(prebuilt)
    else:
        import build_gpu_cases

        folder = tmp_path
        build_gpu_cases.build_models([name], _chip(device), folder)
    if not (folder / f"{name}.nvvm").exists():
        pytest.skip(f"{name} was not built (build_gpu_cases.py --models)")
    arguments = json.loads((folder / f"{name}.json").read_text())["arguments"]
    model, inputs, _ = model_suite.build(name)
    program = torch.export.export(model, tuple(inputs), strict=False)
    tensors = {**program.state_dict, **program.constants}
    values = [tensors[key] if kind == "parameter" else inputs[key] for kind, key in arguments]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    function = load(folder / f"{name}.nvvm")["main"]
    result = function(*[v.detach().cuda().contiguous() for v in values])
    actual = torch.as_tensor(result, device="cuda").cpu().numpy()
    with torch.no_grad():
        expected = model.cuda()(*[x.cuda() for x in inputs])
    expected = expected.cpu().numpy()
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-4 * scale)
