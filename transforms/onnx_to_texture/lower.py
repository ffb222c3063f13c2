"""
`onnx-to-texture`: the graph function's `onnx` ops become OpenCL kernels over
pixel storage (`ocl.kernel`, bodies in `texture`/`arith`/`math`/`scf`) and a host
function that packs inputs and weights, allocates storage, launches the kernels in
order and unpacks the results.

It chooses no layout: each value is stored (or packed, for a consumer that asks for no
particular layout) in the layout `select-layouts` recorded for it
(`dialects/texture/value_layouts.py`), a `texture.relayout` becomes a copy kernel, and a
value with no recorded layout is an error naming its node.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f16, f32
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.dialects import onnx, texture
from mobile_opt.dialects.onnx.constants import OnnxConstantOp
from mobile_opt.dialects.texture.value_layouts import forget_layouts, is_view

from .context import LoweringContext
from .nodes import LoweringError, is_integer, node_label
from .rules import FUSES_EPILOGUE, INTEGER_OPS, RULES

# the op families register their rules on import
from . import families  # noqa: F401  isort: skip
from .movement import lower_view  # isort: skip


@dataclass(frozen=True)
class OnnxToTexturePass(ModulePass):
    """
    Lower every `func.func` of `onnx` ops to texture kernels. Tensors larger than
    `max-image-width` × `max-image-height` pixels live in buffers instead (a remark
    says which), and every tensor does with `buffers` (for a device whose images are
    slower than its buffers, where convolutions take the wide kernel); `storage` is the
    pixels' element type, f32 or f16. `blocked=false` keeps large products and convs in
    images off the blocked kernels (local memory; `blocked.py`), for comparison, and
    `winograd=true` puts 3x3 stride-1 convs in buffers on Winograd (`winograd.py`).
    """

    name = "onnx-to-texture"

    max_image_width: int = 16384
    max_image_height: int = 16384
    storage: str = "f32"
    fuse: bool = True
    buffers: bool = False
    blocked: bool = True
    winograd: bool = False
    remarks: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.storage not in ("f32", "f16"):
            raise DiagnosticException(f"onnx-to-texture: storage is f32 or f16, not {self.storage}")
        limits = texture.LimitsAttr(self.max_image_width, self.max_image_height)
        op.attributes["texture.limits"] = limits
        for graph in [f for f in op.body.block.ops if isinstance(f, func.FuncOp)]:
            lowering = LoweringContext(
                op, graph, (self.max_image_width, self.max_image_height),
                f16 if self.storage == "f16" else f32, self.fuse, self.buffers, self.blocked,
                winograd=self.winograd,
            )
            try:
                lower_graph(lowering)
            except LoweringError as e:
                raise DiagnosticException(str(e)) from None
            forget_layouts(graph)  # realised: the host ops carry them now
            if self.remarks:
                for remark in lowering.remarks:
                    print(f"remark: {remark}", file=sys.stderr)


def lower_graph(ctx: LoweringContext) -> None:
    block = ctx.graph.body.block
    ops = list(block.ops)
    order = {o: i for i, o in enumerate(ops)}
    lowered: list[Operation] = []
    for op in ops:
        if isinstance(op, OnnxConstantOp | func.ReturnOp) or op in ctx.done:
            continue
        if is_view(op):
            lower_view(ctx, op)  # no kernel: its readers read through its index map
            lowered.append(op)
            continue
        if op.results and all(ctx.is_host_constant(r) for r in op.results):
            continue  # stays on the host
        if not op.name.startswith("onnx.") and not isinstance(op, texture.RelayoutOp):
            raise LoweringError(f"{op.name} is not an onnx op")
        if isinstance(op, onnx.ShapeOp):
            RULES[type(op)](ctx, op, [])  # says to fold shape computations first
        others = [r for r in op.results
                  if isinstance(r.type, TensorType) and r.type.element_type != f32]
        if others and not (type(op) in INTEGER_OPS and all(is_integer(r) for r in others)):
            raise LoweringError(f"{node_label(op)}: only float32 tensors run on the GPU "
                                "(integer and boolean ones in indexing, comparison and "
                                "selection ops)")
        rule = RULES.get(type(op))
        if rule is None:
            raise LoweringError(f"{node_label(op)} has no GPU lowering")
        ctx.set_insertion_before(op)
        epilogue = ctx.epilogue(op, order) if type(op) in FUSES_EPILOGUE else []
        rule(ctx, op, epilogue)
        lowered.append(op)
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    ctx.set_insertion_before(ret)
    results = []
    for value in ret.operands:
        stored = ctx.tensor(value, "graph output")
        unpack = ctx.host().insert(texture.UnpackOp(stored.storage, stored.layout, value.type))
        results.append(unpack.result)
    ret.operands = results
    for op in reversed(ops):
        if (op in lowered or op in ctx.done) and not any(r.uses for r in op.results):
            op.detach()
            op.erase()
    for op in reversed(list(block.ops)):
        if op.name.startswith("onnx.") and all(not r.uses for r in op.results):
            op.detach()
            op.erase()
