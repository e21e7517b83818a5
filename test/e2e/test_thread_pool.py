"""The worker pool that compiled modules fork onto: correct under concurrent host threads,
in forked children, and gone when the module is."""

import dataclasses
import gc
import os
import sys
import threading

import numpy as np
import pytest
import strata
from strata.dialects import target

N = 384
T = f"tensor<{N}x{N}xf32>"
MATMUL = (
    f"func.func @main(%a: {T}, %b: {T}) -> {T} {{\n"
    f'  %0 = "graph.matmul"(%a, %b) : ({T}, {T}) -> {T}\n'
    f"  return %0 : {T}\n}}\n"
)


@pytest.fixture(scope="module")
def operands():
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((N, N), dtype=np.float32) for _ in range(2))
    return a, b, a.astype(np.float64) @ b


def compile_threaded(cores=3):
    return strata.compile(MATMUL, target=dataclasses.replace(target.host_cpu(), cores=cores))


def threads_now() -> int:
    return len(os.listdir("/proc/self/task"))


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


def test_concurrent_host_threads_get_their_own_results(operands):
    a, b, expected = operands
    fn = compile_threaded()
    inputs = [(a * (i + 1), b) for i in range(4)]
    failures = []

    def call(i):
        x, y = inputs[i]
        for _ in range(20):
            if not np.allclose(fn(x, y), expected * (i + 1), rtol=1e-3, atol=1e-2):
                failures.append(i)

    workers = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not failures


def test_workers_stop_with_the_module(operands):
    a, b, expected = operands
    before = threads_now()
    fn = compile_threaded()
    np.testing.assert_allclose(fn(a, b), expected, rtol=1e-3, atol=1e-2)
    assert threads_now() > before  # the pool started and stays between calls
    del fn
    gc.collect()
    assert threads_now() == before


def test_a_forked_child_runs_without_the_parents_workers(operands):
    a, b, expected = operands
    fn = compile_threaded()
    np.testing.assert_allclose(fn(a, b), expected, rtol=1e-3, atol=1e-2)
    pid = os.fork()
    if pid == 0:  # the child: no worker thread of the parent exists here
        ok = all(np.allclose(fn(a, b), expected, rtol=1e-3, atol=1e-2) for _ in range(3))
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
