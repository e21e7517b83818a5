"""The MLIR library under the Python bindings, reached through ctypes for what the bindings
do not expose (translation to LLVM IR text, the bytes of a dense_resource blob)."""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

from mlir import ir

LIBRARY = Path(ir.__file__).parent / "_mlir_libs" / "libMLIRPythonCAPI.so"


@functools.cache
def library() -> ctypes.CDLL:
    return ctypes.CDLL(str(LIBRARY))


def pointer(obj: ir.Operation | ir.Attribute) -> int:
    """The C API handle's pointer inside a bindings object (an operation or an attribute)."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    kind = "Operation" if isinstance(obj, ir.Operation) else "Attribute"
    return get(obj._CAPIPtr, f"mlir.ir.{kind}._CAPIPtr".encode())
