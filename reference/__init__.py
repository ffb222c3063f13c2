"""The reference interpreter: evaluates the `onnx` dialect with numpy."""
