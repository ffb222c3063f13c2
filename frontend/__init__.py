"""ONNX import: model loading, opset conversion, shape inference, weight references."""
