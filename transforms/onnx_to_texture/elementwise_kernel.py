"""
The kernel of an elementwise op that no producer absorbed: each operand read at the
output pixel (broadcast operands through `TensorView.read_broadcast_block`), the op's
formula (`elementwise.py`) and the fused epilogue after it.
"""

from __future__ import annotations

from xdsl.ir import Operation

from mobile_opt.dialects import onnx
from mobile_opt.dialects.onnx.base import is_none

from .context import KernelContext, LoweringContext
from .elementwise import (
    EXACT_BINARY,
    EXACT_UNARY,
    FLOAT_UNARY,
    TERNARY,
    VARIADIC,
    apply_elementwise,
    is_fusable_elementwise,
)
from .kernel_builder import Val
from .nodes import LoweringError, node_label
from .rules import lowers


@lowers(*FLOAT_UNARY, onnx.PowOp)
@lowers(*EXACT_UNARY, *EXACT_BINARY, *VARIADIC, *TERNARY, integers=True)
def lower_elementwise(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    if not is_fusable_elementwise(op):
        raise LoweringError(f"{node_label(op)}: only float32, integer and boolean elementwise "
                            "ops with constant scalar bounds run on the GPU")
    k = KernelContext(ctx, op, "eltwise", epilogue)
    operands: list[Val | None] = []
    for i, v in enumerate(op.operands):
        if is_none(v) or (isinstance(op, onnx.ClipOp) and i > 0):
            operands.append(None)
            continue
        view = k.input(v, hint=f"in{i}")
        operands.append(view.read_broadcast_block(k.pixel.block, k.out.shape, k.out.packed_axis))
    k.store(apply_elementwise(k.kb, op, operands))
    k.finish()
