"""strata-opt: mlir-opt's conventions over upstream MLIR's passes and strata's own.

strata-opt input.mlir --graph-to-linalg --canonicalize -o out.mlir
strata-opt input.mlir --pass-pipeline="builtin.module(graph-to-linalg, cse)"
strata-opt invalid.mlir --split-input-file --verify-diagnostics
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import click
from mlir import ir
from mlir.passmanager import PassManager

from .. import compiler, passes, source
from ..diagnostics import CompileError, Diagnostic, DiagnosticCollector, from_mlir_error
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
class Printing:
    """mlir-opt's general printing and pass-manager flags."""

    generic: bool = False
    debug_info: bool = False
    local_scope: bool = False
    elide_larger: int | None = None
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    after_change: bool = False
    after_failure: bool = False
    module_scope: bool = False
    statistics: bool = False
    dump_pipeline: bool = False
    verify_each: bool = True
    no_threads: bool = False

    def print_module(self, module: ir.Module) -> str:
        out = io.StringIO()
        module.operation.print(
            file=out,
            large_elements_limit=self.elide_larger,
            enable_debug_info=self.debug_info,
            print_generic_op_form=self.generic,
            use_local_scope=self.local_scope,
        )
        return out.getvalue() + "\n"


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
    printing: Printing = field(default_factory=Printing)
    unregistered: bool = False


def upstream_passes() -> list[tuple[str, str]]:
    """(flag, description) of every upstream pass, from the bundled mlir-opt's --help."""
    import mlir

    binary = Path(next(iter(mlir.__path__)), "bin", "mlir-opt")
    text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    section = text.split("Passes:", 1)[-1]
    return re.findall(r"^ {6}--([a-z0-9][\w-]*)\s+-\s+(.*)$", section, re.MULTILINE)


def dialect_list() -> str:
    """mlir-opt's --show-dialects for strata's context: every upstream dialect (as the
    bundled mlir-opt registers them) and strata's own."""
    import mlir

    binary = Path(next(iter(mlir.__path__)), "bin", "mlir-opt")
    text = subprocess.run([binary, "--show-dialects"], capture_output=True, text=True).stdout
    names = text.partition(":")[2].strip().split(",")
    return "Available Dialects: " + ",".join(sorted({*names, "graph", "target", "tile"}))


def list_passes() -> None:
    click.echo("strata passes:")
    for name, info in passes.all_passes().items():
        click.echo(f"  --{name:<36} {info.description}")
    click.echo("upstream MLIR passes:")
    for name, description in upstream_passes():
        click.echo(f"  --{name:<36} {description}")


# ----------------------------------------------------------------------------------------------
# Running.


def run_chunk(
    text: str, first_line: int, options: Options, context: ir.Context, whole_file: bool = False
) -> str:
    """Parses and transforms one input chunk (`whole_file`: all of the input file); returns its
    output IR text."""
    module = source.parse(text, context, options.input_name, first_line, whole_file=whole_file)
    if options.target is not None:
        with context:
            targets.attach(module, compiler.resolve_target(options.target))
    if options.pass_pipeline:
        stages = pipeline_stages(options.pass_pipeline, context)
    else:
        stages = [stage_for(n, o, context) for n, o in options.pass_flags]
    if all(isinstance(stage.passes, str) for stage in stages):
        run_upstream(module, [stage.passes for stage in stages], options)
    else:
        Pipeline("strata-opt", stages).run(
            module,
            print_before=options.print_before_all,
            print_after=options.print_after_all,
            timing=options.timing,
        )
    return options.printing.print_module(module)


def run_upstream(module: ir.Module, pipeline: list[str], options: Options) -> None:
    """Upstream passes only: one MLIR pass manager, printing, timing and statistics by MLIR
    itself, so its output is mlir-opt's byte for byte."""
    printing = options.printing
    text = f"builtin.module({','.join(pipeline)})"
    with module.context, DiagnosticCollector(module.context):
        pm = PassManager.parse(text, module.context)
    if printing.module_scope and not printing.no_threads:
        # mlir-opt's rule (strata's contexts are single-threaded, but scripts stay portable),
        # reported in its words, at its unknown location, for every chunk.
        sys.stderr.write(
            "<unknown>:0: error: IR print for module scope can't be setup on a pass-manager "
            "without disabling multi-threading first.\n\n"
        )
        raise CompileError([])
    pm.enable_verifier(printing.verify_each)
    if printing.dump_pipeline:
        sys.stderr.write(pretty_pipeline(str(pm), len(pipeline)))
    if options.timing:
        pm.enable_timing()
    if printing.statistics:
        pm.enable_statistics()
    selected = printing.before or printing.after
    dumps = (
        options.print_before_all or options.print_after_all or selected or printing.after_failure
    )
    if dumps:
        pm.enable_ir_printing(
            print_before_all=options.print_before_all or bool(printing.before),
            print_after_all=options.print_after_all or bool(printing.after),
            print_module_scope=printing.module_scope,
            print_after_change=printing.after_change,
            print_after_failure=printing.after_failure,
            large_elements_limit=printing.elide_larger,
            enable_debug_info=printing.debug_info,
            print_generic_op_form=printing.generic,
        )
    if not selected:
        _run_reporting_errors(pm, module)
        return
    with _captured_stderr() as captured:
        try:
            _run_reporting_errors(pm, module)
        finally:
            sys.stderr.write(_selected_dumps(captured(), printing, options))


def _run_reporting_errors(pm: PassManager, module: ir.Module) -> None:
    try:
        pm.run(module.operation)
    except ir.MLIRError as error:
        raise from_mlir_error(error) from None


_DUMP = re.compile(r"^// -----// IR Dump (Before|After) .*?\(([\w.-]+)\)", re.MULTILINE)


def _selected_dumps(text: str, printing: Printing, options: Options) -> str:
    """The dumps of --mlir-print-ir-before=/--mlir-print-ir-after= passes (MLIR's printer
    prints them for every pass; the Python bindings take no pass filter)."""
    starts = [m.start() for m in _DUMP.finditer(text)]
    pieces = [text[: starts[0] if starts else len(text)]]
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        match = _DUMP.match(text, start)
        when, name = match.group(1), match.group(2)
        wanted = (
            (options.print_before_all or name in printing.before)
            if when == "Before"
            else (options.print_after_all or name in printing.after)
        )
        if wanted:
            pieces.append(text[start:end])
    return "".join(pieces)


class _captured_stderr:
    """Collects what C++ writes to file descriptor 2 (MLIR's IR printer) while active."""

    def __enter__(self):
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile(mode="w+b")
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        return self.text

    def text(self) -> str:
        os.dup2(self.saved, 2)
        self.file.seek(0)
        return self.file.read().decode()

    def __exit__(self, *exc):
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.file.close()


def pretty_pipeline(text: str, count: int) -> str:
    """A pass pipeline as mlir-opt's --dump-pass-pipeline prints it: one pass per line, nested
    pipelines indented, a comma after every element but the last of its list."""

    def lines(items: list[str], depth: int) -> list[str]:
        out = []
        for i, item in enumerate(items):
            comma = "," if i < len(items) - 1 else ""
            name, paren, rest = item.partition("(")
            if paren and "{" not in name:
                out.append("  " * depth + name + "(")
                out += lines(split_top_level(rest[:-1]), depth + 1)
                out.append("  " * depth + ")" + comma)
            else:
                out.append("  " * depth + item + comma)
        return out

    body = "\n".join(lines(split_top_level(text), 0))
    return f"Pass Manager with {count} passes:\n{body}\n\n"


def opt(options: Options) -> int:
    """The whole tool; returns the exit code."""
    text = source.read_source(options.input)
    if options.input != "-":
        options.input_name = options.input
    context = source.make_context()
    context.allow_unregistered_dialects = options.unregistered
    outputs, failed = [], False
    chunks = source.split_input(text, options.split_input_file)
    whole_file = options.input != "-" and len(chunks) == 1
    for chunk in chunks:
        with DiagnosticCollector(context) as collector:
            try:
                outputs.append(
                    run_chunk(chunk.text, chunk.first_line, options, context, whole_file)
                )
                emitted = collector.diagnostics
            except CompileError as error:
                # Like mlir-opt, a failing chunk prints nothing and the others still run.
                emitted = _merge(collector.diagnostics, error.diagnostics)
                outputs.append("")
                if not options.verify_diagnostics:
                    print_diagnostics(emitted, {options.input_name: text}, current_op_notes=True)
                    failed = True
                    continue
        if options.verify_diagnostics:
            expected = expectations(chunk.text, options.input_name, chunk.first_line)
            failures = check(emitted, expected, options.input_name)
            if failures:
                print_diagnostics(failures, {options.input_name: text}, current_op_notes=True)
                failed = True
        elif emitted:
            print_diagnostics(emitted, {options.input_name: text}, current_op_notes=True)
    result = "// -----\n".join(outputs)  # each output ends in a blank line, as mlir-opt's
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
@click.option("--mlir-print-op-generic", "generic", is_flag=True, help="Print ops generically.")
@click.option("--mlir-print-debuginfo", "debug_info", is_flag=True, help="Print locations.")
@click.option("--mlir-print-local-scope", "local_scope", is_flag=True, help="No aliases.")
@click.option(
    "--mlir-elide-elementsattrs-if-larger",
    "elide_larger",
    type=int,
    help="Elide elements attributes with more elements.",
)
@click.option("--mlir-print-ir-before", "before", multiple=True, help="Print IR before PASS.")
@click.option("--mlir-print-ir-after", "after", multiple=True, help="Print IR after PASS.")
@click.option("--mlir-print-ir-after-change", "after_change", is_flag=True)
@click.option("--mlir-print-ir-after-failure", "after_failure", is_flag=True)
@click.option("--mlir-print-ir-module-scope", "module_scope", is_flag=True)
@click.option("--mlir-pass-statistics", "statistics", is_flag=True, help="Pass statistics.")
@click.option("--dump-pass-pipeline", "dump_pipeline", is_flag=True, help="Print the pipeline.")
@click.option(
    "--verify-each/--no-verify-each",
    "verify_each",
    default=True,
    help="Verify after every pass (the default, as in mlir-opt).",
)
@click.option("--allow-unregistered-dialect", "unregistered", is_flag=True)
@click.option("--show-dialects", "show_dialects", is_flag=True, help="List the dialects.")
@click.option(
    "--mlir-disable-threading",
    "no_threads",
    is_flag=True,
    help="No multithreading in MLIR (strata's contexts never use it).",
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
    unregistered,
    show_dialects,
    **printing,
):
    """Transform MLIR: one flag per pass (`--graph-to-linalg`, `--cse`, `--canonicalize=...`)."""
    if show_passes:
        list_passes()
        return 0
    if show_dialects:
        click.echo(dialect_list())
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
        printing=Printing(**printing),
        unregistered=unregistered,
    )
    return opt(options)


def main() -> None:
    guarded_main(lambda: cli.main(standalone_mode=False), "strata-opt")
