"""The importer's one-line user diagnostics."""

from __future__ import annotations

import onnx

from mobile_opt.dialects.onnx.graph import printable


class OnnxImportError(Exception):
    """A one-line user-facing import diagnostic."""


def node_label(node: onnx.NodeProto) -> str:
    """`node 'name' (OpType)` for diagnostics, the name escaped (`printable`)."""
    return f"node '{printable(node.name or node.output[0])}' ({printable(node.op_type)})"
