"""
Fused operators that `onnx-fuse` forms: a conv or matrix product, its bias, and one
trailing activation, evaluated as one op. They take ONNX Runtime's contrib names.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, NoneType, StringAttr, TensorType, f32
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from . import shapes
from .base import OnnxOp, is_none, require_same_element_type, same_as, shape_of
from .nn import ConvAttrsOp, GemmAttrsOp
from .shapes import ShapeError
from .types import FloatTensor

ACTIVATION_PARAMS: dict[str, int] = {
    "": 0,
    "Relu": 0,
    "LeakyRelu": 1,
    "Clip": 2,
    "Sigmoid": 0,
    "Tanh": 0,
    "HardSigmoid": 2,
    "HardSwish": 0,
    "Gelu": 0,
}
"""Activations a fused op may end in, and how many `activation_params` each takes."""


class FusedActivationOp(OnnxOp):
    """`activation` ("" for none) with its parameters, e.g. Clip's min and max."""

    activation = prop_def(StringAttr, default_value=StringAttr(""))
    activation_params = opt_prop_def(DenseArrayBase.constr(f32))

    def check_activation(self) -> None:
        name = self.activation.data
        if name not in ACTIVATION_PARAMS:
            raise VerifyException(f"{self.name}: unknown activation '{name}'")
        params = self.floats_attr("activation_params") or ()
        if len(params) != ACTIVATION_PARAMS[name]:
            raise VerifyException(
                f"{self.name}: activation {name} takes {ACTIVATION_PARAMS[name]} params, got {len(params)}"
            )


@irdl_op_definition
class FusedConvOp(ConvAttrsOp, FusedActivationOp):
    """`activation(Conv(X, W, B))`."""

    name = "onnx.FusedConv"
    X = operand_def(FloatTensor)
    W = operand_def(FloatTensor)
    B = operand_def(FloatTensor | NoneType)
    Y = result_def(FloatTensor)

    def infer_types(self):
        self.check_activation()
        require_same_element_type(self, [self.X, self.W, self.B])
        bias = None if is_none(self.B) else shape_of(self.B)
        return [same_as(self.X, self.conv_output(shape_of(self.X), shape_of(self.W), bias))]


@irdl_op_definition
class FusedGemmOp(GemmAttrsOp, FusedActivationOp):
    """`activation(Gemm(A, B, C))`."""

    name = "onnx.FusedGemm"

    def infer_types(self):
        self.check_activation()
        return super().infer_types()


@irdl_op_definition
class FusedMatMulOp(FusedActivationOp):
    """`activation(MatMul(A, B) + Bias)`; Bias broadcasts to the product."""

    name = "onnx.FusedMatMul"
    A = operand_def(TensorType)
    B = operand_def(TensorType)
    Bias = operand_def(TensorType | NoneType)
    Y = result_def(TensorType)

    def infer_types(self):
        self.check_activation()
        require_same_element_type(self, [self.A, self.B, self.Bias])
        out = shapes.matmul(shape_of(self.A), shape_of(self.B))
        if not is_none(self.Bias) and shapes.broadcast(out, shape_of(self.Bias)) != out:
            raise ShapeError(f"Bias {list(shape_of(self.Bias))} does not broadcast to {list(out)}")
        return [same_as(self.A, out)]


__all__ = ["ACTIVATION_PARAMS", "FusedConvOp", "FusedGemmOp", "FusedMatMulOp"]
