"""mobile-opt: an xDSL compiler that maps ONNX models onto mobile GPUs and DSPs."""

__version__ = "0.1.0"
