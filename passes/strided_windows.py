"""Windows with a horizontal stride, read as contiguous vectors.

A window op (a pool, a depthwise conv) vectorizes along its output's rows. With a horizontal
stride s, a tap reads every s-th input element: vectorized, a gather (max pooling of stride 2,
left as loops, took 4-9x onnxruntime's time). `deinterleaved` copies the input once into s
phases per row, phase p holding columns p, p + s, p + 2s, ...: tap kw of output column ox then
reads phase (kw mod s) at ox + (kw div s), a contiguous run. The copy is the one that padding
the input makes anyway: runs of lanes * s elements are read, split by shuffles and written
phase by phase into the padded layout, whose border alone is filled.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, scf, tensor, vector

from . import linalg_builders as lb


def deinterleaved(
    x: ir.Value,
    padding: Sequence[int],
    stride: int,
    pad_value: ir.Value,
    lanes: int,
    threads: int = 1,
) -> tuple[ir.Value, int]:
    """`x` [N, C, H, W], padded by (top, left, bottom, right), as [N, C, top + H + bottom,
    stride, J]: its padded rows in `stride` phases. Returns it and `shift`: column q of a row
    padded by `left` is element (q + shift) div stride of phase (q + shift) mod stride (the
    left border grows by `shift` to whole phase elements, so that a run's first element is
    phase 0's). With `threads` (which divide the channels), equal parts of the channels are
    split in parallel."""
    n, c, h, w = lb.ranked(x).shape
    top, left, bottom, right = padding
    shift = -left % stride
    first = (left + shift) // stride  # the phase element of x's first column
    filled = -(-w // stride)  # elements of each phase that x's columns fill (or pad, at the end)
    width = max(-(-(left + shift + w + right) // stride), first + filled)
    result = lb.bordered(
        [n, c, h, stride, filled],
        [0, 0, top, 0, first],
        [0, 0, bottom, 0, width - first - filled],
        pad_value,
    )
    origin = (top, first)
    if c % threads:
        raise ValueError(f"{threads} threads do not divide {c} channels")
    if threads == 1:
        return _split_rows(x, result, stride, origin, pad_value, lanes), shift
    part = c // threads
    forall = scf.ForallOp([0], [threads], [1], [result])
    with ir.InsertionPoint(forall.body):
        channel = arith.muli(forall.induction_variables[0], lb.scalar(ir.IndexType.get(), part))
        shared = forall.inner_iter_args[0]
        done = _split_rows(
            lb.slice_along(x, 1, channel, part),
            lb.slice_along(shared, 1, channel, part),
            stride,
            origin,
            pad_value,
            lanes,
        )
        in_parallel = scf.InParallelOp()
        with ir.InsertionPoint(in_parallel.region.blocks[0]):
            lb.parallel_insert_along(done, shared, 1, channel)
    return forall.results[0], shift


def phase_from(phases: ir.Value, phase: int, start: int) -> ir.Value:
    """The elements of one phase of `deinterleaved` rows [N, C, H, W], from `start` on: a
    tensor of its own, so that the taps that read it index it by loop dims alone (a constant
    in an indexing map keeps a tile from vectorizing)."""
    n, c, h, _, w = lb.ranked(phases).shape
    return tensor.ExtractSliceOp(
        ir.RankedTensorType.get([n, c, h, w - start], lb.ranked(phases).element_type),
        phases,
        [],
        [],
        [],
        [0, 0, 0, phase, start],
        [n, c, h, 1, w - start],
        [1] * 5,
    ).result


def _split_rows(x, dest, stride: int, origin, pad_value, lanes: int) -> ir.Value:
    """`dest` with every row of `x` split into its phases at `origin` (row, phase element):
    a loop over the rows, each in runs of `lanes` elements a phase, then what is left."""
    n, c, h, w = lb.ranked(x).shape
    index = ir.IndexType.get()
    chunk = lanes * stride
    runs, tail = divmod(w, chunk)
    top, first = origin
    rows = lb.loop_over([n, c, h], dest)
    with ir.InsertionPoint(rows.body):
        image, channel, row = lb.delinearize(rows.induction_variable, [n, c, h])
        source = (image, channel, row)
        target = (image, channel, arith.addi(row, lb.scalar(index, top)))
        result = rows.inner_iter_args[0]
        if runs:
            bounds = [lb.scalar(index, bound) for bound in (0, runs, 1)]
            loop = scf.ForOp(*bounds, [result])
            with ir.InsertionPoint(loop.body):
                k = loop.induction_variable
                column = arith.muli(k, lb.scalar(index, chunk))
                start = arith.addi(arith.muli(k, lb.scalar(index, lanes)), lb.scalar(index, first))
                done = loop.inner_iter_args[0]
                done = _split_run(x, done, source, target, column, start, chunk, stride, pad_value)
                scf.YieldOp([done])
            result = loop.results[0]
        if tail:
            column, start = lb.scalar(index, runs * chunk), lb.scalar(index, first + runs * lanes)
            result = _split_run(x, result, source, target, column, start, tail, stride, pad_value)
        scf.YieldOp([result])
    return rows.results[0]


def _split_run(x, dest, source, target, column, start, run: int, stride: int, pad_value):
    """`dest` with the `run` columns of `x` at `source` (image, channel, row) from `column`
    split into their phases at `target` (image, channel, row), from phase element `start`. A
    run that is not whole phase elements is completed with `pad_value`."""
    index = ir.IndexType.get()
    element = lb.ranked(x).element_type
    values = lb.read_run(x, [*source, column], run)
    border = vector.broadcast(ir.VectorType.get([run], element), pad_value)
    per_phase = -(-run // stride)
    for phase in range(stride):
        # Lanes past the run come from `border` (the second shuffle operand).
        lanes = [min(phase + stride * i, run + phase) for i in range(per_phase)]
        part = vector.shuffle(values, border, lanes)
        dest = lb.write_run(part, dest, [*target, lb.scalar(index, phase), start])
    return dest
