"""A seeded mutation fuzzer over the suite's own .mlir files.

Each case takes one chunk of a test file, mutates it (an element type swapped, a dimension
zeroed, negated or made huge, an attribute removed or retyped, the text truncated, a line
dropped or repeated, brackets nested thousands deep) and runs one tool on it: strata-opt with
one of strata's pass flags or pipelines, or strata-compile. The contract checked for every
case: the tool exits 0 or 1, never crashes inside MLIR, prints no traceback and no internal
error, and a rejected input gets an error located in the input file (FILE:LINE:COL: error:).

Run standalone for a longer search: python3 mutation_fuzz.py --seed 7 --count 2000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import sys
import tempfile
from pathlib import Path

TEST = Path(__file__).resolve().parent.parent

TOOLS = [
    ["strata-opt", "--graph-verify"],
    ["strata-opt", "--graph-fuse"],
    ["strata-opt", "--graph-fuse", "--tile-configure", "--tile-lower"],
    ["strata-opt", "--graph-fuse", "--tile-configure", "--tile-lower", "--tile-vectorize"],
    ["strata-opt", "--graph-to-linalg"],
    ["strata-opt", "--tile-rows"],
    ["strata-opt", "--math-approximate"],
    ["strata-opt", "--bool-storage"],
    ["strata-opt", "--elide-result-copies"],
    ["strata-opt", "--rows-in-place", "--fuse-vector-loops", "--prefetch-rows"],
    ["strata-opt", "--prefetch-panels"],
    ["strata-opt", "--lower-copies"],
    ["strata-opt", "--outline-parallel"],
    ["strata-opt", "--lower-fork-join"],
    ["strata-opt", "--workspace-buffers"],
    ["strata-opt", "--split-input-file", "--canonicalize", "--cse"],
    ["strata-opt", "--mlir-print-op-generic"],
    ["strata-compile", "--emit", "mlir"],
    ["strata-compile", "--emit", "llvm"],
]

ELEMENT_TYPE = re.compile(r"\b(?:f16|bf16|f32|f64|i1|i8|i16|i32|i64|index)\b")
REPLACEMENT_TYPES = [
    "f16", "bf16", "f64", "i1", "i8", "i64", "index", "si32", "ui8",
    "complex<f32>", "f8E4M3FN", "none", "vector<4xf32>",
]  # fmt: skip
DIMENSION = re.compile(r"(?<=[<x])\d+(?=x)")
NAMED_ATTRIBUTE = re.compile(r"\b[a-z_]+ = (?:array<[^>]*>|dense<[^>]*>(?: : [^,}]+)?|[^,{}]+)")
ARRAY_KIND = re.compile(r"array<(?:i64|i32|f32)")


def seeds() -> list[str]:
    """Every chunk of every .mlir file of the suite that holds an op."""
    chunks = []
    for path in sorted(TEST.rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        for chunk in re.split(r"^// -----[ \t]*$", path.read_text(), flags=re.MULTILINE):
            if re.search(r"^\s*(?:func\.func|module|\"|%)", chunk, re.MULTILINE):
                chunks.append(chunk)
    return chunks


def _replace_one(rng: random.Random, text: str, pattern: re.Pattern, make) -> str:
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    m = rng.choice(matches)
    return text[: m.start()] + make(m.group()) + text[m.end() :]


def mutate(rng: random.Random, text: str) -> str:
    kind = rng.randrange(8)
    if kind == 0:
        return _replace_one(rng, text, ELEMENT_TYPE, lambda _: rng.choice(REPLACEMENT_TYPES))
    if kind == 1:
        return _replace_one(
            rng, text, DIMENSION, lambda d: rng.choice(["0", f"-{d}", "1099511627776", "1"])
        )
    if kind == 2:  # an attribute removed
        return _replace_one(rng, text, NAMED_ATTRIBUTE, lambda _: "")
    if kind == 3:  # an attribute retyped
        retype = rng.choice(
            [
                lambda a: ARRAY_KIND.sub(rng.choice(["array<index", "array<i1", "array<f32"]), a),
                lambda a: a.split(" = ")[0] + ' = "text"',
                lambda a: a.split(" = ")[0] + " = [1, 2]",
                lambda a: a.split(" = ")[0] + " = -1",
                lambda a: a.split(" = ")[0] + " = 2.5 : f32",
                lambda a: a.split(" = ")[0] + " = array<i64>",
            ]
        )
        return _replace_one(rng, text, NAMED_ATTRIBUTE, retype)
    if kind == 4:
        return text[: rng.randrange(len(text) + 1)]
    lines = text.split("\n")
    at = rng.randrange(len(lines))
    if kind == 5:
        del lines[at]
    elif kind == 6:
        lines.insert(at, lines[at])
    else:
        depth = rng.choice([500, 1500, 6000])
        nest = rng.choice(["[" * depth + "]" * depth, "(" * depth + ")" * depth])
        lines[at] = lines[at] + f' "x.y"() {{a = {nest}}} : () -> ()'
    return "\n".join(lines)


def start_case(argv: list[str], path: Path, timeout: int) -> tuple[int, object]:
    """Starts one tool in a forked child with abort-on-crash, so an abort inside MLIR shows as
    the child's signal; returns its pid and stderr file. The tools are imported here, once:
    imported in each child, they took 1.5 s of its 1.6."""
    from strata.tools.compile import main as compile_main
    from strata.tools.opt import main as opt_main

    err = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        os.dup2(err.fileno(), 2)
        signal.alarm(timeout)
        os.environ["STRATA_NO_FORK"] = "1"
        tool, *flags = argv
        sys.argv = [tool, str(path), *flags]
        main = opt_main
        if tool == "strata-compile":
            sys.argv += ["-o", os.devnull]
            main = compile_main
        try:
            main()
        except SystemExit as exit_:
            os._exit(exit_.code if isinstance(exit_.code, int) else 1)
        os._exit(0)
    return pid, err


def outcome(status: int, err) -> dict:
    err.seek(0)
    stderr = err.read().decode(errors="replace")
    err.close()
    if os.WIFSIGNALED(status):
        return {"signal": signal.Signals(os.WTERMSIG(status)).name, "stderr": stderr}
    return {"code": os.WEXITSTATUS(status), "stderr": stderr}


def problem(result: dict, path: Path) -> str | None:
    """What is wrong with one case's outcome, or None."""
    stderr = result["stderr"]
    if "signal" in result:
        return f"killed by {result['signal']}"
    if result["code"] not in (0, 1):
        return f"exit code {result['code']}"
    if "Traceback" in stderr or "internal error" in stderr or "crashed" in stderr:
        return "traceback, internal error or crash"
    if result["code"] == 1:
        first = next((line for line in stderr.splitlines() if "error" in line), "")
        if not re.match(rf"{re.escape(str(path))}:\d+:\d+: error: ", first):
            return f"unlocated error: {first[:200]!r}"
    return None


def fuzz(seed: int, count: int, timeout: int = 60, jobs: int | None = None) -> list[dict]:
    """The failing cases of `count` mutations drawn with `seed`, `jobs` at a time."""
    rng = random.Random(seed)
    chunks = seeds()
    jobs = jobs or len(os.sched_getaffinity(0))
    failures, running = [], {}
    with tempfile.TemporaryDirectory() as tmp:

        def finish_one() -> None:
            pid, status = os.wait()
            index, argv, path, text, err = running.pop(pid)
            result = outcome(status, err)
            reason = problem(result, path)
            if reason:
                failures.append(
                    {"case": index, "argv": argv, "reason": reason, "input": text,
                     "stderr": result["stderr"][-2000:]}
                )  # fmt: skip

        for index in range(count):
            text = mutate(rng, rng.choice(chunks))
            if rng.random() < 0.3:
                text = mutate(rng, text)
            argv = rng.choice(TOOLS)
            path = Path(tmp, f"case{index}.mlir")
            path.write_text(text)
            if len(running) >= jobs:
                finish_one()
            pid, err = start_case(argv, path, timeout)
            running[pid] = (index, argv, path, text, err)
        while running:
            finish_one()
    return sorted(failures, key=lambda f: f["case"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=300)
    args = parser.parse_args()
    failures = fuzz(args.seed, args.count)
    json.dump(failures, sys.stdout, indent=1)
    sys.stdout.write("\n")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
