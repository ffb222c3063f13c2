"""Quantized operators: (de)quantisation and the QLinear integer conv and matmul."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import I64, IntegerAttr, NoneType, TensorType, i32
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from . import shapes
from .base import (
    OnnxOp,
    element_type_of_value,
    is_none,
    shape_of,
    tensor,
)
from .nn import ConvAttrsOp
from .shapes import ShapeError
from .types import QUANT_TYPES, FloatTensor, element_type_from_onnx, ui8


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(value, 64)


def _check_quant_params(
    op: OnnxOp, data_shape, scale, zero_point, axis: int, zero_types=QUANT_TYPES
) -> None:
    """
    Scale/zero-point are scalars (per tensor) or 1-D along `axis` (per axis). A
    one-element 1-D scale is per tensor too, as onnxruntime and its quantizer treat it.
    """
    scale_shape = shape_of(scale)
    if len(scale_shape) > 1 or (len(scale_shape) == 1 and scale_shape[0] != 1 and (
        not data_shape or scale_shape[0] != data_shape[shapes.normalize_axis(axis, len(data_shape))]
    )):
        raise ShapeError(f"scale {list(scale_shape)} is neither per-tensor nor per-axis")
    if not is_none(zero_point):
        zero_shape = shape_of(zero_point)
        one_element = math.prod(zero_shape) == 1 and math.prod(scale_shape) == 1
        if zero_shape != scale_shape and not one_element:
            raise ShapeError("zero point and scale shapes differ")
        if element_type_of_value(zero_point) not in zero_types:
            names = "int8, uint8 or int32" if i32 in zero_types else "int8 or uint8"
            raise VerifyException(f"{op.name}: zero point must be {names}")


@irdl_op_definition
class QuantizeLinearOp(OnnxOp):
    """`y = saturate(round_half_even(x / y_scale) + y_zero_point)` into int8/uint8."""

    name = "onnx.QuantizeLinear"
    x = operand_def(FloatTensor)
    y_scale = operand_def(FloatTensor)
    y_zero_point = operand_def(TensorType | NoneType)
    y = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=_int(1))
    block_size = prop_def(IntegerAttr[I64], default_value=_int(0))
    output_dtype = prop_def(IntegerAttr[I64], default_value=_int(0))
    saturate = prop_def(IntegerAttr[I64], default_value=_int(1))

    def infer_types(self):
        if self.int_attr("block_size"):
            raise VerifyException("onnx.QuantizeLinear: blocked quantisation is not supported")
        x = shape_of(self.x)
        _check_quant_params(self, x, self.y_scale, self.y_zero_point, self.int_attr("axis"))
        if not is_none(self.y_zero_point):
            element = element_type_of_value(self.y_zero_point)
        elif self.int_attr("output_dtype"):
            element = element_type_from_onnx(self.int_attr("output_dtype"))
        else:
            element = ui8
        return [tensor(element, x)]


@irdl_op_definition
class DequantizeLinearOp(OnnxOp):
    """`y = (x - x_zero_point) * x_scale` in the scale's float type."""

    name = "onnx.DequantizeLinear"
    x = operand_def(TensorType)
    x_scale = operand_def(FloatTensor)
    x_zero_point = operand_def(TensorType | NoneType)
    y = result_def(FloatTensor)
    axis = prop_def(IntegerAttr[I64], default_value=_int(1))
    block_size = prop_def(IntegerAttr[I64], default_value=_int(0))

    def infer_types(self):
        if self.int_attr("block_size"):
            raise VerifyException("onnx.DequantizeLinear: blocked quantisation is not supported")
        if element_type_of_value(self.x) not in (*QUANT_TYPES, i32):
            raise VerifyException("onnx.DequantizeLinear: x must be int8, uint8 or int32")
        x = shape_of(self.x)
        _check_quant_params(
            self, x, self.x_scale, self.x_zero_point, self.int_attr("axis"), (*QUANT_TYPES, i32)
        )
        return [tensor(element_type_of_value(self.x_scale), x)]


def _check_quant_tensor(op: OnnxOp, value) -> None:
    if element_type_of_value(value) not in QUANT_TYPES:
        raise VerifyException(f"{op.name}: quantized operands must be int8 or uint8")


@irdl_op_definition
class QLinearConvOp(ConvAttrsOp):
    """Integer convolution: dequantize x and w, convolve with int32 bias B, requantize to y."""

    name = "onnx.QLinearConv"
    x = operand_def(TensorType)
    x_scale = operand_def(FloatTensor)
    x_zero_point = operand_def(TensorType)
    w = operand_def(TensorType)
    w_scale = operand_def(FloatTensor)
    w_zero_point = operand_def(TensorType)
    y_scale = operand_def(FloatTensor)
    y_zero_point = operand_def(TensorType)
    B = operand_def(TensorType.constr(i32) | NoneType)
    y = result_def(TensorType)

    def infer_types(self):
        for v in (self.x, self.w, self.x_zero_point, self.w_zero_point, self.y_zero_point):
            _check_quant_tensor(self, v)
        x, w = shape_of(self.x), shape_of(self.w)
        _check_quant_params(self, x, self.x_scale, self.x_zero_point, 1)
        _check_quant_params(self, w, self.w_scale, self.w_zero_point, 0)
        _check_quant_params(self, x, self.y_scale, self.y_zero_point, 1)
        bias = None if is_none(self.B) else shape_of(self.B)
        return [tensor(element_type_of_value(self.y_zero_point), self.conv_output(x, w, bias))]


@irdl_op_definition
class QLinearMatMulOp(OnnxOp):
    """Integer matmul: dequantize a and b, multiply, requantize to y."""

    name = "onnx.QLinearMatMul"
    a = operand_def(TensorType)
    a_scale = operand_def(FloatTensor)
    a_zero_point = operand_def(TensorType)
    b = operand_def(TensorType)
    b_scale = operand_def(FloatTensor)
    b_zero_point = operand_def(TensorType)
    y_scale = operand_def(FloatTensor)
    y_zero_point = operand_def(TensorType)
    y = result_def(TensorType)

    def infer_types(self):
        for v in (self.a, self.b, self.a_zero_point, self.b_zero_point, self.y_zero_point):
            _check_quant_tensor(self, v)
        a, b = shape_of(self.a), shape_of(self.b)
        _check_quant_params(self, a, self.a_scale, self.a_zero_point, -2)
        _check_quant_params(self, b, self.b_scale, self.b_zero_point, -1)
        out = shapes.matmul(a, b)
        return [tensor(element_type_of_value(self.y_zero_point), out)]


__all__ = [name for name in dir() if name.endswith("Op") and name[0].isupper()]
