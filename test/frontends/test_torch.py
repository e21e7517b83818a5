"""PyTorch models through torch.export and torch.compile, against eager PyTorch."""

import copy
import warnings

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import strata  # noqa: E402
from strata.frontends.torch import TorchImportError, import_module  # noqa: E402


class TransformerBlock(torch.nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(dim)
        self.attention = torch.nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(), torch.nn.Linear(4 * dim, dim)
        )

    def forward(self, x):
        y = self.norm1(x)
        x = x + self.attention(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


def mlp():
    return torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10), torch.nn.Softmax(-1)
    )


def cnn():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, stride=2),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(16, 5),
    )


MODELS = {
    "mlp": (mlp, (4, 16)),
    "cnn": (cnn, (2, 3, 16, 16)),
    "transformer_block": (TransformerBlock, (2, 8, 32)),
}


def model_and_input(name):
    torch.manual_seed(0)
    make, shape = MODELS[name]
    model = make().eval()
    if name == "cnn":  # give batch norm statistics that are not the identity
        bn = model[1]
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 1.5)
    return model, torch.randn(*shape)


def eager(model, x):
    with torch.no_grad():
        return model(x).numpy()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_torch_export_matches_eager(name):
    model, x = model_and_input(name)
    module = import_module(model, (x,))
    np.testing.assert_allclose(
        strata.compile(module)(x.numpy()), eager(model, x), rtol=1e-4, atol=1e-6
    )


@pytest.mark.parametrize("name", sorted(MODELS))
def test_torch_compile_backend_matches_eager(name):
    model, x = model_and_input(name)
    compiled = torch.compile(model, backend=strata.torch_backend(), dynamic=False)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="strata")  # a fallback to eager warns
        with torch.no_grad():
            actual = compiled(x).numpy()
    np.testing.assert_allclose(actual, eager(model, x), rtol=1e-4, atol=1e-6)


def bf16_model_and_input(name):
    """The model and input in bf16, and the same bf16 values in f32."""
    model, x = model_and_input(name)
    model, x = model.to(torch.bfloat16), x.to(torch.bfloat16)
    wide = copy.deepcopy(model).float()
    return model, x, wide, x.float()


def within_bf16_rounding(actual, expected):
    """Each op rounds its result to bf16 (8 bits): within a few of those roundings."""
    np.testing.assert_allclose(
        np.asarray(actual, np.float32), expected, rtol=2**-6, atol=2**-6 * np.abs(expected).max()
    )


@pytest.mark.parametrize("name", sorted(MODELS))
def test_bf16_models_import_and_run(name):
    """bf16 weights and inputs (LLaMA's checkpoints are bf16) import as bf16 tensors; the
    result is bf16, against the model in f32 on the same values."""
    model, x, wide, wide_x = bf16_model_and_input(name)
    module = import_module(model, (x,))
    assert "bf16" in str(module)
    actual = strata.compile(module)(x.view(torch.int16).numpy().view(ml_dtypes.bfloat16))
    assert actual.dtype == ml_dtypes.bfloat16
    within_bf16_rounding(actual, eager(wide, wide_x))


def test_bf16_through_the_torch_compile_backend():
    model, x, wide, wide_x = bf16_model_and_input("transformer_block")
    compiled = torch.compile(model, backend=strata.torch_backend(), dynamic=False)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="strata")
        with torch.no_grad():
            actual = compiled(x)
    assert actual.dtype == torch.bfloat16
    within_bf16_rounding(actual.float().numpy(), eager(wide, wide_x))


def test_parameters_can_be_arguments():
    model, x = model_and_input("mlp")
    module = import_module(model, (x,), params="arguments")
    text = str(module)
    assert "dense_resource" not in text
    params = [p.detach().numpy() for p in model.parameters()]
    actual = strata.compile(module)(*params, x.numpy())
    np.testing.assert_allclose(actual, eager(model, x), rtol=1e-4, atol=1e-6)


class Cumulative(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(torch.relu(x), dim=1) * 2.0


def test_unsupported_aten_ops_are_named():
    with pytest.raises(TorchImportError, match=r"ATen op 'aten.cumsum.default' is not supported"):
        import_module(Cumulative(), (torch.randn(2, 3),))


def test_torch_compile_falls_back_to_eager_with_a_warning():
    model, x = Cumulative(), torch.randn(2, 3)
    compiled = torch.compile(model, backend=strata.torch_backend(), dynamic=False)
    with pytest.warns(UserWarning, match="running a graph eagerly: .*aten.cumsum"):
        actual = compiled(x)
    np.testing.assert_allclose(actual.numpy(), model(x).numpy(), rtol=1e-6)


class Strided(torch.nn.Module):
    """as_strided over `x + 1`, or over its transpose (the same memory, dims in another
    order): a view of its elements in the cases below."""

    def __init__(self, size, stride, offset=0, transposed=False):
        super().__init__()
        self.size, self.stride, self.offset, self.transposed = size, stride, offset, transposed

    def forward(self, x):
        y = x + 1
        y = y.t() if self.transposed else y
        return torch.as_strided(y, self.size, self.stride, self.offset) * 2


@pytest.mark.parametrize(
    "size,stride,offset,transposed",
    [
        ((4, 3), (1, 4), 0, False),  # a transpose
        ((2, 3, 2), (6, 1, 3), 0, False),  # a reshape, then a transpose
        ((2, 4), (4, 1), 4, False),  # rows 1 and 2: a slice
        ((3, 2, 4), (4, 0, 1), 0, False),  # an expand
        ((3, 4), (4, 1), 0, True),  # the transposed tensor's memory, read in its order
        ((1, 4, 1, 1), (4, 1, 4, 4), 4, False),  # a pooled channels-last tensor
    ],
)
def test_as_strided_views_match_eager(size, stride, offset, transposed):
    model, x = Strided(size, stride, offset, transposed), torch.randn(3, 4)
    fn = strata.compile(import_module(model, (x,)))
    np.testing.assert_allclose(fn(x.numpy()), eager(model, x), rtol=1e-6)


@pytest.mark.parametrize(
    "size,stride,offset,message",
    [
        ((5, 4), (2, 1), 0, "is not a view of its elements"),  # overlapping windows
        ((3, 2), (4, 2), 0, "is not a view of its elements"),  # every other column
        ((2, 4), (4, 1), 8, "reads outside its elements"),
    ],
)
def test_as_strided_that_is_no_view_is_refused(size, stride, offset, message):
    model = Strided(size, stride, offset)
    with pytest.raises(TorchImportError, match=rf"as_strided with sizes .* {message}"):
        import_module(model, (torch.randn(3, 4),))


class CausalScores(torch.nn.Module):
    """A causal mask built from aranges and comparisons, as exported attention builds it."""

    def forward(self, scores):
        t = scores.shape[-1]
        rows, cols = torch.arange(t)[:, None], torch.arange(t)[None, :]
        mask = torch.where(cols <= rows, 0.0, float("-inf"))
        return torch.softmax(scores + mask, dim=-1)


def test_ops_on_constants_are_computed_at_import():
    """The mask is computed by PyTorch at import time: one constant, no i64 ops left."""
    model, x = CausalScores(), torch.randn(2, 16, 16)
    module = import_module(model, (x,))
    assert "xi64>" not in str(module) and '"graph.less_equal"' not in str(module)
    np.testing.assert_allclose(strata.compile(module)(x.numpy()), eager(model, x), rtol=1e-6)


class MaskedAttention(torch.nn.Module):
    """scaled_dot_product_attention with a boolean mask under which query 0 sees no key:
    PyTorch's safe softmax gives that query zeros (graph.softmax with `safe`), not NaN."""

    def forward(self, q, k, v):
        rows, cols = torch.arange(q.shape[-2])[:, None], torch.arange(k.shape[-2])[None, :]
        mask = (cols <= rows) & (rows > 0)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def test_attention_rows_that_see_no_key_are_zero():
    q, k, v = (torch.randn(2, 4, 32, 16) for _ in range(3))
    module = import_module(MaskedAttention(), (q, k, v))
    assert "safe = true" in str(module)
    with torch.no_grad():
        expected = MaskedAttention()(q, k, v).numpy()
    actual = strata.compile(module)(q.numpy(), k.numpy(), v.numpy())
    assert not np.isnan(actual).any() and not actual[:, :, 0].any()
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)
