"""strata-run: compile a function for the host CPU or a CUDA GPU and run it on .npy inputs.

    strata-run model.mlir --entry main --input x.npy --input w.npy --output out.npz

Results are saved as result0, result1, ... in the .npz; without --output they are printed.
"""

from __future__ import annotations

import time

import click
import numpy as np

from .. import compiler, source
from ..diagnostics import CompileError, Diagnostic
from ..runtime import InvocationError
from .common import guarded_main


def load_input(path: str) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise CompileError(f"{path}: no such input file") from None
    except (ValueError, OSError):
        raise CompileError(f"{path}: not a .npy array file") from None


def run_file(
    path: str,
    entry: str | None,
    target: str,
    inputs: list[str],
    output: str | None,
    timing: bool = False,
) -> int:
    text = source.read_source(path)
    context = source.make_context()
    module = source.parse(text, context, path, whole_file=path != "-")
    arrays = [load_input(p) for p in inputs]
    positions = compiler.function_positions(module)
    start = time.perf_counter()
    function = compiler.compile_module(module, target=target, entry=entry)
    compiled = time.perf_counter()
    try:
        results = function(*arrays)
    except InvocationError as error:
        pos = positions.get(function.signature.name)
        raise CompileError([Diagnostic("error", str(error), pos)]) from None
    ran = time.perf_counter()
    results = results if isinstance(results, tuple) else (results,)
    if output:
        np.savez(output, **{f"result{i}": r for i, r in enumerate(results)})
    else:
        for i, r in enumerate(results):
            click.echo(f"result{i}: {r.dtype}{list(r.shape)}\n{r}")
    if timing:
        click.echo(f"compile {compiled - start:.3f} s, run {ran - compiled:.6f} s", err=True)
    return 0


@click.command()
@click.argument("input")
@click.option("--entry", default=None, help="Function to run (default: the only or @main).")
@click.option(
    "--target",
    default="cpu",
    show_default=True,
    help="cpu (the host) or nvvm:<chip> (this machine's CUDA GPU).",
)
@click.option("--input", "inputs", multiple=True, help="A .npy file per argument, in order.")
@click.option("--output", default=None, help="Write results to this .npz (result0, ...).")
@click.option("--time", "timing", is_flag=True, help="Report compile and run time.")
def cli(input, entry, target, inputs, output, timing):
    """Compile and run a function of a graph-dialect module on numpy inputs."""
    return run_file(input, entry, target, list(inputs), output, timing)


def main() -> None:
    guarded_main(lambda: cli.main(standalone_mode=False), "strata-run")
