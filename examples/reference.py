"""numpy references and random inputs for the bundled example models (float64 math)."""

import math

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def mlp(x, w1, b1, w2, b2):
    return softmax(np.maximum(x @ w1 + b1, 0) @ w2 + b2)


def conv_block(x, w, b, scale, shift, mean, var):
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack(
        [xp[:, :, i : i + h, j : j + wd] for i in range(3) for j in range(3)], axis=2
    )  # n, c, 9, h, w
    y = np.einsum("nckhw,ock->nohw", cols, w.reshape(w.shape[0], c, 9)) + b[None, :, None, None]
    c4 = (slice(None), None, None)
    y = (y - mean[c4]) / np.sqrt(var[c4] + 1e-5) * scale[c4] + shift[c4]
    y = np.maximum(y, 0)
    return y.reshape(n, -1, h // 2, 2, wd // 2, 2).max(axis=(3, 5))


def transformer_block(x, g1, be1, wq, wk, wv, wo, g2, be2, w1, b1, w2, b2, heads=4):
    bsz, seq, dim = x.shape
    hd = dim // heads

    def split(t):
        return t.reshape(bsz, seq, heads, hd).transpose(0, 2, 1, 3)

    h = layer_norm(x, g1, be1)
    q, k, v = split(h @ wq), split(h @ wk), split(h @ wv)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd)
    s = np.where(np.triu(np.ones((seq, seq), bool), 1), -np.inf, s)
    a = (softmax(s) @ v).transpose(0, 2, 1, 3).reshape(bsz, seq, dim)
    r1 = x + a @ wo
    f = layer_norm(r1, g2, be2) @ w1 + b1
    f = 0.5 * f * (1 + _erf(f / math.sqrt(2)))
    return r1 + f @ w2 + b2


SHAPES = {
    "mlp": [(32, 64), (64, 128), (128,), (128, 10), (10,)],
    "conv_block": [(2, 3, 16, 16), (8, 3, 3, 3), (8,), (8,), (8,), (8,), (8,)],
    "transformer_block": [
        (2, 16, 32),
        (32,),
        (32,),
        (32, 32),
        (32, 32),
        (32, 32),
        (32, 32),
        (32,),
        (32,),
        (32, 64),
        (64,),
        (64, 32),
        (32,),
    ],
}
REFERENCES = {"mlp": mlp, "conv_block": conv_block, "transformer_block": transformer_block}


def inputs(model: str, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32) * 0.5 for s in SHAPES[model]]
    if model == "conv_block":
        arrays[-1] = np.abs(arrays[-1]) + 0.5  # a variance
    return arrays


def reference(model: str, arrays: list[np.ndarray]) -> np.ndarray:
    return REFERENCES[model](*[a.astype(np.float64) for a in arrays])


def torch_version(model: str, torch):
    """The same model written with PyTorch ops (float32), for benchmarks against eager torch."""
    functional = torch.nn.functional

    def torch_mlp(x, w1, b1, w2, b2):
        return torch.softmax(torch.relu(x @ w1 + b1) @ w2 + b2, -1)

    def torch_transformer_block(x, g1, be1, wq, wk, wv, wo, g2, be2, w1, b1, w2, b2, heads=4):
        bsz, seq, dim = x.shape

        def split(t):
            return t.reshape(bsz, seq, heads, dim // heads).transpose(1, 2)

        h = functional.layer_norm(x, (dim,), g1, be1)
        q, k, v = split(h @ wq), split(h @ wk), split(h @ wv)
        a = functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        r1 = x + a.transpose(1, 2).reshape(bsz, seq, dim) @ wo
        f = functional.gelu(functional.layer_norm(r1, (dim,), g2, be2) @ w1 + b1)
        return r1 + f @ w2 + b2

    return {"mlp": torch_mlp, "transformer_block": torch_transformer_block}[model]
