"""GPU benchmarks: strata's kernels against PyTorch (eager, torch.compile, cuBLAS) and the
measured copy bandwidth, in one run, on device-resident data, timed with CUDA events.

The GPU machine need not have the compiler: build the artifacts where MLIR is installed,
then run them where the GPU is.

    python benchmarks/gpu.py build --chip sm_90 -o build/gpu-bench
    python benchmarks/gpu.py run build/gpu-bench [--output benchmarks/results/gpu-<commit>.md]

Each row reports the median time of calls and the ratio peer time / strata time (>1: strata
is faster); memory-bound rows also report strata's bandwidth as a fraction of a
device-to-device copy of the same bytes measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import reference  # noqa: E402, F401  (the example models' PyTorch versions, for torch_fn)


def _t(shape, element: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


@dataclass(frozen=True)
class Bench:
    name: str
    text: str
    inputs: tuple[tuple[tuple[int, ...], str], ...]  # shape and element type per input
    torch_fn: str  # a lambda over torch tensors, evaluated on the GPU machine
    bytes_moved: int = 0  # memory-bound rows: bytes read and written once
    flops: int = 0  # compute-bound rows
    options: str = ""  # target opt-ins (`+tf32`), which the peers get too


_BYTES_OF = {"f32": 4, "f16": 2, "bf16": 2}


def _elementwise(rows: int, cols: int, element: str) -> Bench:
    s, v = (rows, cols), (cols,)
    t, tv = _t(s, element), _t(v, element)
    text = (
        f"func.func @main(%x: {t}, %s: {tv}, %c: {tv}) -> {t} {{\n"
        f'  %m = "graph.mul"(%x, %s) : ({t}, {tv}) -> {t}\n'
        f'  %a = "graph.add"(%m, %c) : ({t}, {tv}) -> {t}\n'
        f'  %h = "graph.tanh"(%a) : ({t}) -> {t}\n'
        f'  %y = "graph.relu"(%h) : ({t}) -> {t}\n'
        f"  return %y : {t}\n}}\n"
    )
    return Bench(
        f"tanh_chain {element} {rows}x{cols}",
        text,
        ((s, element), (v, element), (v, element)),
        "lambda x, s, c: torch.relu(torch.tanh(x * s + c))",
        bytes_moved=2 * rows * cols * _BYTES_OF[element],
    )


def _softmax(rows: int, cols: int, element: str) -> Bench:
    t = _t((rows, cols), element)
    text = (
        f"func.func @main(%x: {t}) -> {t} {{\n"
        f'  %y = "graph.softmax"(%x) {{axis = -1 : i64}} : ({t}) -> {t}\n'
        f"  return %y : {t}\n}}\n"
    )
    return Bench(
        f"softmax {element} {rows}x{cols}",
        text,
        (((rows, cols), element),),
        "lambda x: torch.softmax(x, -1)",
        bytes_moved=2 * rows * cols * _BYTES_OF[element],
    )


def _layer_norm(rows: int, cols: int, element: str) -> Bench:
    t, tv = _t((rows, cols), element), _t((cols,), element)
    text = (
        f"func.func @main(%x: {t}, %g: {tv}, %b: {tv}) -> {t} {{\n"
        f'  %y = "graph.layer_norm"(%x, %g, %b) {{axis = -1 : i64, epsilon = 1.0e-5 : f32}}'
        f" : ({t}, {tv}, {tv}) -> {t}\n"
        f"  return %y : {t}\n}}\n"
    )
    return Bench(
        f"layer_norm {element} {rows}x{cols}",
        text,
        (((rows, cols), element), ((cols,), element), ((cols,), element)),
        f"lambda x, g, b: torch.nn.functional.layer_norm(x, ({cols},), g, b)",
        bytes_moved=2 * rows * cols * _BYTES_OF[element],
    )


def _matmul(n: int, element: str, result: str, options: str = "") -> Bench:
    ta, tr = _t((n, n), element), _t((n, n), result)
    text = (
        f"func.func @main(%a: {ta}, %b: {ta}) -> {tr} {{\n"
        f'  %y = "graph.matmul"(%a, %b) : ({ta}, {ta}) -> {tr}\n'
        f"  return %y : {tr}\n}}\n"
    )
    torch_fn = (
        "lambda a, b: torch.matmul(a, b)"
        if element == result
        else f"lambda a, b: torch.mm(a, b, out_dtype=torch.{_torch_name(result)})"
    )
    return Bench(
        f"matmul {element}->{result} {n}^3{options.replace('+', ' ')}",
        text,
        (((n, n), element), ((n, n), element)),
        torch_fn,
        flops=2 * n**3,
        options=options,
    )


def _mlp(m: int, d: int, f: int) -> Bench:
    x, w1, w2, h, y = (_t(s, "f32") for s in [(m, d), (d, f), (f, d), (m, f), (m, d)])
    b1, b2 = _t((f,), "f32"), _t((d,), "f32")
    text = (
        f"func.func @main(%x: {x}, %w1: {w1}, %b1: {b1}, %w2: {w2}, %b2: {b2}) -> {y} {{\n"
        f'  %0 = "graph.matmul"(%x, %w1) : ({x}, {w1}) -> {h}\n'
        f'  %1 = "graph.add"(%0, %b1) : ({h}, {b1}) -> {h}\n'
        f'  %2 = "graph.gelu"(%1) {{approximate = "tanh"}} : ({h}) -> {h}\n'
        f'  %3 = "graph.matmul"(%2, %w2) : ({h}, {w2}) -> {y}\n'
        f'  %4 = "graph.add"(%3, %b2) : ({y}, {b2}) -> {y}\n'
        f"  return %4 : {y}\n}}\n"
    )
    return Bench(
        f"mlp f32 {m}x{d}x{f}",
        text,
        tuple(((s, "f32")) for s in [(m, d), (d, f), (f,), (f, d), (d,)]),
        "lambda x, w1, b1, w2, b2: torch.nn.functional.gelu(x @ w1 + b1, approximate='tanh')"
        " @ w2 + b2",
        flops=2 * m * d * f * 2,
    )


def _attention(b: int, h: int, s: int, d: int, element: str = "f32") -> Bench:
    t = _t((b, h, s, d), element)
    text = (
        f"func.func @main(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n"
        f'  %0 = "graph.attention"(%q, %k, %v) {{causal = true}} : ({t}, {t}, {t}) -> {t}\n'
        f"  return %0 : {t}\n}}\n"
    )
    return Bench(
        f"attention {element} {b}x{h}x{s}x{d} causal",
        text,
        (((b, h, s, d), element),) * 3,
        "lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)",
        flops=4 * b * h * s * s * d // 2,
    )


def _transformer_block(b: int, s: int, d: int, heads: int, f: int) -> Bench:
    """A pre-norm GPT-2 block (f32): causal attention and a GELU MLP, with residuals; the
    example transformer block's structure at GPT-2's sizes."""
    hd = d // heads
    x, v, w, w1, w2 = (_t(z, "f32") for z in [(b, s, d), (d,), (d, d), (d, f), (f, d)])
    hid, bf = _t((b, s, f), "f32"), _t((f,), "f32")
    split, heads_t = _t((b, s, heads, hd), "f32"), _t((b, heads, s, hd), "f32")
    norm = "{{axis = -1 : i64, epsilon = 1.0e-5 : f32}}".format()
    lines = [
        f'%h = "graph.layer_norm"(%x, %g1, %be1) {norm} : ({x}, {v}, {v}) -> {x}',
    ]
    for name in ("q", "k", "v"):
        lines += [
            f'%{name}0 = "graph.matmul"(%h, %w{name}) : ({x}, {w}) -> {x}',
            f'%{name}1 = "graph.reshape"(%{name}0) : ({x}) -> {split}',
            f'%{name}h = "graph.transpose"(%{name}1) {{perm = array<i64: 0, 2, 1, 3>}} : '
            f"({split}) -> {heads_t}",
        ]
    lines += [
        f'%a = "graph.attention"(%qh, %kh, %vh) {{causal = true}} : '
        f"({heads_t}, {heads_t}, {heads_t}) -> {heads_t}",
        f'%at = "graph.transpose"(%a) {{perm = array<i64: 0, 2, 1, 3>}} : ({heads_t}) -> {split}',
        f'%a3 = "graph.reshape"(%at) : ({split}) -> {x}',
        f'%o = "graph.matmul"(%a3, %wo) : ({x}, {w}) -> {x}',
        f'%r1 = "graph.add"(%x, %o) : ({x}, {x}) -> {x}',
        f'%h2 = "graph.layer_norm"(%r1, %g2, %be2) {norm} : ({x}, {v}, {v}) -> {x}',
        f'%f1 = "graph.matmul"(%h2, %w1) : ({x}, {w1}) -> {hid}',
        f'%f2 = "graph.add"(%f1, %b1) : ({hid}, {bf}) -> {hid}',
        f'%f3 = "graph.gelu"(%f2) {{approximate = "none"}} : ({hid}) -> {hid}',
        f'%f4 = "graph.matmul"(%f3, %w2) : ({hid}, {w2}) -> {x}',
        f'%f5 = "graph.add"(%f4, %b2) : ({x}, {v}) -> {x}',
        f'%y = "graph.add"(%r1, %f5) : ({x}, {x}) -> {x}',
    ]
    params = [
        ("x", x),
        ("g1", v),
        ("be1", v),
        ("wq", w),
        ("wk", w),
        ("wv", w),
        ("wo", w),
        ("g2", v),
        ("be2", v),
        ("w1", w1),
        ("b1", bf),
        ("w2", w2),
        ("b2", v),
    ]
    body = "\n".join(f"  {line}" for line in lines)
    text = (
        f"func.func @main({', '.join(f'%{n}: {t}' for n, t in params)}) -> {x} {{\n"
        f"{body}\n  return %y : {x}\n}}\n"
    )
    shapes = [
        (b, s, d),
        (d,),
        (d,),
        (d, d),
        (d, d),
        (d, d),
        (d, d),
        (d,),
        (d,),
        (d, f),
        (f,),
        (f, d),
        (d,),
    ]
    return Bench(
        f"gpt2 block f32 {b}x{s}x{d}",
        text,
        tuple((z, "f32") for z in shapes),
        f"lambda *args: reference.torch_version('transformer_block', torch)(*args, heads={heads})",
        flops=2 * b * s * (4 * d * d + 2 * d * f) + 2 * b * heads * s * s * hd,
    )


def _torch_name(element: str) -> str:
    return {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[element]


# The issue's goals first (a run cut short keeps them): tensor-core matmuls, then the
# memory-bound kernels against copy bandwidth, then FMA matmuls and whole models.
BENCHES = {
    b.name: b
    for b in [
        _matmul(4096, "f16", "f32"),
        _matmul(4096, "bf16", "f32"),
        _elementwise(8192, 8192, "f32"),
        _elementwise(8192, 8192, "bf16"),
        _softmax(8192, 8192, "f32"),
        _softmax(8192, 8192, "bf16"),
        _layer_norm(8192, 8192, "f32"),
        _layer_norm(8192, 8192, "bf16"),
        _matmul(1024, "f32", "f32"),
        _matmul(4096, "f32", "f32"),
        _matmul(4096, "f32", "f32", "+tf32"),
        _mlp(512, 1024, 4096),
        _attention(1, 12, 1024, 64),
        _attention(4, 16, 2048, 64),
        _attention(1, 12, 1024, 64, "f16"),
        _attention(4, 16, 2048, 64, "f16"),
        _attention(1, 32, 2048, 128, "bf16"),
        _transformer_block(1, 512, 768, 12, 3072),
    ]
}


def _file_name(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def build(chip: str, out: Path, names: list[str]) -> None:
    from strata import compiler

    out.mkdir(parents=True, exist_ok=True)
    timings, failed = {}, []
    for name in names:
        bench = BENCHES[name]
        start = time.perf_counter()
        try:
            target = f"nvvm:{chip}{bench.options}"
            data = compiler.emit(compiler.load(bench.text), "artifact", target)
        except compiler.CompileError as error:
            print(f"{name:<32} does not compile: {str(error).splitlines()[0]}")
            failed.append(name)
            continue
        timings[name] = time.perf_counter() - start
        (out / f"{_file_name(name)}.nvvm").write_bytes(data)
        print(f"{name:<32} compiled in {timings[name]:.2f} s")
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    built = {"commit": commit, "compile_s": timings, "failed": failed}
    (out / "build.json").write_text(json.dumps(built))


def _time(torch, fn, calls: int = 20, rounds: int = 7) -> float:
    """Median over rounds of the mean time of `calls` back-to-back calls, in seconds."""
    fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(rounds):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) / 1e3 / calls)
    return statistics.median(samples)


def run(folder: Path, output: Path | None, names: list[str], compile_peer: bool = True) -> None:
    import torch
    from strata.runtime import load

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    built = json.loads((folder / "build.json").read_text())
    device = torch.cuda.get_device_name()
    lines = [
        f"# GPU benchmarks at {built['commit']} on {device}",
        "",
        "Median of 7 rounds of 20 back-to-back calls on device-resident data (CUDA events).",
        "Ratios are peer time / strata time (>1: strata is faster); copy is a device-to-device",
        "copy of the same bytes, measured in the same run.",
        "",
        "| kernel | strata | torch eager | torch.compile | vs eager | vs compile | strata"
        " GB/s or TFLOP/s | vs copy | compile s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    attempted = set(built["compile_s"]) | set(built.get("failed", []))
    for name in (n for n in names if n in attempted):  # the rows this folder was built for
        path = folder / f"{_file_name(name)}.nvvm"
        if not path.exists():
            lines.append(f"| {name} | does not compile | | | | | | | |")
            continue
        lines.append(_row(torch, BENCHES[name], load(path)["main"], built, compile_peer))
        if output:  # a row at a time: a run cut short keeps what it measured
            output.write_text("\n".join(lines) + "\n")
    text = "\n".join(lines) + "\n"
    if output:
        output.write_text(text)
    print(text)


def _row(torch, bench: Bench, function, built: dict, compile_peer: bool) -> str:
    """One table row: strata, torch eager and torch.compile on the same device tensors."""
    generator = torch.Generator(device="cuda").manual_seed(0)
    args = [
        torch.randn(shape, device="cuda", generator=generator).to(
            getattr(torch, _torch_name(element))
        )
        for shape, element in bench.inputs
    ]
    spec = function.results[0]
    out = torch.empty(spec.shape, device="cuda", dtype=getattr(torch, _torch_name(spec.element)))
    stream = torch.cuda.current_stream()
    # The table's own lambdas, over this module's helpers; TF32 rows against cuBLAS's TF32.
    torch.backends.cuda.matmul.allow_tf32 = "+tf32" in bench.options
    eager = eval(bench.torch_fn, {"torch": torch, **globals()})
    expected = eager(*args)
    function(*args, out=out, stream=stream)
    error = (out.float() - expected.float()).abs().max().item() / (
        expected.float().abs().max().item() or 1.0
    )
    t_strata = _time(torch, lambda: function(*args, out=out, stream=stream))
    t_eager = _time(torch, lambda: eager(*args))
    if compile_peer:
        compiled = torch.compile(eager)
        t_compile = _time(torch, lambda: compiled(*args))
    else:
        t_compile = math.nan
    if bench.bytes_moved:
        source = torch.empty(bench.bytes_moved // 2, dtype=torch.uint8, device="cuda")
        target = torch.empty_like(source)
        t_copy = _time(torch, lambda: target.copy_(source))
        rate = f"{bench.bytes_moved / t_strata / 1e9:.0f} GB/s"
        vs_copy = f"{t_copy / t_strata:.2f}"
    else:
        rate = f"{bench.flops / t_strata / 1e12:.1f} TFLOP/s"
        vs_copy = ""
    compiled_time, compiled_ratio = (
        ("not run", "")
        if math.isnan(t_compile)
        else (f"{t_compile * 1e6:.1f} us", f"{t_compile / t_strata:.2f}")
    )
    line = (
        f"| {bench.name} | {t_strata * 1e6:.1f} us | {t_eager * 1e6:.1f} us |"
        f" {compiled_time} | {t_eager / t_strata:.2f} | {compiled_ratio} |"
        f" {rate} | {vs_copy} | {built['compile_s'].get(bench.name, math.nan):.2f} |"
    )
    print(line, f"(max error {error:.1e} of the largest magnitude)", flush=True)
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build", help="compile the kernels (needs MLIR)")
    build_parser.add_argument("--chip", default="sm_90")
    build_parser.add_argument("-o", "--out", type=Path, required=True)
    run_parser = commands.add_parser("run", help="time them (needs a GPU and torch)")
    run_parser.add_argument("folder", type=Path)
    run_parser.add_argument("--output", type=Path)
    run_parser.add_argument(
        "--no-compile", action="store_true", help="leave torch.compile out (it compiles for long)"
    )
    for sub in (build_parser, run_parser):
        sub.add_argument("--only", default="", help="comma-separated kernel names")
    args = parser.parse_args()
    names = [n for n in BENCHES if not args.only or n in args.only.split(",")]
    if args.command == "build":
        build(args.chip, args.out, names)
    else:
        sys.path.insert(0, str(ROOT.parent))
        run(args.folder, args.output, names, compile_peer=not args.no_compile)


if __name__ == "__main__":
    main()
