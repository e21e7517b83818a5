"""strata's runtime: calls compiled functions with numpy arrays, without MLIR installed."""

from .abi import Function, InvocationError, Signature, TensorSpec
from .native import Library, load

__all__ = ["Function", "InvocationError", "Library", "Signature", "TensorSpec", "load"]
