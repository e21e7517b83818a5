"""`--dedup-kernels`: kernels that differ only in their names become one function.

graph-fuse makes a kernel of each group of ops, and a model that repeats a computation (an
LSTM's 128 time steps, a stack of identical layers on the same shapes) repeats its kernels:
each copy is tiled, vectorized and compiled by LLVM again (an LSTM of 128 steps: 896 kernels,
84 s in LLVM). Calls to a copy call the first kernel of its kind instead, and the copies go.
Kernels compare by their printed form (signature, tile attributes and body); run it after
tile-configure so that equal kernels also share a configuration.
"""

from __future__ import annotations

from mlir import ir

from .ir_query import callee_name, find_ops
from .registry import register_pass
from .tile_configure import kernels


def _name(kernel: ir.Operation) -> str:
    return ir.StringAttr(kernel.attributes["sym_name"]).value


@register_pass("dedup-kernels", "Kernels identical but for their names become one")
def dedup_kernels(module: ir.Operation) -> None:
    first_of: dict[str, str] = {}
    replaced: dict[str, str] = {}
    for kernel in kernels(module):
        name = _name(kernel)
        # In a scope of its own: printed plainly, a nested op first numbers the whole module.
        body = kernel.get_asm(use_local_scope=True).replace(f"@{name}(", "@(", 1)
        first = first_of.setdefault(body, name)
        if first != name:
            replaced[name] = first
    if not replaced:
        return
    for call in find_ops(module, lambda op: op.name == "func.call"):
        callee = callee_name(call)
        if callee in replaced:
            call.attributes["callee"] = ir.FlatSymbolRefAttr.get(replaced[callee])
    for kernel in kernels(module):
        if _name(kernel) in replaced:
            kernel.erase()
