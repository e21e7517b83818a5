"""Import real models and run them on the CPU: an ONNX model-zoo model and a PyTorch block.

python examples/import_models.py [squeezenet|resnet50|densenet121|... ]

The ONNX models are the `light` versions shipped inside the onnx package (the real
architectures with generated weights), checked against the reference outputs shipped beside
them. The PyTorch transformer block goes through torch.export and torch.compile and is
checked against eager PyTorch; it is skipped when torch is not installed.
"""

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import strata


def onnx_light_model(name: str) -> bool:
    import onnx
    from onnx import numpy_helper
    from strata.frontends.onnx import import_model, load

    folder = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    start = time.perf_counter()
    module = import_model(load(folder / f"light_{name}.onnx"))
    imported = time.perf_counter()
    function = strata.compile(module)
    compiled = time.perf_counter()
    (shape,) = [a.type.shape for a in module.body.operations[0].arguments]
    count = int(np.prod(shape))
    x = (np.arange(count).reshape(shape) / count).astype(np.float32)  # the runner's input
    result = function(x)
    ran = time.perf_counter()
    expected = numpy_helper.to_array(onnx.load_tensor(str(folder / f"light_{name}_output_0.pb")))
    ok = np.allclose(result, expected, rtol=1e-3, atol=1e-7)
    print(
        f"onnx {name:<16} {'OK ' if ok else 'BAD'} import {1e3 * (imported - start):6.0f} ms  "
        f"compile {compiled - imported:5.2f} s  run {1e3 * (ran - compiled):7.1f} ms"
    )
    return ok


def torch_transformer_block() -> bool:
    try:
        import torch
    except ImportError:
        print("torch transformer block: skipped (pip install torch==2.13.0 to run it)")
        return True
    from strata.frontends.torch import import_module

    torch.manual_seed(0)
    dim, heads = 64, 4
    layer = torch.nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True)
    layer = layer.eval()
    x = torch.randn(2, 16, dim)
    with torch.no_grad():
        expected = layer(x).numpy()
    start = time.perf_counter()
    function = strata.compile(import_module(layer, (x,)))
    compiled = time.perf_counter()
    result = function(x.numpy())
    ran = time.perf_counter()
    exported_ok = np.allclose(result, expected, rtol=1e-4, atol=1e-5)
    # PyTorch's fused CPU fast path for encoder layers in eval mode is one opaque ATen kernel;
    # without it Dynamo captures the layer's ops, which strata compiles.
    torch.backends.mha.set_fastpath_enabled(False)
    backend = torch.compile(layer, backend=strata.torch_backend(), dynamic=False)
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled_ok = np.allclose(backend(x).numpy(), expected, rtol=1e-4, atol=1e-5)
    fallbacks = [w for w in caught if "running a graph eagerly" in str(w.message)]
    for w in fallbacks:
        print(w.message)
    ok = exported_ok and compiled_ok and not fallbacks
    print(
        f"torch transformer block {'OK ' if ok else 'BAD'} (torch.export and torch.compile)  "
        f"compile {compiled - start:5.2f} s  run {1e3 * (ran - compiled):7.1f} ms"
    )
    return ok


if __name__ == "__main__":
    models = sys.argv[1:] or ["squeezenet"]
    results = [onnx_light_model(m) for m in models] + [torch_transformer_block()]
    sys.exit(0 if all(results) else 1)
