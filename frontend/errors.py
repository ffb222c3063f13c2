"""The importer's one-line user diagnostics."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import onnx
from onnx import helper

from mobile_opt.dialects.limits import LimitError, check_tensor

from mobile_opt.dialects.onnx.graph import printable


class OnnxImportError(Exception):
    """A one-line user-facing import diagnostic."""


_KINDS = (
    (stat.S_ISDIR, "is a directory"),
    (stat.S_ISLNK, "is a symbolic link"),
    (stat.S_ISFIFO, "is a FIFO"),
    (stat.S_ISSOCK, "is a socket"),
    (stat.S_ISCHR, "is a character device"),
    (stat.S_ISBLK, "is a block device"),
)


def file_kind(mode: int) -> str:
    """What a file of `st_mode` is, said for a message (`is a FIFO`)."""
    return next((why for test, why in _KINDS if test(mode)), "is no regular file")


def check_input_file(path: str | Path) -> Path:
    """
    `path` as an input file: it must be a regular file (through links), since a FIFO
    blocks and a device such as /dev/zero never ends. A one-line error otherwise.
    """
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise OnnxImportError(f"{path}: no such file") from None
    except OSError as e:
        raise OnnxImportError(f"{path}: cannot read: {e.strerror}") from None
    if not stat.S_ISREG(mode):
        raise OnnxImportError(f"{path}: {file_kind(mode)}, not a file to read")
    return path


def node_label(node: onnx.NodeProto) -> str:
    """`node 'name' (OpType)` for diagnostics, the name escaped (`printable`)."""
    return f"node '{printable(node.name or node.output[0])}' ({printable(node.op_type)})"


def numpy_itemsize(elem_type: int) -> int | None:
    """Bytes of one element of an ONNX element type; None where numpy has no such type."""
    try:
        return helper.tensor_dtype_to_np_dtype(elem_type).itemsize
    except (KeyError, TypeError, ValueError):
        return None


def element_size(elem_type: int) -> int:
    """Bytes of one element of an ONNX element type (8 where numpy has no such type)."""
    return numpy_itemsize(elem_type) or 8


def check_size(path: object, what: str, shape, elem_type: int) -> int:
    """The bytes of a tensor `what` of the model at `path`, checked against the limits."""
    try:
        return check_tensor(list(shape), element_size(elem_type), what)
    except LimitError as e:
        raise OnnxImportError(f"{path}: {e}") from None
