"""strata's dialects, defined in Python and loaded into MLIR as IRDL dialects."""

from mlir import ir

from . import dsl
from .graph import Graph
from .tile import Tile

DIALECTS = [Graph, Tile]


def load(context: ir.Context) -> None:
    """Loads every strata dialect into `context` (idempotent)."""
    for dialect in DIALECTS:
        dialect.load(context)


def verify_semantics(root) -> bool:
    """Runs the Python verifiers of every strata op under `root`; errors go to diagnostics."""
    return dsl.verify_semantics(root, DIALECTS)


__all__ = ["DIALECTS", "Graph", "Tile", "load", "verify_semantics"]
