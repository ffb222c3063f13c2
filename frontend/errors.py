"""The importer's one-line user diagnostics."""

from __future__ import annotations

import onnx


class OnnxImportError(Exception):
    """A one-line user-facing import diagnostic."""


def node_label(node: onnx.NodeProto) -> str:
    return f"node '{node.name or node.output[0]}' ({node.op_type})"
