"""Every GPU strategy realizes the configuration tile-configure chose, over real and awkward
sizes, for sm_80 and sm_90a, compiling to PTX without local-memory spills: a kernel that
`--gpu-tile` leaves as plain loops (a remark) fails here. Running them needs a GPU
(test_gpu.py); this needs none."""

import pytest
from strata import compiler
from strata.passes import gpu_tile

CHIPS = ["sm_80", "sm_90a"]


@pytest.fixture
def left_as_loops(monkeypatch):
    remarks = []
    monkeypatch.setattr(gpu_tile, "remark", lambda location, message: remarks.append(message))
    yield remarks
    assert remarks == []


def _t(shape, element="f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def _ptx(text: str, chip: str) -> str:
    ptx = compiler.emit(compiler.load(text), "ptx", f"nvvm:{chip}").decode()
    assert ".local" not in ptx
    return ptx


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("element", ["f32", "f16", "bf16"])
@pytest.mark.parametrize(
    "m, k, n", [(1, 768, 768), (7, 1000, 127), (128, 768, 3072), (512, 3072, 768), (129, 64, 8)]
)
def test_linear(m, k, n, element, chip, left_as_loops):
    x, w, b, y = _t((m, k), element), _t((k, n), element), _t((n,)), _t((m, n))
    text = (
        f"func.func @main(%x: {x}, %w: {w}, %b: {b}) -> {y} {{\n"
        f'  %0 = "graph.matmul"(%x, %w) : ({x}, {w}) -> {y}\n'
        f'  %1 = "graph.add"(%0, %b) : ({y}, {b}) -> {y}\n'
        f'  %2 = "graph.gelu"(%1) {{approximate = "tanh"}} : ({y}) -> {y}\n'
        f"  return %2 : {y}\n}}\n"
    )
    ptx = _ptx(text, chip)
    wgmma = chip == "sm_90a" and element != "f32" and k % 8 == 0 and n % 8 == 0
    assert ("wgmma.mma_async" in ptx) == wgmma
    assert ("mma.sync.aligned.m16n8k16" in ptx) == (element != "f32" and not wgmma)


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize(
    "m, k, n", [(1, 768, 768), (7, 1000, 127), (128, 768, 3072), (512, 3072, 768), (129, 64, 8)]
)
def test_tf32_linear(m, k, n, chip, left_as_loops):
    """With `+tf32`, f32 linears take m16n8k8 mma.sync steps (cp.async where rows are whole
    16-byte chunks)."""
    x, w, b, y = _t((m, k)), _t((k, n)), _t((n,)), _t((m, n))
    text = (
        f"func.func @main(%x: {x}, %w: {w}, %b: {b}) -> {y} {{\n"
        f'  %0 = "graph.matmul"(%x, %w) : ({x}, {w}) -> {y}\n'
        f'  %1 = "graph.add"(%0, %b) : ({y}, {b}) -> {y}\n'
        f"  return %1 : {y}\n}}\n"
    )
    ptx = _ptx(text, f"{chip}+tf32")
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx
    assert ("cp.async.cg.shared.global" in ptx) == (k % 4 == 0 and n % 4 == 0)


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("element", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("b, m, k, n", [(12, 128, 64, 128), (2, 7, 33, 5)])
def test_batched_matmul(b, m, k, n, element, chip, left_as_loops):
    """Batches take mma.sync for half operands, wgmma's TMA tiles being 2-D."""
    x, w, y = _t((b, m, k), element), _t((b, k, n), element), _t((b, m, n))
    text = (
        f"func.func @main(%x: {x}, %w: {w}) -> {y} {{\n"
        f'  %0 = "graph.matmul"(%x, %w) : ({x}, {w}) -> {y}\n'
        f"  return %0 : {y}\n}}\n"
    )
    ptx = _ptx(text, chip)
    assert ("mma.sync.aligned.m16n8k16" in ptx) == (element != "f32")


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("element", ["f32", "bf16"])
@pytest.mark.parametrize("op", ["softmax", "layer_norm", "rms_norm"])
@pytest.mark.parametrize("rows, width", [(1, 7), (7, 127), (128, 768), (3, 1000), (64, 8192)])
def test_rows(op, rows, width, element, chip, left_as_loops):
    x, v = _t((rows, width), element), _t((width,), element)
    if op == "softmax":
        line = f'%0 = "graph.softmax"(%x) {{axis = -1 : i64}} : ({x}) -> {x}'
    elif op == "layer_norm":
        line = (
            f'%0 = "graph.layer_norm"(%x, %g, %g) {{axis = -1 : i64, epsilon = 1.0e-5 : f32}}'
            f" : ({x}, {v}, {v}) -> {x}"
        )
    else:
        line = (
            f'%0 = "graph.rms_norm"(%x, %g) {{axis = -1 : i64, epsilon = 1.0e-6 : f32}}'
            f" : ({x}, {v}) -> {x}"
        )
    text = f"func.func @main(%x: {x}, %g: {v}) -> {x} {{\n  {line}\n  return %0 : {x}\n}}\n"
    ptx = _ptx(text, chip)
    assert "shfl.sync.bfly" in ptx


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("shape", [(1,), (7, 127), (4096, 1024), (3, 5, 1000)])
def test_elementwise(shape, chip, left_as_loops):
    t = _t(shape)
    text = (
        f"func.func @main(%x: {t}, %y: {t}) -> {t} {{\n"
        f'  %0 = "graph.mul"(%x, %y) : ({t}, {t}) -> {t}\n'
        f'  %1 = "graph.sigmoid"(%0) : ({t}) -> {t}\n'
        f"  return %1 : {t}\n}}\n"
    )
    _ptx(text, chip)


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("element", ["f32", "f16", "bf16"])
@pytest.mark.parametrize(
    "batch, heads, seq, keys, dim, value_dim, causal",
    [
        (1, 12, 512, 512, 64, 64, True),  # GPT-2
        (1, 32, 128, 128, 128, 128, True),  # LLaMA's head dim
        (2, 3, 1, 1, 64, 64, False),  # one query
        (1, 2, 7, 300, 80, 32, True),  # a few queries over a longer past, head dims differ
        (1, 4, 127, 127, 8, 8, False),
        (1, 1, 1000, 1000, 256, 256, True),
    ],
)
def test_attention(batch, heads, seq, keys, dim, value_dim, causal, element, chip, left_as_loops):
    """Every attention takes the fused kernel: no [S, KV] scores in memory; f16/bf16 with
    head dims of whole k16 steps up to 128 on tensor cores."""
    q, k = _t((batch, heads, seq, dim), element), _t((batch, heads, keys, dim), element)
    v, y = _t((batch, heads, keys, value_dim), element), _t((batch, heads, seq, value_dim), element)
    text = (
        f"func.func @main(%q: {q}, %k: {k}, %v: {v}) -> {y} {{\n"
        f'  %0 = "graph.attention"(%q, %k, %v) {{causal = {str(causal).lower()}}} : '
        f"({q}, {k}, {v}) -> {y}\n"
        f"  return %0 : {y}\n}}\n"
    )
    ptx = _ptx(text, chip)
    assert ptx.count(".entry") == 1
    tensor_cores = element != "f32" and all(d % 16 == 0 and d <= 128 for d in (dim, value_dim))
    assert ("mma.sync.aligned.m16n8k16" in ptx) == tensor_cores
    if tensor_cores:  # K and V by cp.async, V's fragments transposed by ldmatrix
        assert "cp.async.cg.shared.global" in ptx
        assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx
    else:
        assert "ld.shared.v4.b32" in ptx  # K and V chunks, 16 bytes a load
