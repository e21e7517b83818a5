"""Compile and run the bundled example models on the CPU; check them against numpy.

python examples/run.py [mlp|conv_block|transformer_block ...]
"""

import sys
import time
from pathlib import Path

import numpy as np
import strata

sys.path.insert(0, str(Path(__file__).parent))
import reference  # noqa: E402


def run(model: str) -> bool:
    text = (Path(__file__).parent / f"{model}.mlir").read_text()
    arrays = reference.inputs(model)
    start = time.perf_counter()
    function = strata.compile(text, target="cpu")
    compiled = time.perf_counter()
    result = function(*arrays)
    ran = time.perf_counter()
    expected = reference.reference(model, arrays)
    ok = np.allclose(result, expected, rtol=1e-4, atol=1e-5)
    error = np.max(np.abs(result - expected) / (np.abs(expected) + 1e-3))
    print(
        f"{model:<18} {'OK ' if ok else 'BAD'} max rel err {error:.1e}  "
        f"compile {1e3 * (compiled - start):7.1f} ms  run {1e3 * (ran - compiled):7.3f} ms"
    )
    return ok


if __name__ == "__main__":
    models = sys.argv[1:] or list(reference.SHAPES)
    sys.exit(0 if all([run(m) for m in models]) else 1)
