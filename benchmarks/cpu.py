"""CPU benchmarks: strata against numpy/OpenBLAS, PyTorch (eager and torch.compile) and
onnxruntime, in one run, on 1 and 2 threads.

python benchmarks/cpu.py [--threads 1,2] [--quick] [--models squeezenet,resnet50]
                         [--output benchmarks/results/cpu-<commit>.md]

Every row compares peers measured in the same process, right after each other, with the same
thread count, and reports the ratio strata/peer of throughput (>1: strata is faster). strata
compiles for the host with `cores` set to the thread count. OpenBLAS runs with
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from the environment, so that it picks its
AVX-512 kernel where the CPU has one; its threads are limited with threadpoolctl. Peers that
are not installed (torch, onnxruntime, threadpoolctl) are left out of the rows.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
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


def best_time(fn, *args, budget: float = 1.0, at_least: int = 3) -> float:
    fn(*args)
    times = []
    deadline = time.perf_counter() + budget
    while len(times) < at_least or time.perf_counter() < deadline:
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
        if len(times) >= 200:
            break
    return min(times)


def _aligned(array):
    """The same values in 64-byte-aligned memory (what strata allocates for its results)."""
    from strata.runtime.abi import empty_aligned

    copy = empty_aligned(array.shape, array.dtype)
    copy[...] = array
    return copy


def t(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


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
# Cases. Each returns rows: (name, metric, strata value, {peer: value}, note).


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
        flops = 2 * n**3 / 1e9
        found = {"numpy": flops / best_time(np.matmul, a, b, out)}
        if peers.torch is not None:
            ta, tb = peers.torch.from_numpy(a), peers.torch.from_numpy(b)
            found["torch"] = flops / best_time(peers.torch.matmul, ta, tb)
        if peers.onnx is not None:
            node = peers.onnx.helper.make_node("MatMul", ["a", "b"], ["y"])
            model = onnx_graph(peers, [node], [("a", [n, n]), ("b", [n, n])], [n, n])
            found["onnxruntime"] = flops / best_time(ort_runner(peers.ort_session(model), [a, b]))
        value = flops / best_time(partial(fn, out=out), a, b)
        rows.append((f"matmul {n}", "GFLOP/s", value, found, f"compile {compile_s:.2f} s"))
    return rows


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
    flops = 2 * channels * channels * 9 * size * size / 1e9
    found = {}
    if peers.torch is not None:
        tx, tw = peers.torch.from_numpy(x), peers.torch.from_numpy(w)
        conv = partial(peers.torch.nn.functional.conv2d, tx, tw, padding=1)
        np.testing.assert_allclose(fn(x, w), conv().numpy(), rtol=1e-3, atol=1e-3)
        found["torch"] = flops / best_time(conv)
    if peers.onnx is not None:
        node = peers.onnx.helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
        model = onnx_graph(peers, [node], [("x", x_shape), ("w", w_shape)], x_shape)
        found["onnxruntime"] = flops / best_time(ort_runner(peers.ort_session(model), [x, w]))
    value = flops / best_time(fn, x, w)
    name = f"conv2d 3x3 {channels}ch {size}x{size}"
    return [(name, "GFLOP/s", value, found, f"compile {compile_s:.2f} s")]


def elementwise_rows(peers: Peers, count):
    text = (
        f"func.func @main(%x: {t([count])}) -> {t([count])} {{\n"
        f'  %a = "graph.constant"() {{value = dense<1.5> : tensor<f32>}} : () -> tensor<f32>\n'
        f'  %b = "graph.constant"() {{value = dense<-0.25> : tensor<f32>}} : () -> tensor<f32>\n'
        f'  %0 = "graph.mul"(%x, %a) : ({t([count])}, tensor<f32>) -> {t([count])}\n'
        f'  %1 = "graph.add"(%0, %b) : ({t([count])}, tensor<f32>) -> {t([count])}\n'
        f'  %2 = "graph.relu"(%1) : ({t([count])}) -> {t([count])}\n'
        f"  return %2 : {t([count])}\n}}"
    )
    x = _aligned(np.random.default_rng(0).standard_normal(count, dtype=np.float32))
    fn, _ = peers.compile(text)
    np.testing.assert_allclose(fn(x), np.maximum(x * 1.5 - 0.25, 0), rtol=1e-6)
    gigabytes = 2 * 4 * count / 1e9  # read x, write y
    y = _aligned(np.empty_like(x))
    found = {
        "numpy op by op": gigabytes / best_time(lambda: np.maximum(x * 1.5 - 0.25, 0)),
        "numpy copy": gigabytes / best_time(np.copyto, y, x),
    }
    if peers.torch is not None:
        tx = peers.torch.from_numpy(x)
        found["torch"] = gigabytes / best_time(lambda: peers.torch.relu(tx * 1.5 - 0.25))
    if peers.onnx is not None:
        helper, numpy_helper = peers.onnx.helper, peers.onnx.numpy_helper
        nodes = [
            helper.make_node("Mul", ["x", "a"], ["m"]),
            helper.make_node("Add", ["m", "b"], ["s"]),
            helper.make_node("Relu", ["s"], ["y"]),
        ]
        constants = [
            numpy_helper.from_array(np.array(1.5, np.float32), "a"),
            numpy_helper.from_array(np.array(-0.25, np.float32), "b"),
        ]
        model = onnx_graph(peers, nodes, [("x", [count])], [count], constants)
        found["onnxruntime"] = gigabytes / best_time(ort_runner(peers.ort_session(model), [x]))
    value = gigabytes / best_time(partial(fn, out=y), x)
    return [(f"relu(x*a+b), 2^{count.bit_length() - 1} f32", "GB/s", value, found, "")]


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
        np.testing.assert_allclose(fn(*args), ref(x), rtol=1e-4, atol=1e-5)
        found = {"numpy": gigabytes / best_time(ref, x)}
        if name in torch_fns:
            found["torch"] = gigabytes / best_time(torch_fns[name])
        if name in onnx_nodes:
            nodes, inputs = onnx_nodes[name]
            session = peers.ort_session(onnx_graph(peers, nodes, inputs, shape))
            found["onnxruntime"] = gigabytes / best_time(ort_runner(session, list(args)))
        value = gigabytes / best_time(fn, *args)
        out.append((f"{name} {rows_}x{cols}", "GB/s", value, found, ""))
    return out


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
        found = {"numpy": 1e3 * best_time(reference.REFERENCES[model], *arrays)}
        if peers.torch is not None:
            torch_fn = reference.torch_version(model, peers.torch)
            tensors = [peers.torch.from_numpy(a) for a in arrays]
            with peers.torch.no_grad():
                found["torch"] = 1e3 * best_time(torch_fn, *tensors)
                compiled = peers.torch.compile(torch_fn)
                found["torch.compile"] = 1e3 * best_time(compiled, *tensors)
        value = 1e3 * best_time(partial(fn, out=out), *arrays)
        rows.append((model, "ms", value, found, f"compile {compile_s:.2f} s"))
    return rows


def onnx_model_rows(peers: Peers, names):
    """ONNX model-zoo architectures (the `light` models shipped with onnx): strata against
    onnxruntime on the same file, with strata's import and compile time."""
    if peers.onnx is None:
        return []
    from strata.frontends.onnx import import_model, load

    folder = Path(peers.onnx.__file__).parent / "backend" / "test" / "data" / "light"
    rows = []
    for name in names:
        path = folder / f"light_{name}.onnx"
        start = time.perf_counter()
        fn, _ = peers.compile(import_model(load(path)))
        compile_s = time.perf_counter() - start  # import and compile
        shape = fn.signature.inputs[0].shape
        x = np.random.default_rng(0).random(shape, dtype=np.float32)
        found = {}
        session = peers.ort_session(path)
        if session is not None:
            run = ort_runner(session, [x])
            np.testing.assert_allclose(fn(x), run()[0], rtol=1e-3, atol=1e-4)
            found["onnxruntime"] = 1e3 * best_time(run)
        value = 1e3 * best_time(fn, x)
        rows.append((f"onnx {name}", "ms", value, found, f"import+compile {compile_s:.1f} s"))
    return rows


# ----------------------------------------------------------------------------------------------


def format_rows(rows) -> list[str]:
    lines = [
        "| threads | case | metric | strata | peers | strata / peer | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for threads, (name, metric, value, found, note) in rows:
        lower_is_better = metric == "ms"
        peer_text = ", ".join(f"{k} {v:.3g}" for k, v in found.items())
        ratios = ", ".join(
            f"{k} {(v / value if lower_is_better else value / v):.2f}x" for k, v in found.items()
        )
        lines.append(
            f"| {threads} | {name} | {metric} | {value:.3g} | {peer_text} | {ratios} | {note} |"
        )
    return lines


def _optional(name: str):
    try:
        return __import__(name)
    except ImportError:
        return None


def _blas_limits(threads: int):
    threadpoolctl = _optional("threadpoolctl")
    if threadpoolctl is None:
        return contextlib.nullcontext()
    return threadpoolctl.threadpool_limits(threads, user_api="blas")


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
    with _blas_limits(threads):
        rows = matmul_rows(peers, sizes)
        rows += conv_rows(peers, 64, 28 if args.quick else 56)
        rows += elementwise_rows(peers, 1 << (20 if args.quick else 24))
        rows += row_norm_rows(peers, 1024, 1024)
        rows += example_model_rows(peers)
        rows += onnx_model_rows(peers, [m for m in args.models.split(",") if m])
    return [(threads, row) for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument(
        "--models", default="squeezenet,resnet50", help="light ONNX models (comma-separated)"
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
    text = "\n".join(header + format_rows(rows)) + "\n"
    print(text)
    if args.output:
        Path(args.output).write_text(text)


def _host() -> str:
    from strata.dialects import target

    host = target.host_cpu()
    return f"{host.chip}, {host.vector_bits}-bit vectors, {host.cores} cores"


if __name__ == "__main__":
    main()
