"""strata-compile: lower a module for a target and write an artifact.

strata-compile model.mlir --target cpu --emit so -o model.so
strata-compile model.mlir --target cpu:aarch64 --emit obj -o model.o
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import compiler, source
from ..diagnostics import DiagnosticCollector
from .common import guarded_main, print_diagnostics


def compile_file(
    path: str,
    target: str,
    emit: str,
    output: str,
    print_after_all: bool = False,
    timing: bool = False,
    verbose: bool = False,
) -> int:
    """`verbose` shows the compiler's remarks (a kernel that fell back to a simpler tile
    configuration, and why), also when the compilation fails."""
    text = source.read_source(path)
    context = source.make_context()
    name = path if path != "-" else "<stdin>"
    with DiagnosticCollector(context) as collector:
        try:
            module = source.parse(text, context, name, whole_file=path != "-")
            artifact = compiler.emit(
                module, emit, target, print_after=print_after_all, timing=timing
            )
        finally:
            if verbose:
                remarks = [d for d in collector.diagnostics if d.severity != "error"]
                print_diagnostics(remarks, {name: text})
    if output == "-":
        if emit in ("obj", "so", "cubin", "artifact"):
            raise click.UsageError(f"--emit {emit} is binary: pass -o FILE")
        sys.stdout.write(artifact.decode())
    else:
        Path(output).write_bytes(artifact)
    return 0


@click.command()
@click.argument("input", default="-", required=False)
@click.option(
    "--target",
    default="cpu",
    show_default=True,
    help="cpu (the host) or a preset: cpu:x86-64-v3, cpu:aarch64[:<llvm cpu>], nvvm:sm_90a, ...",
)
@click.option("--emit", type=click.Choice(compiler.EMIT_KINDS), default="mlir", show_default=True)
@click.option("-o", "output", default="-", help="Output file (default: stdout for text).")
@click.option("--mlir-print-ir-after-all", is_flag=True, help="Print the IR after each stage.")
@click.option("--mlir-timing", is_flag=True, help="Report the time of each stage.")
@click.option("-v", "--verbose", is_flag=True, help="Show remarks (tile fallbacks and why).")
def cli(input, target, emit, output, mlir_print_ir_after_all, mlir_timing, verbose):
    """Compile graph-dialect MLIR for a target."""
    return compile_file(input, target, emit, output, mlir_print_ir_after_all, mlir_timing, verbose)


def main() -> None:
    guarded_main(lambda: cli.main(standalone_mode=False), "strata-compile")
