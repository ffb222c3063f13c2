"""
`flashmem-stream`: realise `flashmem-plan`'s overlap plan as `stream` ops in the host
function, for the streaming runtime to follow. It decides nothing.

Layers are the host function's kernel launches, 1..N, as the plan counts them. Each
weight whose `texture.pack` has `#stream.weight_plan<stream, ...>` becomes:

- a `texture.alloc` of its storage right after the launch of its load layer z_w (the
  texture is held from there on, as the plan's memory counts it);
- for each layer l with x_{w,l} > 0, right after the launch of layer l, a `stream.load`
  of the next x_{w,l} chunks of its pixels and the `stream.transform` of them into the
  texture, which run while that kernel does;
- one `stream.wait` right before the launch of each layer that first reads streamed
  weights, on all their transforms.

Preloaded weights keep their `texture.pack` and its plan. After the pass no
`#stream.weight_plan<stream, ...>` is left: the ops are the schedule.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.dialects import ocl, texture
from mobile_opt.dialects.stream.attributes import (
    PLAN,
    WEIGHT_PLAN,
    ChunkRangeAttr,
    Decision,
    PlanAttr,
    WeightPlanAttr,
)
from mobile_opt.dialects.stream.ops import LoadOp, TransformOp, WaitOp


def _hoist(value: SSAValue, anchor: Operation) -> None:
    """Move the ops of the constant expression `value` that come after `anchor` to just
    before it (they read constants only), so that a load placed after `anchor` sees it."""
    owner = value.owner
    if not isinstance(owner, Operation) or owner.is_before_in_block(anchor):
        return
    for operand in owner.operands:
        _hoist(operand, anchor)
    owner.detach()
    Rewriter.insert_op(owner, InsertPoint.before(anchor))


@dataclass(frozen=True)
class FlashMemStreamPass(ModulePass):
    """Turn the streamed weights' plans into `stream` ops (see the module docstring)."""

    name = "flashmem-stream"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        head = op.attributes.get(PLAN)
        if not isinstance(head, PlanAttr):
            raise DiagnosticException("flashmem-stream: the module has no stream.plan: run "
                                      "flashmem-plan first")
        for function in op.body.block.ops:
            if isinstance(function, func.FuncOp):
                self._lower(function, head)

    def _lower(self, function: func.FuncOp, head: PlanAttr) -> None:
        streamed = [p for p in function.body.block.ops if isinstance(p, texture.PackOp)
                    and isinstance(attr := p.attributes.get(WEIGHT_PLAN), WeightPlanAttr)
                    and attr.decision.data is Decision.STREAM]
        if not streamed:
            return
        launches = [o for o in function.body.block.ops if isinstance(o, ocl.LaunchOp)]
        if len(launches) != head.layers.data:
            raise DiagnosticException(
                f"flashmem-stream: @{function.sym_name.data} launches {len(launches)} kernels, "
                f"but its stream.plan has {head.layers.data} layers: plan again")
        after: dict[int, list[Operation]] = {}  # ops that go after the launch of layer l
        waits: dict[int, list[SSAValue]] = {}  # tokens waited on before the launch of layer l
        for pack in streamed:
            plan = pack.attributes[WEIGHT_PLAN]
            assert isinstance(plan, WeightPlanAttr)
            name = pack.source.name_hint or "weight"
            _hoist(pack.source, launches[plan.load.data - 1])
            storage = pack.result.type
            assert isinstance(storage, texture.PixelStorageType)
            alloc = texture.AllocOp(pack.layout.data, pack.tensor_shape(), storage)
            after.setdefault(plan.load.data, []).append(alloc)
            first = 0
            for layer, count in plan.moves.items():
                chunks = ChunkRangeAttr(storage, head.chunk.data, first, count)
                load = LoadOp(pack.source, chunks, pack.layout.data)
                move = TransformOp(load.staging, alloc.result, chunks)
                load.staging.name_hint, move.token.name_hint = "staged", "moved"
                after.setdefault(layer, []).extend([load, move])
                waits.setdefault(plan.use.data, []).append(move.token)
                first += count
            if first != (total := chunks.total):
                raise DiagnosticException(
                    f"flashmem-stream: the plan of {name} moves {first} chunks, but its "
                    f"{storage} takes {total} of {head.chunk.data} bytes")
            alloc.result.name_hint = pack.result.name_hint
            pack.result.replace_all_uses_with(alloc.result)
            Rewriter.erase_op(pack)
        for layer, ops in after.items():
            Rewriter.insert_op(ops, InsertPoint.after(launches[layer - 1]))
        for layer, tokens in waits.items():
            Rewriter.insert_op(WaitOp(*tokens), InsertPoint.before(launches[layer - 1]))
