"""
Elementwise ops on pixels: the float4 formula of each unary/binary ONNX op and of
the fused ops' activations, which a kernel's epilogue (`context.KernelContext.store`)
and the kernel of an elementwise op that no producer absorbed (`elementwise_kernel.py`)
apply.

Integer and boolean tensors are float texels holding exact integers (booleans 0
and 1, see `context.is_integer`): sums, products, comparisons and selections of
them are exact in float arithmetic; integer Div and Mod divide as C ints, lane by
lane; comparisons and logic give 0 or 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import f32, i1
from xdsl.ir import Operation

from mobile_opt.dialects import onnx
from mobile_opt.dialects.onnx.base import is_none
from mobile_opt.transforms.onnx_utils import scalar_of

from .kernel_builder import KernelBuilder, Val
from .nodes import LoweringError, is_integer, node_label


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
            return clip(kb, x, params[0], params[1])
        case "Sigmoid":
            return 1.0 / (kb.math("exp", -x) + 1.0)
        case "Tanh":
            return tanh(kb, x)
        case "HardSigmoid":
            return kb.min(kb.max(x * params[0] + params[1], 0.0), 1.0)
        case "HardSwish":
            return x * kb.min(kb.max(x * (1.0 / 6.0) + 0.5, 0.0), 1.0)
        case "Gelu":
            return x * (erf(kb, x * (1.0 / math.sqrt(2.0))) + 1.0) * 0.5
    raise LoweringError(f"activation {name} has no GPU kernel")


F32_MAX = float(np.finfo(np.float32).max)
F32_LOWEST = -F32_MAX
"""Clip's bounds where absent (ONNX's defaults): an infinite x is clipped to them."""


def clip(kb: KernelBuilder, x: Val, lo: float, hi: float) -> Val:
    """Clip as onnxruntime computes it: min(max(x, lo), hi), a NaN x staying NaN, a NaN
    bound none (an infinite one too: it changes nothing)."""
    if not (math.isnan(lo) or lo == -math.inf):
        x = kb.max(x, lo)
    if not (math.isnan(hi) or hi == math.inf):
        x = kb.min(x, hi)
    return x


ERF_P = 0.3275911
ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
"""Abramowitz and Stegun's 7.1.26: erf(x) = 1 - t(a1 + t(a2 + ... t a5)) exp(-x²) with
t = 1 / (1 + p x) for x >= 0, within 1.5e-7 (4.5e-7 measured in f32)."""


def tanh(kb: KernelBuilder, x: Val) -> Val:
    """tanh as 2 / (1 + exp(-2x)) - 1 (±1 where exp overflows): like `erf`, OpenCL's
    `tanh` is a library call per lane on PoCL (GPT-2's GELUs: 0.17 ms a MatMul against
    0.09 ms without)."""
    return 2.0 / (kb.math("exp", x * -2.0) + 1.0) - 1.0


def erf(kb: KernelBuilder, x: Val) -> Val:
    """erf by `ERF_A`, odd in x: OpenCL's `erf` is a library call per lane on PoCL, five
    times the time (1088 float4s: 23.5 µs against 4.5 µs; ViT's GELUs took half its
    kernels' time)."""
    a = kb.math("fabs", x)
    t = 1.0 / (a * ERF_P + 1.0)
    poly = t * ERF_A[-1]
    for coefficient in reversed(ERF_A[:-1]):
        poly = (poly + coefficient) * t
    return kb.copysign(1.0 - poly * kb.math("exp", -(a * a)), x)


def _gelu_tanh(kb: KernelBuilder, x: Val) -> Val:
    inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
    return x * (tanh(kb, inner) + 1.0) * 0.5


def _per_lane(kb: KernelBuilder, x: Val, fn) -> Val:
    return kb.map_lanes(kb.splat(x), fn)


def _lanewise(kb: KernelBuilder, fn, *pixels: Val) -> Val:
    """`fn` on the lanes of float4 operands, lane by lane (scalar values)."""
    splat = [kb.splat(p) for p in pixels]
    return kb.vec4([fn(*(kb.lane(p, k) for p in splat)) for k in range(4)])


def _flag(kb: KernelBuilder, condition: Val) -> Val:
    """A boolean as a texel value: 1 or 0."""
    return kb.select(condition, kb.float(1.0), kb.float(0.0))


def _int_divide(kb: KernelBuilder, a: Val, b: Val, remainder: bool, floor: bool) -> Val:
    """
    Integer a / b (truncated) or remainder, as C ints lane by lane; `floor` gives the
    remainder the divisor's sign. A zero divisor (padding lanes hold 0) divides by 1
    instead of trapping.
    """

    def lane(x: Val, y: Val) -> Val:
        x, y = kb.to_int(x), kb.to_int(y)
        y = kb.select(y.eq(0), 1, y)
        if not remainder:
            return kb.to_float(x // y)
        r = x % y
        if floor:
            r = kb.select(((r < 0) & (y > 0)) | ((r > 0) & (y < 0)), r + y, r)
        return kb.to_float(r)

    return _lanewise(kb, lane, a, b)


def _float_fmod(kb: KernelBuilder, a: Val, b: Val) -> Val:
    """
    C's fmod, lane by lane: a - trunc(a / b) b by one fma, with the quotient corrected
    by one where a / b rounded across an integer (up; or down, which OpenCL's division,
    exact to 2.5 ulp only, may do).
    """

    def lane(x: Val, y: Val) -> Val:
        r = kb.fma(-kb.math("trunc", x / y), y, x)
        m = kb.math("fabs", y)
        r = kb.select((x > 0.0) & (r < 0.0), r + m, r)
        r = kb.select((x < 0.0) & (r > 0.0), r - m, r)
        return kb.select(kb.math("fabs", r) >= m, kb.select(x > 0.0, r - m, r + m), r)

    return _lanewise(kb, lane, a, b)


def _cast(kb: KernelBuilder, op: onnx.CastOp, x: Val) -> Val:
    """Float <-> integer/boolean conversions on texel values (integers stay in range)."""
    if op.to == i1:
        return _per_lane(kb, x, lambda v: kb.select(v.eq(0.0), kb.float(0.0), kb.float(1.0)))
    if is_integer(op.output) and not is_integer(op.input):
        return kb.math("trunc", x)
    return x  # to float, or between integer types: the same texel value


COMPARE_KINDS = {
    onnx.EqualOp: "eq", onnx.LessOp: "lt", onnx.LessOrEqualOp: "le",
    onnx.GreaterOp: "gt", onnx.GreaterOrEqualOp: "ge",
}


def _is_inf(kb: KernelBuilder, op: onnx.IsInfOp, v: Val) -> Val:
    positive, negative = op.int_attr("detect_positive"), op.int_attr("detect_negative")
    if positive and negative:
        return _flag(kb, kb.math("fabs", v).eq(math.inf))
    if positive or negative:
        return _flag(kb, v.eq(math.inf if positive else -math.inf))
    return kb.float(0.0)


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
            return tanh(kb, x)
        case onnx.ErfOp():
            return erf(kb, x)
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
            # neither above nor below 0: 0 or NaN, its own sign
            return _per_lane(kb, x, lambda v: kb.select(
                v > 0.0, kb.float(1.0), kb.select(v < 0.0, kb.float(-1.0), v)))
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
        case onnx.IdentityOp():
            return x
        case onnx.CastOp():
            return _cast(kb, op, x)
        case onnx.NotOp():
            return 1.0 - x
        case onnx.IsNaNOp():
            # NaN alone differs from itself
            return _per_lane(kb, x, lambda v: kb.select(v.eq(v), kb.float(0.0), kb.float(1.0)))
        case onnx.IsInfOp():
            return _per_lane(kb, x, lambda v: _is_inf(kb, op, v))
        case onnx.ClipOp():
            return clip(kb, x, _const_scalar(op, 1, F32_LOWEST), _const_scalar(op, 2, F32_MAX))
    raise LoweringError(f"{node_label(op)} has no GPU kernel")


FLOAT_UNARY = (
    onnx.ReluOp, onnx.LeakyReluOp, onnx.SigmoidOp, onnx.TanhOp, onnx.ErfOp, onnx.GeluOp,
    onnx.HardSigmoidOp, onnx.HardSwishOp, onnx.ShrinkOp, onnx.ExpOp, onnx.LogOp, onnx.SqrtOp,
    onnx.ReciprocalOp,
)
EXACT_UNARY = (
    onnx.SignOp, onnx.AbsOp, onnx.NegOp, onnx.IdentityOp, onnx.CastOp, onnx.ClipOp,
    onnx.NotOp, onnx.IsNaNOp, onnx.IsInfOp,
)
"""Unary ops exact on integer texels, and those giving booleans."""
UNARY = FLOAT_UNARY + EXACT_UNARY
EXACT_BINARY = (
    onnx.AddOp, onnx.SubOp, onnx.MulOp, onnx.DivOp, onnx.ModOp, *COMPARE_KINDS,
    onnx.AndOp, onnx.OrOp, onnx.XorOp,
)
BINARY = (*EXACT_BINARY, onnx.PowOp)
VARIADIC = (onnx.SumOp, onnx.MaxOp, onnx.MinOp)
TERNARY = (onnx.WhereOp,)


def is_fusable_elementwise(op: Operation) -> bool:
    if isinstance(op, onnx.CastOp):
        return all(v.type.element_type == f32 or is_integer(v) for v in (op.input, op.output))
    if isinstance(op, onnx.ClipOp):
        return all(is_none(v) or scalar_of(v) is not None for v in op.operands[1:])
    return isinstance(op, UNARY + BINARY + VARIADIC + TERNARY)


def apply_elementwise(kb: KernelBuilder, op: Operation, operands: Sequence[Val | None]) -> Val:
    """`op` on float4 operands (None for absent optional inputs)."""
    if isinstance(op, UNARY):
        return _unary(kb, op, operands[0])
    a = operands[0]
    rest = [v for v in operands[1:] if v is not None]
    integer = is_integer(op.operands[0])
    match op:
        case onnx.AddOp():
            return a + rest[0]
        case onnx.SubOp():
            return a - rest[0]
        case onnx.MulOp():
            return a * rest[0]
        case onnx.DivOp() if integer:
            return _int_divide(kb, a, rest[0], remainder=False, floor=False)
        case onnx.DivOp():
            return a / rest[0]
        case onnx.ModOp() if integer:
            return _int_divide(kb, a, rest[0], remainder=True, floor=not op.int_attr("fmod"))
        case onnx.ModOp():
            return _float_fmod(kb, a, rest[0])
        case _ if type(op) in COMPARE_KINDS:
            kind = COMPARE_KINDS[type(op)]
            return _lanewise(kb, lambda x, y: _flag(kb, kb.compare(kind, x, y)), a, rest[0])
        case onnx.AndOp():
            return a * rest[0]
        case onnx.OrOp():
            return kb.max(a, rest[0])
        case onnx.XorOp():
            return kb.math("fabs", a - rest[0])
        case onnx.WhereOp():
            return _lanewise(kb, lambda c, x, y: kb.select(c.eq(0.0), y, x), a, *rest)
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
