"""benchmarks/cpu.py states whether a run meets the speed goals, from the same medians as its
table: a goal is met when every measured row it covers reaches its ratio against each peer."""

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "cpu.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("strata_cpu_benchmarks", _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def _row(bench, name, **peer_seconds):
    peers = {k.replace("_", " "): bench.Timing(v, v) for k, v in peer_seconds.items()}
    return bench.Row(name, "GB/s", 1.0, bench.Timing(1.0, 1.0), peers)


def test_goals_name_the_rows_that_fall_short(bench):
    rows = [
        (1, _row(bench, "neg, 2^22", numpy=0.97)),  # strata takes 1 s: 0.97x
        (2, _row(bench, "neg, 2^22", numpy=1.9)),
        (1, _row(bench, "tanh(x*a+b), 2^22", numpy_op_by_op=7.0, numpy_copy=0.9)),
        (1, _row(bench, "softmax 1024x1024", onnxruntime=1.1, torch=0.5)),
    ]
    lines = bench.format_goals(rows)
    short = "neg, 2^22 on 1 thread(s): numpy 0.970x"
    assert f"- every op of the table at 1.0x numpy or more: not met: {short}" in lines
    assert any(line.startswith("- the tanh chain") and line.endswith(": met") for line in lines)
    assert any(
        line.startswith("- softmax and layer_norm") and line.endswith(": met") for line in lines
    )
    # Goals whose rows this run did not measure are left out, not reported as met.
    assert not any("matmul" in line or "MLP" in line for line in lines)


def test_chains_are_not_ops_of_the_table(bench):
    rows = [(1, _row(bench, "relu(x*a+b), 2^22", numpy_op_by_op=0.5))]
    assert bench.format_goals(rows) == []
