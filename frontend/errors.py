"""
The one error type of bad input (`UserError`: a file, the ONNX node, what is wrong) and
the importer's checks that raise it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import onnx
from onnx import helper

from mobile_opt.dialects.limits import LimitError, check_tensor

from mobile_opt.dialects.onnx.graph import printable


class UserError(Exception):
    """
    A mistake in a model, its inputs or the options, said in one line:
    `file: node 'name' (Op): message`, each part where it applies. The Python API raises
    it for every bad model (`mobile_opt.compile`, `mobile_opt.load`); the console tools
    print it as `tool: error: ...` and exit with status 1.

    Attributes:
        message: What is wrong.
        file: The file at fault (a model, an input, an output folder), or None.
        node: The name of the ONNX node at fault, as printed (control characters
            escaped), or None.
        op: That node's op type (`Conv`), or None.
    """

    def __init__(self, message: str, file: str | Path | None = None, node: str | None = None,
                 op: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = None if file is None else str(file)
        self.node = node
        self.op = op

    def __str__(self) -> str:
        parts = [] if self.file is None else [self.file]
        if self.node is not None:
            parts.append(f"node '{self.node}'" + ("" if self.op is None else f" ({self.op})"))
        return ": ".join([*parts, self.message])

    def __reduce__(self):  # pickles with its parts (e.g. out of a worker process)
        return (type(self), (self.message, self.file, self.node, self.op))


class OnnxImportError(UserError):
    """What the importer finds wrong with an ONNX file."""


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
