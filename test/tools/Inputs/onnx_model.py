"""Writes a small ONNX model for the strata-import tests: onnx_model.py OUT [OP_TYPE]."""

import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
op_type = sys.argv[2] if len(sys.argv) > 2 else "Gemm"
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
skip = helper.make_tensor_value_info("skip", TensorProto.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 7])
weight = numpy_helper.from_array(np.arange(32, dtype=np.float32).reshape(8, 4) / 32, "w")
bias = numpy_helper.from_array(np.full(4, 0.5, np.float32), "b")
nodes = [
    helper.make_node(op_type, ["x", "w", "b"], ["h"], name="fc"),
    helper.make_node("Relu", ["h"], ["r"], name="act"),
    helper.make_node("Concat", ["r", "skip"], ["y"], name="join", axis=1),
]
graph = helper.make_graph(nodes, "small", [x, skip], [y], [weight, bias])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
with open(out, "wb") as f:
    f.write(model.SerializeToString())
