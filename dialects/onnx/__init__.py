"""
The `onnx` dialect: an ONNX graph as xDSL ops over builtin tensors.

`ONNX_OPS` maps an ONNX `op_type` to its op class; the importer and the reference
interpreter are driven by it.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from .base import OnnxConstantOp, OnnxOp
from .constants import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .fused import *  # noqa: F403
from .nn import *  # noqa: F403
from .quant import *  # noqa: F403
from .tensor import *  # noqa: F403


def _op_classes() -> list[type[OnnxOp]]:
    from . import constants, elementwise, fused, nn, quant, tensor

    classes: list[type[OnnxOp]] = []
    for module in (constants, elementwise, nn, tensor, quant, fused):
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type) and issubclass(obj, OnnxOp) and hasattr(obj, "name"):
                classes.append(obj)
    return classes


ONNX_OPS: dict[str, type[OnnxOp]] = {cls.name.split(".", 1)[1]: cls for cls in _op_classes()}

ONNX = Dialect("onnx", list(ONNX_OPS.values()), [])

__all__ = ["ONNX", "ONNX_OPS", "OnnxConstantOp", "OnnxOp"]
