"""
`select-layouts{target=gpu solver=local}`: the texture layout of every value of a graph,
by the rules the lowering followed before layouts were recorded (each value alone, no
global view), written into the IR (`dialects/texture/value_layouts.py`) for
`onnx-to-texture` to realise:

- rows4 (the last axis packed) for a tensor that meets a matrix product, softmax or
  layernorm, or that is not rank 4; nc4hw4 for other rank-4 tensors (`activation_layout`);
- a value that runs in the kernel of the op before it (a fused elementwise epilogue, with
  fusion on, as `onnx-to-texture` fuses by default) takes that kernel's layout, so that
  the fusion stays: a kernel stores one layout, and a recorded layout change ends one.
  (Under `onnx-to-texture{fuse=false}` each such op stores that same layout itself.)

These rules never change a layout between a producer and a consumer (each kernel reads
its operands in whatever layout they come), so they put no `texture.relayout`.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue

from mobile_opt.dialects.onnx.base import UnknownShape, is_constant_expression
from mobile_opt.dialects.onnx.shapes import ShapeError
from mobile_opt.dialects.texture import Layout, RelayoutOp
from mobile_opt.dialects.texture.value_layouts import record_layout, recorded_layout

from .context import Stored, fused_user
from .nodes import LoweringError, shape
from .movement import ALIAS, IndexMap, copy_maps, fold_chain
from .rules import FUSES_EPILOGUE

# the op families register their rules (and so FUSES_EPILOGUE) on import
from . import families  # noqa: F401  isort: skip

ROW_OPS = (
    "onnx.MatMul", "onnx.FusedMatMul", "onnx.Softmax", "onnx.LogSoftmax",
    "onnx.LayerNormalization",
)
"""Ops that want their rank-4 operands and results packed along the last axis."""


def activation_layout(value: SSAValue) -> Layout:
    """
    A value's layout by itself: rows4 (the last axis packed) for tensors that meet matrix
    products, softmax or layernorm, nc4hw4 for other rank-4 tensors.
    """
    if len(shape(value)) != 4:
        return Layout.ROWS4
    near = [u.operation.name for u in value.uses]
    if isinstance(value.owner, Operation):
        near.append(value.owner.name)
    if any(name in ROW_OPS for name in near):
        return Layout.ROWS4
    return Layout.NC4HW4


def select_local(module: ModuleOp, kernels: dict[SSAValue, SSAValue] | None = None) -> None:
    """
    Record the local rules' layout of every tensor value of every graph of `module`;
    `kernels` (if given) gets each value a fused epilogue computes mapped to the value its
    kernel starts from (the layouts a global selection must keep equal).
    """
    for graph in [f for f in module.body.block.ops if isinstance(f, func.FuncOp)]:
        for arg in graph.args:
            if isinstance(arg.type, TensorType):
                record_layout(arg, activation_layout(arg))
        ops = list(graph.body.block.ops)
        for op in ops:
            if not isinstance(op, RelayoutOp) and op.results and all(
                    isinstance(r.type, TensorType) for r in op.results):
                for result in op.results:
                    record_layout(result, activation_layout(result))
        _share_fused_layouts(ops, kernels)


def _share_fused_layouts(ops: list[Operation],
                         kernels: dict[SSAValue, SSAValue] | None = None) -> None:
    """
    Give each fused epilogue its kernel's layout, finding kernels as the lowering does;
    `kernels` (if given) gets each fused value mapped to the value its kernel starts from.
    """
    order = {o: i for i, o in enumerate(ops)}
    taken: set[Operation] = set()  # ops that run in an earlier op's kernel
    for op in ops:
        if op in taken or type(op) not in FUSES_EPILOGUE or all(
                is_constant_expression(r) for r in op.results):
            continue
        try:
            copies = copy_maps(op)
        except (LoweringError, ShapeError, UnknownShape):
            continue  # the lowering says what is wrong
        if not copies:
            _share(op.results[0], op, order, taken, kernels)
        for result, imap in copies:
            try:
                imap, last, end = fold_chain(op, imap, result, True, taken)
            except LoweringError:
                break
            if _is_alias(imap, end):
                continue  # no kernel: the ops after it make their own
            if last is not op:
                folded = result
                while kernels is not None and folded is not end:  # movement ops folded in
                    folded = next(iter(folded.uses)).operation.results[0]
                    kernels[folded] = result
                _share(end, last, {**order, last: order[op]}, taken, kernels)
            elif result is op.results[0]:
                _share(end, op, order, taken, kernels)


def _share(value: SSAValue, head: Operation, order: dict[Operation, int],
           taken: set[Operation], kernels: dict[SSAValue, SSAValue] | None = None) -> None:
    """The layout of `value`, which `head`'s kernel computes, for the ops fused after it."""
    layout = recorded_layout(value)
    assert layout is not None
    start = value
    while (user := fused_user(value, head, order)) is not None:
        taken.add(user)
        value = user.results[0]
        record_layout(value, layout)
        if kernels is not None:
            kernels[value] = start


def _is_alias(imap: IndexMap, result: SSAValue) -> bool:
    """Whether the copy of `imap` into `result` is a free alias (as the lowering decides)."""
    source_layout, layout = recorded_layout(imap.source), recorded_layout(result)
    if source_layout is None or layout is None or 0 in shape(result) + shape(imap.source):
        return False
    return imap.method(Stored(None, source_layout, shape(imap.source)), layout) == ALIAS
