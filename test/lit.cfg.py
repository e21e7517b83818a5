"""lit configuration: strata's tools, LLVM's FileCheck and `not`, the test Python."""

import os
import sys
from pathlib import Path

import lit.formats
import llvm

config.name = "strata"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = getattr(config, "strata_build_test_dir", config.test_source_root)

python = getattr(config, "python_executable", sys.executable)
llvm_bin = Path(llvm.__file__).parent / "bin"
tool_bin = Path(python).parent
config.environment["PATH"] = os.pathsep.join(
    [str(llvm_bin), str(tool_bin), config.environment.get("PATH", os.environ["PATH"])]
)
for key in ("HOME", "TMPDIR"):
    if key in os.environ:
        config.environment[key] = os.environ[key]
config.substitutions.append(("%python", python))
config.excludes.append("Inputs")

try:
    import onnx

    config.available_features.add("onnx")
    # The model-zoo architectures shipped with onnx (random weights, a few MB each).
    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    config.substitutions.append(("%onnx_light", str(light)))
except ImportError:
    pass
