"""
`onnx-canonicalize`: rewrite activations that exporters write out in primitive ops
back into the single ONNX operator, and drop inference no-ops.

    x * 0.5 * (1 + Erf(x / sqrt 2))                            -> Gelu(x)
    x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 x^3)))      -> Gelu{approximate = "tanh"}(x)
    x * HardSigmoid{alpha = 1/6, beta = 1/2}(x)                -> HardSwish(x)
    x * Relu6(x + 3) / 6                                       -> HardSwish(x)
    Identity(x), Dropout(x)                                    -> x

Products are matched up to association, commutation and the split of constants
between `Mul` and `Div`: `x / 1.4142` matches `x * 0.7071`, and the 0.5 may be
applied first, last or to the `1 + erf` factor. Relu6 is `Clip(v, 0, 6)`,
`Min(Relu(v), 6)`, `Min(Max(v, 0), 6)` or `Max(Min(v, 6), 0)`. Constants match
within a relative tolerance `rtol`. Intermediate values of a match must have no
other users, so a rewrite always removes the written-out ops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import RemoveUnusedOperations

from mobile_opt.dialects.onnx.base import is_none
from mobile_opt.dialects.onnx.elementwise import (
    AddOp,
    ClipOp,
    DivOp,
    ErfOp,
    GeluOp,
    HardSigmoidOp,
    HardSwishOp,
    IdentityOp,
    MaxOp,
    MinOp,
    MulOp,
    PowOp,
    ReluOp,
    TanhOp,
)
from mobile_opt.dialects.onnx.nn import DropoutOp

from .onnx_utils import DEFAULT_RTOL, is_close, scalar_of, single_use_owner

MAX_DEPTH = 6
"""How many nested Mul/Div/Pow a product is looked through."""


@dataclass
class Product:
    """`coefficient * prod(factors)`: a value as a scalar times non-constant factors."""

    coefficient: float = 1.0
    factors: list[SSAValue] = field(default_factory=list[SSAValue])

    def times(self, other: Product) -> Product:
        return Product(self.coefficient * other.coefficient, self.factors + other.factors)

    def is_power_of(self, x: SSAValue, n: int) -> bool:
        return len(self.factors) == n and all(f == x for f in self.factors)


def product_of(value: SSAValue, root: bool = True, depth: int = 0) -> Product:
    """
    `value` as a `Product`, looking through Mul, Div by a scalar constant and Pow by a
    small integer constant. Below the root only single-use values are looked
    through, as only those disappear when the whole product is replaced.
    """
    scalar = scalar_of(value)
    if scalar is not None:
        return Product(scalar)
    op = value.owner
    leaf = Product(1.0, [value])
    if depth >= MAX_DEPTH or not isinstance(op, Operation) or not (root or value.has_one_use()):
        return leaf
    if isinstance(op, MulOp):
        return product_of(op.A, False, depth + 1).times(product_of(op.B, False, depth + 1))
    if isinstance(op, DivOp):
        divisor = scalar_of(op.B)
        if divisor is None or divisor == 0:
            return leaf
        numerator = product_of(op.A, False, depth + 1)
        return Product(numerator.coefficient / divisor, numerator.factors)
    if isinstance(op, PowOp):
        exponent = scalar_of(op.Y)
        if exponent is None or exponent not in (2.0, 3.0, 4.0):
            return leaf
        base = product_of(op.X, False, depth + 1)
        return Product(base.coefficient ** int(exponent), base.factors * int(exponent))
    return leaf


def other_than(operands: Sequence[SSAValue], bound: float, rtol: float) -> SSAValue | None:
    """Of two operands, the one beside a scalar constant close to `bound`."""
    if len(operands) != 2:
        return None
    a, b = operands
    if is_close(scalar_of(b), bound, rtol):
        return a
    if is_close(scalar_of(a), bound, rtol):
        return b
    return None


def sum_of_one_and(value: SSAValue, rtol: float) -> SSAValue | None:
    """`t` if `value` is a single-use `1 + t` or `t + 1`."""
    add = single_use_owner(value, AddOp)
    return other_than(add.operands, 1.0, rtol) if add is not None else None


def gelu_core(value: SSAValue, x: SSAValue, rtol: float) -> str | None:
    """
    The Gelu `approximate` mode if `value` is `1 + erf(x / sqrt 2)` ("none") or
    `1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))` ("tanh"), else None.
    """
    t = sum_of_one_and(value, rtol)
    if t is None:
        return None
    fn = single_use_owner(t, (ErfOp, TanhOp))
    if fn is None:
        return None
    arg = product_of(fn.operands[0])
    if isinstance(fn, ErfOp):
        ok = is_close(arg.coefficient, 1 / math.sqrt(2), rtol) and arg.is_power_of(x, 1)
        return "none" if ok else None
    if not is_close(arg.coefficient, math.sqrt(2 / math.pi), rtol) or len(arg.factors) != 1:
        return None
    inner = single_use_owner(arg.factors[0], AddOp)
    if not isinstance(inner, AddOp):
        return None
    for linear, cubic in ((inner.A, inner.B), (inner.B, inner.A)):
        if linear != x:
            continue
        cube = product_of(cubic, root=False)
        if is_close(cube.coefficient, 0.044715, rtol) and cube.is_power_of(x, 3):
            return "tanh"
    return None


def relu6_input(value: SSAValue, rtol: float) -> SSAValue | None:
    """
    `v` if `value` is a single-use `Clip(v, 0, 6)`, `Min(Relu(v), 6)`,
    `Min(Max(v, 0), 6)` or `Max(Min(v, 6), 0)`.
    """
    op = single_use_owner(value, (ClipOp, MinOp, MaxOp))
    if isinstance(op, ClipOp):
        if is_none(op.min) or is_none(op.max):
            return None
        if is_close(scalar_of(op.min), 0.0, rtol) and is_close(scalar_of(op.max), 6.0, rtol):
            return op.input
        return None
    if isinstance(op, MinOp):
        below = other_than(op.data_0, 6.0, rtol)
        lower = None if below is None else single_use_owner(below, (ReluOp, MaxOp))
        if isinstance(lower, ReluOp):
            return lower.X
        if isinstance(lower, MaxOp):
            return other_than(lower.data_0, 0.0, rtol)
    if isinstance(op, MaxOp):
        above = other_than(op.data_0, 0.0, rtol)
        upper = None if above is None else single_use_owner(above, MinOp)
        if isinstance(upper, MinOp):
            return other_than(upper.data_0, 6.0, rtol)
    return None


def is_x_plus_3(value: SSAValue, x: SSAValue, rtol: float) -> bool:
    add = single_use_owner(value, AddOp)
    return add is not None and other_than(add.operands, 3.0, rtol) == x


def _two_factor_product(op: Operation) -> Product | None:
    if not isinstance(op, MulOp | DivOp):
        return None
    product = product_of(op.results[0])
    return product if len(product.factors) == 2 else None


def _orderings(product: Product) -> list[tuple[SSAValue, SSAValue]]:
    a, b = product.factors
    return [(a, b), (b, a)]


@dataclass
class RecognizeGelu(RewritePattern):
    """A written-out Gelu (erf or tanh form) -> `onnx.Gelu`."""

    rtol: float = DEFAULT_RTOL

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        product = _two_factor_product(op)
        if product is None or not is_close(product.coefficient, 0.5, self.rtol):
            return
        for x, core in _orderings(product):
            if x.type != op.results[0].type:
                continue
            mode = gelu_core(core, x, self.rtol)
            if mode is not None:
                gelu = GeluOp.create(
                    operands=[x],
                    result_types=[x.type],
                    properties={"approximate": StringAttr(mode)},
                )
                gelu.location = op.location
                rewriter.replace(op, gelu)
                return


@dataclass
class RecognizeHardSwish(RewritePattern):
    """`x * HardSigmoid{1/6, 1/2}(x)` or `x * Relu6(x + 3) / 6` -> `onnx.HardSwish`."""

    rtol: float = DEFAULT_RTOL

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        product = _two_factor_product(op)
        if product is None:
            return
        for x, gate in _orderings(product):
            if x.type != op.results[0].type or not self.is_gate(product.coefficient, gate, x):
                continue
            hardswish = HardSwishOp.create(operands=[x], result_types=[x.type])
            hardswish.location = op.location
            rewriter.replace(op, hardswish)
            return

    def is_gate(self, coefficient: float, gate: SSAValue, x: SSAValue) -> bool:
        """`coefficient * gate` is `max(0, min(1, x / 6 + 1 / 2))`."""
        sigmoid = single_use_owner(gate, HardSigmoidOp)
        if isinstance(sigmoid, HardSigmoidOp):
            return (
                sigmoid.X == x
                and is_close(coefficient, 1.0, self.rtol)
                and is_close(sigmoid.float_attr("alpha"), 1 / 6, self.rtol)
                and is_close(sigmoid.float_attr("beta"), 0.5, self.rtol)
            )
        v = relu6_input(gate, self.rtol)
        return (
            v is not None
            and is_close(coefficient, 1 / 6, self.rtol)
            and is_x_plus_3(v, x, self.rtol)
        )


class RemoveIdentity(RewritePattern):
    """`Identity(x)` -> `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IdentityOp, rewriter: PatternRewriter, /) -> None:
        rewriter.replace(op, [], [op.X])


class RemoveDropout(RewritePattern):
    """`Dropout(x)` -> `x`: the dialect models inference, where Dropout is the identity."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DropoutOp, rewriter: PatternRewriter, /) -> None:
        if op.data.type != op.output.type:
            return
        mode = op.training_mode
        if not is_none(mode) and scalar_of(mode) != 0.0:
            return  # training mode that is not known to be off: keep it
        rewriter.replace(op, [], [op.data])


@dataclass(frozen=True)
class OnnxCanonicalizePass(ModulePass):
    """
    Turns written-out Gelu and HardSwish into `onnx.Gelu`/`onnx.HardSwish` and
    removes Identity and inference-mode Dropout.
    """

    name = "onnx-canonicalize"

    rtol: float = DEFAULT_RTOL
    """Relative tolerance when matching a pattern's constants (0.5, 1/sqrt(2), 3, 6, ...)."""

    def __post_init__(self) -> None:
        if not 0 <= self.rtol < 1:
            raise ValueError(f"onnx-canonicalize: rtol must be in [0, 1), got {self.rtol}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [
            RemoveUnusedOperations(),
            RemoveIdentity(),
            RemoveDropout(),
            RecognizeGelu(self.rtol),
            RecognizeHardSwish(self.rtol),
        ]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)


__all__ = [
    "OnnxCanonicalizePass",
    "Product",
    "RecognizeGelu",
    "RecognizeHardSwish",
    "RemoveDropout",
    "RemoveIdentity",
    "product_of",
]
