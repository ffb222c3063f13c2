"""
What every `onnx-to-texture` module asks of a node or a value: the label that names the
node in diagnostics, the error that carries it, the value's shape and whether it holds
integers. Below `context.py` and the op families, which all import it.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Operation, SSAValue


class LoweringError(Exception):
    """An op or layout this lowering cannot handle; the message names the node."""


def node_label(op: Operation) -> str:
    """`node 'name' (OpType)` for diagnostics."""
    kind = op.name.split(".", 1)[-1]
    from mobile_opt.reference.interpreter import describe_location

    name = describe_location(op.location)
    return f"node '{name}' ({kind})" if name else f"op {op.name}"


def names_node(label: str, name: str) -> bool:
    """Whether a kernel's `onnx.node` label (`node 'a' (MatMul) + node 'b' (Relu)`, of the
    nodes fused into it) names node `name`."""
    return any(part.startswith(f"node '{name}' ") for part in label.split(" + "))


def shape(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


EXACT_INTEGER_LIMIT = 2**24
"""Integers up to this magnitude are exact in a float32 texel."""


def is_integer(value: SSAValue) -> bool:
    """
    An integer or boolean tensor. On the GPU these live as float32 texels holding
    exact integers (booleans as 0 and 1), also under f16 storage.
    """
    t = value.type
    return isinstance(t, TensorType) and isinstance(t.element_type, IntegerType)
