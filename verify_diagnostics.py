"""`--verify-diagnostics`: checks emitted diagnostics against `expected-*` comments.

The syntax is MLIR's: `// expected-error {{message}}` on the line of the op,
`// expected-error @+1 {{message}}` (or `@-N`, `@above`, `@below`) for another line; the
text between `{{` and `}}` must occur in the message. `expected-warning`, `expected-note` and
`expected-remark` work the same way. Every diagnostic must be expected and every expectation
met.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .diagnostics import Diagnostic, SourcePos

_EXPECTED = re.compile(
    r"expected-(error|warning|note|remark)\s*(?:@([+-]\d+|above|below))?\s*\{\{(.*?)\}\}"
)


@dataclass
class Expectation:
    severity: str
    message: str
    line: int
    comment: SourcePos
    met: bool = False


def expectations(text: str, file: str, first_line: int = 1) -> list[Expectation]:
    result = []
    for offset, line in enumerate(text.split("\n")):
        number = first_line + offset
        for match in _EXPECTED.finditer(line):
            severity, where, message = match.groups()
            target = number
            if where == "above":
                target = number - 1
            elif where == "below":
                target = number + 1
            elif where:
                target = number + int(where)
            result.append(
                Expectation(severity, message, target, SourcePos(file, number, match.start() + 1))
            )
    return result


def flatten(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics with their notes as separate entries (notes are matched on their own)."""
    result = []
    for diag in diagnostics:
        result.append(Diagnostic(diag.severity, diag.message, diag.pos))
        result += flatten([n for n in diag.notes if not n.message.startswith("see current")])
    return result


def check(
    diagnostics: list[Diagnostic], expected: list[Expectation], file: str
) -> list[Diagnostic]:
    """The failures: unexpected diagnostics and unmet expectations (empty when all match)."""
    failures = []
    for diag in flatten(diagnostics):
        match = next(
            (
                e
                for e in expected
                if not e.met
                and e.severity == diag.severity
                and diag.pos is not None
                and diag.pos.file == file
                and diag.pos.line == e.line
                and e.message in diag.message
            ),
            None,
        )
        if match is None:
            failures.append(
                Diagnostic("error", f"unexpected {diag.severity}: {diag.message}", diag.pos)
            )
        else:
            match.met = True
    for e in expected:
        if not e.met:
            failures.append(
                Diagnostic(
                    "error",
                    f'expected {e.severity} "{e.message}" was not produced',
                    e.comment,
                )
            )
    return failures
