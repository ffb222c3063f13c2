"""
`flashmem-split{max-weight-mb}`: cut each MatMul whose constant right operand is larger
than `max-weight-mb` MiB into MatMuls over column blocks of it, joined by a Concat on the
last axis.

FlashMem streams whole weights: a weight's texture is resident from its load to its last
reader, so a layer that reads one weight larger than the budget allows (GPT-2's 147 MiB
LM head) sets a least budget no plan can go below. Column blocks are weights of their
own, each resident only around its own MatMul, so the budget need only hold one of them.
The blocks are `onnx.Slice` ops of the weight, constant expressions that the host packs
(and the weight store holds packed), so no weight file is rewritten. Blocks are whole
multiples of four columns, so that each packs into whole pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.dialects.onnx.base import is_constant_expression
from mobile_opt.dialects.onnx.constants import NoneOp
from mobile_opt.dialects.onnx.nn import MatMulOp
from mobile_opt.dialects.onnx.tensor import ConcatOp, SliceOp
from mobile_opt.dialects.stream.attributes import element_bytes

from .onnx_utils import make_constant

MB = 1 << 20


def column_blocks(columns: int, parts: int) -> list[tuple[int, int]]:
    """`columns` cut into at most `parts` blocks of a multiple of 4 columns (the last may
    be short), as (start, end)."""
    width = 4 * math.ceil(columns / parts / 4)
    return [(a, min(a + width, columns)) for a in range(0, columns, width)]


@dataclass(frozen=True)
class FlashMemSplitPass(ModulePass):
    """Cut MatMuls over weights above `max-weight-mb` MiB into column blocks."""

    name = "flashmem-split"

    max_weight_mb: float = 0.0
    """The largest weight a MatMul may read whole, in MiB; required."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_weight_mb <= 0:
            raise DiagnosticException("flashmem-split: max-weight-mb is required and positive")
        limit = self.max_weight_mb * MB
        for matmul in [o for o in op.walk() if isinstance(o, MatMulOp)]:
            weight = matmul.B
            t = weight.type
            if not (isinstance(t, TensorType) and is_constant_expression(weight)
                    and len(t.get_shape()) == 2):
                continue
            rows, columns = t.get_shape()
            nbytes = rows * columns * (element_bytes(t) or 4)
            if nbytes <= limit:
                continue
            blocks = column_blocks(columns, math.ceil(nbytes / limit))
            if len(blocks) < 2:
                continue
            out = matmul.results[0].type
            assert isinstance(out, TensorType)
            new, parts = [], []
            none = NoneOp()
            new.append(none)
            for a, b in blocks:
                starts, ends, axes = (make_constant(np.array([v], np.int64)) for v in (a, b, 1))
                block = SliceOp.create(
                    operands=[weight, starts.results[0], ends.results[0], axes.results[0],
                              none.result],
                    result_types=[TensorType(t.element_type, [rows, b - a])])
                product = MatMulOp.create(
                    operands=[matmul.A, block.results[0]],
                    result_types=[TensorType(out.element_type, [*out.get_shape()[:-1], b - a])])
                product.location = matmul.location
                new += [starts, ends, axes, block, product]
                parts.append(product.results[0])
            concat = ConcatOp.create(operands=parts, result_types=[out],
                                     properties={"axis": IntegerAttr(len(out.get_shape()) - 1,
                                                                     i64)})
            concat.location = matmul.location
            new.append(concat)
            block_ = matmul.parent_block()
            assert block_ is not None
            block_.insert_ops_before(new, matmul)
            matmul.results[0].replace_all_uses_with(concat.results[0])
            matmul.detach()
            matmul.erase()
