"""
Elementwise operators: unary activations and math, broadcasting binaries, Clip, Cast,
Mod, comparisons and boolean logic (boolean results), IsNaN/IsInf, Where.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    FloatAttr,
    I64,
    IntegerAttr,
    NoneType,
    StringAttr,
    TensorType,
    f32,
    i1,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from .base import (
    OnnxOp,
    is_none,
    require_same_element_type,
    same_as,
    shape_of,
    tensor,
)
from .shapes import broadcast
from .types import BoolTensor, FloatTensor, is_element_type, is_float


def _float_attr(value: float) -> FloatAttr:
    return FloatAttr(value, f32)


class UnaryOp(OnnxOp):
    """`Y = f(X)` elementwise; Y has X's type."""

    X = operand_def(TensorType)
    Y = result_def(TensorType)

    def infer_types(self):
        return [same_as(self.X)]


class FloatUnaryOp(UnaryOp):
    """A unary op defined on floating-point tensors only."""

    X = operand_def(FloatTensor)


@irdl_op_definition
class ReluOp(FloatUnaryOp):
    """`max(X, 0)`."""

    name = "onnx.Relu"


@irdl_op_definition
class LeakyReluOp(FloatUnaryOp):
    """`X` where positive, else `alpha * X`."""

    name = "onnx.LeakyRelu"
    alpha = prop_def(FloatAttr, default_value=_float_attr(0.01))


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    """`1 / (1 + exp(-X))`."""

    name = "onnx.Sigmoid"


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    name = "onnx.Tanh"


@irdl_op_definition
class ErfOp(FloatUnaryOp):
    """The Gauss error function."""

    name = "onnx.Erf"


@irdl_op_definition
class GeluOp(FloatUnaryOp):
    """`0.5 X (1 + erf(X / sqrt 2))`, or its tanh form when `approximate = "tanh"`."""

    name = "onnx.Gelu"
    approximate = prop_def(StringAttr, default_value=StringAttr("none"))

    def verify_(self) -> None:
        if self.approximate.data not in ("none", "tanh"):
            raise VerifyException(f"onnx.Gelu: unknown approximate '{self.approximate.data}'")
        super().verify_()


@irdl_op_definition
class HardSigmoidOp(FloatUnaryOp):
    """`max(0, min(1, alpha X + beta))`."""

    name = "onnx.HardSigmoid"
    alpha = prop_def(FloatAttr, default_value=_float_attr(0.2))
    beta = prop_def(FloatAttr, default_value=_float_attr(0.5))


@irdl_op_definition
class HardSwishOp(FloatUnaryOp):
    """`X * max(0, min(1, X / 6 + 1 / 2))`."""

    name = "onnx.HardSwish"


@irdl_op_definition
class ShrinkOp(UnaryOp):
    """`X - bias` above `lambd`, `X + bias` below `-lambd`, else 0."""

    name = "onnx.Shrink"
    bias = prop_def(FloatAttr, default_value=_float_attr(0.0))
    lambd = prop_def(FloatAttr, default_value=_float_attr(0.5))


@irdl_op_definition
class SignOp(UnaryOp):
    name = "onnx.Sign"


@irdl_op_definition
class AbsOp(UnaryOp):
    name = "onnx.Abs"


@irdl_op_definition
class NegOp(UnaryOp):
    name = "onnx.Neg"


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    name = "onnx.Exp"


@irdl_op_definition
class LogOp(FloatUnaryOp):
    name = "onnx.Log"


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    name = "onnx.Sqrt"


@irdl_op_definition
class ReciprocalOp(FloatUnaryOp):
    name = "onnx.Reciprocal"


@irdl_op_definition
class IdentityOp(UnaryOp):
    name = "onnx.Identity"


class BinaryOp(OnnxOp):
    """`C = A op B` with multidirectional broadcasting; A and B share an element type."""

    A = operand_def(TensorType)
    B = operand_def(TensorType)
    C = result_def(TensorType)

    def infer_types(self):
        require_same_element_type(self, [self.A, self.B])
        return [same_as(self.A, broadcast(shape_of(self.A), shape_of(self.B)))]


@irdl_op_definition
class AddOp(BinaryOp):
    name = "onnx.Add"


@irdl_op_definition
class SubOp(BinaryOp):
    name = "onnx.Sub"


@irdl_op_definition
class MulOp(BinaryOp):
    name = "onnx.Mul"


@irdl_op_definition
class DivOp(BinaryOp):
    """Division; integer division truncates toward zero as in C."""

    name = "onnx.Div"


@irdl_op_definition
class PowOp(OnnxOp):
    """`Z = X ** Y` broadcast; the exponent may have another element type."""

    name = "onnx.Pow"
    X = operand_def(TensorType)
    Y = operand_def(TensorType)
    Z = result_def(TensorType)

    def infer_types(self):
        return [same_as(self.X, broadcast(shape_of(self.X), shape_of(self.Y)))]


class VariadicOp(OnnxOp):
    """An elementwise reduction over one or more broadcast inputs."""

    data_0 = var_operand_def(TensorType)
    result = result_def(TensorType)

    def infer_types(self):
        if not self.data_0:
            raise VerifyException(f"{self.name}: needs at least one input")
        require_same_element_type(self, self.data_0)
        return [same_as(self.data_0[0], broadcast(*(shape_of(v) for v in self.data_0)))]


@irdl_op_definition
class SumOp(VariadicOp):
    name = "onnx.Sum"


@irdl_op_definition
class MaxOp(VariadicOp):
    name = "onnx.Max"


@irdl_op_definition
class MinOp(VariadicOp):
    name = "onnx.Min"


@irdl_op_definition
class ClipOp(OnnxOp):
    """`min(max(input, min), max)`; absent bounds do not clip. Bounds are scalars."""

    name = "onnx.Clip"
    input = operand_def(TensorType)
    min = operand_def(TensorType | NoneType)
    max = operand_def(TensorType | NoneType)
    output = result_def(TensorType)

    def infer_types(self):
        require_same_element_type(self, [self.input, self.min, self.max])
        for bound in (self.min, self.max):
            if not is_none(bound) and shape_of(bound) not in ((), (1,)):  # [1] as ONNX Runtime allows
                raise VerifyException("onnx.Clip: min and max must be scalars")
        return [same_as(self.input)]


@irdl_op_definition
class CastOp(OnnxOp):
    """Converts `input` to the element type `to`."""

    name = "onnx.Cast"
    input = operand_def(TensorType)
    to = prop_def(Attribute)
    saturate = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, 64))
    output = result_def(TensorType)

    def infer_types(self):
        if not is_element_type(self.to):
            raise VerifyException(f"onnx.Cast: 'to' must be a supported element type, got {self.to}")
        return [tensor(self.to, shape_of(self.input))]


@irdl_op_definition
class ModOp(BinaryOp):
    """
    Remainder: with `fmod = 0` it takes the divisor's sign, as Python's `%`; with
    `fmod = 1` the dividend's, as C's `fmod`. Until opset 28 floats need `fmod = 1`.
    """

    name = "onnx.Mod"
    fmod = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, 64))

    def infer_types(self):
        fmod = self.fmod.value.data
        if fmod not in (0, 1):
            raise VerifyException(f"onnx.Mod: fmod is 0 or 1, not {fmod}")
        types = super().infer_types()
        if not fmod and is_float(types[0].element_type):
            raise VerifyException(
                "onnx.Mod: floating-point operands need fmod = 1 (fmod = 0 on floats is opset 28's)"
            )
        return types


class CompareOp(OnnxOp):
    """`C = A cmp B` elementwise with broadcasting: a boolean tensor."""

    A = operand_def(TensorType)
    B = operand_def(TensorType)
    C = result_def(BoolTensor)

    def infer_types(self):
        require_same_element_type(self, [self.A, self.B])
        return [tensor(i1, broadcast(shape_of(self.A), shape_of(self.B)))]


@irdl_op_definition
class EqualOp(CompareOp):
    name = "onnx.Equal"


@irdl_op_definition
class LessOp(CompareOp):
    name = "onnx.Less"


@irdl_op_definition
class LessOrEqualOp(CompareOp):
    name = "onnx.LessOrEqual"


@irdl_op_definition
class GreaterOp(CompareOp):
    name = "onnx.Greater"


@irdl_op_definition
class GreaterOrEqualOp(CompareOp):
    name = "onnx.GreaterOrEqual"


class LogicOp(CompareOp):
    """`C = A op B` on boolean tensors, with broadcasting."""

    A = operand_def(BoolTensor)
    B = operand_def(BoolTensor)


@irdl_op_definition
class AndOp(LogicOp):
    name = "onnx.And"


@irdl_op_definition
class OrOp(LogicOp):
    name = "onnx.Or"


@irdl_op_definition
class XorOp(LogicOp):
    name = "onnx.Xor"


@irdl_op_definition
class NotOp(UnaryOp):
    """Logical negation of a boolean tensor."""

    name = "onnx.Not"
    X = operand_def(BoolTensor)
    Y = result_def(BoolTensor)


class FloatTestOp(OnnxOp):
    """A boolean tensor saying where the float tensor X holds a particular kind of value."""

    X = operand_def(FloatTensor)
    Y = result_def(BoolTensor)

    def infer_types(self):
        return [tensor(i1, shape_of(self.X))]


@irdl_op_definition
class IsNaNOp(FloatTestOp):
    name = "onnx.IsNaN"


@irdl_op_definition
class IsInfOp(FloatTestOp):
    """Infinities: +inf where `detect_positive`, -inf where `detect_negative`."""

    name = "onnx.IsInf"
    detect_negative = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, 64))
    detect_positive = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, 64))


@irdl_op_definition
class WhereOp(OnnxOp):
    """`X` where `condition` holds, else `Y`; all three broadcast together."""

    name = "onnx.Where"
    condition = operand_def(BoolTensor)
    X = operand_def(TensorType)
    Y = operand_def(TensorType)
    output = result_def(TensorType)

    def infer_types(self):
        require_same_element_type(self, [self.X, self.Y])
        dims = broadcast(shape_of(self.condition), shape_of(self.X), shape_of(self.Y))
        return [same_as(self.X, dims)]


__all__ = [name for name in dir() if name.endswith("Op") and name[0].isupper()]
