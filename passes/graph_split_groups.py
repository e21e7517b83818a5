"""`--graph-split-groups`: a grouped conv as one conv per group, joined along the channels.

A conv of `groups` groups with several input channels each (AlexNet's group of 2, ShuffleNet's
1x1 convs of 3 or 8) is `groups` independent convs: group g reads input channels
[g I, (g + 1) I) and writes output channels [g O/G, (g + 1) O/G). Each is an ordinary conv,
which the CPU pipeline lowers as patches times packed weights; a grouped conv had no such
lowering and ran as scalar loops (AlexNet's three grouped convs took 88% of its time, 8x
onnxruntime's). Constant weights and biases are split into constants of their own (packed as
the kernel compiles); others are sliced. Depthwise convs (one input channel a group) keep
their own lowering and are left alone.
"""

from __future__ import annotations

from mlir import ir

from ..dialects import graph as g
from ..dialects.graph import Graph
from .constant_data import elements_of, resource_attr
from .ir_query import defining_op
from .registry import register_pass


def _channels(value: ir.Value, axis: int, first: int, count: int) -> ir.Value:
    """Elements [first, first + count) of `value` along `axis`: a constant of their own where
    `value` is one, else a graph.slice."""
    tensor_type = ir.RankedTensorType(value.type)
    shape = list(tensor_type.shape)
    producer = defining_op(value)
    if producer is not None and producer.name == "graph.constant":
        attr = producer.attributes["value"]
        part_shape = shape[:axis] + [count] + shape[axis + 1 :]
        part_type = ir.RankedTensorType.get(part_shape, tensor_type.element_type)
        if isinstance(attr, ir.DenseElementsAttr) and ir.DenseElementsAttr(attr).is_splat:
            splat = ir.DenseElementsAttr(attr).get_splat_value()
            return g.constant(
                value=ir.DenseElementsAttr.get_splat(part_type, splat), result_type=part_type
            )
        data = elements_of(attr)
        if data is not None:
            part = data[(slice(None),) * axis + (slice(first, first + count),)]
            attr = resource_attr(part.copy(), tensor_type.element_type, "group_weight")
            return g.constant(value=attr, result_type=part_type)
    starts = [0] * len(shape)
    ends = list(shape)
    starts[axis], ends[axis] = first, first + count
    return g.slice(value, starts=starts, ends=ends, steps=[1] * len(shape))


def _split(op) -> None:
    groups = op.groups
    out_channels, in_per_group = ir.RankedTensorType(op.weight.type).shape[:2]
    if groups == 1 or in_per_group == 1:
        return
    out_per_group = out_channels // groups
    operation = op.operation
    with ir.InsertionPoint(operation), operation.location:
        parts = []
        for group in range(groups):
            operands = [
                _channels(op.input, 1, group * in_per_group, in_per_group),
                _channels(op.weight, 0, group * out_per_group, out_per_group),
            ]
            if op.bias is not None:
                operands.append(_channels(op.bias, 0, group * out_per_group, out_per_group))
            conv = g.conv2d(
                *operands,
                strides=list(op.strides),
                padding=list(op.padding),
                dilations=list(op.dilations),
                groups=1,
            )
            parts.append(conv)
        joined = g.join(parts, axis=1)
    operation.results[0].replace_all_uses_with(joined)
    producers = [defining_op(v) for v in operation.operands[1:]]
    operation.erase()
    for producer in producers:  # constants that the groups' own replaced
        if producer is not None and producer.name == "graph.constant":
            if not list(producer.results[0].uses):
                producer.erase()


@register_pass(
    "graph-split-groups", "Grouped convs (several input channels a group) as a conv per group"
)
def graph_split_groups(module: ir.Operation) -> None:
    convs = []
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name != "func.func":
            continue
        for block in op.regions[0].blocks:
            convs += [Graph.view(c) for c in block.operations if c.operation.name == "graph.conv2d"]
    for conv in convs:
        _split(conv)
