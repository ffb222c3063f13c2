"""
Element types shared by the `onnx` dialect, the importer and the interpreter.

ONNX's `TensorProto` data types, xDSL element types and numpy dtypes map one to one
for every type this project handles; anything else is unsupported at import.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto
from xdsl.dialects.builtin import (
    AnyFloatConstr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

ui8 = IntegerType(8, Signedness.UNSIGNED)
ui16 = IntegerType(16, Signedness.UNSIGNED)

_TABLE: list[tuple[int, Attribute, np.dtype]] = [
    (TensorProto.FLOAT, f32, np.dtype(np.float32)),
    (TensorProto.FLOAT16, f16, np.dtype(np.float16)),
    (TensorProto.DOUBLE, f64, np.dtype(np.float64)),
    (TensorProto.INT8, i8, np.dtype(np.int8)),
    (TensorProto.UINT8, ui8, np.dtype(np.uint8)),
    (TensorProto.INT16, i16, np.dtype(np.int16)),
    (TensorProto.UINT16, ui16, np.dtype(np.uint16)),
    (TensorProto.INT32, i32, np.dtype(np.int32)),
    (TensorProto.INT64, i64, np.dtype(np.int64)),
    (TensorProto.BOOL, i1, np.dtype(np.bool_)),
]

FLOAT_TYPES = (f16, f32, f64, bf16)
QUANT_TYPES = (i8, ui8)
FloatTensor = TensorType.constr(AnyFloatConstr)
IntTensor = TensorType.constr(IntegerType)
BoolTensor = TensorType.constr(i1)
QuantTensor = TensorType.constr(i8) | TensorType.constr(ui8)

_BY_ONNX = {code: t for code, t, _ in _TABLE}
_BY_ELEMENT = {t: (code, dt) for code, t, dt in _TABLE}
_BY_DTYPE = {dt: t for _, t, dt in _TABLE}


def element_type_from_onnx(code: int) -> Attribute:
    """xDSL element type of an ONNX data type; KeyError if unsupported."""
    return _BY_ONNX[code]


def onnx_from_element_type(t: Attribute) -> int:
    return _BY_ELEMENT[t][0]


def dtype_of(t: Attribute) -> np.dtype:
    """numpy dtype that stores values of element type `t`."""
    if isinstance(t, BFloat16Type):
        raise KeyError("bf16 has no numpy dtype")
    return _BY_ELEMENT[t][1]


def element_type_of(dtype: np.dtype) -> Attribute:
    return _BY_DTYPE[np.dtype(dtype)]


def is_element_type(t: Attribute) -> bool:
    """An element type this project handles (bf16 too, which numpy cannot hold)."""
    return t in FLOAT_TYPES or t in _BY_ELEMENT


def is_float(t: Attribute) -> bool:
    return isinstance(t, Float16Type | Float32Type | Float64Type | BFloat16Type)


def onnx_type_name(code: int) -> str:
    return TensorProto.DataType.Name(code)
