"""
Helpers shared by the `onnx` graph passes: reading constant operands, building
constants the way printed IR wants them (inline when small, an external derived
weight when large), cloning ops with new operands, and dead-op removal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import NoneType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from mobile_opt.dialects.onnx.base import OnnxConstantOp, constant_array
from mobile_opt.dialects.onnx.constants import ConstantOp, WeightOp
from mobile_opt.dialects.onnx.types import dtype_of, element_type_of
from mobile_opt.dialects.weights import INLINE_LIMIT, save_derived_weight

DEFAULT_RTOL = 1e-4
"""Relative tolerance when matching the magic constants of a written-out pattern."""


def scalar_of(value: SSAValue) -> float | None:
    """The number held by a one-element constant (of any rank), else None."""
    array = constant_array(value)
    if array is None or array.size != 1:
        return None
    return float(np.asarray(array).reshape(()))


def is_close(actual: float | None, expected: float, rtol: float = DEFAULT_RTOL) -> bool:
    """`actual` is a number within `rtol` of `expected` (absolutely so near zero)."""
    return actual is not None and math.isclose(actual, expected, rel_tol=rtol, abs_tol=rtol * 1e-3)


OpKind = type[Operation] | tuple[type[Operation], ...]


def owner_op(value: SSAValue, kind: OpKind) -> Operation | None:
    """The op of type `kind` that defines `value`, else None."""
    owner = value.owner
    return owner if isinstance(owner, kind) else None


def single_use_owner(value: SSAValue, kind: OpKind) -> Operation | None:
    """Like `owner_op`, but only when `value` has exactly one use, so a fusion may absorb it."""
    return owner_op(value, kind) if value.has_one_use() else None


def tensor_type(value: SSAValue) -> TensorType | None:
    t = value.type
    return t if isinstance(t, TensorType) else None


def static_shape(value: SSAValue) -> tuple[int, ...] | None:
    t = tensor_type(value)
    if t is None:
        return None
    shape = t.get_shape()
    return None if any(d < 0 for d in shape) else tuple(shape)


def make_constant(array: np.ndarray) -> OnnxConstantOp:
    """
    A constant op holding `array`: `onnx.Constant` up to INLINE_LIMIT elements, else an
    `onnx.Weight` naming a content-addressed derived weight file.
    """
    array = np.asarray(array)
    if array.size <= INLINE_LIMIT:
        return ConstantOp(array)
    store, key = save_derived_weight(array)
    return WeightOp(store, key, TensorType(element_type_of(array.dtype), array.shape))


def derived_name(value: SSAValue, suffix: str, default: str) -> str:
    """An SSA name hint for a constant derived from `value`: its own hint plus `suffix`."""
    own = (None if isinstance(value.type, NoneType) else value.name_hint) or default
    return own if own.endswith(f"_{suffix}") else f"{own}_{suffix}"


def as_element_type(array: np.ndarray, like: SSAValue) -> np.ndarray:
    """`array` cast to the element type of the tensor value `like`."""
    t = tensor_type(like)
    assert t is not None
    return np.asarray(array).astype(dtype_of(t.element_type), copy=False)


def clone_with(
    op: Operation,
    operands: Sequence[SSAValue],
    properties: dict[str, Attribute] | None = None,
    result_types: Sequence[Attribute] | None = None,
    cls: type[Operation] | None = None,
) -> Operation:
    """
    A new, detached op like `op` (its class, properties, result types and location)
    with replaced operands and optionally changed properties, types or class.
    """
    props = dict(op.properties)
    props.update(properties or {})
    new = (cls or type(op)).create(
        operands=list(operands),
        result_types=list(result_types if result_types is not None else op.result_types),
        properties=props,
        attributes=dict(op.attributes),
    )
    new.location = op.location
    return new


def erase_if_dead(rewriter: PatternRewriter, op: Operation | None) -> None:
    """Erase an op whose results are all unused (e.g. a fused-away producer); onnx ops are Pure."""
    if op is not None and op.parent is not None and is_trivially_dead(op):
        rewriter.erase(op)
