"""
The interface of an imported graph: which ONNX names its `@main_graph`'s arguments and
results carry.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr

def printable(name: str | bytes) -> str:
    """
    An ONNX name (of a node, tensor or file) as diagnostics print it: control
    characters escaped as Python writes them (`\\n`, `\\x1b`), so that a name can
    neither break a one-line message nor move the terminal's cursor. A name that is not
    UTF-8 (protobuf then gives bytes) has its bad bytes escaped the same way.
    """
    if isinstance(name, bytes):
        name = name.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


ONNX_NAME = "onnx.name"
"""Argument/result attribute of `@main_graph` holding the ONNX graph input/output name."""


def graph_io_names(function: func.FuncOp) -> tuple[list[str], list[str]]:
    """ONNX names of a `@main_graph`'s inputs and outputs (positional names if unnamed)."""

    def names(attrs, count: int, prefix: str) -> list[str]:
        if attrs is None:
            return [f"{prefix}{i}" for i in range(count)]
        result = []
        for i, d in enumerate(attrs.data):
            name = d.data.get(ONNX_NAME)
            result.append(name.data if isinstance(name, StringAttr) else f"{prefix}{i}")
        return result

    t = function.function_type
    return (
        names(function.arg_attrs, len(t.inputs), "input_"),
        names(function.res_attrs, len(t.outputs), "output_"),
    )
