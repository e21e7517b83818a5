"""The ONNX importer: weights, errors, and the loader's safety rules."""

import os
import pickle
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import strata  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from strata.frontends.onnx import OnnxImportError, import_model, load  # noqa: E402


def linear_model(weight: np.ndarray, op: str = "MatMul") -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, weight.shape[0]])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, weight.shape[1]])
    node = helper.make_node(op, ["x", "w"], ["y"], name="linear")
    graph = helper.make_graph([node], "linear", [x], [y], [numpy_helper.from_array(weight, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_weights_become_resources_and_the_model_runs():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    module = import_model(linear_model(w))
    text = str(module)
    assert "dense_resource<" in text and "func.func @main(%arg0: tensor<2x8xf32>)" in text
    x = rng.standard_normal((2, 8)).astype(np.float32)
    np.testing.assert_allclose(strata.compile(module)(x), x @ w, rtol=1e-5)


@pytest.mark.parametrize("width", [3, 768])  # inline and resource weights
def test_bf16_weights_and_inputs(width):
    """A bf16 model (its weights, inline or resources, and its input) imports as bf16: the
    product accumulates in f32 and rounds once."""
    import ml_dtypes

    rng = np.random.default_rng(2)
    w = rng.standard_normal((width, 4)).astype(ml_dtypes.bfloat16)
    x_info = helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [2, width])
    y_info = helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [2, 4])
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    weight = numpy_helper.from_array(w, "w")
    graph = helper.make_graph([node], "linear", [x_info], [y_info], [weight])
    module = import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert "func.func @main(%arg0: tensor<2x" + str(width) + "xbf16>)" in str(module)
    x = rng.standard_normal((2, width)).astype(ml_dtypes.bfloat16)
    actual = strata.compile(module)(x)
    assert actual.dtype == ml_dtypes.bfloat16
    expected = x.astype(np.float64) @ w.astype(np.float64)
    scale = np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64))
    error = np.abs(actual.astype(np.float64) - expected)
    np.testing.assert_array_less(error, 2**-8 * np.abs(expected) + 2**-20 * scale)


def test_a_gemm_weight_is_transposed_once_at_import():
    # Linear layers export as Gemm(x, W, transB=1): W^T is a constant, not a per-call op.
    rng = np.random.default_rng(1)
    w = rng.standard_normal((5, 8)).astype(np.float32)
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])
    node = helper.make_node("Gemm", ["x", "w"], ["y"], transB=1)
    graph = helper.make_graph([node], "gemm", [x_info], [y_info], [numpy_helper.from_array(w, "w")])
    module = import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert "graph.transpose" not in str(module)
    x = rng.standard_normal((2, 8)).astype(np.float32)
    np.testing.assert_allclose(strata.compile(module)(x), x @ w.T, rtol=1e-5)


def test_unsupported_ops_are_named_with_their_node():
    w = np.ones((4, 4), np.float32)
    model = linear_model(w, op="MatMulInteger")
    with pytest.raises(
        OnnxImportError, match=r"node 'linear' \(MatMulInteger\): op 'MatMulInteger'"
    ):
        import_model(model)


def test_dynamic_dims_need_a_static_shape():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match="input 'x' has a dynamic dim 'N'"):
        import_model(model)
    module = import_model(model, input_shapes={"x": [5, 3]})
    assert "tensor<5x3xf32>" in str(module)


def save_with_external_data(model, folder, location):
    tensor = model.graph.initializer[0]
    data = numpy_helper.to_array(tensor).tobytes()
    tensor.ClearField("float_data")
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value=location)
    tensor.external_data.add(key="length", value=str(len(data)))
    path = os.path.join(folder, "model.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path, data


def test_external_data_inside_the_folder_is_read(tmp_path):
    w = np.arange(32, dtype=np.float32).reshape(8, 4)
    path, data = save_with_external_data(linear_model(w), tmp_path, "weights.bin")
    (tmp_path / "weights.bin").write_bytes(data)
    x = np.ones((2, 8), np.float32)
    np.testing.assert_allclose(strata.compile(import_model(path))(x), x @ w)


@pytest.mark.parametrize("location", ["../weights.bin", "/etc/passwd", "sub/../../weights.bin"])
def test_external_data_paths_outside_the_folder_are_refused(tmp_path, location):
    folder = tmp_path / "model"
    folder.mkdir()
    path, data = save_with_external_data(
        linear_model(np.ones((8, 4), np.float32)), folder, location
    )
    (tmp_path / "weights.bin").write_bytes(data)
    with pytest.raises(OnnxImportError, match="must be a relative path inside the model's folder"):
        load(path)


def test_external_data_symlinks_out_of_the_folder_are_refused(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    path, data = save_with_external_data(
        linear_model(np.ones((8, 4), np.float32)), folder, "weights.bin"
    )
    (tmp_path / "secret.bin").write_bytes(data)
    os.symlink(tmp_path / "secret.bin", folder / "weights.bin")
    with pytest.raises(OnnxImportError, match="resolves outside the model's folder"):
        load(path)


def test_models_over_the_size_limit_are_refused(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_bytes(linear_model(np.ones((64, 64), np.float32)).SerializeToString())
    with pytest.raises(OnnxImportError, match=r"over the limit of 1000 bytes"):
        load(path, max_bytes=1000)


def test_pickles_are_never_unpickled(tmp_path):
    marker = tmp_path / "unpickled"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    path = tmp_path / "model.onnx"
    path.write_bytes(pickle.dumps(Payload()))
    with pytest.raises(OnnxImportError, match="Python pickle, not an ONNX model"):
        load(path)
    assert not marker.exists()


def test_strata_import_writes_mlir_that_strata_run_runs(tmp_path):
    w = np.random.default_rng(1).standard_normal((8, 4)).astype(np.float32)
    model_path = tmp_path / "model.onnx"
    model_path.write_bytes(linear_model(w).SerializeToString())
    mlir_path, x_path, out_path = tmp_path / "m.mlir", tmp_path / "x.npy", tmp_path / "out.npz"
    subprocess.run(["strata-import", str(model_path), "-o", str(mlir_path)], check=True)
    x = np.ones((2, 8), np.float32)
    np.save(x_path, x)
    subprocess.run(
        [
            "strata-run",
            str(mlir_path),
            "--entry",
            "main",
            "--input",
            str(x_path),
            "--output",
            str(out_path),
        ],
        check=True,
    )
    np.testing.assert_allclose(np.load(out_path)["result0"], x @ w, rtol=1e-5)


def test_strata_import_reports_errors_without_a_traceback(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_bytes(
        linear_model(np.ones((4, 4), np.float32), op="MatMulInteger").SerializeToString()
    )
    result = subprocess.run(["strata-import", str(path)], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr == (
        f"{path}: error: node 'linear' (MatMulInteger): op 'MatMulInteger' is not supported\n"
    )
