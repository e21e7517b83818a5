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


def threads_now() -> set[str]:
    """The ids of the process's threads (other tests' threads may come and go meanwhile)."""
    return set(os.listdir("/proc/self/task"))


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
    workers = threads_now() - before
    assert workers  # the pool started and stays between calls
    np.testing.assert_allclose(fn(a, b), expected, rtol=1e-3, atol=1e-2)
    assert workers <= threads_now()
    del fn
    gc.collect()
    assert not workers & threads_now()


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


def _forks(text: str, cores: int) -> int:
    """How many parallel loops the lowered module forks over threads."""
    from strata import compiler

    module = compiler.load(text)
    compiler.lower(module, dataclasses.replace(target.host_cpu(), cores=cores))
    return str(module).count("call @__strata_fork_")


ROWS, COLS = 1024, 768
X = f"tensor<{ROWS}x{COLS}xf32>"
V = f"tensor<{COLS}xf32>"
MEMORY_BOUND = {
    "softmax": (
        f'%0 = "graph.softmax"(%x) {{axis = 1 : i64}} : ({X}) -> {X}',
        lambda x, g, b: (
            np.exp(x - x.max(1, keepdims=True))
            / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)
        ),
    ),
    "layer_norm": (
        f'%0 = "graph.layer_norm"(%x, %g, %b) {{axis = 1 : i64, epsilon = 1.0e-5 : f32}}'
        f" : ({X}, {V}, {V}) -> {X}",
        lambda x, g, b: (
            (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * g + b
        ),
    ),
    "tanh chain": (
        f'%t = "graph.tanh"(%x) : ({X}) -> {X}\n  %0 = "graph.mul"(%t, %g) : ({X}, {V}) -> {X}',
        lambda x, g, b: np.tanh(x) * g,
    ),
}


@pytest.mark.parametrize("name", sorted(MEMORY_BOUND))
@pytest.mark.parametrize("cores", [1, 2, 3])
def test_memory_bound_kernels_split_over_cores_and_match_numpy(name, cores):
    body, reference = MEMORY_BOUND[name]
    text = (
        f"func.func @main(%x: {X}, %g: {V}, %b: {V}) -> {X} {{\n  {body}\n  return %0 : {X}\n}}\n"
    )
    rng = np.random.default_rng(cores)
    x = rng.standard_normal((ROWS, COLS), dtype=np.float32) * 3
    g, b = (rng.standard_normal(COLS, dtype=np.float32) for _ in range(2))
    fn = strata.compile(text, target=dataclasses.replace(target.host_cpu(), cores=cores))
    expected = reference(*(a.astype(np.float64) for a in (x, g, b)))
    np.testing.assert_allclose(fn(x, g, b), expected, rtol=2e-5, atol=2e-6)
    # 1024 rows split evenly over 2 threads; over 3 they do not, and 2 of the 3 cores work.
    assert _forks(text, cores) == (0 if cores == 1 else 1)


# M = 100 is 25 micro-kernel rows: the unpack of C must not be split over the threads along M
# (50 rows each, partial 4-row tiles that cannot vectorize) but along N.
@pytest.mark.parametrize(
    "m,k,n",
    [(64, 1024, 4096), (16, 256, 8192), (100, 256, 1024), (100, 512, 512), (100, 768, 3072)],
)
def test_skinny_packed_matmuls_split_their_columns_and_match_numpy(m, k, n):
    x_t, w_t, y_t = (f"tensor<{a}x{b}xf32>" for a, b in ((m, k), (k, n), (m, n)))
    text = (
        f"func.func @main(%x: {x_t}, %w: {w_t}) -> {y_t} {{\n"
        f'  %0 = "graph.matmul"(%x, %w) : ({x_t}, {w_t}) -> {y_t}\n  return %0 : {y_t}\n}}\n'
    )
    from strata import compiler

    # B outgrows an L2 of 512 KiB in every case, so each is packed, whatever this machine's L2.
    desc = dataclasses.replace(target.host_cpu(), cores=2, l2_bytes=1 << 19)
    module = compiler.load(text)
    compiler.lower(module, desc)
    assert "thread_dim = 1" in str(module) and "pack = 4" in str(module)
    rng = np.random.default_rng(m)
    x = rng.standard_normal((m, k), dtype=np.float32)
    w = rng.standard_normal((k, n), dtype=np.float32)
    fn = strata.compile(text, target=desc)
    np.testing.assert_allclose(fn(x, w), x.astype(np.float64) @ w, rtol=1e-3, atol=1e-3)
