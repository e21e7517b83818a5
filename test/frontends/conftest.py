"""Counts the ONNX node tests by op and prints the table at the end of the run.

ONNX's runner generates every backend test and marks those outside the selection as skipped;
they are deselected here, so the run lists only the tests that ran.
"""

import collections
import re

from onnx_node_tests import EXCLUDED, op_of

_outcomes = collections.defaultdict(collections.Counter)


def pytest_collection_modifyitems(config, items):
    kept, dropped = [], []
    for item in items:
        unselected = "test_onnx_backend.py" in item.nodeid and getattr(
            getattr(item, "obj", None), "__unittest_skip__", False
        )
        (dropped if unselected else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_runtest_logreport(report):
    if report.when != "call" and not (report.when == "setup" and report.skipped):
        return
    match = re.search(r"OnnxBackendNodeModelTest::(test_\w+)", report.nodeid)
    if match is None or op_of(match.group(1)) is None:
        return
    _outcomes[op_of(match.group(1))][report.outcome] += 1


def pytest_terminal_summary(terminalreporter):
    if not _outcomes:
        return
    write = terminalreporter.write_line
    total = collections.Counter()
    write("")
    write("ONNX backend node tests by op (passed/run):")
    cells = []
    for op in sorted(_outcomes):
        counts = _outcomes[op]
        total.update(counts)
        run = counts["passed"] + counts["failed"]
        cells.append(f"{op} {counts['passed']}/{run}")
    for i in range(0, len(cells), 6):
        write("  " + ", ".join(cells[i : i + 6]))
    run = total["passed"] + total["failed"]
    write(f"  total: {total['passed']} of {run} passed, over {len(_outcomes)} ops")
    write(f"  left out by design: {', '.join(sorted(set(EXCLUDED.values())))}")
