"""CPU benchmarks: strata against numpy/OpenBLAS, PyTorch eager and torch.compile, in one run.

python benchmarks/cpu.py [--threads 1] [--quick] [--output benchmarks/results/cpu-<commit>.md]

Every row compares peers measured in the same process, right after each other, and reports
the ratio strata/peer of throughput (>1 means strata is faster). OpenBLAS runs with
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from the environment, so that it picks its
AVX-512 kernel where the CPU has one, and with the same thread count as strata.
PyTorch rows appear when torch is installed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

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


def compile_graph(text: str):
    import strata

    start = time.perf_counter()
    fn = strata.compile(text)
    return fn, time.perf_counter() - start


def t(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


# ----------------------------------------------------------------------------------------------
# Cases. Each returns rows: (name, metric, strata value, {peer: value}, note).


def matmul_rows(sizes, torch):
    import numpy as np

    rows = []
    for n in sizes:
        text = (
            f"func.func @main(%a: {t([n, n])}, %b: {t([n, n])}) -> {t([n, n])} {{\n"
            f'  %0 = "graph.matmul"(%a, %b) : ({t([n, n])}, {t([n, n])}) -> {t([n, n])}\n'
            f"  return %0 : {t([n, n])}\n}}"
        )
        rng = np.random.default_rng(0)
        a, b = (_aligned(rng.standard_normal((n, n), dtype=np.float32)) for _ in range(2))
        fn, compile_s = compile_graph(text)
        np.testing.assert_allclose(fn(a, b), a @ b, rtol=2e-3, atol=2e-3)
        out = _aligned(np.empty((n, n), np.float32))
        flops = 2 * n**3 / 1e9
        peers = {"numpy": flops / best_time(np.matmul, a, b, out)}
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            peers["torch"] = flops / best_time(torch.matmul, ta, tb)
        strata_gflops = flops / best_time(partial(fn, out=out), a, b)
        rows.append((f"matmul {n}", "GFLOP/s", strata_gflops, peers, f"compile {compile_s:.2f} s"))
    return rows


def elementwise_rows(count, torch):
    import numpy as np

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
    fn, compile_s = compile_graph(text)
    np.testing.assert_allclose(fn(x), np.maximum(x * 1.5 - 0.25, 0), rtol=1e-6)
    gigabytes = 2 * 4 * count / 1e9  # read x, write y
    y = _aligned(np.empty_like(x))
    peers = {
        "numpy op by op": gigabytes / best_time(lambda: np.maximum(x * 1.5 - 0.25, 0)),
        "numpy copy": gigabytes / best_time(np.copyto, y, x),
    }
    if torch is not None:
        tx = torch.from_numpy(x)
        peers["torch"] = gigabytes / best_time(lambda: torch.relu(tx * 1.5 - 0.25))
    value = gigabytes / best_time(partial(fn, out=y), x)
    return [(f"relu(x*a+b), 2^{count.bit_length() - 1} f32", "GB/s", value, peers, "")]


def row_norm_rows(rows_, cols, torch):
    import numpy as np

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

    torch_fns = {}
    if torch is not None:
        tx, tg, tb = (torch.from_numpy(a) for a in (x, g, b))
        torch_fns = {
            "softmax": lambda: torch.softmax(tx, 1),
            "layer_norm": lambda: torch.nn.functional.layer_norm(tx, (cols,), tg, tb),
        }
    out = []
    gigabytes = 2 * 4 * x.size / 1e9
    for name, text, ref, args in (
        ("softmax", softmax, np_softmax, (x,)),
        ("layer_norm", layer_norm, np_layer_norm, (x, g, b)),
    ):
        fn, _ = compile_graph(text)
        np.testing.assert_allclose(fn(*args), ref(x), rtol=1e-4, atol=1e-5)
        peers = {"numpy": gigabytes / best_time(ref, x)}
        if name in torch_fns:
            peers["torch"] = gigabytes / best_time(torch_fns[name])
        out.append((f"{name} {rows_}x{cols}", "GB/s", gigabytes / best_time(fn, *args), peers, ""))
    return out


def model_rows(torch):
    """The bundled MLP and transformer block (graph dialect) against the same models in torch."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "examples"))
    import reference

    rows = []
    for model in ("mlp", "transformer_block"):
        text = (ROOT / "examples" / f"{model}.mlir").read_text()
        arrays = reference.inputs(model)
        fn, compile_s = compile_graph(text)
        np.testing.assert_allclose(
            fn(*arrays), reference.reference(model, arrays), rtol=1e-4, atol=1e-5
        )
        numpy_fn = reference.REFERENCES[model]
        peers = {"numpy": 1e3 * best_time(numpy_fn, *arrays)}
        if torch is not None:
            torch_fn = reference.torch_version(model, torch)
            tensors = [torch.from_numpy(a) for a in arrays]
            with torch.no_grad():
                peers["torch"] = 1e3 * best_time(torch_fn, *tensors)
                compiled = torch.compile(torch_fn)
                peers["torch.compile"] = 1e3 * best_time(compiled, *tensors)
        rows.append(
            (model, "ms", 1e3 * best_time(fn, *arrays), peers, f"compile {compile_s:.2f} s")
        )
    return rows


# ----------------------------------------------------------------------------------------------


def format_rows(rows) -> list[str]:
    lines = [
        "| case | metric | strata | peers | strata / peer | note |",
        "|---|---|---|---|---|---|",
    ]
    for name, metric, value, peers, note in rows:
        lower_is_better = metric == "ms"
        peer_text = ", ".join(f"{k} {v:.3g}" for k, v in peers.items())
        ratios = ", ".join(
            f"{k} {(v / value if lower_is_better else value / v):.2f}x" for k, v in peers.items()
        )
        lines.append(f"| {name} | {metric} | {value:.3g} | {peer_text} | {ratios} | {note} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--output", help="write the markdown table here")
    args = parser.parse_args()
    _reexec_with_clean_env(args.threads)
    try:
        import torch

        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    sizes = [256, 512] if args.quick else [256, 512, 1024, 2048]
    rows = matmul_rows(sizes, torch)
    rows += elementwise_rows(1 << (20 if args.quick else 24), torch)
    rows += row_norm_rows(1024, 1024, torch)
    rows += model_rows(torch)
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
