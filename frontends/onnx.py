"""ONNX models into the graph dialect.

`import_model(model)` returns a module with one `func.func @main` whose arguments are the graph
inputs that are not initializers (in order) and whose results are the graph outputs. Weights
become `graph.constant`s holding `dense_resource` blobs (splats stay `dense<v>`). Shapes are
static: ops whose inputs are all known at import time (shape arithmetic, ConstantOfShape, ...)
are folded with numpy or the ONNX reference evaluator, and inputs that an op needs as a
compile-time value (a Reshape's shape, say) can be given with `constants=`.

`load(path)` reads a model file safely: a size limit, no external data outside the model's
folder, protobuf only (nothing is ever unpickled).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

import numpy as np
import onnx
from mlir import ir
from mlir.dialects import func
from onnx import helper, numpy_helper

from ..dialects import graph as g
from ..source import make_context
from .builder import GraphBuilder, UnsupportedModel, ceil_mode_padding, tensor_type

MAX_MODEL_BYTES = 2 << 30
"""Models (with their external data) larger than this are refused unless a larger limit is given."""


class OnnxImportError(UnsupportedModel):
    """The model cannot be imported; the message names the node and op where there is one."""


class NeedsConstant(OnnxImportError):
    """An op needs the value of a graph input at compile time (pass it in `constants`)."""

    def __init__(self, name: str, message: str):
        super().__init__(message)
        self.name = name


# ----------------------------------------------------------------------------------------------
# Loading.


def load(path: str | os.PathLike, *, max_bytes: int = MAX_MODEL_BYTES) -> onnx.ModelProto:
    """Reads an ONNX model file, refusing files over `max_bytes`, non-protobuf files and
    external data that would be read from outside the model's folder."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise OnnxImportError(f"{path}: no such file")
    size = os.path.getsize(path)
    if size > max_bytes:
        raise OnnxImportError(
            f"{path}: the model is {size} bytes, over the limit of {max_bytes} bytes"
        )
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x80\x04" or data[:1] == b"\x80":
        raise OnnxImportError(f"{path}: this is a Python pickle, not an ONNX model; it is not read")
    try:
        model = onnx.load_model_from_string(data)
    except Exception as error:  # protobuf's DecodeError and friends
        raise OnnxImportError(f"{path}: not an ONNX model ({error})") from None
    if not model.graph.node and not model.graph.output:
        raise OnnxImportError(f"{path}: not an ONNX model (no graph)")
    _load_external_data(model, os.path.dirname(os.path.abspath(path)), max_bytes - size)
    return model


def _external_tensors(model: onnx.ModelProto):
    for t in model.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            yield t
    for node in model.graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR and (
                attr.t.data_location == onnx.TensorProto.EXTERNAL
            ):
                yield attr.t


def _load_external_data(model: onnx.ModelProto, folder: str, budget: int) -> None:
    real_folder = os.path.realpath(folder)
    for t in _external_tensors(model):
        info = {e.key: e.value for e in t.external_data}
        location = info.get("location", "")
        if (
            not location
            or os.path.isabs(location)
            or ".." in location.replace("\\", "/").split("/")
        ):
            raise OnnxImportError(
                f"tensor '{t.name}': external data location '{location}' must be a relative path "
                "inside the model's folder"
            )
        file = os.path.realpath(os.path.join(folder, location))
        if os.path.commonpath([file, real_folder]) != real_folder:
            raise OnnxImportError(
                f"tensor '{t.name}': external data '{location}' resolves outside the model's folder"
            )
        if not os.path.isfile(file):
            raise OnnxImportError(f"tensor '{t.name}': external data file '{location}' is missing")
        offset = int(info.get("offset", 0))
        length = int(info["length"]) if "length" in info else os.path.getsize(file) - offset
        budget -= length
        if budget < 0:
            raise OnnxImportError("the model's external data is over the size limit")
        with open(file, "rb") as f:
            f.seek(offset)
            t.raw_data = f.read(length)
        del t.external_data[:]
        t.data_location = onnx.TensorProto.DEFAULT


# ----------------------------------------------------------------------------------------------
# Element types.


def _onnx_dtype(elem_type: int) -> np.dtype:
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except Exception:
        name = onnx.TensorProto.DataType.Name(elem_type)
        raise OnnxImportError(f"element type {name} is not supported") from None


# ----------------------------------------------------------------------------------------------
# The importer.

Converter = Callable[["Importer", onnx.NodeProto, list, dict], list]
CONVERTERS: dict[str, Converter] = {}


def converter(*op_types: str):
    def register(fn):
        for op_type in op_types:
            CONVERTERS[op_type] = fn
        return fn

    return register


def supported_ops() -> list[str]:
    """The ONNX op types the importer converts (others fold only when their inputs are constant)."""
    return sorted(CONVERTERS)


class Importer(GraphBuilder):
    """Converts one graph. Values are MLIR Values or numpy arrays (known at import time)."""

    resource_prefix = "onnx_weight"

    def __init__(self, opset: int):
        super().__init__()
        self.opset = opset
        self.values: dict = {}
        self.arguments: dict = {}  # block argument -> graph input name

    def known(self, x, what: str) -> np.ndarray:
        """The import-time value of `x`; NeedsConstant when it is only known at run time."""
        if isinstance(x, ir.Value):
            name = self.arguments.get(x)
            if name is not None:
                raise NeedsConstant(name, f"{what} must be known at compile time (input '{name}')")
            raise OnnxImportError(f"{what} must be known at compile time")
        return np.asarray(x)


# ----------------------------------------------------------------------------------------------
# Entry points.


def import_model(
    model: onnx.ModelProto | str | os.PathLike,
    *,
    constants: dict[str, np.ndarray] | None = None,
    input_shapes: dict[str, list[int]] | None = None,
    context: ir.Context | None = None,
    name: str = "main",
) -> ir.Module:
    """Imports an ONNX model (a ModelProto or a path, read with `load`) into a new module."""
    if not isinstance(model, onnx.ModelProto):
        model = load(model)
    constants = dict(constants or {})
    input_shapes = dict(input_shapes or {})
    opset = _default_opset(model)
    context = context or make_context()
    with context, ir.Location.unknown():
        module = ir.Module.create()
        graph = model.graph
        importer = Importer(opset)
        values = importer.values
        for init in graph.initializer:
            values[init.name] = numpy_helper.to_array(init)
        arguments = []
        for value_info in graph.input:
            if value_info.name in values:
                continue
            if value_info.name in constants:
                values[value_info.name] = np.asarray(constants.pop(value_info.name))
                continue
            arguments.append(value_info)
        if constants:
            raise OnnxImportError(f"constants given for unknown inputs: {sorted(constants)}")
        arg_types = [_input_type(v, input_shapes.get(v.name)) for v in arguments]
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp(name, (arg_types, []))
        block = fn.add_entry_block()
        for value_info, arg in zip(arguments, block.arguments, strict=True):
            values[value_info.name] = arg
            importer.arguments[arg] = value_info.name
        with ir.InsertionPoint(block):
            for node in graph.node:
                _convert_node(importer, node, _node_location(node))
            results = []
            for output in graph.output:
                if output.name not in values:
                    raise OnnxImportError(f"graph output '{output.name}' is never computed")
                results.append(importer.tensor(values[output.name]))
            func.ReturnOp(results)
        fn.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(arg_types, [r.type for r in results])
        )
        if not module.operation.verify():
            raise OnnxImportError("the imported module does not verify")
    return module


def _default_opset(model: onnx.ModelProto) -> int:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    raise OnnxImportError("the model imports no version of the default ONNX domain")


def _input_type(value_info: onnx.ValueInfoProto, override) -> ir.Type:
    t = value_info.type
    if not t.HasField("tensor_type"):
        raise OnnxImportError(f"input '{value_info.name}' is not a tensor")
    dtype = _onnx_dtype(t.tensor_type.elem_type)
    if override is not None:
        return tensor_type(override, dtype)
    shape = []
    for dim in t.tensor_type.shape.dim:
        if not dim.HasField("dim_value"):
            label = dim.dim_param or "?"
            raise OnnxImportError(
                f"input '{value_info.name}' has a dynamic dim '{label}'; give its static shape "
                "with input_shapes= (strata-import --input-shape)"
            )
        shape.append(dim.dim_value)
    return tensor_type(shape, dtype)


def _node_location(node: onnx.NodeProto) -> ir.Location:
    return ir.Location.name(node.name or (node.output[0] if node.output else node.op_type))


def _describe(node: onnx.NodeProto) -> str:
    return f"node '{node.name or node.output[0]}' ({node.op_type})"


def _convert_node(importer: Importer, node: onnx.NodeProto, loc: ir.Location) -> None:
    if node.domain not in ("", "ai.onnx"):
        raise OnnxImportError(f"{_describe(node)}: ops of domain '{node.domain}' are not supported")
    inputs = []
    for name in node.input:
        if not name:
            inputs.append(None)
        elif name not in importer.values:
            raise OnnxImportError(f"{_describe(node)}: input '{name}' is not defined before use")
        else:
            inputs.append(importer.values[name])
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    try:
        with loc:
            outputs = _fold(importer, node, inputs, attrs)
            if outputs is None:
                convert = CONVERTERS.get(node.op_type)
                if convert is None:
                    raise OnnxImportError(f"op '{node.op_type}' is not supported")
                outputs = convert(importer, node, inputs, attrs)
    except NeedsConstant as error:
        error.args = (f"{_describe(node)}: {error.args[0]}",)
        raise
    except OnnxImportError as error:
        message = str(error)
        if not message.startswith("node '"):
            message = f"{_describe(node)}: {message}"
        raise OnnxImportError(message) from None
    except (ValueError, TypeError) as error:  # a builder's verifier rejected the operands
        raise OnnxImportError(f"{_describe(node)}: {error}") from None
    for name, value in zip(node.output, outputs, strict=False):
        if name:
            importer.values[name] = value


# Ops folded by hand: the reference evaluator would materialize their (possibly huge) outputs.
def _constant_of_shape(node, attrs, shape):
    value = attrs.get("value")
    fill = numpy_helper.to_array(value).reshape(-1)[0] if value is not None else np.float32(0)
    return [np.broadcast_to(np.asarray(fill), tuple(int(d) for d in shape))]


def _fold(importer: Importer, node: onnx.NodeProto, inputs: list, attrs: dict) -> list | None:
    """Evaluates `node` at import time when every input is known; None when it cannot."""
    if any(isinstance(x, ir.Value) for x in inputs):
        return None
    if node.op_type == "Constant":
        return CONVERTERS["Constant"](importer, node, inputs, attrs)
    if node.op_type == "ConstantOfShape":
        return _constant_of_shape(node, attrs, inputs[0])
    if node.op_type in _NEVER_FOLDED:
        return None
    from onnx.reference import ReferenceEvaluator

    feeds, graph_inputs = {}, []
    renamed = onnx.NodeProto()
    renamed.CopyFrom(node)
    for i, (name, x) in enumerate(zip(node.input, inputs, strict=True)):
        if name:
            renamed.input[i] = f"in{i}"
            feeds[f"in{i}"] = x = np.ascontiguousarray(x)
            tensor_type = helper.np_dtype_to_tensor_dtype(x.dtype)
            graph_inputs.append(helper.make_tensor_value_info(f"in{i}", tensor_type, x.shape))
    outputs = [helper.make_empty_tensor_value_info(name) for name in node.output if name]
    model = helper.make_model(
        helper.make_graph([renamed], "fold", graph_inputs, outputs),
        opset_imports=[helper.make_opsetid("", importer.opset)],
    )
    try:
        results = ReferenceEvaluator(model).run(None, feeds)
    except Exception as error:
        raise OnnxImportError(f"folding the constant inputs failed: {error}") from None
    return [np.asarray(r) for r in results]


_NEVER_FOLDED = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike"}


# ----------------------------------------------------------------------------------------------
# Converters. Each gets the importer, the node, its inputs (Values, numpy arrays or None for
# absent optional inputs) and its attributes, and returns the outputs in order.


def _text(attrs: dict, key: str, default: str) -> str:
    value = attrs.get(key, default)
    return value.decode() if isinstance(value, bytes) else value


def _attr_or_input(importer, attrs, inputs, attr_name, index, since, what):
    """Attributes that became inputs in opset `since` (axes, pads, split, ...)."""
    if importer.opset < since:
        value = attrs.get(attr_name)
        return None if value is None else np.asarray(value)
    if len(inputs) > index and inputs[index] is not None:
        return importer.known(inputs[index], what)
    return None


def _binary(build):
    def convert(importer, node, inputs, attrs):
        lhs, rhs = inputs[0], inputs[1]
        return [build(importer.tensor(lhs), importer.tensor(rhs))]

    return convert


for _op_type, _build in {
    "Add": g.add,
    "Sub": g.sub,
    "Mul": g.mul,
    "Div": g.div,
    "Equal": g.equal,
    "Less": g.less,
    "LessOrEqual": g.less_equal,
    "Greater": g.greater,
    "GreaterOrEqual": g.greater_equal,
    "And": g.logical_and,
    "Or": g.logical_or,
    "Xor": g.logical_xor,
}.items():
    converter(_op_type)(_binary(_build))


@converter("Pow")
def _pow(importer, node, inputs, attrs):
    base = importer.tensor(inputs[0])
    dtype = importer.dtype(base)
    if np.issubdtype(dtype, np.floating):
        return [g.pow(base, importer.cast(inputs[1], dtype))]
    # Integer powers are exact in f64 for the magnitudes integers can hold without overflow.
    wide = g.pow(importer.cast(base, np.float64), importer.cast(inputs[1], np.float64))
    return [importer.cast(wide, dtype)]


@converter("Sum", "Max", "Min", "Mean")
def _variadic(importer, node, inputs, attrs):
    build = {"Sum": g.add, "Mean": g.add, "Max": g.maximum, "Min": g.minimum}[node.op_type]
    result = importer.tensor(inputs[0])
    for x in inputs[1:]:
        result = build(result, importer.tensor(x))
    if node.op_type == "Mean":
        result = g.div(result, importer.scalar(result, len(inputs)))
    return [result]


_UNARY = {
    "Relu": g.relu,
    "Neg": g.neg,
    "Abs": g.abs,
    "Exp": g.exp,
    "Log": g.log,
    "Sqrt": g.sqrt,
    "Tanh": g.tanh,
    "Sigmoid": g.sigmoid,
    "Erf": g.erf,
    "Floor": g.floor,
    "Ceil": g.ceil,
    "Round": g.round,
    "Sin": g.sin,
    "Cos": g.cos,
    "Not": g.logical_not,
}


@converter(*_UNARY)
def _unary(importer, node, inputs, attrs):
    return [_UNARY[node.op_type](importer.tensor(inputs[0]))]


@converter("Identity")
def _identity(importer, node, inputs, attrs):
    return [inputs[0]]


@converter("Dropout")
def _dropout(importer, node, inputs, attrs):
    # Inference: the identity. A training-mode dropout would need random numbers.
    if len(inputs) > 2 and inputs[2] is not None:
        if bool(importer.known(inputs[2], "training_mode")):
            raise OnnxImportError("training_mode dropout is not supported")
    x = inputs[0]
    outputs = [x]
    if len(node.output) > 1 and node.output[1]:
        outputs.append(np.ones(importer.shape(x), dtype=np.bool_))
    return outputs


def _activation(build):
    def convert(importer, node, inputs, attrs):
        x = importer.tensor(inputs[0])
        return [build(importer, x, attrs)]

    return convert


def _softplus(imp, x, attrs):
    return g.log(g.add(g.exp(x), imp.scalar(x, 1.0)))


def _elu(imp, x, attrs, alpha=None, scale=1.0):
    alpha = attrs.get("alpha", 1.0) if alpha is None else alpha
    negative = g.mul(imp.scalar(x, alpha), g.sub(g.exp(x), imp.scalar(x, 1.0)))
    result = g.where(g.greater(x, imp.scalar(x, 0.0)), x, negative)
    return result if scale == 1.0 else g.mul(result, imp.scalar(x, scale))


def _hard_sigmoid(imp, x, alpha, beta):
    linear = g.add(g.mul(x, imp.scalar(x, alpha)), imp.scalar(x, beta))
    return g.clamp(linear, min=0.0, max=1.0)


_ACTIVATIONS = {
    "Reciprocal": lambda imp, x, a: g.div(imp.scalar(x, 1.0), x),
    "Softplus": _softplus,
    "Softsign": lambda imp, x, a: g.div(x, g.add(g.abs(x), imp.scalar(x, 1.0))),
    "Elu": _elu,
    "Selu": lambda imp, x, a: _elu(
        imp,
        x,
        a,
        alpha=a.get("alpha", 1.67326319217681884765625),
        scale=a.get("gamma", 1.05070102214813232421875),
    ),
    "Celu": lambda imp, x, a: g.add(
        g.maximum(x, imp.scalar(x, 0.0)),
        g.minimum(
            imp.scalar(x, 0.0),
            g.mul(
                imp.scalar(x, a.get("alpha", 1.0)),
                g.sub(g.exp(g.div(x, imp.scalar(x, a.get("alpha", 1.0)))), imp.scalar(x, 1.0)),
            ),
        ),
    ),
    "LeakyRelu": lambda imp, x, a: g.where(
        g.less(x, imp.scalar(x, 0.0)), g.mul(x, imp.scalar(x, a.get("alpha", 0.01))), x
    ),
    "ThresholdedRelu": lambda imp, x, a: g.where(
        g.greater(x, imp.scalar(x, a.get("alpha", 1.0))), x, imp.scalar(x, 0.0)
    ),
    "HardSigmoid": lambda imp, x, a: _hard_sigmoid(imp, x, a.get("alpha", 0.2), a.get("beta", 0.5)),
    "HardSwish": lambda imp, x, a: g.mul(x, _hard_sigmoid(imp, x, 1.0 / 6.0, 0.5)),
    "Mish": lambda imp, x, a: g.mul(x, g.tanh(_softplus(imp, x, a))),
    "Gelu": lambda imp, x, a: g.gelu(x, approximate=_text(a, "approximate", "none")),
    "Sign": lambda imp, x, a: g.where(
        g.greater(x, imp.scalar(x, 0)),
        imp.scalar(x, 1),
        g.where(g.less(x, imp.scalar(x, 0)), imp.scalar(x, -1), imp.scalar(x, 0)),
    ),
}
for _op_type, _build in _ACTIVATIONS.items():
    converter(_op_type)(_activation(_build))


@converter("PRelu")
def _prelu(importer, node, inputs, attrs):
    x, slope = importer.tensor(inputs[0]), importer.tensor(inputs[1])
    return [g.where(g.less(x, importer.scalar(x, 0.0)), g.mul(x, slope), x)]


@converter("Clip")
def _clip(importer, node, inputs, attrs):
    x = importer.tensor(inputs[0])
    if importer.opset < 11:
        low, high = attrs.get("min"), attrs.get("max")
    else:
        low = inputs[1] if len(inputs) > 1 else None
        high = inputs[2] if len(inputs) > 2 else None
    result = x
    if low is not None:
        result = g.maximum(result, importer.cast(low, importer.dtype(x)))
    if high is not None:
        result = g.minimum(result, importer.cast(high, importer.dtype(x)))
    return [result]


@converter("Cast")
def _cast(importer, node, inputs, attrs):
    return [importer.cast(inputs[0], _onnx_dtype(attrs["to"]))]


@converter("CastLike")
def _cast_like(importer, node, inputs, attrs):
    return [importer.cast(inputs[0], importer.dtype(inputs[1]))]


@converter("Where")
def _where(importer, node, inputs, attrs):
    return [g.where(*(importer.tensor(x) for x in inputs))]


@converter("Constant")
def _constant_node(importer, node, inputs, attrs):
    if "value" in attrs:
        return [numpy_helper.to_array(attrs["value"])]
    for key, dtype in (
        ("value_float", np.float32),
        ("value_floats", np.float32),
        ("value_int", np.int64),
        ("value_ints", np.int64),
    ):
        if key in attrs:
            return [np.asarray(attrs[key], dtype=dtype)]
    raise OnnxImportError(f"Constant with attributes {sorted(attrs)} is not supported")


# -- contractions ------------------------------------------------------------------------------


@converter("MatMul")
def _matmul(importer, node, inputs, attrs):
    return [g.matmul(importer.tensor(inputs[0]), importer.tensor(inputs[1]))]


def _transposed(importer, x) -> ir.Value:
    """x^T: a weight (known at import time) is transposed here, once; at run time its
    transpose moved the whole weight on every call (ResNet-50's classifier, 8 MiB: 10 ms)."""
    if isinstance(x, ir.Value):
        return g.transpose(x, perm=[1, 0])
    return importer.tensor(np.ascontiguousarray(np.swapaxes(x, 0, 1)))


@converter("Gemm")
def _gemm(importer, node, inputs, attrs):
    a, b = inputs[0], inputs[1]
    a = _transposed(importer, a) if attrs.get("transA", 0) else importer.tensor(a)
    b = _transposed(importer, b) if attrs.get("transB", 0) else importer.tensor(b)
    result = g.matmul(a, b)
    alpha, beta = attrs.get("alpha", 1.0), attrs.get("beta", 1.0)
    if alpha != 1.0:
        result = g.mul(result, importer.scalar(result, alpha))
    if len(inputs) > 2 and inputs[2] is not None and beta != 0.0:
        c = importer.tensor(inputs[2])
        if beta != 1.0:
            c = g.mul(c, importer.scalar(c, beta))
        result = g.add(result, c)
    return [result]


def _spatial_padding(attrs, in_shape, kernel, strides, dilations) -> list[int]:
    """[begin..., end...] pads from `pads` or `auto_pad`."""
    rank = len(kernel)
    auto_pad = _text(attrs, "auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads_begin, pads_end = [], []
        for size, k, s, d in zip(in_shape, kernel, strides, dilations, strict=True):
            total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
            small, large = total // 2, total - total // 2
            pads_begin.append(small if auto_pad == "SAME_UPPER" else large)
            pads_end.append(large if auto_pad == "SAME_UPPER" else small)
        return pads_begin + pads_end
    if auto_pad == "VALID":
        return [0] * (2 * rank)
    return list(attrs.get("pads", [0] * (2 * rank)))


@converter("Conv")
def _conv(importer, node, inputs, attrs):
    x, w = importer.tensor(inputs[0]), importer.tensor(inputs[1])
    w_shape = importer.shape(w)
    kernel = list(attrs.get("kernel_shape", w_shape[2:]))
    rank = len(kernel)
    if rank not in (1, 2):
        raise OnnxImportError(f"{rank}-D convolution is not supported (1-D and 2-D are)")
    strides = list(attrs.get("strides", [1] * rank))
    dilations = list(attrs.get("dilations", [1] * rank))
    pads = _spatial_padding(attrs, importer.shape(x)[2:], kernel, strides, dilations)
    if rank == 1:
        x, w = importer.as_2d(x), importer.as_2d(w)
        strides, dilations, kernel = [1, *strides], [1, *dilations], [1, *kernel]
        pads = [0, pads[0], 0, pads[1]]
    bias = importer.tensor(inputs[2]) if len(inputs) > 2 and inputs[2] is not None else None
    operands = (x, w) if bias is None else (x, w, bias)
    result = g.conv2d(
        *operands,
        strides=strides,
        padding=pads,
        dilations=dilations,
        groups=attrs.get("group", 1),
    )
    return [importer.from_2d(result) if rank == 1 else result]


@converter("MaxPool", "AveragePool")
def _pool(importer, node, inputs, attrs):
    x = importer.tensor(inputs[0])
    kernel = list(attrs["kernel_shape"])
    rank = len(kernel)
    if rank not in (1, 2):
        raise OnnxImportError(f"{rank}-D pooling is not supported (1-D and 2-D are)")
    if any(d != 1 for d in attrs.get("dilations", [1] * rank)):
        raise OnnxImportError("pooling with dilations is not supported")
    if node.op_type == "MaxPool" and len(node.output) > 1 and node.output[1]:
        raise OnnxImportError("MaxPool's Indices output is not supported")
    strides = list(attrs.get("strides", [1] * rank))
    in_shape = importer.shape(x)[2:]
    pads = _spatial_padding(attrs, in_shape, kernel, strides, [1] * rank)
    count_include_pad = bool(attrs.get("count_include_pad", 0))
    if attrs.get("ceil_mode", 0):
        pads = ceil_mode_padding(pads, in_shape, kernel, strides)
    if rank == 1:
        x = importer.as_2d(x)
        kernel, strides, pads = [1, *kernel], [1, *strides], [0, pads[0], 0, pads[1]]
    if node.op_type == "MaxPool":
        result = g.max_pool2d(x, kernel=kernel, strides=strides, padding=pads)
    else:
        result = g.avg_pool2d(
            x, kernel=kernel, strides=strides, padding=pads, count_include_pad=count_include_pad
        )
    return [importer.from_2d(result) if rank == 1 else result]


@converter("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(importer, node, inputs, attrs):
    x = importer.tensor(inputs[0])
    axes = list(range(2, len(importer.shape(x))))
    build = g.reduce_mean if node.op_type == "GlobalAveragePool" else g.reduce_max
    return [build(x, axes=axes, keepdims=True)]


# -- normalization -----------------------------------------------------------------------------


@converter("BatchNormalization")
def _batch_norm(importer, node, inputs, attrs):
    if attrs.get("training_mode", 0) or len([o for o in node.output if o]) > 1:
        raise OnnxImportError("training-mode batch normalization is not supported")
    x, scale, bias, mean, var = (importer.tensor(v) for v in inputs[:5])
    return [g.batch_norm(x, scale, bias, mean, var, epsilon=attrs.get("epsilon", 1e-5))]


@converter("InstanceNormalization")
def _instance_norm(importer, node, inputs, attrs):
    x = importer.tensor(inputs[0])
    rank = len(importer.shape(x))
    channel_shape = [importer.shape(x)[1]] + [1] * (rank - 2)
    scale = importer.reshape(inputs[1], channel_shape)
    bias = importer.reshape(inputs[2], channel_shape)
    axes = list(range(2, rank))
    normalized = _normalize(importer, x, axes, attrs.get("epsilon", 1e-5))[0]
    return [g.add(g.mul(normalized, scale), bias)]


def _normalize(importer, x, axes, epsilon):
    """(x - mean) / sqrt(var + epsilon) over `axes`, with the mean and 1/std (keepdims)."""
    mean = g.reduce_mean(x, axes=axes, keepdims=True)
    centered = g.sub(x, mean)
    var = g.reduce_mean(g.mul(centered, centered), axes=axes, keepdims=True)
    inv_std = g.rsqrt(g.add(var, importer.scalar(var, epsilon)))
    return g.mul(centered, inv_std), mean, inv_std


@converter("LayerNormalization")
def _layer_norm(importer, node, inputs, attrs):
    x = importer.tensor(inputs[0])
    shape = importer.shape(x)
    axis = attrs.get("axis", -1) % len(shape)
    epsilon = attrs.get("epsilon", 1e-5)
    normalized_shape = shape[axis:]
    scale = inputs[1]
    bias = inputs[2] if len(inputs) > 2 and inputs[2] is not None else None
    extra_outputs = len([o for o in node.output[1:] if o])
    if (
        extra_outputs
        or importer.shape(scale) != normalized_shape
        or (bias is not None and importer.shape(bias) != normalized_shape)
    ):
        normalized, mean, inv_std = _normalize(importer, x, list(range(axis, len(shape))), epsilon)
        result = g.mul(normalized, importer.tensor(scale))
        if bias is not None:
            result = g.add(result, importer.tensor(bias))
        return [result, mean, inv_std]
    if bias is None:
        bias = np.zeros(normalized_shape, importer.dtype(x))
    return [
        g.layer_norm(x, importer.tensor(scale), importer.tensor(bias), axis=axis, epsilon=epsilon)
    ]


@converter("LRN")
def _lrn(importer, node, inputs, attrs):
    return [
        g.lrn(
            importer.tensor(inputs[0]),
            size=attrs["size"],
            alpha=attrs.get("alpha", 1e-4),
            beta=attrs.get("beta", 0.75),
            bias=attrs.get("bias", 1.0),
        )
    ]


@converter("Softmax", "LogSoftmax")
def _softmax(importer, node, inputs, attrs):
    x = importer.tensor(inputs[0])
    shape = importer.shape(x)
    log = node.op_type == "LogSoftmax"
    if importer.opset >= 13:
        axis = attrs.get("axis", -1) % len(shape)
        return [_log_softmax(importer, x, axis) if log else g.softmax(x, axis=axis)]
    # Before opset 13 the input is coerced to 2-D at `axis` and normalized over the second dim.
    axis = attrs.get("axis", 1) % len(shape)
    flat = importer.reshape(x, [math.prod(shape[:axis]), math.prod(shape[axis:])])
    result = _log_softmax(importer, flat, 1) if log else g.softmax(flat, axis=1)
    return [importer.reshape(result, shape)]


def _log_softmax(importer, x, axis):
    shifted = g.sub(x, g.reduce_max(x, axes=[axis], keepdims=True))
    total = g.reduce_sum(g.exp(shifted), axes=[axis], keepdims=True)
    return g.sub(shifted, g.log(total))


# -- reductions --------------------------------------------------------------------------------

_REDUCTIONS = {
    "ReduceSum": (g.reduce_sum, None, None),
    "ReduceMean": (g.reduce_mean, None, None),
    "ReduceMax": (g.reduce_max, None, None),
    "ReduceMin": (g.reduce_min, None, None),
    "ReduceProd": (g.reduce_prod, None, None),
    "ReduceL1": (g.reduce_sum, g.abs, None),
    "ReduceL2": (g.reduce_sum, lambda x: g.mul(x, x), g.sqrt),
    "ReduceSumSquare": (g.reduce_sum, lambda x: g.mul(x, x), None),
    "ReduceLogSum": (g.reduce_sum, None, g.log),
    "ReduceLogSumExp": (g.reduce_sum, g.exp, g.log),
}


@converter(*_REDUCTIONS)
def _reduce(importer, node, inputs, attrs):
    reduce, before, after = _REDUCTIONS[node.op_type]
    x = importer.tensor(inputs[0])
    rank = len(importer.shape(x))
    since = 13 if node.op_type == "ReduceSum" else 18
    axes = _attr_or_input(importer, attrs, inputs, "axes", 1, since, "axes")
    keepdims = bool(attrs.get("keepdims", 1))
    if axes is None or axes.size == 0:
        if attrs.get("noop_with_empty_axes", 0):
            return [x]
        axes = np.arange(rank)
    axes = [int(a) % rank for a in axes.reshape(-1)] if rank else []
    if before is not None:
        x = before(x)
    result = reduce(x, axes=axes, keepdims=keepdims)
    return [after(result) if after is not None else result]


# -- data movement -----------------------------------------------------------------------------


@converter("Reshape")
def _reshape(importer, node, inputs, attrs):
    x = inputs[0]
    in_shape = importer.shape(x)
    target = [int(d) for d in importer.known(inputs[1], "the target shape").reshape(-1)]
    if not attrs.get("allowzero", 0):
        target = [in_shape[i] if d == 0 else d for i, d in enumerate(target)]
    if -1 in target:
        known = math.prod(d for d in target if d != -1)
        target[target.index(-1)] = math.prod(in_shape) // known if known else 0
    return [importer.reshape(x, target)]


@converter("Flatten")
def _flatten(importer, node, inputs, attrs):
    shape = importer.shape(inputs[0])
    axis = attrs.get("axis", 1)
    axis = axis + len(shape) if axis < 0 else axis
    return [importer.reshape(inputs[0], [math.prod(shape[:axis]), math.prod(shape[axis:])])]


@converter("Squeeze")
def _squeeze(importer, node, inputs, attrs):
    shape = importer.shape(inputs[0])
    axes = _attr_or_input(importer, attrs, inputs, "axes", 1, 13, "axes")
    if axes is None:
        drop = {i for i, d in enumerate(shape) if d == 1}
    else:
        drop = {int(a) % len(shape) for a in axes.reshape(-1)}
    return [importer.reshape(inputs[0], [d for i, d in enumerate(shape) if i not in drop])]


@converter("Unsqueeze")
def _unsqueeze(importer, node, inputs, attrs):
    shape = importer.shape(inputs[0])
    axes = _attr_or_input(importer, attrs, inputs, "axes", 1, 13, "axes")
    rank = len(shape) + axes.size
    new_axes = sorted(int(a) % rank for a in axes.reshape(-1))
    result = list(shape)
    for a in new_axes:
        result.insert(a, 1)
    return [importer.reshape(inputs[0], result)]


@converter("Transpose")
def _transpose(importer, node, inputs, attrs):
    rank = len(importer.shape(inputs[0]))
    perm = list(attrs.get("perm", range(rank - 1, -1, -1)))
    return [g.transpose(importer.tensor(inputs[0]), perm=perm)]


@converter("Concat")
def _concat(importer, node, inputs, attrs):
    values = [importer.tensor(x) for x in inputs if x is not None]
    rank = len(importer.shape(values[0]))
    axis = attrs["axis"] % rank
    return [g.join(values, axis)]


@converter("Split")
def _split(importer, node, inputs, attrs):
    x = importer.tensor(inputs[0])
    shape = importer.shape(x)
    axis = attrs.get("axis", 0) % len(shape)
    sizes = _attr_or_input(importer, attrs, inputs, "split", 1, 13, "split")
    outputs = len(node.output)
    if sizes is None:
        count = attrs.get("num_outputs", outputs)
        chunk = -(-shape[axis] // count)
        sizes = [min(chunk, shape[axis] - i * chunk) for i in range(count)]
    results, start = [], 0
    for size in [int(s) for s in np.asarray(sizes).reshape(-1)]:
        starts, ends = [0] * len(shape), list(shape)
        starts[axis], ends[axis] = start, start + size
        results.append(g.slice(x, starts=starts, ends=ends, steps=[1] * len(shape)))
        start += size
    return results


@converter("Slice")
def _slice(importer, node, inputs, attrs):
    x = importer.tensor(inputs[0])
    shape = importer.shape(x)
    rank = len(shape)
    if importer.opset < 10:
        starts, ends = attrs["starts"], attrs["ends"]
        axes, steps = attrs.get("axes", range(len(starts))), [1] * len(starts)
    else:
        starts = importer.known(inputs[1], "starts").reshape(-1).tolist()
        ends = importer.known(inputs[2], "ends").reshape(-1).tolist()
        axes = _optional_ints(importer, inputs, 3, "axes") or list(range(len(starts)))
        steps = _optional_ints(importer, inputs, 4, "steps") or [1] * len(starts)
    begin, end, step = [0] * rank, list(shape), [1] * rank
    reversed_axes = []
    for a, s, e, st in zip(axes, starts, ends, steps, strict=True):
        a = int(a) % rank
        indices = range(shape[a])[slice(*_onnx_slice(shape[a], int(s), int(e), int(st)))]
        if len(indices) == 0:
            raise OnnxImportError("slices with no elements are not supported")
        if st < 0:
            indices = indices[::-1]
            reversed_axes.append(a)
        begin[a], end[a], step[a] = indices[0], indices[-1] + 1, indices.step
    result = g.slice(x, starts=begin, ends=end, steps=step)
    for a in reversed_axes:
        size = importer.shape(result)[a]
        result = g.gather(result, importer.tensor(np.arange(size - 1, -1, -1)), axis=a)
    return [result]


def _onnx_slice(size: int, start: int, end: int, step: int) -> tuple:
    """ONNX's clamping of Slice bounds, as arguments of a Python slice."""
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    if step > 0:
        return max(0, min(size, start)), max(0, min(size, end)), step
    start = max(-1, min(size - 1, start))
    end = max(-1, min(size - 1, end))
    return start, (None if end < 0 else end), step


def _optional_ints(importer, inputs, index, what):
    if len(inputs) > index and inputs[index] is not None:
        return importer.known(inputs[index], what).reshape(-1).tolist()
    return None


@converter("Gather")
def _gather(importer, node, inputs, attrs):
    x = importer.tensor(inputs[0])
    axis = attrs.get("axis", 0) % len(importer.shape(x))
    return [g.gather(x, importer.tensor(inputs[1]), axis=axis)]


@converter("Expand")
def _expand(importer, node, inputs, attrs):
    x = importer.tensor(inputs[0])
    target = importer.known(inputs[1], "the target shape").reshape(-1).tolist()
    shape = g.broadcast_shapes(importer.shape(x), [int(d) for d in target])
    return [g.broadcast_to(x, result_type=tensor_type(shape, importer.dtype(x)))]


@converter("Tile")
def _tile(importer, node, inputs, attrs):
    x = importer.tensor(inputs[0])
    shape = importer.shape(x)
    repeats = [int(r) for r in importer.known(inputs[1], "repeats").reshape(-1)]
    # x[a, b] tiled (r, s): reshape to [1, a, 1, b], broadcast to [r, a, s, b], reshape.
    spread = [d for pair in ((1, n) for n in shape) for d in pair]
    broadcast = [d for pair in zip(repeats, shape, strict=True) for d in pair]
    tiled = g.broadcast_to(
        importer.reshape(x, spread), result_type=tensor_type(broadcast, importer.dtype(x))
    )
    return [importer.reshape(tiled, [r * n for r, n in zip(repeats, shape, strict=True)])]


@converter("Pad")
def _pad(importer, node, inputs, attrs):
    x = importer.tensor(inputs[0])
    rank = len(importer.shape(x))
    mode = _text(attrs, "mode", "constant")
    if importer.opset < 11:
        pads, value = list(attrs["pads"]), attrs.get("value", 0.0)
    else:
        pads = importer.known(inputs[1], "pads").reshape(-1).tolist()
        value = 0.0
        if len(inputs) > 2 and inputs[2] is not None:
            value = importer.known(inputs[2], "the pad value").reshape(-1)
            value = value[0].item() if value.size else 0.0
        axes = _optional_ints(importer, inputs, 3, "axes")
        if axes is not None:
            full = [0] * (2 * rank)
            for i, a in enumerate(axes):
                a = int(a) % rank
                full[a], full[rank + a] = pads[i], pads[len(axes) + i]
            pads = full
    if mode == "wrap":
        raise OnnxImportError("Pad mode 'wrap' is not supported")
    if any(p < 0 for p in pads):
        raise OnnxImportError("negative pads are not supported")
    if not np.issubdtype(importer.dtype(x), np.floating) and mode == "constant" and value:
        raise OnnxImportError("constant padding of integer tensors with a nonzero value")
    return [g.pad(x, pads=[int(p) for p in pads], value=float(value), mode=mode)]


@converter("Shape")
def _shape(importer, node, inputs, attrs):
    shape = importer.shape(inputs[0])
    start, end = attrs.get("start", 0), attrs.get("end", len(shape))
    return [np.asarray(shape[slice(start, end)], dtype=np.int64)]


@converter("Size")
def _size(importer, node, inputs, attrs):
    return [np.asarray(math.prod(importer.shape(inputs[0])), dtype=np.int64)]


@converter("ConstantOfShape")
def _constant_of_shape_node(importer, node, inputs, attrs):
    return _constant_of_shape(node, attrs, importer.known(inputs[0], "the shape"))
