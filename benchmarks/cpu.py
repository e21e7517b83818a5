"""CPU benchmarks: strata against numpy/OpenBLAS, PyTorch (eager and torch.compile) and
onnxruntime, in one run, on 1 and 2 threads.

python benchmarks/cpu.py [--threads 1,2] [--quick] [--models squeezenet,resnet50,...]
                         [--only matmul,ops,...] [--output benchmarks/results/cpu-<commit>.md]

Every row compares peers measured in the same process with the same thread count, taking
turns (a block of calls each, in several rounds), and reports the ratio strata/peer of
throughput at the median and the best call (>1: strata is faster); after the table, each
speed goal (GOALS) that the run measured, met or not, at the median. strata
compiles for the host with `cores` set to the thread count. OpenBLAS runs with
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from the environment, so that it picks its
AVX-512 kernel where the CPU has one; its threads are limited with threadpoolctl. The peers
are pinned in the `bench` extra (`pip install -e '.[bench]'`); those not installed (torch,
onnxruntime) are left out of the rows, and without threadpoolctl only one thread count runs.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _reexec_with_clean_env(threads: int) -> None:
    """OpenBLAS reads its settings at load time: start again with the environment fixed."""
    wanted = {"OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    stale = [k for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ]
    if not stale and all(os.environ.get(k) == v for k, v in wanted.items()):
        return
    env = {k: v for k, v in os.environ.items() if k not in stale}
    env.update(wanted)
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


@dataclasses.dataclass(frozen=True)
class Timing:
    """Seconds per call: the best and the median of the calls measured."""

    best: float
    median: float


# Thread pools keep spinning a while after their last job (OpenBLAS for up to 2^28 cycles,
# onnxruntime's, OpenMP's and strata's for less): each block of calls starts on a quiet
# machine, so that no peer's median pays for the one measured before it.
_SETTLE = 0.2
_ROUNDS = 4
_BLOCK = 0.125  # seconds of calls per peer and round

STRATA = "strata"


def measure(calls: dict) -> dict[str, Timing]:
    """Times each zero-argument call of `calls` (by peer name). The peers take turns, a block
    of calls each in every one of a few rounds, so that a burst of load from elsewhere on the
    machine (on a shared VM, same-code runs vary up to 2x) falls on all of them alike and the
    ratios hold; returns each peer's best and median call."""
    times = {name: [] for name in calls}
    for _ in range(_ROUNDS):
        for name, call in calls.items():
            time.sleep(_SETTLE)
            call()  # after the pause: wakes the peer's threads (steady state is measured)
            deadline = time.perf_counter() + _BLOCK
            block = 0
            while block < 2 or (time.perf_counter() < deadline and block < 1000):
                start = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - start)
                block += 1
    return {name: Timing(min(t), statistics.median(t)) for name, t in times.items()}


def _row(name: str, metric: str, work: float, calls: dict, note: str = "") -> Row:
    found = measure(calls)
    return Row(name, metric, work, found.pop(STRATA), found, note)


def _scaled(timing: Timing, factor: float) -> Timing:
    return Timing(timing.best * factor, timing.median * factor)


@dataclasses.dataclass
class Row:
    """One case: strata's timing and its peers', measured in the same run. `work` is what one
    call does in the metric's unit (GFLOP, GB); rows in ms have none."""

    name: str
    metric: str
    work: float
    strata: Timing
    peers: dict[str, Timing]
    note: str = ""

    def value(self, seconds: float) -> float:
        return seconds * 1e3 if self.metric == "ms" else self.work / seconds


def _aligned(array):
    """The same values in 64-byte-aligned memory (what strata allocates for its results)."""
    from strata.runtime.abi import empty_aligned

    copy = empty_aligned(array.shape, array.dtype)
    copy[...] = array
    return copy


def t(shape, element: str = "f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


@dataclasses.dataclass
class Peers:
    """The libraries measured against, set to one thread count."""

    threads: int
    torch: object = None
    ort: object = None
    onnx: object = None
    blas_limits: object = None

    def compile(self, module_or_text):
        """strata.compile for the host with `cores` = the thread count; returns (fn, seconds)."""
        import strata
        from strata.dialects import target

        desc = dataclasses.replace(target.host_cpu(), cores=self.threads)
        start = time.perf_counter()
        fn = strata.compile(module_or_text, target=desc)
        return fn, time.perf_counter() - start

    def ort_session(self, model):
        """An onnxruntime session (a ModelProto or a path) on this many threads, or None."""
        if self.ort is None:
            return None
        options = self.ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        source = str(model) if isinstance(model, (str, Path)) else model.SerializeToString()
        return self.ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def ort_runner(session, arrays):
    names = [i.name for i in session.get_inputs()]
    feed = dict(zip(names, arrays, strict=True))
    return partial(session.run, None, feed)


def onnx_graph(peers: Peers, nodes, inputs, output_shape, initializers=()):
    """A one-output f32 ONNX model of `nodes` (onnx.helper.make_node results)."""
    helper, tp = peers.onnx.helper, peers.onnx.TensorProto
    graph = helper.make_graph(
        nodes,
        "bench",
        [helper.make_tensor_value_info(n, tp.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info("y", tp.FLOAT, output_shape)],
        initializer=list(initializers),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# ----------------------------------------------------------------------------------------------
# Cases. Each returns Rows.


def matmul_rows(peers: Peers, sizes):
    rows = []
    for n in sizes:
        text = (
            f"func.func @main(%a: {t([n, n])}, %b: {t([n, n])}) -> {t([n, n])} {{\n"
            f'  %0 = "graph.matmul"(%a, %b) : ({t([n, n])}, {t([n, n])}) -> {t([n, n])}\n'
            f"  return %0 : {t([n, n])}\n}}"
        )
        rng = np.random.default_rng(0)
        a, b = (_aligned(rng.standard_normal((n, n), dtype=np.float32)) for _ in range(2))
        fn, compile_s = peers.compile(text)
        np.testing.assert_allclose(fn(a, b), a @ b, rtol=2e-3, atol=2e-3)
        out = _aligned(np.empty((n, n), np.float32))
        calls = {STRATA: partial(fn, a, b, out=out), "numpy": partial(np.matmul, a, b, out)}
        if peers.torch is not None:
            ta, tb = peers.torch.from_numpy(a), peers.torch.from_numpy(b)
            calls["torch"] = partial(peers.torch.matmul, ta, tb)
        if peers.onnx is not None:
            node = peers.onnx.helper.make_node("MatMul", ["a", "b"], ["y"])
            model = onnx_graph(peers, [node], [("a", [n, n]), ("b", [n, n])], [n, n])
            calls["onnxruntime"] = ort_runner(peers.ort_session(model), [a, b])
        note = f"compile {compile_s:.2f} s"
        rows.append(_row(f"matmul {n}", "GFLOP/s", 2 * n**3 / 1e9, calls, note))
    return rows + [bf16_matmul_row(peers, *shape) for shape in BF16_MATMULS]


# A transformer's linear layers in bf16: a prefill's (128 tokens of GPT-2) and a square one.
BF16_MATMULS = [(128, 768, 3072), (1024, 1024, 1024)]


def bf16_matmul_row(peers: Peers, m: int, k: int, n: int):
    """A bf16 matmul (f32 sums, a bf16 result) against PyTorch's."""
    import ml_dtypes

    a_s, b_s, c_s = [m, k], [k, n], [m, n]
    text = (
        f"func.func @main(%a: {t(a_s, 'bf16')}, %b: {t(b_s, 'bf16')}) -> {t(c_s, 'bf16')} {{\n"
        f'  %0 = "graph.matmul"(%a, %b) : ({t(a_s, "bf16")}, {t(b_s, "bf16")})'
        f" -> {t(c_s, 'bf16')}\n  return %0 : {t(c_s, 'bf16')}\n}}"
    )
    rng = np.random.default_rng(0)
    a = rng.standard_normal(a_s).astype(ml_dtypes.bfloat16)
    b = (rng.standard_normal(b_s) / np.sqrt(k)).astype(ml_dtypes.bfloat16)
    fn, compile_s = peers.compile(text)
    out = fn(a, b)
    expected = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(out.astype(np.float32), expected, rtol=0, atol=2e-2)
    calls = {STRATA: partial(fn, a, b, out=out)}
    if peers.torch is not None:
        torch = peers.torch
        ta, tb = (torch.from_numpy(v.astype(np.float32)).to(torch.bfloat16) for v in (a, b))
        calls["torch"] = partial(torch.matmul, ta, tb)
    name = f"matmul bf16 {m}x{k} @ {k}x{n}"
    return _row(name, "GFLOP/s", 2 * m * n * k / 1e9, calls, f"compile {compile_s:.2f} s")


def conv_rows(peers: Peers, channels: int, size: int):
    """A 3x3 conv with padding 1, batch 1 (the bulk of a ResNet stage)."""
    x_shape, w_shape = [1, channels, size, size], [channels, channels, 3, 3]
    text = (
        f"func.func @main(%x: {t(x_shape)}, %w: {t(w_shape)}) -> {t(x_shape)} {{\n"
        f'  %0 = "graph.conv2d"(%x, %w) {{strides = array<i64: 1, 1>, '
        f"padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64}}"
        f" : ({t(x_shape)}, {t(w_shape)}) -> {t(x_shape)}\n"
        f"  return %0 : {t(x_shape)}\n}}"
    )
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape, dtype=np.float32)
    w = rng.standard_normal(w_shape, dtype=np.float32) * 0.1
    fn, compile_s = peers.compile(text)
    calls = {STRATA: partial(fn, x, w)}
    if peers.torch is not None:
        tx, tw = peers.torch.from_numpy(x), peers.torch.from_numpy(w)
        conv = partial(peers.torch.nn.functional.conv2d, tx, tw, padding=1)
        np.testing.assert_allclose(fn(x, w), conv().numpy(), rtol=1e-3, atol=1e-3)
        calls["torch"] = conv
    if peers.onnx is not None:
        node = peers.onnx.helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
        model = onnx_graph(peers, [node], [("x", x_shape), ("w", w_shape)], x_shape)
        calls["onnxruntime"] = ort_runner(peers.ort_session(model), [x, w])
    flops = 2 * channels * channels * 9 * size * size / 1e9
    name = f"conv2d 3x3 {channels}ch {size}x{size}"
    return [_row(name, "GFLOP/s", flops, calls, f"compile {compile_s:.2f} s")]


def _erf(v, out=None):
    import scipy.special

    return scipy.special.erf(v, out=out)


_SQRT_2_OVER_PI = np.float32(np.sqrt(2 / np.pi))

# graph op -> (how numpy computes it op by op, the input range, a note on the peer). Inputs in
# (0.5, 2.5) keep log, sqrt, rsqrt and pow on their domains and the rounding ops non-trivial.
UNARY_OPS = {
    "neg": (lambda x, out: np.negative(x, out=out), None),
    "abs": (lambda x, out: np.abs(x, out=out), None),
    "relu": (lambda x, out: np.maximum(x, 0, out=out), None),
    "exp": (lambda x, out: np.exp(x, out=out), None),
    "log": (lambda x, out: np.log(x, out=out), "positive"),
    "sqrt": (lambda x, out: np.sqrt(x, out=out), "positive"),
    "rsqrt": (lambda x, out: np.divide(1, np.sqrt(x), out=out), "positive"),
    "tanh": (lambda x, out: np.tanh(x, out=out), None),
    "sigmoid": (lambda x, out: np.divide(1, 1 + np.exp(-x), out=out), None),
    "silu": (lambda x, out: np.divide(x, 1 + np.exp(-x), out=out), None),
    "erf": (lambda x, out: _erf(x, out=out), None),
    "gelu": (
        lambda x, out: np.multiply(0.5 * x, 1 + _erf(x * np.float32(0.5**0.5)), out=out),
        None,
    ),
    "gelu_tanh": (
        lambda x, out: np.multiply(
            0.5 * x, 1 + np.tanh(_SQRT_2_OVER_PI * (x + np.float32(0.044715) * x**3)), out=out
        ),
        None,
    ),
    "floor": (lambda x, out: np.floor(x, out=out), None),
    "ceil": (lambda x, out: np.ceil(x, out=out), None),
    "round": (lambda x, out: np.rint(x, out=out), None),
    "sin": (lambda x, out: np.sin(x, out=out), None),
    "cos": (lambda x, out: np.cos(x, out=out), None),
    "clamp": (lambda x, out: np.clip(x, -0.5, 0.5, out=out), None),
}
BINARY_OPS = {
    "add": lambda a, b, out: np.add(a, b, out=out),
    "sub": lambda a, b, out: np.subtract(a, b, out=out),
    "mul": lambda a, b, out: np.multiply(a, b, out=out),
    "div": lambda a, b, out: np.divide(a, b, out=out),
    "maximum": lambda a, b, out: np.maximum(a, b, out=out),
    "minimum": lambda a, b, out: np.minimum(a, b, out=out),
    "pow": lambda a, b, out: np.power(a, b, out=out),
    "equal": lambda a, b, out: np.equal(a, b, out=out),
    "less": lambda a, b, out: np.less(a, b, out=out),
    "less_equal": lambda a, b, out: np.less_equal(a, b, out=out),
    "greater": lambda a, b, out: np.greater(a, b, out=out),
    "greater_equal": lambda a, b, out: np.greater_equal(a, b, out=out),
    "logical_and": lambda a, b, out: np.logical_and(a, b, out=out),
    "logical_or": lambda a, b, out: np.logical_or(a, b, out=out),
    "logical_xor": lambda a, b, out: np.logical_xor(a, b, out=out),
}
COMPARISONS = {"equal", "less", "less_equal", "greater", "greater_equal"}
LOGICAL = {"logical_and", "logical_or", "logical_xor"}


def _op_text(op: str, shape, inputs: list[str], result: str) -> str:
    dims = "x".join(map(str, shape))
    args = ", ".join(f"%a{i}: tensor<{dims}x{e}>" for i, e in enumerate(inputs))
    operands = ", ".join(f"%a{i}" for i in range(len(inputs)))
    operand_types = ", ".join(f"tensor<{dims}x{e}>" for e in inputs)
    name, attrs = op, ""
    if op == "gelu_tanh":
        name, attrs = "gelu", ' {approximate = "tanh"}'
    elif op == "clamp":
        attrs = " {min = -5.0e-01 : f32, max = 5.0e-01 : f32}"
    return (
        f"func.func @main({args}) -> tensor<{dims}x{result}> {{\n"
        f'  %0 = "graph.{name}"({operands}){attrs} : ({operand_types}) -> tensor<{dims}x{result}>\n'
        f"  return %0 : tensor<{dims}x{result}>\n}}"
    )


def op_table_rows(peers: Peers, count: int):
    """Every elementwise graph op alone on `count` elements against numpy's ufunc (into a
    preallocated output, as strata writes its own) and numpy's copy bandwidth. GB/s counts the
    bytes read and written once."""
    rng = np.random.default_rng(0)
    wide = _aligned(rng.standard_normal(count, dtype=np.float32) * 3)
    positive = _aligned(rng.uniform(0.5, 2.5, count).astype(np.float32))
    other = _aligned(rng.uniform(0.5, 2.5, count).astype(np.float32))
    bools = [_aligned(rng.random(count) < 0.5) for _ in range(2)]
    copy_out = _aligned(np.empty_like(wide))
    cases = [(op, [positive if domain else wide], ref) for op, (ref, domain) in UNARY_OPS.items()]
    for op, ref in BINARY_OPS.items():
        cases.append((op, bools if op in LOGICAL else [positive, other], ref))
    rows = []
    for op, arrays, ref in cases:
        elements = ["i1" if a.dtype == np.bool_ else "f32" for a in arrays]
        result = "i1" if op in COMPARISONS or op in LOGICAL else "f32"
        fn, _ = peers.compile(_op_text(op, [count], elements, result))
        out = _aligned(np.empty(count, np.bool_ if result == "i1" else np.float32))
        expected = ref(*arrays, None)
        got = fn(*arrays, out=out)
        if result == "i1":
            np.testing.assert_array_equal(got, expected)
        else:
            np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-6)
        gigabytes = (sum(a.nbytes for a in arrays) + out.nbytes) / 1e9
        found = measure(
            {
                STRATA: partial(fn, *arrays, out=out),
                "numpy": partial(ref, *arrays, out),
                "numpy copy": partial(np.copyto, copy_out, wide),
            }
        )
        # The copy moves 2 arrays of f32: its time scaled to this op's bytes.
        found["numpy copy"] = _scaled(found["numpy copy"], gigabytes / (2 * wide.nbytes / 1e9))
        name = f"{op}, 2^{count.bit_length() - 1}"
        rows.append(Row(name, "GB/s", gigabytes, found.pop(STRATA), found))
    return rows


CHAINS = {
    "tanh": (
        '%t = "graph.tanh"(%1) : ({T}) -> {T}\n  %r = "graph.relu"(%t) : ({T}) -> {T}',
        lambda v: np.maximum(np.tanh(v), 0),
    ),
    "sigmoid/silu": (
        '%t = "graph.sigmoid"(%1) : ({T}) -> {T}\n  %s = "graph.silu"(%1) : ({T}) -> {T}\n'
        '  %r = "graph.add"(%t, %s) : ({T}, {T}) -> {T}',
        lambda v: 1 / (1 + np.exp(-v)) + v / (1 + np.exp(-v)),
    ),
    "erf-GELU": (
        '%r = "graph.gelu"(%1) : ({T}) -> {T}',
        lambda v: 0.5 * v * (1 + _erf(v * np.float32(0.5**0.5))),
    ),
}


SCALAR = '"graph.constant"() {{value = dense<{}> : tensor<f32>}} : () -> tensor<f32>'


def chain_rows(peers: Peers, count: int):
    """Fused chains `f(x*a+b)`: one kernel in strata, op by op in numpy (and torch)."""
    rng = np.random.default_rng(0)
    x = _aligned(rng.standard_normal(count, dtype=np.float32))
    y = _aligned(np.empty_like(x))
    gigabytes = 2 * x.nbytes / 1e9  # read x, write y
    copy_out = _aligned(np.empty_like(x))
    T = t([count])
    rows = []
    chains = {"relu": ('%r = "graph.relu"(%1) : ({T}) -> {T}', lambda v: np.maximum(v, 0))}
    chains.update(CHAINS)
    for name, (body, ref) in chains.items():
        text = (
            f"func.func @main(%x: {T}) -> {T} {{\n"
            f"  %a = {SCALAR.format(1.5)}\n"
            f"  %b = {SCALAR.format(-0.25)}\n"
            f'  %0 = "graph.mul"(%x, %a) : ({T}, tensor<f32>) -> {T}\n'
            f'  %1 = "graph.add"(%0, %b) : ({T}, tensor<f32>) -> {T}\n'
            f"  {body.format(T=T)}\n"
            f"  return %r : {T}\n}}"
        )
        fn, _ = peers.compile(text)
        numpy_chain = partial(lambda v, f: f(v * np.float32(1.5) - np.float32(0.25)), x, ref)
        np.testing.assert_allclose(fn(x), numpy_chain(), rtol=2e-5, atol=1e-6)
        calls = {
            STRATA: partial(fn, x, out=y),
            "numpy op by op": numpy_chain,
            "numpy copy": partial(np.copyto, copy_out, x),
        }
        if peers.torch is not None and name == "tanh":
            tx = peers.torch.from_numpy(x)
            calls["torch"] = partial(
                lambda v: peers.torch.relu(peers.torch.tanh(v * 1.5 - 0.25)), tx
            )
        rows.append(_row(f"{name}(x*a+b), 2^{count.bit_length() - 1}", "GB/s", gigabytes, calls))
    return rows


def gelu_mlp_rows(peers: Peers, tokens=64, width=1024, hidden=4096):
    """A transformer MLP: x @ w1, tanh-form GELU, @ w2."""
    x_s, w1_s, h_s, w2_s = [tokens, width], [width, hidden], [tokens, hidden], [hidden, width]
    text = (
        f"func.func @main(%x: {t(x_s)}, %w1: {t(w1_s)}, %w2: {t(w2_s)}) -> {t(x_s)} {{\n"
        f'  %h = "graph.matmul"(%x, %w1) : ({t(x_s)}, {t(w1_s)}) -> {t(h_s)}\n'
        f'  %g = "graph.gelu"(%h) {{approximate = "tanh"}} : ({t(h_s)}) -> {t(h_s)}\n'
        f'  %y = "graph.matmul"(%g, %w2) : ({t(h_s)}, {t(w2_s)}) -> {t(x_s)}\n'
        f"  return %y : {t(x_s)}\n}}"
    )
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_s, dtype=np.float32)
    w1 = rng.standard_normal(w1_s, dtype=np.float32) / np.float32(width**0.5)
    w2 = rng.standard_normal(w2_s, dtype=np.float32) / np.float32(hidden**0.5)

    def numpy_mlp(x, w1, w2):
        h = x @ w1
        g = 0.5 * h * (1 + np.tanh(_SQRT_2_OVER_PI * (h + np.float32(0.044715) * h**3)))
        return g @ w2

    fn, compile_s = peers.compile(text)
    out = fn(x, w1, w2)
    np.testing.assert_allclose(out, numpy_mlp(x, w1, w2), rtol=1e-3, atol=1e-4)
    calls = {STRATA: partial(fn, x, w1, w2, out=out), "numpy": partial(numpy_mlp, x, w1, w2)}
    if peers.torch is not None:
        torch = peers.torch
        tx, tw1, tw2 = (torch.from_numpy(a) for a in (x, w1, w2))
        gelu = partial(torch.nn.functional.gelu, approximate="tanh")
        calls["torch"] = _no_grad(torch, lambda: gelu(tx @ tw1) @ tw2)
    name = f"MLP {tokens}x{width} @ {width}x{hidden}, tanh-GELU, @ {hidden}x{width}"
    return [_row(name, "ms", 0.0, calls, f"compile {compile_s:.2f} s")]


def row_norm_rows(peers: Peers, rows_, cols):
    shape = [rows_, cols]
    softmax = (
        f"func.func @main(%x: {t(shape)}) -> {t(shape)} {{\n"
        f'  %0 = "graph.softmax"(%x) {{axis = 1 : i64}} : ({t(shape)}) -> {t(shape)}\n'
        f"  return %0 : {t(shape)}\n}}"
    )
    layer_norm = (
        f"func.func @main(%x: {t(shape)}, %g: {t([cols])}, %b: {t([cols])}) -> {t(shape)} {{\n"
        f'  %0 = "graph.layer_norm"(%x, %g, %b) {{axis = 1 : i64, epsilon = 1.0e-5 : f32}}'
        f" : ({t(shape)}, {t([cols])}, {t([cols])}) -> {t(shape)}\n"
        f"  return %0 : {t(shape)}\n}}"
    )
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape, dtype=np.float32)
    g, b = rng.standard_normal(cols, dtype=np.float32), rng.standard_normal(cols, dtype=np.float32)

    def np_softmax(v):
        e = np.exp(v - v.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def np_layer_norm(v):
        m = v.mean(axis=1, keepdims=True)
        d = v - m
        return d / np.sqrt((d * d).mean(axis=1, keepdims=True) + 1e-5) * g + b

    torch_fns, onnx_nodes = {}, {}
    if peers.torch is not None:
        tx, tg, tb = (peers.torch.from_numpy(a) for a in (x, g, b))
        torch_fns = {
            "softmax": lambda: peers.torch.softmax(tx, 1),
            "layer_norm": lambda: peers.torch.nn.functional.layer_norm(tx, (cols,), tg, tb),
        }
    if peers.onnx is not None:
        helper = peers.onnx.helper
        onnx_nodes = {
            "softmax": ([helper.make_node("Softmax", ["x"], ["y"], axis=1)], [("x", shape)]),
            "layer_norm": (
                [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=1)],
                [("x", shape), ("g", [cols]), ("b", [cols])],
            ),
        }
    out = []
    gigabytes = 2 * 4 * x.size / 1e9
    for name, text, ref, args in (
        ("softmax", softmax, np_softmax, (x,)),
        ("layer_norm", layer_norm, np_layer_norm, (x, g, b)),
    ):
        fn, _ = peers.compile(text)
        result = fn(*args)
        np.testing.assert_allclose(result, ref(x), rtol=1e-4, atol=1e-5)
        calls = {STRATA: partial(fn, *args, out=result), "numpy": partial(ref, x)}
        if name in torch_fns:
            calls["torch"] = torch_fns[name]
        if name in onnx_nodes:
            nodes, inputs = onnx_nodes[name]
            session = peers.ort_session(onnx_graph(peers, nodes, inputs, shape))
            calls["onnxruntime"] = ort_runner(session, list(args))
        out.append(_row(f"{name} {rows_}x{cols}", "GB/s", gigabytes, calls))
    return out


def _one_op(op: str, shape, result, attrs: str) -> str:
    return (
        f"func.func @main(%x: {t(shape)}) -> {t(result)} {{\n"
        f'  %0 = "graph.{op}"(%x) {{{attrs}}} : ({t(shape)}) -> {t(result)}\n'
        f"  return %0 : {t(result)}\n}}"
    )


def movement_rows(peers: Peers):
    """Reductions over the innermost dims (a row sum, a CNN's global pool over H and W, a
    sequence's tokens and features, every element) and transposes that move the innermost dim
    (a square, a vocabulary-wide one, NHWC to NCHW), against numpy (into a preallocated
    output), torch and onnxruntime. GB/s counts the bytes read and written once."""
    rng = np.random.default_rng(0)
    reductions = [
        ("sum", [1024, 1024], (1,)),
        ("mean", [1, 256, 56, 56], (2, 3)),
        ("sum", [4, 128, 768], (1, 2)),
        ("sum", [1024, 1024], (0, 1)),
    ]
    transposes = [([1024, 1024], (1, 0)), ([1000, 2048], (1, 0)), ([1, 56, 56, 64], (0, 3, 1, 2))]
    rows = []
    for kind, shape, axes in reductions:
        x = _aligned(rng.standard_normal(shape, dtype=np.float32))
        reference = getattr(np, kind)
        expected = reference(x, axis=axes)
        attrs = f"axes = array<i64: {', '.join(map(str, axes))}>"
        fn, _ = peers.compile(_one_op(f"reduce_{kind}", shape, expected.shape, attrs))
        out = _aligned(np.empty(expected.shape, np.float32))
        np.testing.assert_allclose(fn(x, out=out), expected, rtol=1e-4, atol=1e-3)
        calls = {STRATA: partial(fn, x, out=out), "numpy": partial(reference, x, axes, None, out)}
        if peers.torch is not None:
            calls["torch"] = partial(getattr(peers.torch, kind), peers.torch.from_numpy(x), axes)
        if peers.onnx is not None:  # at opset 17, ReduceSum takes its axes as an input
            op, initializers = f"Reduce{kind.capitalize()}", []
            if kind == "sum":
                axes_tensor = np.array(axes, np.int64)
                initializers = [peers.onnx.numpy_helper.from_array(axes_tensor, "axes")]
                node = peers.onnx.helper.make_node(op, ["x", "axes"], ["y"], keepdims=0)
            else:
                node = peers.onnx.helper.make_node(op, ["x"], ["y"], axes=list(axes), keepdims=0)
            graph = onnx_graph(peers, [node], [("x", shape)], list(expected.shape), initializers)
            calls["onnxruntime"] = ort_runner(peers.ort_session(graph), [x])
        name = f"reduce_{kind} {'x'.join(map(str, shape))} over {axes}"
        rows.append(_row(name, "GB/s", (x.nbytes + out.nbytes) / 1e9, calls))
    for shape, perm in transposes:
        x = _aligned(rng.standard_normal(shape, dtype=np.float32))
        expected = x.transpose(perm)
        attrs = f"perm = array<i64: {', '.join(map(str, perm))}>"
        fn, _ = peers.compile(_one_op("transpose", shape, expected.shape, attrs))
        out = _aligned(np.empty(expected.shape, np.float32))
        np.testing.assert_array_equal(fn(x, out=out), expected)
        calls = {STRATA: partial(fn, x, out=out), "numpy": partial(np.copyto, out, expected)}
        if peers.torch is not None:
            tx = peers.torch.from_numpy(x)
            calls["torch"] = lambda tx=tx, perm=perm: tx.permute(perm).contiguous()
        if peers.onnx is not None:
            node = peers.onnx.helper.make_node("Transpose", ["x"], ["y"], perm=list(perm))
            graph = onnx_graph(peers, [node], [("x", shape)], list(expected.shape))
            calls["onnxruntime"] = ort_runner(peers.ort_session(graph), [x])
        name = f"transpose {'x'.join(map(str, shape))} by {perm}"
        rows.append(_row(name, "GB/s", 2 * x.nbytes / 1e9, calls))
    return rows


def example_model_rows(peers: Peers):
    """The bundled MLP and transformer block (graph dialect) against the same models in torch."""
    sys.path.insert(0, str(ROOT / "examples"))
    import reference

    rows = []
    for model in ("mlp", "transformer_block"):
        text = (ROOT / "examples" / f"{model}.mlir").read_text()
        arrays = reference.inputs(model)
        fn, compile_s = peers.compile(text)
        out = fn(*arrays)
        np.testing.assert_allclose(out, reference.reference(model, arrays), rtol=1e-4, atol=1e-5)
        calls = {
            STRATA: partial(fn, *arrays, out=out),
            "numpy": partial(reference.REFERENCES[model], *arrays),
        }
        if peers.torch is not None:
            torch_fn = reference.torch_version(model, peers.torch)
            tensors = [peers.torch.from_numpy(a) for a in arrays]
            compiled = peers.torch.compile(torch_fn)
            calls["torch"] = _no_grad(peers.torch, partial(torch_fn, *tensors))
            calls["torch.compile"] = _no_grad(peers.torch, partial(compiled, *tensors))
        rows.append(_row(model, "ms", 0.0, calls, f"compile {compile_s:.2f} s"))
    return rows


# name: (width, block of a sequence length); the LLaMA block is a LLaMA-style one 1024 wide
# with 16 heads, 4 of them for keys and values, and a SwiGLU of 2816.
DECODERS = {
    "gpt2 block": (768, lambda blocks, seq: blocks.GPT2Block(768, 12, sdpa=True)),
    "llama block": (1024, lambda blocks, seq: blocks.LlamaBlock(1024, 16, 4, 2816, seq)),
}


def decoder_rows(peers: Peers, sequences):
    """The GPT-2 and LLaMA decoder blocks of examples/decoder_blocks.py (batch 1) through
    torch.export, in f32 and in bf16: strata against torch eager and torch.compile (inductor),
    with strata's import and compile time. Sequence 1 is a decode step: matrix-vector products
    that read every weight once."""
    if peers.torch is None:
        return []
    torch = peers.torch
    sys.path.insert(0, str(ROOT / "examples"))
    import decoder_blocks
    from strata.frontends.torch import import_module

    rows = []
    for dtype, tolerance in ((torch.float32, 1e-4), (torch.bfloat16, 3e-2)):
        for name, (width, make) in DECODERS.items():
            for seq in sequences:
                torch.manual_seed(0)
                model = make(decoder_blocks, seq).eval().to(dtype)
                x = torch.randn(1, seq, width, dtype=dtype)
                start = time.perf_counter()
                fn, _ = peers.compile(import_module(model, [x]))
                compile_s = time.perf_counter() - start
                xn = _to_numpy(x)
                with torch.no_grad():
                    expected = model(x).float().numpy()
                    compiled = torch.compile(model)
                    compiled(x)
                out = fn(xn)
                scale = float(np.abs(expected).max())
                np.testing.assert_allclose(
                    out.astype(np.float32), expected, rtol=0, atol=tolerance * scale
                )
                calls = {
                    STRATA: partial(fn, xn, out=out),
                    "torch": _no_grad(torch, partial(model, x)),
                    "torch.compile": _no_grad(torch, partial(compiled, x)),
                }
                note = f"import+compile {compile_s:.1f} s"
                label = "" if dtype == torch.float32 else " bf16"
                rows.append(_row(f"{name}{label} seq {seq}", "ms", 0.0, calls, note))
    return rows


def _to_numpy(tensor):
    """A torch tensor as numpy (bf16 as ml_dtypes' bfloat16, which numpy lacks)."""
    if str(tensor.dtype) != "torch.bfloat16":
        return tensor.numpy()
    import ml_dtypes

    return tensor.float().numpy().astype(ml_dtypes.bfloat16)


def with_weights(model):
    """The model with its weights as a trained model has them: the `light` models make each
    weight a ConstantOfShape of one value (which onnxruntime folds once, and strata filled on
    every call), here an initializer of that value times a seeded factor in [0.5, 1.5), so
    that every runtime reads real arrays, as with a trained model."""
    from onnx import numpy_helper

    rng = np.random.default_rng(0)
    shapes = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    kept = []
    for node in model.graph.node:
        if node.op_type != "ConstantOfShape" or node.input[0] not in shapes:
            kept.append(node)
            continue
        value = numpy_helper.to_array(node.attribute[0].t).reshape(-1)[0]
        shape = shapes[node.input[0]].astype(int)
        weights = (value * rng.uniform(0.5, 1.5, shape)).astype(value.dtype)
        model.graph.initializer.append(numpy_helper.from_array(weights, node.output[0]))
    del model.graph.node[:]
    model.graph.node.extend(kept)
    return model


def onnx_model_rows(peers: Peers, names):
    """ONNX model-zoo architectures (the `light` models shipped with onnx, with weights; see
    `with_weights`): strata against onnxruntime on the same model, with strata's import and
    compile time."""
    if peers.onnx is None:
        return []
    from strata.frontends.onnx import import_model, load

    folder = Path(peers.onnx.__file__).parent / "backend" / "test" / "data" / "light"
    rows = []
    for name in names:
        model = with_weights(load(folder / f"light_{name}.onnx"))
        start = time.perf_counter()
        fn, _ = peers.compile(import_model(model))
        compile_s = time.perf_counter() - start  # import and compile
        shape = fn.signature.inputs[0].shape
        x = np.random.default_rng(0).random(shape, dtype=np.float32)
        calls = {STRATA: partial(fn, x)}
        session = peers.ort_session(model)
        if session is not None:
            run = ort_runner(session, [x])
            np.testing.assert_allclose(fn(x), run()[0], rtol=1e-3, atol=1e-4)
            calls["onnxruntime"] = run
        rows.append(_row(f"onnx {name}", "ms", 0.0, calls, f"import+compile {compile_s:.1f} s"))
    return rows


# ----------------------------------------------------------------------------------------------


def format_rows(rows: list[tuple[int, Row]]) -> list[str]:
    """The table: values at the median of calls (what users get), the best in parentheses;
    ratios are strata's speed over the peer's (>1: strata is faster), at the median and best."""
    lines = [
        "| threads | case | metric | strata median (best) | peers, median | strata / peer, "
        "median (best) | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for threads, row in rows:
        mine = f"{row.value(row.strata.median):.3g} ({row.value(row.strata.best):.3g})"
        peer_text = ", ".join(f"{k} {row.value(v.median):.3g}" for k, v in row.peers.items())
        ratios = ", ".join(
            f"{k} {v.median / row.strata.median:.2f}x ({v.best / row.strata.best:.2f}x)"
            for k, v in row.peers.items()
        )
        lines.append(
            f"| {threads} | {row.name} | {row.metric} | {mine} | {peer_text} | {ratios} "
            f"| {row.note} |"
        )
    return lines


@dataclasses.dataclass(frozen=True)
class Goal:
    """A speed goal: on every thread count, each row whose name `matches` has a median ratio
    of at least `least` against each named peer."""

    text: str
    matches: object  # row name -> bool
    least: dict[str, float]


GOALS = (
    Goal(
        "every op of the table at 1.0x numpy or more",
        lambda n: ", 2^" in n and "(" not in n,
        {"numpy": 1.0},
    ),
    Goal(
        "the tanh chain at 2x numpy or more and within 15% of copy bandwidth",
        lambda n: n.startswith("tanh(x*a+b)"),
        {"numpy op by op": 2.0, "numpy copy": 0.85},
    ),
    Goal(
        "the tanh-GELU MLP at 1.0x numpy and 1.3x PyTorch eager or more",
        lambda n: n.startswith("MLP "),
        {"numpy": 1.0, "torch": 1.3},
    ),
    Goal(
        "f32 matmul 1024 and 2048 at 0.9x numpy or more",
        lambda n: n in ("matmul 1024", "matmul 2048"),
        {"numpy": 0.9},
    ),
    Goal(
        "softmax and layer_norm 1024x1024 at 1.0x onnxruntime or more",
        lambda n: n in ("softmax 1024x1024", "layer_norm 1024x1024"),
        {"onnxruntime": 1.0},
    ),
)


def format_goals(rows: list[tuple[int, Row]]) -> list[str]:
    """Each goal that this run measured, met or not, with the rows that fall short."""
    lines = []
    for goal in GOALS:
        measured, short = 0, []
        for threads, row in rows:
            if not goal.matches(row.name):
                continue
            for peer, least in goal.least.items():
                if peer not in row.peers:
                    continue
                measured += 1
                ratio = row.peers[peer].median / row.strata.median
                if ratio < least:
                    short.append(f"{row.name} on {threads} thread(s): {peer} {ratio:.3f}x")
        if measured:
            verdict = "met" if not short else "not met: " + "; ".join(short)
            lines.append(f"- {goal.text}: {verdict}")
    return ["", "Goals, at the median of calls:", ""] + lines if lines else []


def _no_grad(torch, call):
    def run():
        with torch.no_grad():
            return call()

    return run


def _optional(name: str):
    try:
        return __import__(name)
    except ImportError:
        return None


def _blas_limits(threads: int):
    threadpoolctl = _optional("threadpoolctl")
    if threadpoolctl is not None:
        return threadpoolctl.threadpool_limits(threads, user_api="blas")
    if threads < int(os.environ.get("OPENBLAS_NUM_THREADS", threads)):
        # numpy's rows would run OpenBLAS on more threads than strata's.
        sys.exit(
            f"benchmarks/cpu.py: numpy's OpenBLAS cannot be limited to {threads} thread(s)"
            " without threadpoolctl: pip install -e '.[bench]' (or run one thread count)"
        )
    return contextlib.nullcontext()


def run_all(threads: int, args) -> list:
    torch = _optional("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    ort = _optional("onnxruntime")
    onnx = _optional("onnx")
    if onnx is not None:
        import onnx.numpy_helper  # noqa: F401  (a submodule the cases use)
    peers = Peers(threads, torch, ort, onnx if ort is not None else None)
    sizes = [256, 512] if args.quick else [256, 512, 1024, 2048]
    count = 1 << (20 if args.quick else 22)
    sections = {
        "matmul": lambda: matmul_rows(peers, sizes),
        "conv": lambda: conv_rows(peers, 64, 28 if args.quick else 56),
        "ops": lambda: op_table_rows(peers, count),
        "chains": lambda: chain_rows(peers, count),
        "mlp": lambda: gelu_mlp_rows(peers),
        "rows": lambda: row_norm_rows(peers, 1024, 1024),
        "movement": lambda: movement_rows(peers),
        "examples": lambda: example_model_rows(peers),
        "decoders": lambda: decoder_rows(peers, [1, 128] if args.quick else [1, 128, 512]),
        "onnx": lambda: onnx_model_rows(peers, [m for m in args.models.split(",") if m]),
    }
    wanted = args.only.split(",") if args.only else list(sections)
    unknown = sorted(set(wanted) - set(sections))
    if unknown:
        raise SystemExit(f"unknown section(s) {', '.join(unknown)}; known: {', '.join(sections)}")
    rows = []
    with _blas_limits(threads):
        for name in wanted:
            rows += sections[name]()
    return [(threads, row) for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    # AlexNet's and ShuffleNet's grouped convs once ran as scalar loops (0.09-0.12x).
    parser.add_argument(
        "--models",
        default="squeezenet,resnet50,bvlc_alexnet,shufflenet",
        help="light ONNX models (comma-separated)",
    )
    parser.add_argument(
        "--only",
        help="comma-separated sections: "
        "matmul,conv,ops,chains,mlp,rows,movement,examples,decoders,onnx",
    )
    parser.add_argument("--output", help="write the markdown table here")
    args = parser.parse_args()
    counts = [int(c) for c in args.threads.split(",")]
    _reexec_with_clean_env(max(counts))
    rows = []
    for threads in counts:
        rows += run_all(threads, args)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    header = [
        f"# CPU benchmarks at {commit}, {args.threads} thread(s), {time.strftime('%Y-%m-%d')}",
        "",
        f"Host: {_host()}. Throughput: higher is better; times (ms): lower is better.",
        "",
    ]
    text = "\n".join(header + format_rows(rows) + format_goals(rows)) + "\n"
    print(text)
    if args.output:
        Path(args.output).write_text(text)


def _host() -> str:
    from strata.dialects import target

    host = target.host_cpu()
    return f"{host.chip}, {host.vector_bits}-bit vectors, {host.cores} cores"


if __name__ == "__main__":
    main()
