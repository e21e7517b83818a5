"""The models and kernels every GPU target must run, with seeded inputs and float64 numpy
references. Pure numpy: the GPU machine that runs them has no compiler, so
`build_gpu_cases.py` compiles them where MLIR is installed and `test_gpu.py` runs them.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
import reference  # noqa: E402


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    shapes: tuple[tuple[int, ...], ...]
    reference: Callable[..., np.ndarray]
    rtol: float = 1e-4
    # Absolute tolerance as a fraction of the reference's largest magnitude: sums of many
    # terms carry rounding of the order of their largest term, not of their (small) result.
    atol_scale: float = 1e-5
    positive: tuple[int, ...] = ()  # inputs drawn positive (variances)
    elements: tuple[str, ...] = ()  # numpy dtype names of the inputs (default float32)
    options: str = ""  # target opt-ins, as in `nvvm:sm_90a+tf32`

    def inputs(self, seed: int = 0) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        dtypes = self.elements or ("float32",) * len(self.shapes)
        arrays = [
            (rng.standard_normal(s) * 0.5).astype(_numpy_dtype(d))
            for s, d in zip(self.shapes, dtypes, strict=True)
        ]
        for i in self.positive:
            arrays[i] = np.abs(arrays[i]) + 0.5
        return arrays

    def expected(self, arrays: list[np.ndarray]) -> np.ndarray:
        # Half-precision inputs are exact in float64: the reference is the exact product.
        return self.reference(*[a.astype(np.float64) for a in arrays])

    def check(self, result, arrays: list[np.ndarray]) -> None:
        expected = self.expected(arrays)
        atol = self.atol_scale * float(np.max(np.abs(expected)))
        np.testing.assert_allclose(np.asarray(result), expected, rtol=self.rtol, atol=atol)


def _numpy_dtype(name: str):
    if name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.dtype(name)


def _t(shape, element: str = "f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def _function(
    args: list[tuple[str, tuple]], body: list[str], result: str, shape, element: str = "f32"
) -> str:
    params = ", ".join(f"%{name}: {_t(s, element)}" for name, s in args)
    lines = "\n".join(f"  {line}" for line in body)
    result_type = _t(shape, element)
    return (
        f"func.func @main({params}) -> {result_type} {{\n{lines}\n"
        f"  return %{result} : {result_type}\n}}\n"
    )


def _unary(name: str, op: str, operand: str, shape, attrs: str = "") -> str:
    attr_text = f" {{{attrs}}}" if attrs else ""
    return f'%{name} = "graph.{op}"(%{operand}){attr_text} : ({_t(shape)}) -> {_t(shape)}'


def _binary(name: str, op: str, a: str, b: str, a_shape, b_shape, shape) -> str:
    return f'%{name} = "graph.{op}"(%{a}, %{b}) : ({_t(a_shape)}, {_t(b_shape)}) -> {_t(shape)}'


def _rms_norm(x, g, eps=1e-6):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _silu(x):
    return x / (1 + np.exp(-x))


def tanh_chain(rows: int, cols: int) -> Case:
    s = (rows, cols)
    body = [
        _binary("m", "mul", "x", "s", s, (cols,), s),
        _binary("a", "add", "m", "c", s, (cols,), s),
        _unary("t", "tanh", "a", s),
        _unary("y", "relu", "t", s),
    ]
    text = _function([("x", s), ("s", (cols,)), ("c", (cols,))], body, "y", s)
    return Case(
        f"tanh_chain_{rows}x{cols}",
        text,
        (s, (cols,), (cols,)),
        lambda x, sc, c: np.maximum(np.tanh(x * sc + c), 0),
    )


def half_tanh(rows: int, cols: int, element: str) -> Case:
    """tanh of f16/bf16 (bf16's is the SFU's tanh.approx.f32: within a bf16 ulp)."""
    t = _t((rows, cols), element)
    text = _function(
        [("x", (rows, cols))], [f'%y = "graph.tanh"(%x) : ({t}) -> {t}'], "y", (rows, cols), element
    )
    dtype = {"f16": "float16", "bf16": "bfloat16"}[element]
    rtol = {"f16": 1e-3, "bf16": 8e-3}[element]
    return Case(
        f"tanh_{element}_{rows}x{cols}",
        text,
        ((rows, cols),),
        np.tanh,
        rtol=rtol,
        atol_scale=rtol,
        elements=(dtype,),
    )


def softmax(rows: int, cols: int) -> Case:
    s = (rows, cols)
    text = _function([("x", s)], [_unary("y", "softmax", "x", s, "axis = -1 : i64")], "y", s)
    return Case(f"softmax_{rows}x{cols}", text, (s,), reference.softmax)


def layer_norm(rows: int, cols: int) -> Case:
    s, v = (rows, cols), (cols,)
    op = (
        f'%y = "graph.layer_norm"(%x, %g, %b) {{axis = -1 : i64, epsilon = 1.0e-5 : f32}} : '
        f"({_t(s)}, {_t(v)}, {_t(v)}) -> {_t(s)}"
    )
    text = _function([("x", s), ("g", v), ("b", v)], [op], "y", s)
    return Case(f"layer_norm_{rows}x{cols}", text, (s, v, v), reference.layer_norm)


def matmul(m: int, k: int, n: int, options: str = "") -> Case:
    """f32; with `+tf32` on the tensor cores, operands rounded to 10 bits of mantissa
    (about 2^-11 relative a product, as cuBLAS's TF32 mode)."""
    text = _function(
        [("a", (m, k)), ("b", (k, n))],
        [_binary("y", "matmul", "a", "b", (m, k), (k, n), (m, n))],
        "y",
        (m, n),
    )
    name = f"matmul_{m}x{k}x{n}{options.replace('+', '_')}"
    tolerance = {"rtol": 5e-3, "atol_scale": 5e-3} if options else {}
    return Case(name, text, ((m, k), (k, n)), lambda a, b: a @ b, options=options, **tolerance)


def half_linear(m: int, k: int, n: int, element: str) -> Case:
    """f16 or bf16 operands, f32 accumulation and result, a bias: tensor cores where the
    target has them."""
    dtype = {"f16": "float16", "bf16": "bfloat16"}[element]
    a, w, y = _t((m, k), element), _t((k, n), element), _t((m, n))
    text = (
        f"func.func @main(%x: {a}, %w: {w}, %b: {_t((n,))}) -> {y} {{\n"
        f'  %mm = "graph.matmul"(%x, %w) : ({a}, {w}) -> {y}\n'
        f'  %y = "graph.add"(%mm, %b) : ({y}, {_t((n,))}) -> {y}\n'
        f"  return %y : {y}\n}}\n"
    )
    return Case(
        f"linear_{element}_{m}x{k}x{n}",
        text,
        ((m, k), (k, n), (n,)),
        lambda x, w, b: x @ w + b,
        elements=(dtype, dtype, "float32"),
    )


def half_batched_matmul(b: int, m: int, k: int, n: int, element: str) -> Case:
    """Batches of f16/bf16 products with f32 results (attention's shapes): mma.sync."""
    dtype = {"f16": "float16", "bf16": "bfloat16"}[element]
    x, w, y = _t((b, m, k), element), _t((b, k, n), element), _t((b, m, n))
    text = (
        f"func.func @main(%x: {x}, %w: {w}) -> {y} {{\n"
        f'  %y = "graph.matmul"(%x, %w) : ({x}, {w}) -> {y}\n'
        f"  return %y : {y}\n}}\n"
    )
    return Case(
        f"batched_{element}_{b}x{m}x{k}x{n}",
        text,
        ((b, m, k), (b, k, n)),
        lambda x, w: x @ w,
        elements=(dtype, dtype),
    )


def linear_gelu(m: int, k: int, n: int) -> Case:
    s = (m, n)
    body = [
        _binary("mm", "matmul", "x", "w", (m, k), (k, n), s),
        _binary("h", "add", "mm", "b", s, (n,), s),
        _unary("y", "gelu", "h", s, 'approximate = "tanh"'),
    ]
    text = _function([("x", (m, k)), ("w", (k, n)), ("b", (n,))], body, "y", s)
    return Case(
        f"linear_gelu_{m}x{k}x{n}",
        text,
        ((m, k), (k, n), (n,)),
        lambda x, w, b: _gelu_tanh(x @ w + b),
    )


def reductions(rows: int, cols: int) -> Case:
    s = (rows, cols)
    body = [
        f'%c = "graph.reduce_sum"(%x) {{axes = array<i64: 0>, keepdims = false}} : '
        f"({_t(s)}) -> {_t((cols,))}",
        f'%r = "graph.reduce_max"(%x) {{axes = array<i64: 1>, keepdims = true}} : '
        f"({_t(s)}) -> {_t((rows, 1))}",
        _binary("y", "add", "x", "r", s, (rows, 1), s),
        _binary("z", "sub", "y", "c", s, (cols,), s),
    ]
    text = _function([("x", s)], body, "z", s)
    return Case(
        f"reductions_{rows}x{cols}",
        text,
        (s,),
        lambda x: x + x.max(1, keepdims=True) - x.sum(0),
    )


def attention(
    batch: int,
    heads: int,
    seq: int,
    dim: int,
    *,
    keys: int | None = None,
    value_dim: int | None = None,
    causal: bool = True,
    element: str = "f32",
) -> Case:
    """graph.attention; with `causal`, query i sees keys j <= i + (keys - seq)."""
    keys, value_dim = keys or seq, value_dim or dim
    q, k, v = (batch, heads, seq, dim), (batch, heads, keys, dim), (batch, heads, keys, value_dim)
    y = (batch, heads, seq, value_dim)
    op = (
        f'%y = "graph.attention"(%q, %k, %v) {{causal = {str(causal).lower()}}} : '
        f"({_t(q, element)}, {_t(k, element)}, {_t(v, element)}) -> {_t(y, element)}"
    )

    def ref(q, k, v):
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dim)
        if causal:
            future = np.triu(np.ones((seq, keys), bool), 1 + keys - seq)
            scores = np.where(future, -np.inf, scores)
        return reference.softmax(scores) @ v

    head = f"{y[0]}x{y[1]}x{seq}x{dim}" + (f"x{keys}kv" if keys != seq else "")
    head += f"x{value_dim}v" if value_dim != dim else ""
    name = f"attention_{'causal_' if causal else ''}{element}_{head}"
    text = _function([("q", q), ("k", k), ("v", v)], [op], "y", y, element)
    dtype = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[element]
    # Half results are rounded once, half an ulp of f16 (2^-11) or bf16 (2^-8), and so are
    # the weights P before P V on tensor cores (as FlashAttention and torch's SDPA round them).
    rtol = {"f32": 1e-4, "f16": 1e-3, "bf16": 8e-3}[element]
    return Case(name, text, (q, k, v), ref, rtol=rtol, atol_scale=rtol, elements=(dtype,) * 3)


def llama_mlp(m: int, dim: int, hidden: int) -> Case:
    x, h = (m, dim), (m, hidden)
    body = [
        f'%n = "graph.rms_norm"(%x, %g) {{axis = -1 : i64, epsilon = 1.0e-6 : f32}} : '
        f"({_t(x)}, {_t((dim,))}) -> {_t(x)}",
        _binary("a", "matmul", "n", "w1", x, (dim, hidden), h),
        _unary("sa", "silu", "a", h),
        _binary("b", "matmul", "n", "w3", x, (dim, hidden), h),
        _binary("p", "mul", "sa", "b", h, h, h),
        _binary("d", "matmul", "p", "w2", h, (hidden, dim), x),
        _binary("y", "add", "x", "d", x, x, x),
    ]
    args = [("x", x), ("g", (dim,)), ("w1", (dim, hidden)), ("w3", (dim, hidden))]
    text = _function([*args, ("w2", (hidden, dim))], body, "y", x)

    def ref(xv, g, w1, w3, w2):
        n = _rms_norm(xv, g)
        return xv + (_silu(n @ w1) * (n @ w3)) @ w2

    shapes = (x, (dim,), (dim, hidden), (dim, hidden), (hidden, dim))
    return Case(f"llama_mlp_{m}x{dim}x{hidden}", text, shapes, ref)


def _example(model: str) -> Case:
    shapes = tuple(tuple(s) for s in reference.SHAPES[model])
    positive = (len(shapes) - 1,) if model == "conv_block" else ()
    return Case(
        model,
        (EXAMPLES / f"{model}.mlir").read_text(),
        shapes,
        reference.REFERENCES[model],
        atol_scale=1e-5,
        positive=positive,
    )


CASES = {
    case.name: case
    for case in [
        *(_example(m) for m in sorted(reference.SHAPES)),
        tanh_chain(4096, 1024),
        tanh_chain(7, 127),
        half_tanh(1000, 1000, "bf16"),
        half_tanh(7, 127, "f16"),
        softmax(1024, 1024),
        softmax(127, 1000),
        layer_norm(1024, 1024),
        layer_norm(7, 768),
        matmul(1024, 1024, 1024),
        matmul(7, 1000, 127),
        matmul(1024, 1024, 1024, "+tf32"),
        matmul(7, 1000, 127, "+tf32"),  # rows not 16-byte chunks: staged in registers
        linear_gelu(128, 768, 3072),
        half_linear(1024, 768, 3072, "f16"),
        half_linear(512, 1024, 512, "bf16"),
        half_linear(100, 264, 200, "f16"),
        half_linear(7, 1000, 127, "bf16"),  # rows not 16-byte chunks: staged in registers
        half_batched_matmul(12, 128, 64, 128, "f16"),
        half_batched_matmul(3, 100, 40, 72, "f16"),
        reductions(1000, 127),
        attention(1, 12, 128, 64),
        attention(2, 3, 127, 128, causal=False),
        attention(1, 4, 100, 64, keys=300, value_dim=32),
        attention(1, 8, 512, 64, element="f16"),
        attention(2, 2, 200, 128, element="bf16", causal=False),
        attention(2, 4, 128, 128),  # scores shaped like the output: one zero fill, copied
        attention(1, 4, 100, 64, keys=300, value_dim=32, element="bf16"),  # causal offset 200
        attention(2, 3, 127, 128, element="f16"),  # a partial row block, LLaMA's head dim
        llama_mlp(128, 512, 1376),
    ]
}
