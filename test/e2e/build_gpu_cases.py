"""Compiles the GPU cases (`gpu_cases.py`) and, with PyTorch installed, the models of
`examples/model_suite.py` to artifacts, for a GPU machine that has no compiler:

    python3 test/e2e/build_gpu_cases.py --chip sm_90a -o build/gpu-cases [--models]

Then, there: `STRATA_GPU_CASES=build/gpu-cases python3 -m pytest test/e2e/test_gpu.py`.
A model is imported with its parameters as arguments (`<name>.json` lists them, in order,
with the inputs), so that the artifact carries no weights: the GPU test builds the same
seeded model there and passes its parameters.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import gpu_cases  # noqa: E402
from strata import compiler  # noqa: E402


def build(names: list[str], chip: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        case = gpu_cases.CASES[name]
        start = time.perf_counter()
        target = f"nvvm:{chip}{case.options}"
        data = compiler.emit(compiler.load(case.text), "artifact", target)
        (out / f"{name}.nvvm").write_bytes(data)
        print(f"{name:<32} {len(data) / 1024:8.1f} KiB  {time.perf_counter() - start:6.2f} s")


def build_models(names: list[str], chip: str, out: Path) -> None:
    import model_suite
    from strata.frontends.torch import export, import_module
    from torch.export.graph_signature import InputKind

    lifted = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)
    for name in names:
        start = time.perf_counter()
        model, inputs, _ = model_suite.build(name)
        program = export(model, inputs)
        specs = program.graph_signature.input_specs
        user = iter(range(len(inputs)))
        arguments = [
            ["parameter", s.target] if s.kind in lifted else ["input", next(user)] for s in specs
        ]
        module = import_module(program, params="arguments")
        data = compiler.emit(module, "artifact", f"nvvm:{chip}")
        (out / f"{name}.nvvm").write_bytes(data)
        (out / f"{name}.json").write_text(json.dumps({"arguments": arguments}))
        print(f"{name:<32} {len(data) / 1024:8.1f} KiB  {time.perf_counter() - start:6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chip", default="sm_90")
    parser.add_argument("-o", "--out", type=Path, required=True)
    parser.add_argument("--models", action="store_true", help="also the model suite (torch)")
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    args = parser.parse_args()
    build(args.cases or list(gpu_cases.CASES), args.chip, args.out)
    if args.models:
        from model_suite import MODELS

        build_models(list(MODELS), args.chip, args.out)


if __name__ == "__main__":
    main()
