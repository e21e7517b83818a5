"""ONNX's own backend tests, generated from the installed onnx package, run through strata.

The node tests of every op the importer supports (onnx_node_tests.OP_TESTS, less the listed
variants) and the nine `light` model-zoo models, against the outputs shipped with onnx, at the
runner's default tolerances. The summary at the end counts passes by op.
"""

import os
import re
import tempfile
import warnings

import pytest

onnx_backend_test = pytest.importorskip("onnx.backend.test")

from onnx_node_tests import exclusion_reason, op_of  # noqa: E402
from strata.frontends import onnx_backend  # noqa: E402

# The runner writes the light models' input data under ONNX_HOME; keep it out of the home dir.
os.environ.setdefault("ONNX_HOME", tempfile.mkdtemp(prefix="strata-onnx-home-"))

LIGHT_MODELS = [
    "bvlc_alexnet",
    "densenet121",
    "inception_v1",
    "inception_v2",
    "resnet50",
    "shufflenet",
    "squeezenet",
    "vgg19",
    "zfnet512",
]

with warnings.catch_warnings():  # generating the cast tests warns about overflowing values
    warnings.simplefilter("ignore")
    backend_test = onnx_backend_test.BackendTest(onnx_backend, __name__)
    node_tests = [
        name
        for name in dir(backend_test.test_cases["OnnxBackendNodeModelTest"])
        if name.endswith("_cpu") and op_of(name) and not exclusion_reason(name)
    ]
for name in node_tests + [f"test_{model}_cpu" for model in LIGHT_MODELS]:
    backend_test.include(f"^{re.escape(name)}$")

globals().update(
    {
        case_name: case
        for case_name, case in backend_test.test_cases.items()
        if case_name in ("OnnxBackendNodeModelTest", "OnnxBackendRealModelTest")
    }
)


def test_every_supported_op_runs_its_node_tests():
    from onnx_node_tests import OP_TESTS
    from strata.frontends.onnx import supported_ops

    assert set(supported_ops()) == set(OP_TESTS)
    covered = {op_of(name) for name in node_tests}
    assert covered == set(OP_TESTS), f"ops without node tests: {set(OP_TESTS) - covered}"
