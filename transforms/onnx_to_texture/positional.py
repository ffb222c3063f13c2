"""
Lowering rules for ops whose values follow from each element's position: Range
(`start + i * delta`), Trilu (the input, or 0 off the kept triangle) and
ConstantOfShape (a fill) whose operands are computed at run time. Scalar operands
that are constants go into the formula; run-time ones are read from their storage.
The result's shape is its static type's.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from mobile_opt.dialects import onnx
from mobile_opt.dialects.onnx.base import is_none
from mobile_opt.transforms.onnx_utils import scalar_of

from .context import KernelContext, LoweringContext
from .nodes import shape
from .kernel_builder import Val
from .movement import lane_index, lanes_present
from .rules import lowers


def scalar_operand(k: KernelContext, value: SSAValue, hint: str) -> Val:
    """A one-element operand as an f32 value: its constant, or read from its storage."""
    known = scalar_of(value)
    if known is not None:
        return k.kb.float(known)
    return k.input(value, hint=hint).read([0] * len(shape(value)))


@lowers(onnx.RangeOp, integers=True)
def lower_range(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    """Lane i holds start + i * delta (exact for integers, as ONNX defines it for floats)."""
    assert isinstance(op, onnx.RangeOp)
    k = KernelContext(ctx, op, "range", epilogue)
    kb = k.kb
    start = scalar_operand(k, op.start, "start")
    delta = scalar_operand(k, op.delta, "delta")
    lanes: list[Val | float] = []
    for lane in range(4):
        (i,) = lane_index(k, lane)
        lanes.append(kb.fma(kb.to_float(kb.like(i, kb.int(0))), delta, start))
    k.store(kb.vec4(lanes))
    k.finish()


@lowers(onnx.TriluOp, integers=True)
def lower_trilu(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    """Each lane keeps its input element where column - row >= k (upper) or <= k (lower)."""
    assert isinstance(op, onnx.TriluOp)
    k = KernelContext(ctx, op, "trilu", epilogue)
    kb = k.kb
    value = k.input(op.input, hint="in").read_broadcast_block(
        k.pixel.block, k.out.shape, k.out.packed_axis)
    if is_none(op.k):
        diagonal: Val = kb.int(0)
    else:
        known = scalar_of(op.k)
        diagonal = kb.int(int(known)) if known is not None else kb.to_int(
            scalar_operand(k, op.k, "k"))
    lanes: list[Val | float] = []
    for lane in range(4):
        if lane >= lanes_present(k):
            lanes.append(0.0)
            continue
        idx = lane_index(k, lane)
        offset = kb.like(idx[-1], kb.int(0)) - idx[-2]
        keep = offset >= diagonal if op.int_attr("upper") else offset <= diagonal
        lanes.append(kb.select(keep, kb.lane(value, lane), 0.0))
    k.store(kb.vec4(lanes))
    k.finish()


@lowers(onnx.ConstantOfShapeOp, integers=True)
def lower_constant_of_shape(ctx: LoweringContext, op: Operation,
                            epilogue: list[Operation]) -> None:
    """
    A shape computed at run time: the result's static type already says it, so the
    kernel only fills (a constant shape keeps the op on the host).
    """
    assert isinstance(op, onnx.ConstantOfShapeOp)
    k = KernelContext(ctx, op, "fill", epilogue)
    k.store(k.kb.float4(float(op.fill())))
    k.finish()
