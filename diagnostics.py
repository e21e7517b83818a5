"""Diagnostics: MLIR's and strata's own, collected and printed as `FILE:LINE:COL: error: ...`."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from mlir import ir

_SEVERITY = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


@dataclass
class SourcePos:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def source_pos(loc: ir.Location) -> SourcePos | None:
    """The file position a location points at: the innermost file location it wraps."""
    if loc.is_a_file():
        return SourcePos(loc.filename, loc.start_line, loc.start_col)
    if loc.is_a_name():
        return source_pos(loc.child_loc)
    if loc.is_a_callsite():
        return source_pos(loc.callee)
    if loc.is_a_fused():
        for inner in loc.locations:
            pos = source_pos(inner)
            if pos is not None:
                return pos
    return None


@dataclass
class Diagnostic:
    severity: str
    message: str
    pos: SourcePos | None = None
    notes: list[Diagnostic] = field(default_factory=list)

    @classmethod
    def from_mlir(cls, diag) -> Diagnostic:
        """Copies an `ir.Diagnostic` or `ir.DiagnosticInfo` (both are only valid in a callback)."""
        return cls(
            _SEVERITY.get(diag.severity, "error"),
            str(diag.message),
            source_pos(diag.location),
            [cls.from_mlir(note) for note in diag.notes],
        )

    def format(self) -> str:
        prefix = f"{self.pos}: " if self.pos else ""
        lines = [f"{prefix}{self.severity}: {self.message}"]
        lines += [note.format() for note in self.notes]
        return "\n".join(lines)


class CompileError(Exception):
    """A failure with the diagnostics that explain it; tools print them and exit 1."""

    def __init__(self, diagnostics: list[Diagnostic] | str):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic("error", diagnostics)]
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.format() for d in diagnostics))


_ACTIVE: list[DiagnosticCollector] = []


class DiagnosticCollector:
    """Collects every diagnostic MLIR, a strata verifier or a strata pass (`remark`) emits in
    `context` while active. Errors stop at the innermost collector, which reports them; the
    other severities also reach the enclosing collectors (a tool's, which shows them)."""

    def __init__(self, context: ir.Context):
        self.context = context
        self.diagnostics: list[Diagnostic] = []
        self._handler = None

    def __enter__(self) -> DiagnosticCollector:
        self._handler = self.context.attach_diagnostic_handler(self._collect)
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _ACTIVE.remove(self)
        self._handler.detach()

    def _collect(self, diag) -> bool:
        collected = Diagnostic.from_mlir(diag)
        self.diagnostics.append(collected)
        return collected.severity == "error"

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


def remark(location: ir.Location, message: str) -> None:
    """Reports a remark at `location` to every active collector of its context (the Python
    bindings can emit only errors into MLIR's diagnostic engine). Without one it is dropped,
    as MLIR drops remarks that no handler takes."""
    found = Diagnostic("remark", message, source_pos(location))
    for collector in _ACTIVE:
        if collector.context == location.context:
            collector.diagnostics.append(found)


def from_mlir_error(error: ir.MLIRError) -> CompileError:
    """Turns an exception raised by the bindings into a located CompileError."""
    diags = [Diagnostic.from_mlir(d) for d in error.error_diagnostics]
    if not diags:
        diags = [Diagnostic("error", str(error))]
    return CompileError(diags)


@contextlib.contextmanager
def collecting_errors(context: ir.Context, what: str):
    """Runs MLIR work; any failure becomes a CompileError carrying the diagnostics it emitted."""
    with DiagnosticCollector(context) as collector:
        try:
            yield collector
        except ir.MLIRError as error:
            raise from_mlir_error(error) from None
        except RuntimeError as error:
            diags = collector.errors or [Diagnostic("error", f"{what}: {error}")]
            raise CompileError(diags) from None
    if collector.errors:
        raise CompileError(collector.diagnostics)
