"""
What the host computes and packs before a kernel reads it: constant expressions (host
onnx ops over weights) evaluated with the reference kernels, and tensors packed into the
pixels of their storage. The executor packs inputs and weights with it, and the weight
store (`weight_store.py`) writes weights already packed.
"""

from __future__ import annotations

import numpy as np

from mobile_opt.backends.opencl.plan import PackRecord
from mobile_opt.dialects import texture
from mobile_opt.dialects.onnx.base import OnnxOp
from mobile_opt.reference.interpreter import run_op
from xdsl.ir import SSAValue


class OpenCLRunError(Exception):
    """Building or running the generated program failed; the message says where."""


def pixel_dtype(element_type: str) -> type:
    return np.float16 if element_type == "f16" else np.float32


EXACT_INTEGER_LIMIT = 2**24
"""Integer tensors live in float pixels: exact up to this magnitude."""


def host_value(value: SSAValue, values: dict) -> None:
    """Evaluate the host onnx ops that `value` needs (constants, weight transforms)."""
    if value in values:
        return
    owner = value.owner
    if not isinstance(owner, OnnxOp):
        raise OpenCLRunError(f"no value for {value}")
    for v in owner.operands:
        host_value(v, values)
    outs = run_op(owner, [values[v] for v in owner.operands])  # errors name the node
    for r, array in zip(owner.results, outs, strict=True):
        values[r] = array


def check_exact(record: PackRecord, array: np.ndarray) -> None:
    """Integers that float pixels would not hold exactly are an error, not a rounding."""
    if array.dtype.kind in "iu" and array.size and np.abs(array).max() > EXACT_INTEGER_LIMIT:
        what = f"input '{record.name}'" if record.name else f"constant {record.value}"
        raise OpenCLRunError(f"{what}: integers beyond ±2^24 are not exact in float pixels")


def pack_pixels(record: PackRecord, array: np.ndarray) -> np.ndarray:
    """A host tensor as the pixels of its storage (layout and element type)."""
    array = np.asarray(array)
    check_exact(record, array)
    pixels = texture.pack(texture.Layout(record.layout), np.asarray(array, np.float32))
    return np.ascontiguousarray(pixels, pixel_dtype(record.element_type))
