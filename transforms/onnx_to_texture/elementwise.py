"""
Elementwise ops on pixels: the float4 formula of each unary/binary ONNX op and of
the fused ops' activations, and the kernel for an elementwise op that no producer
absorbed. Broadcast operands are read through `TensorView.read_broadcast_block`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir import Operation

from mobile_opt.dialects import onnx
from mobile_opt.dialects.onnx.base import is_none
from mobile_opt.transforms.onnx_utils import scalar_of

from .context import KernelContext, LoweringContext, LoweringError, node_label
from .kernel_builder import KernelBuilder, Val
from .rules import lowers


def activation(kb: KernelBuilder, name: str, params: Sequence[float], x: Val) -> Val:
    """A fused op's trailing activation (see `ACTIVATION_PARAMS`) applied to float4 `x`."""
    match name:
        case "":
            return x
        case "Relu":
            return kb.max(x, 0.0)
        case "LeakyRelu":
            return kb.max(x, 0.0) + kb.min(x, 0.0) * params[0]
        case "Clip":
            return kb.min(kb.max(x, params[0]), params[1])
        case "Sigmoid":
            return 1.0 / (kb.math("exp", -x) + 1.0)
        case "Tanh":
            return kb.math("tanh", x)
        case "HardSigmoid":
            return kb.min(kb.max(x * params[0] + params[1], 0.0), 1.0)
        case "HardSwish":
            return x * kb.min(kb.max(x * (1.0 / 6.0) + 0.5, 0.0), 1.0)
        case "Gelu":
            return x * (kb.math("erf", x * (1.0 / math.sqrt(2.0))) + 1.0) * 0.5
    raise LoweringError(f"activation {name} has no GPU kernel")


def _gelu_tanh(kb: KernelBuilder, x: Val) -> Val:
    inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
    return x * (kb.math("tanh", inner) + 1.0) * 0.5


def _per_lane(kb: KernelBuilder, x: Val, fn) -> Val:
    return kb.map_lanes(kb.splat(x), fn)


def _const_scalar(op: Operation, index: int, default: float) -> float:
    value = op.operands[index] if index < len(op.operands) else None
    if value is None or is_none(value):
        return default
    scalar = scalar_of(value)
    if scalar is None:
        raise LoweringError(f"{node_label(op)}: operand #{index} must be a constant scalar")
    return scalar


def _unary(kb: KernelBuilder, op: Operation, x: Val) -> Val:
    match op:
        case onnx.ReluOp():
            return kb.max(x, 0.0)
        case onnx.LeakyReluOp():
            return activation(kb, "LeakyRelu", [op.alpha.value.data], x)
        case onnx.SigmoidOp():
            return activation(kb, "Sigmoid", [], x)
        case onnx.TanhOp():
            return kb.math("tanh", x)
        case onnx.ErfOp():
            return kb.math("erf", x)
        case onnx.GeluOp():
            if op.approximate.data == "tanh":
                return _gelu_tanh(kb, x)
            return activation(kb, "Gelu", [], x)
        case onnx.HardSigmoidOp():
            return activation(kb, "HardSigmoid", [op.alpha.value.data, op.beta.value.data], x)
        case onnx.HardSwishOp():
            return activation(kb, "HardSwish", [], x)
        case onnx.ShrinkOp():
            lambd, bias = op.lambd.value.data, op.bias.value.data
            return _per_lane(kb, x, lambda v: kb.select(
                v < -lambd, v + bias, kb.select(v > lambd, v - bias, 0.0)))
        case onnx.SignOp():
            return _per_lane(kb, x, lambda v: kb.select(
                v > 0.0, 1.0, kb.select(v < 0.0, -1.0, 0.0)))
        case onnx.AbsOp():
            return kb.math("fabs", x)
        case onnx.NegOp():
            return -x
        case onnx.ExpOp():
            return kb.math("exp", x)
        case onnx.LogOp():
            return kb.math("log", x)
        case onnx.SqrtOp():
            return kb.math("sqrt", x)
        case onnx.ReciprocalOp():
            return 1.0 / x
        case onnx.IdentityOp() | onnx.CastOp():
            return x
        case onnx.ClipOp():
            lo = _const_scalar(op, 1, -math.inf)
            hi = _const_scalar(op, 2, math.inf)
            if lo != -math.inf:
                x = kb.max(x, lo)
            if hi != math.inf:
                x = kb.min(x, hi)
            return x
    raise LoweringError(f"{node_label(op)} has no GPU kernel")


UNARY = (
    onnx.ReluOp, onnx.LeakyReluOp, onnx.SigmoidOp, onnx.TanhOp, onnx.ErfOp, onnx.GeluOp,
    onnx.HardSigmoidOp, onnx.HardSwishOp, onnx.ShrinkOp, onnx.SignOp, onnx.AbsOp, onnx.NegOp,
    onnx.ExpOp, onnx.LogOp, onnx.SqrtOp, onnx.ReciprocalOp, onnx.IdentityOp, onnx.CastOp,
    onnx.ClipOp,
)
BINARY = (onnx.AddOp, onnx.SubOp, onnx.MulOp, onnx.DivOp, onnx.PowOp)
VARIADIC = (onnx.SumOp, onnx.MaxOp, onnx.MinOp)


def is_fusable_elementwise(op: Operation) -> bool:
    if isinstance(op, onnx.CastOp):
        return op.results[0].type == op.operands[0].type
    if isinstance(op, onnx.ClipOp):
        return all(is_none(v) or scalar_of(v) is not None for v in op.operands[1:])
    return isinstance(op, UNARY + BINARY + VARIADIC)


def apply_elementwise(kb: KernelBuilder, op: Operation, operands: Sequence[Val | None]) -> Val:
    """`op` on float4 operands (None for absent optional inputs)."""
    if isinstance(op, UNARY):
        return _unary(kb, op, operands[0])
    a = operands[0]
    rest = [v for v in operands[1:] if v is not None]
    match op:
        case onnx.AddOp():
            return a + rest[0]
        case onnx.SubOp():
            return a - rest[0]
        case onnx.MulOp():
            return a * rest[0]
        case onnx.DivOp():
            return a / rest[0]
        case onnx.PowOp():
            return kb.pow(a, rest[0])
        case onnx.SumOp():
            for v in rest:
                a = a + v
            return a
        case onnx.MaxOp():
            for v in rest:
                a = kb.max(a, v)
            return a
        case onnx.MinOp():
            for v in rest:
                a = kb.min(a, v)
            return a
    raise LoweringError(f"{node_label(op)} has no GPU kernel")


@lowers(*UNARY, *BINARY, *VARIADIC)
def lower_elementwise(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    if not is_fusable_elementwise(op):
        raise LoweringError(f"{node_label(op)}: only float32 elementwise ops with constant "
                            "scalar bounds run on the GPU")
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
