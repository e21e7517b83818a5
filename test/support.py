"""Helpers shared by strata's pytest suites (imported as `support`)."""

import math

import numpy as np
import strata

erf = np.vectorize(math.erf, otypes=[np.float64])


def tensor_type(shape, element="f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def run_op(op_text: str, inputs: list[np.ndarray], result_type: str, attrs: str = "") -> np.ndarray:
    """Compiles a one-op function `"graph.<op>"(args) {attrs}` and runs it on `inputs`."""
    elements = {
        np.dtype("float32"): "f32",
        np.dtype("float16"): "f16",
        np.dtype("int64"): "i64",
        np.dtype("int32"): "i32",
        np.dtype("float64"): "f64",
        np.dtype("bool"): "i1",
    }
    types = [tensor_type(a.shape, elements[a.dtype]) for a in inputs]
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    uses = ", ".join(f"%a{i}" for i in range(len(inputs)))
    attr_text = f" {{{attrs}}}" if attrs else ""
    text = (
        f"func.func @main({args}) -> {result_type} {{\n"
        f'  %0 = "graph.{op_text}"({uses}){attr_text} : ({", ".join(types)}) -> {result_type}\n'
        f"  return %0 : {result_type}\n}}\n"
    )
    return strata.compile(text)(*inputs)
