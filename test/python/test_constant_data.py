"""The elements of constant attributes at compile time: dense, dense_resource (frontends'
weights, and blobs parsed from a file), and the cases that cannot be read."""

import numpy as np
import pytest
from mlir import ir
from strata import source
from strata.passes.constant_data import constant_array, elements_of

WEIGHTS = np.arange(12, dtype=np.float32).reshape(3, 4) / 8


@pytest.fixture
def context():
    with source.make_context() as context, ir.Location.unknown():
        yield context


def test_dense_elements(context):
    attr = ir.DenseElementsAttr.get(WEIGHTS)
    np.testing.assert_array_equal(elements_of(attr), WEIGHTS)
    half = ir.DenseElementsAttr.get(WEIGHTS.astype(np.float16))
    np.testing.assert_array_equal(elements_of(half), WEIGHTS.astype(np.float16))


def test_resource_from_a_buffer(context):
    shaped = ir.RankedTensorType.get([3, 4], ir.F32Type.get())
    attr = ir.DenseResourceElementsAttr.get_from_buffer(memoryview(WEIGHTS.copy()), "w", shaped)
    np.testing.assert_array_equal(elements_of(attr), WEIGHTS)


def test_resource_parsed_with_the_module(context):
    blob = "0x04000000" + WEIGHTS.tobytes().hex()
    module = ir.Module.parse(
        "func.func @f() -> tensor<3x4xf32> {\n"
        "  %0 = arith.constant dense_resource<w> : tensor<3x4xf32>\n"
        "  return %0 : tensor<3x4xf32>\n"
        "}\n"
        f'{{-# dialect_resources: {{ builtin: {{ w: "{blob}" }} }} #-}}'
    )
    constant = module.body.operations[0].regions[0].blocks[0].operations[0]
    np.testing.assert_array_equal(constant_array(constant.result), WEIGHTS)


@pytest.mark.parametrize(
    "text",
    [
        "dense<1.5> : tensor<3x4xf32>",  # a splat: nothing to lay out
        "dense<[true, false]> : tensor<2xi1>",  # bit-packed
        "dense_resource<absent> : tensor<3x4xf32>",  # a blob without its data
        '"not elements"',
    ],
)
def test_unreadable_attributes(context, text):
    assert elements_of(ir.Attribute.parse(text)) is None


def test_seen_through_reshapes(context):
    module = ir.Module.parse(
        "func.func @f() -> tensor<12xf32> {\n"
        f"  %0 = arith.constant dense<{WEIGHTS.tolist()}> : tensor<3x4xf32>\n"
        "  %1 = tensor.collapse_shape %0 [[0, 1]] : tensor<3x4xf32> into tensor<12xf32>\n"
        "  return %1 : tensor<12xf32>\n"
        "}"
    )
    collapse = module.body.operations[0].regions[0].blocks[0].operations[1]
    np.testing.assert_array_equal(constant_array(collapse.result), WEIGHTS.ravel())
