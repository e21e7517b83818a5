"""Reading MLIR source: contexts with strata's dialects, located parsing, split input files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mlir import ir

from . import dialects
from .diagnostics import CompileError, Diagnostic, DiagnosticCollector, SourcePos, from_mlir_error

SPLIT_MARKER = re.compile(r"^// -----[ \t]*$", re.MULTILINE)


def make_context() -> ir.Context:
    """A context with every upstream dialect and strata's own dialects loaded.

    Multithreading is off: strata's Python verifiers and patterns run inside MLIR callbacks.
    """
    context = ir.Context()
    context.enable_multithreading(False)
    dialects.load(context)
    return context


@dataclass
class Chunk:
    """A piece of an input file; `first_line` keeps diagnostics pointing into the whole file."""

    text: str
    first_line: int = 1


def split_input(text: str, split: bool) -> list[Chunk]:
    """Splits at `// -----` lines (mlir-opt's --split-input-file)."""
    if not split:
        return [Chunk(text)]
    chunks, line, start = [], 1, 0
    for match in SPLIT_MARKER.finditer(text):
        piece = text[start : match.start()]
        chunks.append(Chunk(piece, line))
        line += piece.count("\n") + 1
        start = match.end() + 1
    chunks.append(Chunk(text[start:], line))
    return chunks


def read_source(path: str) -> str:
    """The text of `path` (`-` is stdin); a missing or binary file is a CompileError."""
    import sys

    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise CompileError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise CompileError(f"{path}: is a directory") from None
        except OSError as error:
            raise CompileError(f"{path}: cannot read: {error.strerror}") from None
    if b"\0" in data:
        raise CompileError(f"{path}: not a text file (MLIR source or bytecode expected)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CompileError(f"{path}: not valid UTF-8 text") from None


def parse(
    text: str,
    context: ir.Context,
    name: str = "<input>",
    first_line: int = 1,
    verify: bool = True,
    *,
    whole_file: bool = False,
) -> ir.Module:
    """Parses `text` into a module, like mlir-opt: ops outside a module get one implicitly.

    Locations name `name` with line numbers counted from `first_line`. `whole_file`: `text` is
    all of the file `name`, which MLIR's own parser then reads. With `verify`, the strata
    dialects' semantic verifiers run too. Errors raise CompileError with every diagnostic.
    """
    check_before_parsing(text, name, first_line)
    padded = "\n" * (first_line - 1) + text
    with context, ir.Location.unknown(), DiagnosticCollector(context) as collector:
        try:
            module = _parse_module(padded, name) if _starts_with_module(text) else None
            if module is None and whole_file:
                # The whole file: MLIR's own parser makes the implicit module, located as
                # mlir-opt's (0:0).
                module = ir.Module.parseFile(name)
            elif module is None:
                # mlir-opt locates an implicit module where its chunk starts: after the
                # `// -----` marker, or at 0:0 for the start of a file.
                start = (first_line - 1, 9) if first_line > 1 else (0, 0)
                module = as_module(_parse_wrapped(padded, name), ir.Location.file(name, *start))
        except ir.MLIRError as error:
            raise _with_position(from_mlir_error(error), padded, name) from None
        except CompileError as error:
            raise _with_position(error, padded, name) from None
        if verify and not dialects.verify_semantics(module.operation):
            raise CompileError(collector.errors)
    return module


def _with_position(error: CompileError, text: str, name: str) -> CompileError:
    """`error`, or where it carries no position (a strata op's parser failed), the located
    error of `_custom_form_op`."""
    if any(diag.pos for diag in error.diagnostics):
        return error
    return _custom_form_op(text, name) or error


def _custom_form_op(text: str, name: str) -> CompileError | None:
    """The first strata op that `text` writes in custom form (`graph.relu %x`): strata's ops
    are IRDL definitions, which parse only in generic form, and their parser fails without a
    diagnostic (MLIR then reports only 'Unable to parse module assembly')."""
    names = sorted((f"{d.name}.{op}" for d in dialects.DIALECTS for op in d.ops), key=len)
    alternatives = "|".join(re.escape(op) for op in reversed(names))
    statement = re.compile(rf"(?m)^[ \t]*(?:%[^=\n]*=[ \t]*)?({alternatives})\b")
    for match in statement.finditer(text):
        # What precedes it on earlier lines (a short window: this runs on every candidate).
        before = text[max(0, match.start(1) - 256) : match.start(1)].rstrip()
        if before.endswith(",") or re.search(r"attributes\s*\{$", before):
            continue  # an entry of an attribute dictionary (`tile.config = {...}`)
        op = match.group(1)
        message = (
            f"custom op '{op}' cannot be parsed: strata's ops are written in generic form, "
            f'"{op}"(operands) {{attributes}} : (operand types) -> result types'
        )
        return _located(text, match.start(1), name, 1, message)
    return None


MAX_NESTING = 1000

# String literals and comments are skipped: their brackets do not nest.
_TOKENS = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"|//[^\n]*|->|[\[({<]|[\])}>]')
# Dense arrays the Python bindings can represent; any other element type makes them raise (or,
# inside a callback, abort), and MLIR 22's parser asserts on `array<index ...>`.
ARRAY_ELEMENT_TYPES = ("i1", "i8", "i16", "i32", "i64", "f32", "f64")
_ARRAY = re.compile(r"array<\s*([^\s:>]+)")  # a literal first: fast to search
# linalg.reduce, transpose and broadcast spell their dims after their operands; MLIR 22's
# parser asserts on anything but a bracketed list there (`dimensions = "x"`).
_LINALG_DIMS = re.compile(r"\)\s*(dimensions|permutation)\s*=\s*(?=[^\s\[])")


def check_before_parsing(text: str, name: str, first_line: int = 1) -> None:
    """Refuses input that MLIR's parser or its Python bindings would crash on rather than
    diagnose: brackets nested deeper than MAX_NESTING (the recursive descent overflows the stack
    a few thousand levels down), dense arrays of other element types than
    ARRAY_ELEMENT_TYPES (`array<index: 2>`, `array<si32: 1>`) and linalg's dims lists that
    are not lists (`linalg.reduce ... dimensions = 3`)."""
    for match in _ARRAY.finditer(text):
        element, before = match.group(1), text[match.start() - 1 : match.start()]
        if before and (before.isalnum() or before in "_.$-"):  # in a longer name: no keyword
            continue
        if element not in ARRAY_ELEMENT_TYPES and not _in_string_or_comment(text, match.start()):
            raise _located(
                text, match.start(1), name, first_line,
                f"dense array element type must be one of {', '.join(ARRAY_ELEMENT_TYPES)}, "
                f"got '{element}'",
            )  # fmt: skip
    for match in _LINALG_DIMS.finditer(text):
        if not _in_string_or_comment(text, match.start(1)):
            raise _located(
                text, match.end(), name, first_line,
                f"'{match.group(1)}' must be a list of integers in brackets, as "
                f"`{match.group(1)} = [0, 1]`",
            )  # fmt: skip
    if sum(text.count(c) for c in "[({<") <= MAX_NESTING:
        return
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[({<":
            depth += 1
            if depth > MAX_NESTING:
                raise _located(
                    text, match.start(), name, first_line,
                    f"input nested more than {MAX_NESTING} levels deep",
                )  # fmt: skip
        elif token in "])}>":
            depth = max(depth - 1, 0)


def _in_string_or_comment(text: str, position: int) -> bool:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    for match in _TOKENS.finditer(text, start, len(text) if end < 0 else end):
        if match.start() > position:
            break
        if position < match.end() and match.group()[0] in '"/':
            return True
    return False


def _located(text: str, position: int, name: str, first_line: int, message: str) -> CompileError:
    line = text.count("\n", 0, position) + first_line
    col = position - (text.rfind("\n", 0, position) + 1) + 1
    return CompileError([Diagnostic("error", message, SourcePos(name, line, col))])


# Blank lines, comments and attribute/type alias definitions that precede the first op.
_PREAMBLE = re.compile(r"(?:[ \t]*(?://[^\n]*)?\n|[ \t]*[#!][\w.$-]+[ \t]*=[^\n]*\n)*")


_SEVERAL_OPS = "source must contain a single top-level operation"


def _parse_module(text: str, name: str) -> ir.Module | None:
    """The module that `text` (starting with one) is; None when other top-level ops follow it,
    which then go into an implicit module together, as mlir-opt does."""
    try:
        return as_module(ir.Operation.parse(text, source_name=name))
    except ir.MLIRError as error:
        if _SEVERAL_OPS in str(error):
            return None
        raise


def _starts_with_module(text: str) -> bool:
    """Whether the first op (after comments and aliases) is a module: the top-level op."""
    rest = text[_PREAMBLE.match(text).end() :].lstrip()
    return re.match(r'("builtin\.module"|builtin\.module|module)\b', rest) is not None


def _wrap_position(text: str, preamble_end: int) -> int:
    """Where `module {` goes: the start of the last blank or comment line before the first op,
    or, after an alias definition, the end of its line (aliases stay outside the module)."""
    position, offset = preamble_end, 0
    for line in text[:preamble_end].splitlines(keepends=True):
        if re.match(r"[ \t]*[#!]", line):
            position = offset + len(line.rstrip("\n"))
        else:  # a blank or comment line
            position = offset
        offset += len(line)
    return position


def _parse_wrapped(text: str, name: str) -> ir.Operation:
    """Parses several top-level ops as the body of a module.

    `module {` goes at the start of the last blank or comment line before the first op (after
    alias definitions), so lines and op columns stay true; a chunk of a split file has such a
    line in its padding. With none it goes in front of the first op, whose line's columns then
    shift; parse errors are shifted back.
    """
    body, resources = text, ""
    marker = text.find("{-#")
    if marker >= 0:  # the file-level resource section stays outside the module
        body, resources = text[:marker], text[marker:]
    start = _wrap_position(body, _PREAMBLE.match(body).end())
    line = body.count("\n", 0, start) + 1
    prefix = "module {" if start == 0 or body[start - 1] == "\n" else " module {"
    wrapped = f"{body[:start]}{prefix}{body[start:]}\n}}\n{resources}"
    try:
        return ir.Operation.parse(wrapped, source_name=name)
    except ir.MLIRError as error:
        failure = from_mlir_error(error)
        for diag in failure.diagnostics + [n for d in failure.diagnostics for n in d.notes]:
            if diag.pos and diag.pos.file == name and diag.pos.line == line:
                diag.pos.col = max(1, diag.pos.col - len(prefix))
        raise CompileError(failure.diagnostics) from None


def as_module(op: ir.OpView | ir.Operation, implicit: ir.Location | None = None) -> ir.Module:
    """An `ir.Module` owning `op`'s contents (the bindings cannot wrap a parsed module op).
    A module that the parser made implicitly takes `implicit` as its location: mlir-opt
    locates it at the start of its chunk (after the `// -----` marker; 0:0 for a file)."""
    op = getattr(op, "operation", op)
    module = ir.Module.create(implicit if implicit is not None else op.location)
    if op.name != "builtin.module":
        module.body.append(op)
        return module
    for index in range(len(op.attributes)):
        named = op.attributes[index]
        module.operation.attributes[named.name] = named.attr
    for inner in list(op.regions[0].blocks[0].operations):
        module.body.append(inner)
    op.erase()
    return module
