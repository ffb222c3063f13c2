"""The importer's one-line user diagnostics."""

from __future__ import annotations

import onnx
from onnx import helper

from mobile_opt.dialects.limits import LimitError, check_tensor

from mobile_opt.dialects.onnx.graph import printable


class OnnxImportError(Exception):
    """A one-line user-facing import diagnostic."""


def node_label(node: onnx.NodeProto) -> str:
    """`node 'name' (OpType)` for diagnostics, the name escaped (`printable`)."""
    return f"node '{printable(node.name or node.output[0])}' ({printable(node.op_type)})"


def element_size(elem_type: int) -> int:
    """Bytes of one element of an ONNX element type (8 where numpy has no such type)."""
    try:
        return helper.tensor_dtype_to_np_dtype(elem_type).itemsize
    except (KeyError, TypeError, ValueError):
        return 8


def check_size(path: object, what: str, shape, elem_type: int) -> int:
    """The bytes of a tensor `what` of the model at `path`, checked against the limits."""
    try:
        return check_tensor(list(shape), element_size(elem_type), what)
    except LimitError as e:
        raise OnnxImportError(f"{path}: {e}") from None
