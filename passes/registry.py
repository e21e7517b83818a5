"""The registry of strata's Python passes: one flag each, like MLIR's registered passes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mlir import ir

from .ir_query import find_ops


class PassFailure(Exception):
    """A Python pass failed; it has already emitted diagnostics at the offending ops."""


@dataclass
class PassInfo:
    """A Python pass: `run(module_op, **options)` rewrites the module in place."""

    name: str
    description: str
    run: Callable[..., None]
    options: dict[str, type] = field(default_factory=dict)

    def parse_options(self, text: str) -> dict:
        """Parses `opt=v opt2=v2` (MLIR's pass option syntax) into typed values."""
        options = {}
        for item in text.split():
            key, _, value = item.partition("=")
            if key not in self.options:
                known = ", ".join(sorted(self.options)) or "none"
                raise ValueError(f"pass '{self.name}' has no option '{key}' (options: {known})")
            kind = self.options[key]
            if kind is bool:
                options[key] = value in ("", "1", "true", "True")
            elif kind is list:
                options[key] = [int(v) for v in value.split(",") if v]
            else:
                options[key] = kind(value)
        return options

    def __call__(self, module: ir.Operation, **options) -> None:
        self.run(module, **options)


def reject(
    module: ir.Operation,
    predicate: Callable[[ir.Operation], bool],
    message: Callable[[ir.Operation], str],
    pass_name: str,
) -> None:
    """Emits `message(op)` at every op for which `predicate` holds; fails the pass if any."""
    found = find_ops(module, predicate)
    for op in found:
        op.location.emit_error(message(op))
    if found:
        raise PassFailure(pass_name)


PASSES: dict[str, PassInfo] = {}


def register_pass(name: str, description: str, **options: type):
    """Registers `fn(module_op, **options)` as the pass `--name`."""

    def register(fn):
        PASSES[name] = PassInfo(name, description, fn, options)
        return fn

    return register


def get(name: str) -> PassInfo | None:
    _load_all()
    return PASSES.get(name)


def all_passes() -> dict[str, PassInfo]:
    _load_all()
    return dict(sorted(PASSES.items()))


def _load_all() -> None:
    from . import (  # noqa: F401  (registration on import)
        bf16_moves,
        bf16_truncation,
        bool_storage,
        dedup_kernels,
        elide_result_copies,
        fuse_vector_loops,
        gpu_map_loops,
        gpu_tile,
        graph_cse,
        graph_fuse,
        graph_split_groups,
        graph_to_linalg,
        graph_verify,
        hoist_accumulators,
        lower_copies,
        lower_fork_join,
        math_approximate,
        math_to_ptx,
        outline_parallel,
        prefetch_panels,
        prefetch_rows,
        rows_in_place,
        streaming_stores,
        tile_configure,
        tile_lower,
        tile_rows,
        workspace_buffers,
    )
