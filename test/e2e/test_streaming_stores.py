"""Kernels larger than the cache stream their outputs past it (--streaming-stores): the
results match numpy whether the output's base is aligned to the vector width (the widest
streaming copy of the kernel runs), to 16 bytes only (16-byte streaming stores) or not at all
(the original runs), on 1 and 2 cores, for f32 and bool results."""

import dataclasses
import re

import numpy as np
import pytest
import strata
from strata import compiler
from strata.dialects import target

# Every row starts 16-byte aligned: 4000 bytes of f32 (32-byte aligned too), 1024 of bools
# (in 32-byte vectors), 4096 bytes of f32 (64-byte aligned too).
CASES = {
    "add_relu": (
        (512, 1000),
        '%s = "graph.add"(%a, %b) : ({T}, {T}) -> {T}\n  %0 = "graph.relu"(%s) : ({T}) -> {T}',
        "f32",
        lambda a, b: np.maximum(a + b, 0),
    ),
    "less": ((512, 1024), '%0 = "graph.less"(%a, %b) : ({T}, {T}) -> {R}', "i1", np.less),
    "mul": ((512, 1024), '%0 = "graph.mul"(%a, %b) : ({T}, {T}) -> {T}', "f32", np.multiply),
}


def _target(cores: int):
    # A 1 MiB last-level cache: these 6 MiB kernels stream on any host.
    return dataclasses.replace(target.host_cpu(), cores=cores, l3_bytes=1 << 20)


def _text(name: str) -> str:
    (rows, cols), body, element, _ = CASES[name]
    t, r = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}x{cols}x{element}>"
    body = body.format(T=t, R=r)
    return f"func.func @main(%a: {t}, %b: {t}) -> {r} {{\n  {body}\n  return %0 : {r}\n}}\n"


def _output_at(expected: np.ndarray, offset: int) -> np.ndarray:
    """An output array whose data starts `offset` bytes past a 64-byte boundary."""
    raw = np.empty(expected.nbytes + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    out = raw[start : start + expected.nbytes].view(expected.dtype).reshape(expected.shape)
    assert out.ctypes.data % 64 == offset
    return out


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("cores", [1, 2])
def test_streamed_outputs_match_numpy_aligned_or_not(name, cores):
    module = compiler.load(_text(name))
    compiler.lower(module, _target(cores))
    assert "nontemporal" in str(module)
    fn = strata.compile(_text(name), target=_target(cores))
    rng = np.random.default_rng(cores)
    shape, _, _, reference = CASES[name]
    a, b = (rng.standard_normal(shape, dtype=np.float32) for _ in range(2))
    expected = reference(a, b)
    np.testing.assert_array_equal(fn(a, b), expected)
    for offset in (0, 16, 48, 4):
        out = _output_at(expected, offset)
        out[...] = 0
        result = fn(a, b, out=out)
        np.testing.assert_array_equal(out, expected)
        assert result is out or np.shares_memory(result, out)


@pytest.mark.parametrize(("name", "widest"), [("add_relu", 32), ("mul", 64)])
def test_wide_targets_stream_whole_vectors_where_the_rows_allow(name, widest):
    module = compiler.load(_text(name))
    compiler.lower(module, dataclasses.replace(_target(1), vector_bits=512))
    alignments = set(re.findall(r"alignment = (\d+) : i64, nontemporal\b", str(module)))
    assert alignments == {"16", str(widest)}


def test_small_kernels_keep_plain_stores():
    module = compiler.load(_text("add_relu"))
    compiler.lower(module, dataclasses.replace(target.host_cpu(), l3_bytes=64 << 20))
    assert "nontemporal" not in str(module)
