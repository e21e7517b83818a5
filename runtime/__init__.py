"""strata's runtime: calls compiled functions with numpy arrays, without MLIR installed.

`load(path)` takes what `strata-compile` wrote: a shared library for the CPU (`--emit so`) or
a GPU artifact (`--emit artifact`, run through the CUDA driver by `runtime.cuda`, imported
only then). Either way it returns the functions by name.
"""

from pathlib import Path

from .abi import Function, InvocationError, Signature, TensorSpec, empty_aligned
from .gpu_artifact import is_artifact
from .native import Library


def load(path: str | Path):
    """The compiled functions in `path`, by name: `load("model.so")["main"](x)`."""
    if is_artifact(path):
        from .cuda import load as load_gpu_artifact

        return load_gpu_artifact(path)
    return Library(path)


__all__ = [
    "Function",
    "InvocationError",
    "Library",
    "Signature",
    "TensorSpec",
    "empty_aligned",
    "load",
]
