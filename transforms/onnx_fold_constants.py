"""
`onnx-fold-constants`: evaluate at compile time every op whose inputs are known.

An op whose operands are all constants (`onnx.Constant`/`onnx.Weight` results or the
`none` of an omitted input) is evaluated with the reference kernels and replaced by
its value: an inline `onnx.Constant` when small, else an `onnx.Weight` naming a
derived weight file. `onnx.Shape` folds on its own whenever its operand's shape is
static, which is what unlocks the exporters' Shape -> Gather -> Concat -> Reshape
chains. Ops left without users are removed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, NoneType, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import RemoveUnusedOperations

from mobile_opt.dialects.onnx.base import OnnxConstantOp, OnnxOp, constant_array
from mobile_opt.dialects.onnx.constants import NoneOp
from mobile_opt.dialects.onnx.tensor import ShapeOp
from mobile_opt.dialects.onnx.types import dtype_of

from .onnx_utils import make_constant, static_shape


class FoldShape(RewritePattern):
    """`onnx.Shape` of a statically shaped tensor is a constant i64 vector."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ShapeOp, rewriter: PatternRewriter, /) -> None:
        if static_shape(op.data) is None:
            return
        dims = np.asarray(op.dims(), dtype=np.int64).reshape(-1)
        rewriter.replace(op, make_constant(dims))


@dataclass
class FoldConstantOp(RewritePattern):
    """
    Replaces an op with constant inputs by the constants the reference kernels
    compute, if its results hold at most `max_elements` elements in all.
    """

    max_elements: int

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, OnnxOp) or isinstance(op, OnnxConstantOp | NoneOp):
            return
        if not op.operands or not op.results:
            return
        inputs: list[np.ndarray | None] = []
        for operand in op.operands:
            if isinstance(operand.type, NoneType):
                inputs.append(None)
                continue
            array = constant_array(operand)
            if array is None:
                return
            inputs.append(array)
        if all(a is None for a in inputs):
            return
        result_types: list[TensorType] = []
        for result in op.results:
            if not isinstance(result.type, TensorType) or static_shape(result) is None:
                return
            result_types.append(result.type)
        if sum(t.element_count() for t in result_types) > self.max_elements:
            return
        values = _evaluate(op, inputs)
        if values is None or len(values) != len(result_types):
            return
        folded: list[np.ndarray] = []
        for value, t in zip(values, result_types):
            value = np.asarray(value)
            if tuple(value.shape) != tuple(t.get_shape()):
                return  # a kernel disagreeing with the declared type: leave the op alone
            folded.append(value.astype(dtype_of(t.element_type), copy=False))
        constants = [make_constant(v) for v in folded]
        for constant in constants:
            constant.location = op.location
        rewriter.replace(op, constants, [c.results[0] for c in constants])


def _evaluate(op: OnnxOp, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    """The op's results from the reference kernels, or None if they cannot compute them."""
    from mobile_opt.reference.errors import ReferenceRunError
    from mobile_opt.reference.kernels import evaluate

    try:
        return list(evaluate(op, inputs))
    except (ReferenceRunError, ValueError, ArithmeticError):
        return None  # folding is an optimisation: an op the kernels reject stays as it is


@dataclass(frozen=True)
class OnnxFoldConstantsPass(ModulePass):
    """
    Folds ops whose operands are all compile-time constants, and `onnx.Shape` of
    static shapes, into constants; removes ops whose results are unused.
    """

    name = "onnx-fold-constants"

    max_elements: int = 1 << 24
    """Leave an op alone if folding it would materialise more elements than this."""

    def __post_init__(self) -> None:
        if self.max_elements < 0:
            raise ValueError(
                f"onnx-fold-constants: max-elements must be >= 0, got {self.max_elements}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [RemoveUnusedOperations(), FoldShape(), FoldConstantOp(self.max_elements)]
            )
        ).rewrite_module(op)


__all__ = ["FoldConstantOp", "FoldShape", "OnnxFoldConstantsPass"]
