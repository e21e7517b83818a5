"""Compiles the GPU cases (`gpu_cases.py`) to artifacts, for a GPU machine that has no compiler:

    python3 test/e2e/build_gpu_cases.py --chip sm_90 -o build/gpu-cases

Then, there: `STRATA_GPU_CASES=build/gpu-cases python3 -m pytest test/e2e/test_gpu.py`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import gpu_cases  # noqa: E402
from strata import compiler  # noqa: E402


def build(names: list[str], chip: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        case = gpu_cases.CASES[name]
        start = time.perf_counter()
        data = compiler.emit(compiler.load(case.text), "artifact", f"nvvm:{chip}")
        (out / f"{name}.nvvm").write_bytes(data)
        print(f"{name:<32} {len(data) / 1024:8.1f} KiB  {time.perf_counter() - start:6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chip", default="sm_90")
    parser.add_argument("-o", "--out", type=Path, required=True)
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    args = parser.parse_args()
    build(args.cases or list(gpu_cases.CASES), args.chip, args.out)


if __name__ == "__main__":
    main()
