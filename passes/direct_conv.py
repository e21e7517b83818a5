"""A conv of stride 1 as a contraction that reads its input in place (no im2col patches).

The padded input of each channel is laid out as one row of `Hp * P` pixels (plus a tail of
zeros): `Hp` rows of `P = W + max(left, right)` pixels, each image row after `left` zeros,
the zeros between two rows serving as the right border of one and the left border of the
next. The output is rows of `P` pixels of which the first `OW` are kept: output pixel
`n = y * P + x` of tap `(i, j)` then reads input pixel `n + i * P + j` of the channel's row.
Every tap of a run of output pixels is a contiguous run of the input, so the micro-kernel
loads its B vectors straight from the input, shifted by the tap: the conv is

    out[o, n] += w[o, c, i, j] * flat[c, i * P + j + n]

over (o, n) in parallel and (c, i, j) reduced, a generic whose maps are affine. The `P - OW`
extra pixels of each output row (and the pad of the last row to whole micro-kernels) read
pixels of the next row or the tail: they are computed and dropped (3x3 on 56x56: 2% more
columns; shared borders took 2-6% off the time of 3x3 convs on 56x56 to 27x27 maps against
rows of W + left + right pixels, 1 thread of a znver4).

The micro-kernels walk (O/mr, N/nr) with the output channels outside, each mr x nr C tile in
registers across the taps; a micro-kernel's weights stay in L1/L2 while it walks the image, and
the image of a ResNet stage (0.2-0.9 MB padded) stays in L2. Against im2col (patches of
C*KH*KW rows written out, then packed into panels: two copies of 9x the input for a 3x3
window), on 1 thread of a znver4, medians: 3x3 convs of 64 channels on 56x56 1.14x, 16 -> 64
on 55x55 1.23x, 128 on 28x28 1.04x; on 2 threads 1.16-1.22x. The padded columns cost what
they add: 256 channels on 14x14 (14% more columns) ran 0.95x, 512 on 7x7 (31%) 0.87x, which is
why --tile-configure leaves those to im2col.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from mlir import ir
from mlir.dialects import arith

from . import constant_data
from . import linalg_builders as lb
from .ir_query import constant_value, defining_op


@dataclasses.dataclass(frozen=True)
class Layout:
    """The shapes of a direct conv: `channels` rows of `row` input pixels (`height` rows of
    `width` pixels, the image at `offsets` among zeros, then a tail of zeros), `columns`
    output pixels a row of the product (`out_height` rows of `width`, rounded up to whole
    micro-kernels)."""

    channels: int
    height: int
    width: int
    offsets: tuple[int, int]
    out_height: int
    out_width: int
    columns: int
    row: int


def layout(image: tuple[int, int, int], window: tuple[int, int], padding, step: int) -> Layout:
    """The layout of a stride-1 conv of a [C, H, W] image with a `window` (KH, KW) and `padding`
    (top, left, bottom, right), its product's columns rounded up to a multiple of `step`.
    Rows of the image share their zeros: the right border of one row reads on into the left
    border of the next, so a row is W + max(left, right) pixels, not W + left + right (3x3 on
    28x28: 812 columns, not 840)."""
    c, h, w = image
    top, left, bottom, right = padding
    height = h + top + bottom
    out_height, out_width = height - window[0] + 1, w + left + right - window[1] + 1
    width = max(w + max(left, right), out_width)
    columns = -(-out_height * width // step) * step
    last_read = (window[0] - 1) * width + window[1] - 1 + columns
    # Each channel's row starts on a 64-byte line.
    row = -(-max(height * width, last_read) // 16) * 16
    return Layout(c, height, width, (top, left), out_height, out_width, columns, row)


def unsupported(conv: ir.Operation, rows: int) -> str | None:
    """Why `conv` (a linalg.conv_2d_nchw_fchw) cannot be computed directly in micro-kernels of
    `rows` output channels, or None."""
    x, w, out = (lb.ranked(v) for v in conv.operands)
    if x.shape[0] != 1:
        return f"{x.shape[0]} images (one only)"
    for name in ("strides", "dilations"):
        if name in conv.attributes and set(ir.DenseIntElementsAttr(conv.attributes[name])) != {1}:
            return f"{name} other than 1"
    if w.shape[0] % rows:
        return f"{w.shape[0]} output channels, not a multiple of {rows}"
    if any(str(t.element_type) != "f32" for t in (x, w, out)):
        return "elements other than f32"
    return None


def rewrite(conv: ir.Operation, rows: int, step: int) -> ir.Operation:
    """Replaces a zero-initialized NCHW conv (one image, stride and dilation 1; see
    `unsupported`) by the direct contraction over (O/rows, rows, N, C, KH, KW), `rows` output
    channels a micro-kernel, its columns a multiple of `step`; returns it. Constant weights
    are laid out [O/rows, C, KH, KW, rows] as the conv is compiled: each tap's weights for a
    micro-kernel's channels side by side, as the micro-kernel reads them."""
    x, w, _ = conv.operands
    out = lb.ranked(conv.results[0])
    element = out.element_type
    o = out.shape[1]
    image, (top, left) = _unpadded(x)
    _, c, h, wd = lb.ranked(image).shape
    padded_h, padded_w = lb.ranked(x).shape[2:]
    padding = [top, left, padded_h - h - top, padded_w - wd - left]
    shape = layout((c, h, wd), lb.ranked(w).shape[2:], padding, step)
    width = shape.width  # the pitch of the flat rows, which the padded width need not be
    with ir.InsertionPoint(conv), conv.location:
        zero = lb.scalar(element, 0)
        flat = _flat_input(image, shape, zero)
        d = [ir.AffineDimExpr.get(i) for i in range(6)]  # o/rows, o%rows, n, c, i, j
        weights = _panels(w, rows)
        if weights is None:
            weights, w_map = w, [d[0] * rows + d[1], 3, 4, 5]
        else:
            w_map = [0, 3, 4, 5, 1]
        product = lb.generic(
            [weights, flat],
            lb.filled([o // rows, rows, shape.columns], element, zero),
            [w_map, [3, d[4] * width + d[5] + d[2]], [0, 1, 2]],
            ["parallel"] * 3 + ["reduction"] * 3,
            _multiply_add,
        )
        whole = lb.collapse(product, [[0, 1], [2]], [o, shape.columns])
        kept = lb.extract_slice(whole, [0, 0], [o, shape.out_height * width], [1, 1])
        by_row = lb.expand(kept, [[0], [1, 2]], [o, shape.out_height, width])
        cropped = lb.extract_slice(
            by_row, [0, 0, 0], [o, shape.out_height, shape.out_width], [1, 1, 1]
        )
        result = lb.expand(cropped, [[0, 1], [2], [3]], [1, o, shape.out_height, shape.out_width])
    conv.results[0].replace_all_uses_with(result)
    conv.erase()
    return product.owner.operation


def _flat_input(image: ir.Value, shape: Layout, zero: ir.Value) -> ir.Value:
    """The image [1, C, H, W] as rows of `shape.row` pixels a channel, zeros around it."""
    c, height, width = shape.channels, shape.height, shape.width
    flat = lb.filled([c, shape.row], zero.type, zero)
    rows = lb.expand(
        lb.extract_slice(flat, [0, 0], [c, height * width], [1, 1]),
        [[0], [1, 2]],
        [c, height, width],
    )
    unbatched = lb.collapse(image, [[0, 1], [2], [3]], lb.ranked(image).shape[1:])
    rows = lb.insert_slice(unbatched, rows, [0, *shape.offsets])
    return lb.insert_slice(lb.collapse(rows, [[0], [1, 2]], [c, height * width]), flat, [0, 0])


def _panels(w: ir.Value, rows: int) -> ir.Value | None:
    """Constant weights [O, C, KH, KW] as [O/rows, C, KH, KW, rows]; None if not constant."""
    data = constant_data.constant_array(w)
    if data is None:
        return None
    o, c, kh, kw = data.shape
    panels = data.reshape(o // rows, rows, c, kh, kw).transpose(0, 2, 3, 4, 1)
    element = lb.ranked(w).element_type
    return constant_data.resource_constant(np.ascontiguousarray(panels), element, "panels")


def _multiply_add(a: ir.Value, b: ir.Value, acc: ir.Value) -> ir.Value:
    # `contract`: each step becomes one FMA (the product unrounded), as im2col's matmul does.
    contract = ir.Attribute.parse("#arith.fastmath<contract>")
    return arith.addf(acc, arith.mulf(a, b, fastmath=contract), fastmath=contract)


def _unpadded(x: ir.Value) -> tuple[ir.Value, tuple[int, int]]:
    """The image a padded conv input was made from and where it sits in it (top, left):
    --graph-to-linalg pads by inserting the image into a buffer whose borders it zeroes. An
    input that is not such a pad is the image itself, unpadded."""
    insert = defining_op(x)
    if insert is None or insert.name != "tensor.insert_slice" or not _zero_borders(insert):
        return x, (0, 0)
    offsets = list(ir.DenseI64ArrayAttr(insert.attributes["static_offsets"]))
    strides = list(ir.DenseI64ArrayAttr(insert.attributes["static_strides"]))
    dynamic = len(insert.operands) > 2
    source = lb.ranked(insert.operands[0]).shape
    if (
        dynamic
        or strides != [1, 1, 1, 1]
        or offsets[:2] != [0, 0]
        or source[:2] != lb.ranked(x).shape[:2]
    ):
        return x, (0, 0)
    return insert.operands[0], (offsets[2], offsets[3])


def _zero_borders(insert: ir.Operation) -> bool:
    """Whether the buffer that `insert` writes into holds zeros, or nothing defined, but where
    it writes: a tensor.empty, zero-filled whole or in slices inserted into it."""
    dest = insert.operands[1]
    while True:
        op = defining_op(dest)
        if op is None or op.name not in ("tensor.empty", "linalg.fill", "tensor.insert_slice"):
            return False
        if op.name == "tensor.empty":
            return True
        fill = op if op.name == "linalg.fill" else defining_op(op.operands[0])
        if fill is None or fill.name != "linalg.fill" or constant_value(fill.operands[0]) != 0:
            return False
        dest = op.operands[1]
