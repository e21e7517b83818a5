"""Loads a shared library built by `strata-compile --emit so` and calls its functions.

Needs only numpy and ctypes: the library embeds its functions' signatures as JSON in the
`strata_signatures` symbol.
"""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

from .abi import Function, Signature, direct_invoker

SIGNATURES_SYMBOL = "strata_signatures"


class Library:
    """The functions of a strata shared library, by name."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self._lib = ctypes.CDLL(self.path)
        try:
            raw = ctypes.c_char.in_dll(self._lib, SIGNATURES_SYMBOL)
        except ValueError:
            raise ValueError(
                f"{self.path}: not a strata library (no {SIGNATURES_SYMBOL})"
            ) from None
        signatures = [
            Signature.from_json(json.dumps(s))
            for s in json.loads(ctypes.string_at(ctypes.addressof(raw)).decode())
        ]
        self.functions = {}
        for sig in signatures:
            address = ctypes.cast(getattr(self._lib, f"_mlir_ciface_{sig.name}"), ctypes.c_void_p)
            self.functions[sig.name] = Function(sig, direct_invoker(address.value, sig.arity), self)

    def __getitem__(self, name: str) -> Function:
        return self.functions[name]
