"""Values known at compile time: `none`, inline constants and external weights."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    NoneType,
    StringAttr,
    TensorType,
    f32,
)
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from .base import OnnxConstantOp, OnnxOp, constant_ints, tensor, types_agree
from .types import IntTensor, dtype_of, element_type_of


def dense_from_array(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """A `dense<...>` attribute holding a numpy array."""
    # np.ascontiguousarray would turn a 0-d array into shape (1,)
    array = np.require(np.asarray(array), requirements="C")
    element = element_type_of(array.dtype)
    data = array.astype(np.int8) if array.dtype == np.bool_ else array
    return DenseIntOrFPElementsAttr(TensorType(element, array.shape), BytesAttr(data.tobytes()))


def array_from_dense(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    element = attr.get_element_type()
    dtype = dtype_of(element)
    raw = np.frombuffer(attr.data.data, dtype=np.int8 if dtype == np.bool_ else dtype)
    array = raw.astype(np.bool_) if dtype == np.bool_ else raw
    shape = attr.get_shape()
    if array.size == 1 and shape:  # a splat
        array = np.broadcast_to(array, shape)
    return array.reshape(shape)


@irdl_op_definition
class NoneOp(OnnxOp):
    """The absent optional input: ONNX's empty input name."""

    name = "onnx.None"
    result = result_def(NoneType)
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[NoneType()])


@irdl_op_definition
class ConstantOp(OnnxConstantOp):
    """A small tensor held inline in the IR (ONNX `Constant`)."""

    name = "onnx.Constant"
    assembly_format = "attr-dict `:` type($output)"
    value = prop_def(DenseIntOrFPElementsAttr)
    output = result_def(TensorType)

    def __init__(self, array: np.ndarray):
        attr = dense_from_array(array)
        super().__init__(properties={"value": attr}, result_types=[attr.type])

    def array(self) -> np.ndarray:
        return array_from_dense(self.value)

    def verify_(self) -> None:
        if self.value.type != self.output.type:
            raise VerifyException(
                f"onnx.Constant: value has type {self.value.type}, "
                f"result has {self.output.type}"
            )


@irdl_op_definition
class WeightOp(OnnxConstantOp):
    """
    A tensor held outside the IR: the initializer `key` of the `.onnx` file `store`,
    or the whole `.npy` file `store`. The result type states shape and element type.
    """

    name = "onnx.Weight"
    assembly_format = "attr-dict `:` type($output)"
    store = prop_def(StringAttr)
    key = prop_def(StringAttr)
    output = result_def(TensorType)

    def __init__(self, store: str, key: str, result_type: TensorType):
        super().__init__(
            properties={"store": StringAttr(store), "key": StringAttr(key)},
            result_types=[result_type],
        )

    def array(self) -> np.ndarray:
        from mobile_opt.dialects.weights import load_weight

        array = load_weight(self.store.data, self.key.data)
        want = self.output.type
        assert isinstance(want, TensorType)
        if tuple(array.shape) != want.get_shape() or array.dtype != dtype_of(want.element_type):
            raise VerifyException(
                f"onnx.Weight '{self.key.data}': store holds {array.dtype}{list(array.shape)}, "
                f"IR declares {want}"
            )
        return array

    def verify_(self) -> None:
        if any(d < 0 for d in self.output.type.get_shape()):  # type: ignore[union-attr]
            raise VerifyException("onnx.Weight: weights must have a static shape")


@irdl_op_definition
class ConstantOfShapeOp(OnnxOp):
    """A tensor of the shape given by `input`, filled with the one-element `value` (0.0f32 by default)."""

    name = "onnx.ConstantOfShape"
    input = operand_def(IntTensor)
    value = opt_prop_def(DenseIntOrFPElementsAttr)
    output = result_def(TensorType)

    def fill(self) -> np.ndarray:
        if self.value is None:
            return np.zeros((), np.float32)
        return array_from_dense(self.value).reshape(())

    def infer_types(self):
        element = f32 if self.value is None else self.value.get_element_type()
        if self.value is not None and len(self.value) != 1:
            raise VerifyException("onnx.ConstantOfShape: value must hold one element")
        dims = constant_ints(self.input)
        if any(d < 0 for d in dims):
            # a negative size would read as a dynamic dim and match any result
            raise VerifyException(f"onnx.ConstantOfShape: shape {list(dims)} has a negative dimension")
        return [tensor(element, dims)]


__all__ = [
    "ConstantOfShapeOp",
    "ConstantOp",
    "NoneOp",
    "WeightOp",
    "array_from_dense",
    "dense_from_array",
    "types_agree",
]
