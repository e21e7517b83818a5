"""strata-import: an ONNX model into graph-dialect MLIR.

strata-import model.onnx -o model.mlir
strata-import model.onnx --input-shape input=1,3,224,224 -o model.mlir
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import guarded_main


def _parse_shapes(items: tuple[str, ...]) -> dict[str, list[int]]:
    shapes = {}
    for item in items:
        name, _, dims = item.rpartition("=")
        try:
            shapes[name] = [int(d) for d in dims.split(",") if d]
        except ValueError:
            name = ""
        if not name:
            raise click.BadParameter(f"'{item}' is not NAME=D0,D1,...", param_hint="--input-shape")
    return shapes


def import_file(path: str, output: str, input_shapes: dict, max_bytes: int) -> int:
    from ..frontends import onnx as onnx_frontend

    try:
        model = onnx_frontend.load(path, max_bytes=max_bytes)
        module = onnx_frontend.import_model(model, input_shapes=input_shapes)
    except onnx_frontend.OnnxImportError as error:
        message = str(error)
        if message.startswith(f"{path}: "):
            message = message[len(path) + 2 :]
        sys.stderr.write(f"{path}: error: {message}\n")
        return 1
    text = str(module)
    if output == "-":
        sys.stdout.write(text)
    else:
        Path(output).write_text(text)
    return 0


@click.command()
@click.argument("model")
@click.option("-o", "output", default="-", help="Output file (default: stdout).")
@click.option(
    "--input-shape",
    "input_shapes",
    multiple=True,
    help="NAME=D0,D1,... static shape for an input with dynamic dims (repeatable).",
)
@click.option(
    "--max-model-bytes",
    type=int,
    default=None,
    help="Refuse larger models, external data included (default: 2 GiB).",
)
def cli(model, output, input_shapes, max_model_bytes):
    """Import an ONNX model as one func.func @main in the graph dialect."""
    from ..frontends.onnx import MAX_MODEL_BYTES

    shapes = _parse_shapes(input_shapes)
    return import_file(model, output, shapes, max_model_bytes or MAX_MODEL_BYTES)


def main() -> None:
    guarded_main(lambda: cli.main(standalone_mode=False), "strata-import")
