"""What every strata tool shares: error reporting and a guard against crashes inside MLIR."""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Callable

import click

from ..diagnostics import CompileError, Diagnostic


def print_diagnostics(
    diagnostics: list[Diagnostic],
    sources: dict[str, str] | None = None,
    *,
    current_op_notes: bool = False,
) -> None:
    """Writes diagnostics to stderr like mlir-opt: location, message, source line, caret; a
    note shows its source line only where its location differs from the one before, as in
    MLIR's SourceMgrDiagnosticHandler. The verifier's "see current operation" notes (the op
    printed generically, possibly a whole function) are kept only with `current_op_notes`."""
    for diag in diagnostics:
        sys.stderr.write(diag.format().split("\n")[0] + "\n")
        _show_source(diag, sources or {})
        previous = diag.pos
        for note in diag.notes:
            if note.message.startswith("see current operation") and not current_op_notes:
                continue
            sys.stderr.write(note.format() + "\n")
            if note.pos != previous:
                _show_source(note, sources or {})
            previous = note.pos
    sys.stderr.flush()


def _show_source(diag: Diagnostic, sources: dict[str, str]) -> None:
    if diag.pos is None or diag.pos.file not in sources:
        return
    lines = sources[diag.pos.file].split("\n")
    if 1 <= diag.pos.line <= len(lines):
        line = lines[diag.pos.line - 1]
        sys.stderr.write(f"{line}\n{' ' * max(diag.pos.col - 1, 0)}^\n")


def guarded_main(run: Callable[[], int | None], tool: str) -> None:
    """Runs `run` in a forked child so that an abort inside MLIR (an assertion in the
    asserting build) becomes an `error:` line and exit code 1, with output kept.

    The fork happens before MLIR starts any thread. `run` returns the exit code.
    """
    if os.environ.get("STRATA_NO_FORK"):
        sys.exit(_run_reporting(run, tool))
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = _run_reporting(run, tool)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        sys.stderr.write(
            f"error: {tool} crashed ({name}) inside MLIR; the messages above say where\n"
        )
        sys.exit(1)
    sys.exit(os.WEXITSTATUS(status))


def _run_reporting(run: Callable[[], int | None], tool: str) -> int:
    try:
        return run() or 0
    except SystemExit as exit_:
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except CompileError as error:
        print_diagnostics(error.diagnostics)
        return 1
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except click.exceptions.Abort:
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        detail = "".join(traceback.format_exception_only(error)).strip()
        sys.stderr.write(f"error: internal error in {tool}: {detail}\n")
        if os.environ.get("STRATA_DEBUG"):
            traceback.print_exc()
        return 1
