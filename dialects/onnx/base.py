"""
Shared base classes and helpers of the `onnx` dialect.

Every op mirrors one ONNX operator at its opset-21 semantics (the importer converts
older models up first). Inputs are positional as in ONNX: an omitted optional input
is the `none` value of `onnx.None`, so operand positions never shift. ONNX
attributes are properties with ONNX's own names and defaults.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    NoneType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, ParsePropInAttrDict, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .shapes import Shape, ShapeError


class UnknownShape(Exception):
    """A shape rule needs a dimension or constant that is not known statically."""


class OnnxOp(IRDLOperation, ABC):
    """
    An ONNX operator. Subclasses give `infer_types`, the result types their
    shape rules derive from the operands; the verifier checks the declared
    result types against it wherever the operands are static.
    """

    irdl_options = (ParsePropInAttrDict(),)
    # ONNX operators are functions of their inputs: unused ones can go (`dce`)
    traits = traits_def(Pure())
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    @property
    def onnx_type(self) -> str:
        """The ONNX `op_type` this op stands for."""
        return self.name.split(".", 1)[1]

    def infer_types(self) -> Sequence[Attribute] | None:
        """Result types from operand types and properties, or None to not check."""
        return None

    @classmethod
    def check_properties(cls, properties: Mapping[str, Attribute]) -> None:
        """
        A ShapeError naming the attribute and its value where a property is out of the
        range ONNX gives it. It needs no operand, so the importer runs it on every node
        before ONNX's shape inference.
        """

    def verify_attributes(self) -> None:
        """
        `check_properties`, then the ranges that depend on operands (an axis and the
        rank, an index and a dim, a constant step): each checked where the operands are
        known, whatever else is dynamic.
        """
        type(self).check_properties(self.properties)

    def verify_(self) -> None:
        try:
            self.verify_attributes()
        except ShapeError as e:
            raise VerifyException(f"{self.name}: {e}") from None
        try:
            expected = self.infer_types()
        except UnknownShape:
            return
        except ShapeError as e:
            raise VerifyException(f"{self.name}: {e}") from None
        if expected is None:
            return
        if len(expected) != len(self.results):
            raise VerifyException(
                f"{self.name}: expected {len(expected)} results, got {len(self.results)}"
            )
        for i, (result, want) in enumerate(zip(self.results, expected, strict=True)):
            # rules see static operands only, so a negative size here comes from a
            # negative shape/split/sizes value, not a dynamic dim: it matches nothing
            if isinstance(want, TensorType) and any(d < 0 for d in want.get_shape()):
                raise VerifyException(
                    f"{self.name}: the operands give result #{i} a negative dimension: "
                    f"{list(want.get_shape())}"
                )
            if not types_agree(result.type, want):
                raise VerifyException(
                    f"{self.name}: result #{i} has type {result.type}, "
                    f"but the operands give {want}"
                )

    # property accessors with ONNX defaults applied by the op definitions
    def int_attr(self, name: str) -> int:
        attr = self.properties[name]
        assert isinstance(attr, IntegerAttr)
        return attr.value.data

    def float_attr(self, name: str) -> float:
        attr = self.properties[name]
        assert isinstance(attr, FloatAttr)
        return attr.value.data

    def str_attr(self, name: str) -> str:
        attr = self.properties[name]
        assert isinstance(attr, StringAttr)
        return attr.data

    def ints_attr(self, name: str) -> tuple[int, ...] | None:
        attr = self.properties.get(name)
        if attr is None:
            return None
        assert isinstance(attr, DenseArrayBase)
        return tuple(int(v) for v in attr.get_values())

    def floats_attr(self, name: str) -> tuple[float, ...] | None:
        attr = self.properties.get(name)
        if attr is None:
            return None
        assert isinstance(attr, DenseArrayBase)
        return tuple(float(v) for v in attr.get_values())


class OnnxConstantOp(OnnxOp, ABC):
    """An op whose single result is a compile-time known tensor."""

    @abstractmethod
    def array(self) -> np.ndarray:
        """The value, as a (possibly read-only) numpy array."""


INT32_LIMIT = 2**31
"""Pads and sizes stay below this: the device kernels index with 32-bit ints."""


def ints_property(properties: Mapping[str, Attribute], name: str) -> tuple[int, ...] | None:
    attr = properties.get(name)
    if not isinstance(attr, DenseArrayBase):
        return None
    return tuple(int(v) for v in attr.get_values())


def int_property(properties: Mapping[str, Attribute], name: str) -> int | None:
    attr = properties.get(name)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def require_positive_property(properties: Mapping[str, Attribute], name: str) -> None:
    """The integer attribute `name`, where given, is >= 1."""
    value = int_property(properties, name)
    if value is not None and value < 1:
        raise ShapeError(f"{name} = {value}, must be >= 1")


def require_at_least(name: str, values: Sequence[int] | None, low: int, below: int | None = None) -> None:
    """Each of `values` (the list attribute `name`) is >= `low` (and < `below`)."""
    for i, v in enumerate(values or ()):
        if v < low:
            raise ShapeError(f"{name}[{i}] = {v}, must be >= {low}")
        if below is not None and v >= below:
            raise ShapeError(f"{name}[{i}] = {v}, must be < {below}")


def require_nonzero(name: str, values: Sequence[int | float]) -> None:
    for i, v in enumerate(values):
        if v == 0:
            raise ShapeError(f"{name}[{i}] = {v}, must not be 0")


def require_axis(name: str, axis: int, rank: int | None, extra: int = 0) -> None:
    """`axis` (the attribute or input `name`) indexes a rank-`rank` tensor (`rank + extra` places)."""
    if rank is None:
        return
    places = rank + extra
    if not -places <= axis < max(places, 1):
        of = f"output rank {places}" if extra else f"rank {rank}"
        raise ShapeError(f"{name} = {axis}, must be in [{-places}, {places - 1}] for {of}")


def require_axes(
    name: str, axes: Sequence[int] | None, rank: int | None, extra: int = 0, distinct: bool = True
) -> None:
    """Each of `axes` (the list `name`) indexes rank `rank` (+ `extra`), none twice if `distinct`."""
    if axes is None or rank is None:
        return
    for i, axis in enumerate(axes):
        require_axis(f"{name}[{i}]", axis, rank, extra)
    places = rank + extra
    normal = [a % places if places else 0 for a in axes]
    if distinct and len(set(normal)) != len(normal):
        raise ShapeError(f"{name} = {list(axes)}, must name each axis once")


def rank_of(value: SSAValue) -> int | None:
    """The rank of a tensor value (its dims may be dynamic), or None."""
    t = value.type
    return t.get_num_dims() if isinstance(t, TensorType) else None


def dim_of(value: SSAValue, axis: int) -> int | None:
    """Static size of dim `axis` (normalised) of a tensor value, or None."""
    t = value.type
    if not isinstance(t, TensorType):
        return None
    shape = t.get_shape()
    if not -len(shape) <= axis < len(shape) or shape[axis] < 0:
        return None
    return shape[axis]


def known_ints(value: SSAValue) -> tuple[int, ...] | None:
    """The integers of an operand defined by a constant op (any shape), else None."""
    if is_none(value):
        return None
    array = constant_array(value)
    if array is None:
        return None
    return tuple(int(v) for v in np.asarray(array).reshape(-1))


def types_agree(actual: Attribute, expected: Attribute) -> bool:
    """Equal, except that a dynamic dimension on either side matches any size."""
    if not (isinstance(actual, TensorType) and isinstance(expected, TensorType)):
        return actual == expected
    if actual.element_type != expected.element_type:
        return False
    a, e = actual.get_shape(), expected.get_shape()
    return len(a) == len(e) and all(x == y or x < 0 or y < 0 for x, y in zip(a, e))


def is_none(value: SSAValue) -> bool:
    return isinstance(value.type, NoneType)


def shape_of(value: SSAValue) -> Shape:
    """Static shape of a tensor value; UnknownShape if any dimension is dynamic."""
    t = value.type
    if not isinstance(t, TensorType):
        raise VerifyException(f"expected a tensor, got {t}")
    shape = t.get_shape()
    if any(d < 0 for d in shape):
        raise UnknownShape()
    return shape


def element_type_of_value(value: SSAValue) -> Attribute:
    t = value.type
    assert isinstance(t, TensorType)
    return t.element_type


def is_constant_expression(value: SSAValue) -> bool:
    """A constant, or an op on constants only: computable before the graph runs."""
    owner = value.owner
    return isinstance(owner, OnnxConstantOp) or (
        isinstance(owner, OnnxOp) and all(is_constant_expression(v) for v in owner.operands)
    )


def is_host_packed(value: SSAValue) -> bool:
    """A graph input or a constant expression: the host has it, and packs it as asked."""
    return not isinstance(value.owner, Operation) or is_constant_expression(value)


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The value of a tensor defined by a constant op, else None."""
    owner = value.owner
    if isinstance(owner, OnnxConstantOp):
        return owner.array()
    return None


def constant_ints(value: SSAValue) -> tuple[int, ...]:
    """A 1-D integer operand whose value a shape rule needs (UnknownShape if not constant)."""
    array = constant_array(value)
    if array is None:
        raise UnknownShape()
    return tuple(int(v) for v in np.asarray(array).reshape(-1))


def optional_ints(value: SSAValue) -> tuple[int, ...] | None:
    return None if is_none(value) else constant_ints(value)


def tensor(element_type: Attribute, shape: Sequence[int]) -> TensorType:
    return TensorType(element_type, shape)


def same_as(value: SSAValue, shape: Sequence[int] | None = None) -> TensorType:
    """A tensor type with `value`'s element type and the given (or its own) shape."""
    return tensor(element_type_of_value(value), shape_of(value) if shape is None else shape)


def require_same_element_type(op: OnnxOp, values: Sequence[SSAValue]) -> None:
    types = {element_type_of_value(v) for v in values if not is_none(v)}
    if len(types) > 1:
        shown = ", ".join(sorted(str(t) for t in types))
        raise VerifyException(f"{op.name}: operands mix element types {shown}")
