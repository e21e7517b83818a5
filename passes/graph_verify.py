"""`--graph-verify`: runs the graph dialect's semantic verifiers (shapes, attributes)."""

from mlir import ir

from ..dialects import verify_semantics
from .registry import PassFailure, register_pass


@register_pass("graph-verify", "Check graph ops' semantics: shapes, element types, attributes")
def graph_verify(module: ir.Operation) -> None:
    if not verify_semantics(module):
        raise PassFailure("graph-verify")
