"""strata's dialects, defined in Python and loaded into MLIR as IRDL dialects."""

from mlir import ir
from mlir._mlir_libs import _mlir

from . import dsl
from .graph import Graph
from .tile import Tile

DIALECTS = [Graph, Tile]


def load(context: ir.Context) -> None:
    """Loads every strata dialect into `context` (idempotent)."""
    # The bindings look for a Python module of an op's dialect each time they view the op, and
    # remember only modules found: with none found for `graph`, every use's owner was a failed
    # import (graph-fuse spent 49 of an LSTM's 54 s compiling in them). This package holds one
    # per dialect.
    if __name__ not in _mlir.globals.dialect_search_modules:
        _mlir.globals.append_dialect_search_prefix(__name__)
    for dialect in DIALECTS:
        dialect.load(context)


def verify_semantics(root) -> bool:
    """Runs the Python verifiers of every strata op under `root`; errors go to diagnostics."""
    return dsl.verify_semantics(root, DIALECTS)


__all__ = ["DIALECTS", "Graph", "Tile", "load", "verify_semantics"]
