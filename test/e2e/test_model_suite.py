"""Models users recognize (`examples/model_suite.py`), each through torch.export
(`import_module`) and through `torch.compile` with strata as the backend, where a graph that
falls back to eager fails the test, and matches eager within 1e-4 of the output's scale."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import strata  # noqa: E402
from strata.frontends.torch import import_module, torch_backend  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from model_suite import MODELS, build  # noqa: E402


def check(actual, expected: torch.Tensor):
    """Within 1e-4 of the output's scale: long sums of products cancel, so elementwise
    relative error would demand more than f32 accumulation gives."""
    expected = expected.numpy()
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=0, atol=1e-4 * scale)


@pytest.mark.parametrize("name", list(MODELS))
def test_export_matches_eager(name):
    model, inputs, expected = build(name)
    fn = strata.compile(import_module(model, inputs))
    check(fn(*(x.numpy() for x in inputs)), expected)


@pytest.mark.parametrize("name", list(MODELS))
def test_torch_compile_matches_eager_without_fallback(name):
    """One graph (`fullgraph`: Dynamo may not break the model into pieces it runs itself;
    it traces nn.LSTM only with `allow_rnn`), compiled by strata (its fallback warns)."""
    model, inputs, expected = build(name)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=torch_backend(), dynamic=False, fullgraph=True)
    with warnings.catch_warnings(), torch.no_grad(), torch._dynamo.config.patch(allow_rnn=True):
        warnings.filterwarnings("error", message="strata")
        check(compiled(*inputs), expected)
