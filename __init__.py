"""strata: a Python-first ML compiler on upstream MLIR.

import strata
exe = strata.compile(mlir_text, target="cpu")
y = exe(x)                      # numpy in, numpy out
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    # The runtime (`strata.runtime`) imports without MLIR; the compiler's names load on use.
    if name == "CompileError":
        from .diagnostics import CompileError

        return CompileError
    raise AttributeError(f"module 'strata' has no attribute '{name}'")


def compile(module_or_text, target: str = "cpu", entry: str | None = None):  # noqa: A001
    """Compiles graph-dialect IR for `target` and returns a callable over numpy arrays."""
    from .compiler import compile_module

    return compile_module(module_or_text, target=target, entry=entry)


def torch_backend(target: str = "cpu"):
    """A `torch.compile` backend: `torch.compile(model, backend=strata.torch_backend())`."""
    from .frontends.torch import torch_backend as make_backend

    return make_backend(target)


__all__ = ["CompileError", "compile", "torch_backend"]
