"""Model frontends into the graph dialect: ONNX (`onnx`) and PyTorch (`torch`)."""
