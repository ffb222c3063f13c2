"""
`onnx-fold-batchnorm`: fold inference-mode batch normalisation into the convolution
that feeds it.

    BatchNormalization(Conv(X, W, B), scale, beta, mean, var)
      = Conv(X, W * f, (B - mean) * f + beta)    where f = scale / sqrt(var + epsilon)

with `f` applied per output channel (dim 0 of W, also for grouped convolutions).
The same algebra absorbs a per-channel constant `Mul`/`Add`/`Sub`/`Div` after a
Conv, or after a BatchNormalization (into its scale and bias), which is how the
light model zoo exports write out BN's affine part after a plain normalisation.

A rewrite only fires when the producer's result has no other user and every
parameter it changes is a constant; new parameters are inline constants or derived
weights depending on their size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
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

from mobile_opt.dialects.onnx.base import constant_array, is_none
from mobile_opt.dialects.onnx.elementwise import AddOp, DivOp, MulOp, SubOp
from mobile_opt.dialects.onnx.fused import FusedConvOp
from mobile_opt.dialects.onnx.nn import BatchNormalizationOp, ConvOp

from .onnx_utils import (
    as_element_type,
    clone_with,
    derived_name,
    erase_if_dead,
    make_constant,
    single_use_owner,
    static_shape,
)


def foldable_conv(value: SSAValue) -> ConvOp | FusedConvOp | None:
    """
    The Conv (or FusedConv without activation) defining `value`, if `value` has no
    other user and the conv's weight and bias are constants.
    """
    conv = single_use_owner(value, (ConvOp, FusedConvOp))
    if conv is None:
        return None
    assert isinstance(conv, ConvOp | FusedConvOp)
    if isinstance(conv, FusedConvOp) and conv.activation.data:
        return None
    if constant_array(conv.W) is None or (not is_none(conv.B) and constant_array(conv.B) is None):
        return None
    return conv


def per_channel(array: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray | None:
    """
    `array` as one value per channel (dim 1) of a result of `out_shape`, if
    broadcasting it against that result varies along the channel dim only and does
    not change the result's shape; else None.
    """
    rank = len(out_shape)
    if array.ndim > rank or rank < 2:
        return None
    aligned = (1,) * (rank - array.ndim) + tuple(array.shape)
    if any(d != 1 for i, d in enumerate(aligned) if i != 1) or aligned[1] not in (1, out_shape[1]):
        return None
    return np.broadcast_to(np.asarray(array, np.float64).reshape(aligned[1]), (out_shape[1],))


def affine_of(op: Operation, producer: SSAValue) -> tuple[np.ndarray, np.ndarray] | None:
    """
    `(factor, shift)` per channel such that `op`'s result is `producer * factor + shift`,
    if `op` is a Mul/Add/Sub/Div of `producer` by a per-channel constant.
    """
    if not isinstance(op, AddOp | MulOp | SubOp | DivOp):
        return None
    out = static_shape(op.results[0])
    if out is None or op.results[0].type != producer.type:
        return None
    if op.A == producer and op.B != producer:
        other, producer_first = op.B, True
    elif op.B == producer and op.A != producer:
        other, producer_first = op.A, False
    else:
        return None
    array = constant_array(other)
    if array is None:
        return None
    c = per_channel(array, out)
    if c is None:
        return None
    ones, zeros = np.ones_like(c), np.zeros_like(c)
    if isinstance(op, MulOp):
        return c, zeros
    if isinstance(op, AddOp):
        return ones, c
    if not producer_first:  # c - x and c / x are not affine maps of x we fold
        return None
    if isinstance(op, SubOp):
        return ones, -c
    if np.any(c == 0):
        return None
    return 1.0 / c, zeros


def rescale_conv(
    rewriter: PatternRewriter,
    conv: ConvOp | FusedConvOp,
    factor: np.ndarray,
    shift: np.ndarray,
    replaced: Operation,
) -> None:
    """Replace `replaced` by a copy of `conv` computing `conv * factor + shift` per channel."""
    w = np.asarray(constant_array(conv.W), np.float64)
    b = np.zeros(w.shape[0]) if is_none(conv.B) else np.asarray(constant_array(conv.B), np.float64)
    new_w = w * factor.reshape((-1,) + (1,) * (w.ndim - 1))
    new_b = b * factor + shift
    w_op = make_constant(as_element_type(new_w, conv.W))
    b_op = make_constant(as_element_type(new_b, conv.W))
    w_op.results[0].name_hint = derived_name(conv.W, "folded", "w")
    b_op.results[0].name_hint = derived_name(conv.B, "folded", "bias")
    new_conv = clone_with(conv, [conv.X, w_op.results[0], b_op.results[0]])
    old_w, old_b = conv.W.owner, conv.B.owner
    rewriter.replace(replaced, [w_op, b_op, new_conv])
    erase_if_dead(rewriter, conv)
    for weight in (old_w, old_b):
        if isinstance(weight, Operation):
            erase_if_dead(rewriter, weight)


class FoldBatchNormIntoConv(RewritePattern):
    """`BatchNormalization(Conv(X, W, B))` with constant parameters -> `Conv(X, W', B')`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BatchNormalizationOp, rewriter: PatternRewriter, /) -> None:
        if op.int_attr("training_mode"):
            return
        conv = foldable_conv(op.X)
        if conv is None:
            return
        params = [constant_array(v) for v in (op.scale, op.B, op.input_mean, op.input_var)]
        if any(p is None for p in params):
            return
        scale, beta, mean, var = (np.asarray(p, np.float64) for p in params)
        factor = scale / np.sqrt(var + op.float_attr("epsilon"))
        rescale_conv(rewriter, conv, factor, beta - mean * factor, op)


class FoldAffineIntoConv(RewritePattern):
    """`Conv(X, W, B) op c` for a per-channel constant `c` -> `Conv(X, W', B')`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, AddOp | MulOp | SubOp | DivOp):
            return
        for operand in (op.A, op.B):
            conv = foldable_conv(operand)
            if conv is None:
                continue
            affine = affine_of(op, operand)
            if affine is not None:
                rescale_conv(rewriter, conv, *affine, op)
                return


class FoldAffineIntoBatchNorm(RewritePattern):
    """
    `BatchNormalization(X, scale, B, mean, var) op c` for a per-channel constant `c`
    -> `BatchNormalization(X, scale * f, B * f + s, mean, var)` where `op c` is `* f + s`.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, AddOp | MulOp | SubOp | DivOp):
            return
        for operand in (op.A, op.B):
            bn = single_use_owner(operand, BatchNormalizationOp)
            if not isinstance(bn, BatchNormalizationOp) or bn.int_attr("training_mode"):
                continue
            scale, beta = constant_array(bn.scale), constant_array(bn.B)
            affine = affine_of(op, operand)
            if scale is None or beta is None or affine is None:
                continue
            factor, shift = affine
            new_scale = np.asarray(scale, np.float64) * factor
            new_beta = np.asarray(beta, np.float64) * factor + shift
            scale_op = make_constant(as_element_type(new_scale, bn.scale))
            beta_op = make_constant(as_element_type(new_beta, bn.B))
            scale_op.results[0].name_hint = derived_name(bn.scale, "folded", "scale")
            beta_op.results[0].name_hint = derived_name(bn.B, "folded", "bias")
            new_bn = clone_with(
                bn, [bn.X, scale_op.results[0], beta_op.results[0], bn.input_mean, bn.input_var]
            )
            old_params = (bn.scale.owner, bn.B.owner)
            rewriter.replace(op, [scale_op, beta_op, new_bn])
            erase_if_dead(rewriter, bn)
            for param in old_params:
                if isinstance(param, Operation):
                    erase_if_dead(rewriter, param)
            return


@dataclass(frozen=True)
class OnnxFoldBatchNormPass(ModulePass):
    """
    Folds BatchNormalization with constant parameters into the Conv before it; with
    `fold-affine`, also folds per-channel constant Mul/Add/Sub/Div into a preceding
    Conv or BatchNormalization.
    """

    name = "onnx-fold-batchnorm"

    fold_affine: bool = True
    """Also absorb per-channel constant Mul/Add/Sub/Div after a Conv or BatchNormalization."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns: list[RewritePattern] = [RemoveUnusedOperations(), FoldBatchNormIntoConv()]
        if self.fold_affine:
            patterns += [FoldAffineIntoConv(), FoldAffineIntoBatchNorm()]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)


__all__ = [
    "FoldAffineIntoBatchNorm",
    "FoldAffineIntoConv",
    "FoldBatchNormIntoConv",
    "OnnxFoldBatchNormPass",
    "foldable_conv",
    "per_channel",
]
