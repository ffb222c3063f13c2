"""
Bad input as the one error type, `UserError`: the errors that the importer, the passes,
the limits, the weight store, the reference interpreter and the toolchain raise, each
made one line with its file and ONNX node as parts of their own.
"""

from __future__ import annotations

import re
from pathlib import Path

from xdsl.utils.exceptions import DiagnosticException, ParseError

from mobile_opt.backends.hexagon.harness import ToolchainError
from mobile_opt.dialects.limits import LimitError
from mobile_opt.dialects.onnx.graph import printable
from mobile_opt.dialects.weights import WeightStoreError
from mobile_opt.frontend.errors import UserError
from mobile_opt.reference.errors import ReferenceRunError

USER_ERRORS: tuple[type[BaseException], ...] = (
    UserError,
    WeightStoreError,
    LimitError,
    ReferenceRunError,
    ToolchainError,
    DiagnosticException,
    ParseError,
)
"""What bad input raises below the API; `user_error` makes each a `UserError`."""


def one_line(error: BaseException) -> str:
    """An error's message as one line; control characters (from a name, a library's own
    message) escaped, so that none can forge a line or move the terminal's cursor."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if isinstance(error, ParseError) and len(lines) > 1:
        # xDSL puts "file:line:col" first and the message last
        return printable(f"{lines[0]}: {lines[-1]}")
    return printable(lines[0]) if lines else type(error).__name__


_NODE = re.compile(r"node '((?:[^'\\]|\\.)*)' \(([^()]*)\): (.*)", re.S)
"""A message that starts with a node's label (`frontend.errors.node_label`)."""


def user_error(error: BaseException, file: str | Path | None = None) -> UserError:
    """
    `error` as a `UserError` of `file`: a message that starts with the file or a node's
    label (`node 'name' (Op): ...`, as the importer and the passes say it) has them taken
    out as parts. A `UserError` that has its parts already keeps them.
    """
    if isinstance(error, UserError) and (error.file is not None or file is None):
        return error
    text = one_line(error)
    name = None if file is None else str(file)
    if name is not None and text.startswith(f"{name}: "):
        text = text[len(name) + 2:]
    found = _NODE.fullmatch(text)
    if found:
        return UserError(found[3], name, found[1], found[2])
    return UserError(text, name)
