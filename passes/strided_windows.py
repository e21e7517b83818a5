"""Windows with a horizontal stride, read as contiguous vectors.

A window op (a pool, a depthwise conv) vectorizes along its output's rows. With a horizontal
stride s, a tap reads every s-th input element: vectorized, a gather (max pooling of stride 2,
left as loops, took 4-9x onnxruntime's time). `deinterleaved` copies the input once into s
phases per row, phase p holding columns p, p + s, p + 2s, ...: tap kw of output column ox then
reads phase (kw mod s) at ox + (kw div s), a contiguous run. The copy is the one that padding
the input makes anyway: runs of lanes * s elements are read, split by shuffles and written
phase by phase into the padded layout, whose border alone is filled.

`pooled` needs no copy at all: a pool takes each output row's taps as shuffles of runs of
the input rows, in registers, and handles its padding there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

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

    def split(part, dest):
        return _split_rows(part, dest, stride, origin, pad_value, lanes)

    return _by_channels(x, result, threads, split), shift


def _by_channels(x: ir.Value, dest: ir.Value, threads: int, rows) -> ir.Value:
    """`rows(x, dest)` over all channels, or over equal parts of them (dim 1 of both) on
    `threads` threads in parallel."""
    c = lb.ranked(x).shape[1]
    if c % threads:
        raise ValueError(f"{threads} threads do not divide {c} channels")
    if threads == 1:
        return rows(x, dest)
    part = c // threads
    forall = scf.ForallOp([0], [threads], [1], [dest])
    with ir.InsertionPoint(forall.body):
        channel = arith.muli(forall.induction_variables[0], lb.scalar(ir.IndexType.get(), part))
        shared = forall.inner_iter_args[0]
        done = rows(lb.slice_along(x, 1, channel, part), lb.slice_along(shared, 1, channel, part))
        in_parallel = scf.InParallelOp()
        with ir.InsertionPoint(in_parallel.region.blocks[0]):
            lb.parallel_insert_along(done, shared, 1, channel)
    return forall.results[0]


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


def pooled(
    x: ir.Value,
    out_shape: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    padding: Sequence[int],
    combine,
    lanes: int,
    threads: int = 1,
    fill: ir.Value | None = None,
) -> ir.Value:
    """A pool of `x` [N, C, H, W] into `out_shape`, padded by `padding` (top, left, bottom,
    right), each output row computed in registers: per row of the window, one contiguous run
    of the input covers the windows of `lanes` outputs, and each tap is a shuffle of it
    (every s-th element from the tap's column). The input is read once, in place: without a
    `fill` value, a window row or column in the padding reads the nearest row or column of
    the input instead, which the window holds anyway and which leaves a max as it is; with
    one (a sum's 0), padded columns are that value and a padded row's taps are replaced by
    it. No output is written more than once; with `threads` (which divide the channels),
    equal parts of the channels run in parallel."""
    element = lb.ranked(x).element_type
    result = lb.empty(list(out_shape), element)
    # Narrow floats are pooled in f32 (LLVM cannot select some bf16 vector shuffles on x86);
    # a max is exact either way, a sum rounds once. f32 and f64 pool in their own type.
    wide = ir.F32Type.get() if str(element) in ("f16", "bf16") else element
    if fill is not None and fill.type != wide:
        fill = arith.extf(wide, fill)
    window = _Window(tuple(kernel), tuple(strides), tuple(padding), combine, fill, wide)
    return _by_channels(
        x, result, threads, lambda part, dest: _pool_rows(part, dest, window, lanes)
    )


@dataclass(frozen=True)
class _Window:
    kernel: tuple[int, int]
    strides: tuple[int, int]
    padding: tuple[int, int, int, int]
    combine: Callable[[ir.Value, ir.Value], ir.Value]
    fill: ir.Value | None  # None: padding reads the nearest input (a max's)
    wide: ir.Type  # the element type the taps are combined in

    def read(self, x: ir.Value, indices, length: int) -> ir.Value:
        """`length` elements of `x` from `indices`, in the type the taps are combined in."""
        run = lb.read_run(x, indices, length)
        if lb.ranked(x).element_type == self.wide:
            return run
        return arith.extf(ir.VectorType.get([length], self.wide), run)

    def write(self, acc: ir.Value, dest: ir.Value, indices) -> ir.Value:
        element = lb.ranked(dest).element_type
        if element != self.wide:
            acc = arith.truncf(ir.VectorType.get(ir.VectorType(acc.type).shape, element), acc)
        return lb.write_run(acc, dest, indices)

    def span(self, count: int) -> int:
        """The input columns that the windows of `count` adjacent outputs cover."""
        return (count - 1) * self.strides[1] + self.kernel[1]

    def add_row(self, acc, taps: ir.Value, inside: ir.Value | None):
        """`acc` combined with one window row's `taps`; `inside`: whether the row is an input
        row (None: always), the fill value in its place where not."""
        if inside is not None:
            padding = vector.broadcast(taps.type, self.fill)
            taps = arith.select(inside, taps, padding)
        return taps if acc is None else self.combine(acc, taps)


def _pool_rows(x, dest, window: _Window, lanes: int) -> ir.Value:
    """`dest` [N, C, OH, OW] with each output row pooled from `x`, `lanes` outputs at a
    time, then what is left. The runs whose windows reach into the left or right padding are
    built one by one; those between them, in a loop."""
    n, c, oh, ow = lb.ranked(dest).shape
    width = lb.ranked(x).shape[3]
    sw, left = window.strides[1], window.padding[1]
    index = ir.IndexType.get()
    runs, tail = divmod(ow, lanes)
    pieces = [(k * lanes, lanes) for k in range(runs)] + ([(runs * lanes, tail)] if tail else [])

    def inside(piece) -> bool:
        first, count = piece
        start = first * sw - left
        return start >= 0 and start + window.span(count) <= width

    middle = [k for k, piece in enumerate(pieces) if inside(piece) and piece[1] == lanes]
    loop_from, loop_to = (middle[0], middle[-1] + 1) if middle else (0, 0)
    rows = lb.loop_over([n, c, oh], dest)
    with ir.InsertionPoint(rows.body):
        row = lb.delinearize(rows.induction_variable, [n, c, oh])
        input_rows = _input_rows(x, row[2], window)
        result = rows.inner_iter_args[0]
        for k, (first, count) in enumerate(pieces):
            if k == loop_from and loop_to > loop_from:
                bounds = [lb.scalar(index, bound) for bound in (loop_from, loop_to, 1)]
                loop = scf.ForOp(*bounds, [result])
                with ir.InsertionPoint(loop.body):
                    column = arith.muli(loop.induction_variable, lb.scalar(index, lanes))
                    done = _pool_run(
                        x, loop.inner_iter_args[0], row, input_rows, column, lanes, window
                    )
                    scf.YieldOp([done])
                result = loop.results[0]
            if loop_from <= k < loop_to:
                continue
            result = _edge_run(x, result, row, input_rows, first, count, window)
        scf.YieldOp([result])
    return rows.results[0]


def _input_rows(x, out_row: ir.Value, window: _Window) -> list[tuple[ir.Value, ir.Value | None]]:
    """The input row of each window row of output row `out_row`, clamped to the input, and
    whether it is one (None where it always is). A row in the padding is read as the nearest
    input row: for a max, the same as leaving it out; a fill value replaces it otherwise."""
    index = ir.IndexType.get()
    height = lb.ranked(x).shape[2]
    (kh, _), (sh, _), (top, _, bottom, _) = window.kernel, window.strides, window.padding
    first = arith.muli(out_row, lb.scalar(index, sh))
    if top:
        first = arith.subi(first, lb.scalar(index, top))
    rows = []
    for i in range(kh):
        row = arith.addi(first, lb.scalar(index, i)) if i else first
        clamped, inside = row, None
        if top and i < top:
            clamped = arith.maxsi(row, lb.scalar(index, 0))
            inside = arith.cmpi(arith.CmpIPredicate.sge, row, lb.scalar(index, 0))
        if bottom and i >= kh - bottom:
            clamped = arith.minsi(clamped, lb.scalar(index, height - 1))
            below = arith.cmpi(arith.CmpIPredicate.slt, row, lb.scalar(index, height))
            inside = below if inside is None else arith.andi(inside, below)
        rows.append((clamped, inside if window.fill is not None else None))
    return rows


def _pool_run(x, dest, row, input_rows, column, count: int, window: _Window) -> ir.Value:
    """`dest` with `count` outputs of output row `row` (image, channel, output row) from
    output column `column`, whose windows are all inside the input's columns. Per window
    row, the count * sw input elements from the first output's window (whole vectors, for a
    full count) and the kw - sw after them are read; tap j of output t is element j + sw * t.
    Phase p's elements of the first part (one permute of two registers) are tap p; tap
    p + sw * q is that vector shifted by q lanes, with the phase's first q elements of the
    second part behind it. (Read as one vector of (count - 1) * sw + kw elements and
    shuffled tap by tap, the taps were assembled element by element.)"""
    index = ir.IndexType.get()
    (_, kw), (_, sw), left = window.kernel, window.strides, window.padding[1]
    image, channel, out_row = row
    start = arith.muli(column, lb.scalar(index, sw))
    if left:
        start = arith.subi(start, lb.scalar(index, left))
    span = window.span(count)
    main = min(count * sw, span)
    acc = None
    for input_row, inside in input_rows:
        values = window.read(x, [image, channel, input_row, start], main)
        rest = None
        if span > main:
            after = arith.addi(start, lb.scalar(index, main))
            rest = window.read(x, [image, channel, input_row, after], span - main)
        taps = None
        for phase in range(min(sw, kw)):
            lanes = vector.shuffle(values, values, [phase + sw * t for t in range(count)])
            shifts = (kw - 1 - phase) // sw  # taps phase + sw * q, q = 1 .. shifts
            behind = None
            if shifts:
                # As long as `lanes` (the rest arbitrary): shuffles of two lengths lower to
                # an element-by-element insert.
                firsts = [phase + sw * r for r in range(shifts)]
                behind = vector.shuffle(rest, rest, firsts + [0] * (count - shifts))
            for shift in range(shifts + 1):
                tap = lanes
                if shift:
                    tap = vector.shuffle(lanes, behind, [shift + t for t in range(count)])
                taps = tap if taps is None else window.combine(taps, tap)
        acc = window.add_row(acc, taps, inside)
    return window.write(acc, dest, [image, channel, out_row, column])


def _edge_run(x, dest, row, input_rows, first: int, count: int, window: _Window) -> ir.Value:
    """`dest` with `count` outputs of output row `row` from output column `first`, whose
    windows reach into the padding: per window row the input columns they cover are read
    and each tap is a shuffle of them, a column in the padding taken as the nearest input
    column (for a max, the same as leaving it out) or as the fill value."""
    index = ir.IndexType.get()
    (_, kw), (_, sw), left = window.kernel, window.strides, window.padding[1]
    width = lb.ranked(x).shape[3]
    image, channel, out_row = row
    low = first * sw - left
    start, end = max(low, 0), min(low + window.span(count), width)

    def source(column: int) -> int:
        if window.fill is not None and not 0 <= column < width:
            return end - start  # the first lane of the fill vector
        return min(max(column, 0), width - 1) - start

    acc = None
    for input_row, inside in input_rows:
        values = window.read(x, [image, channel, input_row, lb.scalar(index, start)], end - start)
        padding = values
        if window.fill is not None:
            padding = vector.broadcast(values.type, window.fill)
        taps = None
        for j in range(kw):
            tap = vector.shuffle(values, padding, [source(low + j + sw * t) for t in range(count)])
            taps = tap if taps is None else window.combine(taps, tap)
        acc = window.add_row(acc, taps, inside)
    return window.write(acc, dest, [image, channel, out_row, lb.scalar(index, first)])
