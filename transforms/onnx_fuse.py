"""
`onnx-fuse`: merge a convolution or matrix product with its bias and one trailing
activation into a single `onnx.FusedConv`, `onnx.FusedGemm` or `onnx.FusedMatMul`.

    Add(Conv(X, W, none), c)         -> Conv(X, W, c')       c per-channel constant
    act(Conv(X, W, B))               -> FusedConv{act}(X, W, B)
    act(Gemm(A, B, C))               -> FusedGemm{act}(A, B, C)
    Add(MatMul(A, B), Bias)          -> FusedMatMul(A, B, Bias)    Bias broadcasts to A x B
    act(MatMul(A, B) [+ Bias])       -> FusedMatMul{act}(A, B, Bias | none)

`act` is one of Relu, LeakyRelu, Clip (with constant or absent bounds), Sigmoid,
Tanh, HardSigmoid, HardSwish and Gelu (exact form; the tanh approximation has no
fused encoding). Every absorbed intermediate result must have no other user. Run
`onnx-canonicalize` first so that written-out Gelu/HardSwish become single ops.
`activation_op` builds a fused activation back as its own op (`flashmem-fuse` splits).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, ModuleOp, StringAttr, f32
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

from mobile_opt.dialects.onnx import shapes
from mobile_opt.dialects.onnx.base import constant_array, is_none
from mobile_opt.dialects.onnx.constants import NoneOp
from mobile_opt.dialects.onnx.elementwise import (
    AddOp,
    ClipOp,
    GeluOp,
    HardSigmoidOp,
    HardSwishOp,
    LeakyReluOp,
    ReluOp,
    SigmoidOp,
    TanhOp,
)
from mobile_opt.dialects.onnx.fused import (
    ACTIVATION_PARAMS,
    FusedActivationOp,
    FusedConvOp,
    FusedGemmOp,
    FusedMatMulOp,
)
from mobile_opt.dialects.onnx.nn import ConvOp, GemmOp, MatMulOp

from .onnx_fold_batchnorm import per_channel
from .onnx_utils import (
    as_element_type,
    clone_with,
    derived_name,
    erase_if_dead,
    make_constant,
    scalar_of,
    single_use_owner,
    static_shape,
)

ALL_ACTIVATIONS = tuple(name for name in ACTIVATION_PARAMS if name)

_F32 = np.finfo(np.float32)


def activation_of(op: Operation) -> tuple[str, tuple[float, ...]] | None:
    """The fused-activation name and parameters `op` computes on its first operand, if any."""
    match op:
        case ReluOp() | SigmoidOp() | TanhOp() | HardSwishOp():
            return op.onnx_type, ()
        case LeakyReluOp():
            return "LeakyRelu", (op.float_attr("alpha"),)
        case HardSigmoidOp():
            return "HardSigmoid", (op.float_attr("alpha"), op.float_attr("beta"))
        case GeluOp() if op.approximate.data == "none":
            return "Gelu", ()
        case ClipOp():
            # an absent bound becomes the f32 extreme: printed IR cannot hold infinities
            bounds = []
            for bound, default in ((op.min, float(_F32.min)), (op.max, float(_F32.max))):
                value = default if is_none(bound) else scalar_of(bound)
                if value is None:
                    return None
                bounds.append(value)
            return "Clip", tuple(bounds)
        case _:
            return None


def activation_op(name: str, params: Sequence[float], x: SSAValue) -> list[Operation]:
    """
    The inverse of `activation_of`: ops computing the fused activation `name` with `params`
    on `x`, the activation op last, after the bounds a Clip reads (an f32 extreme, which is
    how an absent bound is fused, becomes absent again).
    """
    t = x.type
    match name:
        case "Relu" | "Sigmoid" | "Tanh" | "HardSwish" | "Gelu":
            cls = {"Relu": ReluOp, "Sigmoid": SigmoidOp, "Tanh": TanhOp,
                   "HardSwish": HardSwishOp, "Gelu": GeluOp}[name]
            return [cls.create(operands=[x], result_types=[t])]
        case "LeakyRelu":
            props = {"alpha": FloatAttr(params[0], f32)}
            return [LeakyReluOp.create(operands=[x], result_types=[t], properties=props)]
        case "HardSigmoid":
            props = {"alpha": FloatAttr(params[0], f32), "beta": FloatAttr(params[1], f32)}
            return [HardSigmoidOp.create(operands=[x], result_types=[t], properties=props)]
        case "Clip":
            bounds: list[Operation] = []
            for value, extreme in zip(params, (float(_F32.min), float(_F32.max)), strict=True):
                bound = NoneOp() if value == extreme else make_constant(
                    as_element_type(np.array(value), x))
                bound.results[0].name_hint = "none" if value == extreme else "bound"
                bounds.append(bound)
            operands = [x, *(b.results[0] for b in bounds)]
            return [*bounds, ClipOp.create(operands=operands, result_types=[t])]
        case _:
            raise ValueError(f"no fused activation '{name}'")


def _activation_props(name: str, params: tuple[float, ...]) -> dict:
    props = {"activation": StringAttr(name)}
    if params:
        props["activation_params"] = DenseArrayBase.from_list(f32, list(params))
    return props


@dataclass
class FuseActivation(RewritePattern):
    """
    `act(P)` where P is a Conv, Gemm or MatMul (or their fused form without an
    activation yet) used only by `act` -> the fused op ending in `act`.
    """

    activations: frozenset[str]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        activation = activation_of(op)
        if activation is None or activation[0] not in self.activations:
            return
        producer = single_use_owner(
            op.operands[0], (ConvOp, GemmOp, MatMulOp, FusedConvOp, FusedGemmOp, FusedMatMulOp)
        )
        if producer is None or op.results[0].type != producer.results[0].type:
            return
        if isinstance(producer, FusedActivationOp) and producer.activation.data:
            return
        props = _activation_props(*activation)
        new_ops: list[Operation] = []
        if isinstance(producer, ConvOp):
            fused = clone_with(producer, producer.operands, props, cls=FusedConvOp)
        elif isinstance(producer, GemmOp):
            fused = clone_with(producer, producer.operands, props, cls=FusedGemmOp)
        elif isinstance(producer, MatMulOp):
            none = NoneOp()  # a MatMul has no bias operand to carry over
            none.result.name_hint = "none"
            new_ops.append(none)
            operands = [producer.A, producer.B, none.result]
            fused = clone_with(producer, operands, props, cls=FusedMatMulOp)
        else:
            fused = clone_with(producer, producer.operands, props)
        rewriter.replace(op, [*new_ops, fused])
        erase_if_dead(rewriter, producer)


class FuseConvBias(RewritePattern):
    """
    `Add(Conv(X, W, B), c)` for a per-channel constant `c` and a constant or absent `B`
    -> `Conv(X, W, B + c)`.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter, /) -> None:
        for conv_value, other in ((op.A, op.B), (op.B, op.A)):
            conv = single_use_owner(conv_value, (ConvOp, FusedConvOp))
            if conv is None or op.C.type != conv_value.type:
                continue
            assert isinstance(conv, ConvOp | FusedConvOp)
            if isinstance(conv, FusedConvOp) and conv.activation.data:
                continue
            array, out = constant_array(other), static_shape(conv_value)
            bias = None if array is None or out is None else per_channel(array, out)
            if bias is None:
                continue
            if not is_none(conv.B):
                old = constant_array(conv.B)
                if old is None:
                    continue
                bias = bias + np.asarray(old, np.float64)
            b_op = make_constant(as_element_type(bias, conv_value))
            b_op.results[0].name_hint = derived_name(conv.B, "fused", "bias")
            fused = clone_with(conv, [conv.X, conv.W, b_op.results[0]])
            old_b = conv.B.owner
            rewriter.replace(op, [b_op, fused])
            erase_if_dead(rewriter, conv)
            if isinstance(old_b, Operation):
                erase_if_dead(rewriter, old_b)
            return


class FuseMatMulBias(RewritePattern):
    """`Add(MatMul(A, B), Bias)`, Bias broadcasting to the product -> `FusedMatMul(A, B, Bias)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter, /) -> None:
        for product, bias in ((op.A, op.B), (op.B, op.A)):
            matmul = single_use_owner(product, (MatMulOp, FusedMatMulOp))
            if matmul is None or bias == product or op.C.type != product.type:
                continue
            if isinstance(matmul, FusedMatMulOp) and (
                matmul.activation.data or not is_none(matmul.Bias)
            ):
                continue
            out, bias_shape = static_shape(product), static_shape(bias)
            if out is None or bias_shape is None or not _broadcasts_to(bias_shape, out):
                continue
            operands = [matmul.operands[0], matmul.operands[1], bias]
            fused = clone_with(matmul, operands, cls=FusedMatMulOp)
            rewriter.replace(op, fused)
            erase_if_dead(rewriter, matmul)
            return


def _broadcasts_to(shape: tuple[int, ...], out: tuple[int, ...]) -> bool:
    try:
        return shapes.broadcast(out, shape) == out
    except shapes.ShapeError:
        return False


@dataclass(frozen=True)
class OnnxFusePass(ModulePass):
    """
    Fuses Conv/Gemm/MatMul with a following bias Add and activation into FusedConv,
    FusedGemm and FusedMatMul. `activations` limits which activations are absorbed.
    """

    name = "onnx-fuse"

    activations: tuple[str, ...] = ALL_ACTIVATIONS
    """Activations that may be fused (ONNX op names; default: all the fused ops support)."""

    conv_bias: bool = True
    """Fold an Add of a per-channel constant after a Conv into the Conv's bias."""

    matmul_bias: bool = True
    """Fuse an Add of a broadcastable bias after a MatMul into a FusedMatMul."""

    def __post_init__(self) -> None:
        unknown = set(self.activations) - set(ALL_ACTIVATIONS)
        if unknown:
            raise ValueError(
                f"onnx-fuse: unknown activations {sorted(unknown)}; "
                f"expected some of {', '.join(ALL_ACTIVATIONS)}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns: list[RewritePattern] = [RemoveUnusedOperations()]
        if self.conv_bias:
            patterns.append(FuseConvBias())
        if self.matmul_bias:
            patterns.append(FuseMatMulBias())
        patterns.append(FuseActivation(frozenset(self.activations)))
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)


__all__ = [
    "ALL_ACTIVATIONS",
    "FuseActivation",
    "FuseConvBias",
    "FuseMatMulBias",
    "OnnxFusePass",
    "activation_of",
    "activation_op",
]
