"""The bundled models, written in the graph dialect, through strata-run against numpy."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
import reference  # noqa: E402


@pytest.mark.parametrize("model", sorted(reference.SHAPES))
def test_model_through_strata_run(model, tmp_path):
    arrays = reference.inputs(model)
    args = []
    for i, array in enumerate(arrays):
        path = tmp_path / f"in{i}.npy"
        np.save(path, array)
        args += ["--input", str(path)]
    out = tmp_path / "out.npz"
    done = subprocess.run(
        [
            "strata-run",
            str(EXAMPLES / f"{model}.mlir"),
            "--entry",
            "main",
            *args,
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    result = np.load(out)["result0"]
    np.testing.assert_allclose(result, reference.reference(model, arrays), rtol=1e-4, atol=1e-5)
