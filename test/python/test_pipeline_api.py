"""Scripting pipelines from Python: list stages, insert a pass, print after stages, time them."""

import io

import numpy as np
import pytest
import strata
from mlir import ir
from strata import compiler, pipelines, source
from strata.pipelines import Stage

TEXT = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "graph.neg"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
"""


def test_cpu_pipeline_has_named_stages():
    names = pipelines.get("cpu").names()
    assert names[:8] == [
        "graph-verify",
        "graph-cse",
        "graph-split-groups",
        "graph-fuse",
        "tile-configure",
        "dedup-kernels",
        "tile-rows",
        "graph-to-linalg",
    ]
    assert {"tile-lower", "bufferize", "tile-vectorize", "workspace-buffers", "to-llvm"} <= set(
        names
    )


def test_insert_python_pass_print_and_time():
    context = source.make_context()
    module = source.parse(TEXT, context, "api.mlir")
    seen = []

    def count_generics(module_op):
        """A user pass: it records the linalg.generic ops and marks the module."""

        def visit(op):
            if op.name == "linalg.generic":
                seen.append(op.name)
            return ir.WalkResult.ADVANCE

        module_op.walk(visit, ir.WalkOrder.PRE_ORDER)
        module_op.attributes["test.generics"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), len(seen)
        )

    pipeline = pipelines.get("cpu")
    pipeline.insert_after("graph-to-linalg", Stage("count-generics", count_generics))
    assert pipeline.names().index("count-generics") == pipeline.names().index("graph-to-linalg") + 1
    out = io.StringIO()
    report = pipeline.run(
        module, print_after=["graph-to-linalg", "count-generics"], timing=True, out=out
    )
    text = out.getvalue()
    assert "IR Dump After graph-to-linalg" in text
    assert "IR Dump After count-generics" in text
    assert "test.generics = 2 : i64" in text
    assert "strata pipeline timing" in text
    assert [name for name, _ in report.timings] == pipeline.names()
    assert all(seconds >= 0 for _, seconds in report.timings)
    assert seen == ["linalg.generic", "linalg.generic"]
    function = compiler.jit(module, compiler.signatures(source.parse(TEXT, context)))["main"]
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_allclose(function(x), -np.exp(x), rtol=1e-6)


def test_unknown_stage_is_an_error():
    with pytest.raises(KeyError, match="no stage 'nope'"):
        pipelines.get("cpu").insert_after("nope", Stage("x", "cse"))


def test_dump_dir(tmp_path):
    module = source.parse(TEXT, source.make_context())
    pipelines.get("cpu").until("graph-to-linalg").run(module, dump_dir=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "00-graph-verify.mlir",
        "01-graph-cse.mlir",
        "02-graph-split-groups.mlir",
        "03-graph-fuse.mlir",
        "04-tile-configure.mlir",
        "05-dedup-kernels.mlir",
        "06-tile-rows.mlir",
        "07-graph-to-linalg.mlir",
    ]


def test_failing_python_pass_reports_at_the_op():
    module = source.parse(TEXT, source.make_context(), "api.mlir")

    def reject_exp(module_op):
        def visit(op):
            if op.name == "graph.exp":
                op.location.emit_error("exp is not allowed here")
            return ir.WalkResult.ADVANCE

        module_op.walk(visit, ir.WalkOrder.PRE_ORDER)

    pipeline = pipelines.Pipeline("mine", [Stage("reject-exp", reject_exp)])
    with pytest.raises(strata.CompileError) as caught:
        pipeline.run(module)
    assert "api.mlir:3:8: error: exp is not allowed here" in str(caught.value)
    assert "in pipeline stage 'reject-exp'" in str(caught.value)
