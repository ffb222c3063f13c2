"""`onnx-to-texture`: onnx ops → OpenCL texture kernels plus a host launch sequence."""

from .lower import OnnxToTexturePass

__all__ = ["OnnxToTexturePass"]
