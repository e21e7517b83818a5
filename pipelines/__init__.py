"""Pipelines: declarative lists of named stages, run by one driver.

A stage is a textual MLIR pass pipeline (what goes inside `builtin.module(...)`) or a Python
pass (a callable taking the module op). The driver gives every stage the same services:
verification after it, IR printing after it, timing and dumping to a folder.

    pipeline = strata.pipelines.get("cpu")
    pipeline.insert_after("graph-to-linalg", Stage("mine", my_python_pass))
    report = pipeline.run(module, print_after=["mine"], timing=True)
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from mlir import ir
from mlir.passmanager import PassManager

from .. import dialects
from ..diagnostics import CompileError, Diagnostic, DiagnosticCollector, from_mlir_error
from ..passes import PassFailure


@dataclass
class Stage:
    """One named step: `passes` is a textual pipeline or a Python pass `fn(module_op)`."""

    name: str
    passes: str | Callable[[ir.Operation], None]
    description: str = ""

    def run(self, module: ir.Module) -> None:
        if callable(self.passes):
            self.passes(module.operation)
        else:
            PassManager.parse(f"builtin.module({self.passes})", module.context).run(
                module.operation
            )

    def __str__(self) -> str:
        return self.passes if isinstance(self.passes, str) else f"<python {self.passes.__name__}>"


@dataclass
class Report:
    """What a pipeline run measured: seconds per stage, in order."""

    timings: list[tuple[str, float]] = field(default_factory=list)

    def format(self) -> str:
        total = sum(t for _, t in self.timings) or 1e-12
        width = max((len(n) for n, _ in self.timings), default=5)
        lines = ["===- strata pipeline timing -===", f"{'stage':<{width}}  seconds      %"]
        for name, seconds in self.timings:
            lines.append(f"{name:<{width}}  {seconds:8.4f}  {100 * seconds / total:5.1f}")
        lines.append(f"{'total':<{width}}  {total:8.4f}  100.0")
        return "\n".join(lines)


class Pipeline:
    """An ordered, editable list of stages with one driver."""

    def __init__(self, name: str, stages: Iterable[Stage]):
        self.name = name
        self.stages = list(stages)

    def names(self) -> list[str]:
        return [s.name for s in self.stages]

    def index(self, name: str) -> int:
        for i, stage in enumerate(self.stages):
            if stage.name == name:
                return i
        raise KeyError(f"pipeline '{self.name}' has no stage '{name}' (stages: {self.names()})")

    def insert_after(self, name: str, stage: Stage) -> Pipeline:
        self.stages.insert(self.index(name) + 1, stage)
        return self

    def insert_before(self, name: str, stage: Stage) -> Pipeline:
        self.stages.insert(self.index(name), stage)
        return self

    def replace(self, name: str, stage: Stage) -> Pipeline:
        self.stages[self.index(name)] = stage
        return self

    def remove(self, name: str) -> Pipeline:
        del self.stages[self.index(name)]
        return self

    def until(self, name: str) -> Pipeline:
        """A copy that stops after stage `name`."""
        return Pipeline(self.name, self.stages[: self.index(name) + 1])

    def __str__(self) -> str:
        return "\n".join(f"{s.name}: {s}" for s in self.stages)

    def run(
        self,
        module: ir.Module,
        *,
        verify: bool = True,
        print_before: Iterable[str] | bool = (),
        print_after: Iterable[str] | bool = (),
        timing: bool = False,
        dump_dir: str | Path | None = None,
        out: TextIO | None = None,
    ) -> Report:
        """Runs every stage on `module` in place.

        `print_before` / `print_after` name stages (or True for all) whose input / output IR
        is written to `out` (stderr by default); `dump_dir` gets `NN-<stage>.mlir` after
        every stage; `timing` prints the report at the end. Failures raise CompileError with
        the diagnostics.
        """
        out = out or sys.stderr
        before = self._stage_set(print_before)
        wanted = self._stage_set(print_after)
        if dump_dir is not None:
            Path(dump_dir).mkdir(parents=True, exist_ok=True)
        report = Report()
        context = module.context
        for number, stage in enumerate(self.stages):
            if stage.name in before:
                out.write(f"// -----// IR Dump Before {stage.name} //----- //\n{module}\n")
            start = time.perf_counter()
            with context, DiagnosticCollector(context) as collector:
                _run_stage(stage, module, collector)
                if verify:
                    _verify(stage, module, collector)
            report.timings.append((stage.name, time.perf_counter() - start))
            if stage.name in wanted:
                out.write(f"// -----// IR Dump After {stage.name} //----- //\n{module}\n")
            if dump_dir is not None:
                Path(dump_dir, f"{number:02d}-{stage.name}.mlir").write_text(str(module))
        if timing:
            out.write(report.format() + "\n")
        return report

    def _stage_set(self, names: Iterable[str] | bool) -> set[str]:
        chosen = set(self.names()) if names is True else set(names or ())
        unknown = chosen - set(self.names())
        if unknown:
            raise KeyError(f"pipeline '{self.name}' has no stage(s) {sorted(unknown)}")
        return chosen


def _run_stage(stage: Stage, module: ir.Module, collector: DiagnosticCollector) -> None:
    try:
        stage.run(module)
    except ir.MLIRError as error:
        raise _stage_error(stage, from_mlir_error(error).diagnostics + collector.errors) from None
    except (PassFailure, RuntimeError) as error:
        diags = collector.errors or [Diagnostic("error", f"stage '{stage.name}' failed: {error}")]
        raise _stage_error(stage, diags) from None
    except CompileError:
        raise
    except Exception as error:  # a bug in a Python pass: report it, never a bare traceback
        detail = "".join(traceback.format_exception_only(error)).strip()
        raise CompileError(f"internal error in stage '{stage.name}': {detail}") from None
    if collector.errors:
        raise _stage_error(stage, collector.errors)


def _verify(stage: Stage, module: ir.Module, collector: DiagnosticCollector) -> None:
    try:
        module.operation.verify()
    except ir.MLIRError as error:
        raise _stage_error(stage, from_mlir_error(error).diagnostics, "verification") from None
    if not dialects.verify_semantics(module.operation):
        raise _stage_error(stage, collector.errors, "verification")


def _stage_error(stage: Stage, diags: list[Diagnostic], what: str = "") -> CompileError:
    suffix = f" ({what})" if what else ""
    diags = list(diags) or [Diagnostic("error", "failed")]
    diags.append(Diagnostic("note", f"in pipeline stage '{stage.name}'{suffix}"))
    return CompileError(diags)


def get(name: str, **options) -> Pipeline:
    """A fresh pipeline for a target: `get("cpu")`, `get("nvvm", chip="sm_90a")`."""
    from . import cpu, nvvm

    builders = {"cpu": cpu.pipeline, "nvvm": nvvm.pipeline}
    if name not in builders:
        raise KeyError(f"unknown pipeline '{name}' (known: {sorted(builders)})")
    return builders[name](**options)


# What each target kind's pipeline takes from the target description.
_TARGET_OPTIONS = {
    "cpu": lambda desc: {},
    "nvvm": lambda desc: {"chip": desc.chip, "features": desc.features},
}


def for_target(desc) -> Pipeline:
    """The pipeline of a target description (`dialects.target.TargetDesc`)."""
    if desc.kind not in _TARGET_OPTIONS:
        raise KeyError(f"no pipeline for {desc.kind} targets")
    return get(desc.kind, **_TARGET_OPTIONS[desc.kind](desc))


__all__ = ["Pipeline", "Report", "Stage", "for_target", "get"]
