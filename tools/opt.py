"""strata-opt: mlir-opt's conventions over upstream MLIR's passes and strata's own.

strata-opt input.mlir --graph-to-linalg --canonicalize -o out.mlir
strata-opt input.mlir --pass-pipeline="builtin.module(graph-to-linalg, cse)"
strata-opt invalid.mlir --split-input-file --verify-diagnostics
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click
from mlir import ir
from mlir.passmanager import PassManager

from .. import compiler, passes, source
from ..diagnostics import CompileError, Diagnostic, DiagnosticCollector
from ..dialects import target as targets
from ..pipelines import Pipeline, Stage
from ..verify_diagnostics import check, expectations
from .common import guarded_main, print_diagnostics

# ----------------------------------------------------------------------------------------------
# Turning pass flags and --pass-pipeline into pipeline stages.


def upstream_stage(name: str, options: str, context: ir.Context) -> Stage:
    """A stage for an upstream pass, nested under func.func when the pass is anchored there."""
    spec = f"{name}{{{options}}}" if options else name
    errors = []
    for nesting in ("{}", "func.func({})"):
        text = nesting.format(spec)
        try:
            with context, DiagnosticCollector(context):
                PassManager.parse(f"builtin.module({text})", context)
            return Stage(name, text)
        except (ValueError, ir.MLIRError) as error:
            errors.append(str(error))
    if "does not refer to a registered pass" in errors[0]:
        raise CompileError(f"unknown pass or option '--{name}'")
    detail = next(line for line in errors[0].split("\n") if line.strip())
    detail = detail.removeprefix("<Pass-Options-Parser>: ")
    raise CompileError(f"invalid options for pass '--{name}': {detail}")


def python_stage(info: passes.PassInfo, options: str) -> Stage:
    try:
        parsed = info.parse_options(options)
    except ValueError as error:
        raise CompileError(str(error)) from None

    def run(module_op):
        info(module_op, **parsed)

    run.__name__ = info.name
    return Stage(info.name, run, info.description)


def stage_for(name: str, options: str, context: ir.Context) -> Stage:
    info = passes.get(name)
    if info is not None:
        return python_stage(info, options)
    return upstream_stage(name, options, context)


def split_top_level(text: str) -> list[str]:
    """Splits a pass list at commas outside (), {} and quotes."""
    items, depth, start, quote = [], 0, 0, False
    for i, ch in enumerate(text):
        if ch == '"':
            quote = not quote
        elif quote:
            continue
        elif ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return [item for item in items if item]


def pipeline_stages(pipeline: str, context: ir.Context) -> list[Stage]:
    """Stages for `--pass-pipeline`: strata passes run from Python, upstream ones by MLIR."""
    text = pipeline.strip()
    match = re.fullmatch(r"builtin\.module\s*\((.*)\)", text, re.DOTALL)
    if not match:
        raise CompileError(f"--pass-pipeline must be 'builtin.module(...)', got '{pipeline}'")
    stages = []
    for item in split_top_level(match.group(1)):
        name, _, rest = item.partition("{")
        name = name.strip()
        if passes.get(name) is not None:
            stages.append(python_stage(passes.get(name), rest.rstrip("}")))
            continue
        try:
            with context, DiagnosticCollector(context):
                PassManager.parse(f"builtin.module({item})", context)
        except (ValueError, ir.MLIRError) as error:
            raise CompileError(f"invalid --pass-pipeline element '{item}': {error}") from None
        stages.append(Stage(name.split("(")[0], item))
    return stages


@dataclass
class Options:
    input: str
    output: str
    pass_flags: list[tuple[str, str]]
    pass_pipeline: str | None
    split_input_file: bool
    verify_diagnostics: bool
    print_after_all: bool
    print_before_all: bool
    timing: bool
    target: str | None = None
    input_name: str = "<stdin>"


def upstream_passes() -> list[tuple[str, str]]:
    """(flag, description) of every upstream pass, from the bundled mlir-opt's --help."""
    import mlir

    binary = Path(next(iter(mlir.__path__)), "bin", "mlir-opt")
    text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    section = text.split("Passes:", 1)[-1]
    return re.findall(r"^ {6}--([a-z0-9][\w-]*)\s+-\s+(.*)$", section, re.MULTILINE)


def list_passes() -> None:
    click.echo("strata passes:")
    for name, info in passes.all_passes().items():
        click.echo(f"  --{name:<36} {info.description}")
    click.echo("upstream MLIR passes:")
    for name, description in upstream_passes():
        click.echo(f"  --{name:<36} {description}")


# ----------------------------------------------------------------------------------------------
# Running.


def run_chunk(text: str, first_line: int, options: Options, context: ir.Context) -> str:
    """Parses and transforms one input chunk; returns its output IR text."""
    module = source.parse(text, context, options.input_name, first_line)
    if options.target is not None:
        with context:
            targets.attach(module, compiler.resolve_target(options.target))
    if options.pass_pipeline:
        stages = pipeline_stages(options.pass_pipeline, context)
    else:
        stages = [stage_for(n, o, context) for n, o in options.pass_flags]
    Pipeline("strata-opt", stages).run(
        module,
        print_before=options.print_before_all,
        print_after=options.print_after_all,
        timing=options.timing,
    )
    return str(module)


def opt(options: Options) -> int:
    """The whole tool; returns the exit code."""
    text = source.read_source(options.input)
    if options.input != "-":
        options.input_name = options.input
    context = source.make_context()
    outputs, failed = [], False
    for chunk in source.split_input(text, options.split_input_file):
        with DiagnosticCollector(context) as collector:
            try:
                outputs.append(run_chunk(chunk.text, chunk.first_line, options, context))
                emitted = collector.diagnostics
            except CompileError as error:
                emitted = _merge(collector.diagnostics, error.diagnostics)
                if not options.verify_diagnostics:
                    print_diagnostics(emitted, {options.input_name: text})
                    return 1
        if options.verify_diagnostics:
            expected = expectations(chunk.text, options.input_name, chunk.first_line)
            failures = check(emitted, expected, options.input_name)
            if failures:
                print_diagnostics(failures, {options.input_name: text})
                failed = True
        elif emitted:
            print_diagnostics(emitted, {options.input_name: text})
    result = "// -----\n".join(outputs)
    if options.output == "-":
        sys.stdout.write(result)
    else:
        Path(options.output).write_text(result)
    return 1 if failed else 0


def _merge(collected: list[Diagnostic], raised: list[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics from the handler and from the exception, each once."""
    seen = {(d.severity, d.message, str(d.pos)) for d in collected}
    extra = [d for d in raised if (d.severity, d.message, str(d.pos)) not in seen]
    return collected + [d for d in extra if not d.message.startswith("in pipeline stage")]


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("input", default="-", required=False)
@click.option("-o", "output", default="-", help="Output file (default: stdout).")
@click.option("--pass-pipeline", help="A textual pipeline: 'builtin.module(p1, p2{opt=v})'.")
@click.option("--split-input-file", is_flag=True, help="Process chunks between '// -----'.")
@click.option("--verify-diagnostics", is_flag=True, help="Check expected-* comments.")
@click.option("--mlir-print-ir-after-all", is_flag=True, help="Print the IR after each pass.")
@click.option("--mlir-print-ir-before-all", is_flag=True, help="Print the IR before the passes.")
@click.option("--mlir-timing", is_flag=True, help="Report the time of each pass.")
@click.option(
    "--target",
    default=None,
    help="Attach this target's description (target.desc) to the module: cpu, nvvm:sm_90a, ...",
)
@click.option(
    "--list-passes", "show_passes", is_flag=True, help="List strata's and upstream passes."
)
@click.pass_context
def cli(
    ctx,
    input,
    output,
    pass_pipeline,
    split_input_file,
    verify_diagnostics,
    mlir_print_ir_after_all,
    mlir_print_ir_before_all,
    mlir_timing,
    target,
    show_passes,
):
    """Transform MLIR: one flag per pass (`--graph-to-linalg`, `--cse`, `--canonicalize=...`)."""
    if show_passes:
        list_passes()
        return 0
    # Unknown options are pass flags; click may have taken the first one for the input file.
    args = list(ctx.args)
    if input.startswith("--"):
        args.insert(0, input)
        input = "-"
    flags = []
    for arg in args:
        if not arg.startswith("--"):
            if input != "-":
                raise click.UsageError(f"unexpected argument '{arg}'")
            input = arg
            continue
        name, _, value = arg[2:].partition("=")
        flags.append((name, value.strip('"')))
    if flags and pass_pipeline:
        raise click.UsageError("use either pass flags or --pass-pipeline, not both")
    options = Options(
        input,
        output,
        flags,
        pass_pipeline,
        split_input_file,
        verify_diagnostics,
        mlir_print_ir_after_all,
        mlir_print_ir_before_all,
        mlir_timing,
        target,
    )
    return opt(options)


def main() -> None:
    guarded_main(lambda: cli.main(standalone_mode=False), "strata-opt")
