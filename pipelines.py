"""
The GPU and DSP pass pipelines, each built here and nowhere else: the Python API
(`api/compiled.py`), which the tools and the benchmarks compile through, and the tests of
passes take their passes from this module.

- GPU: the graph passes (`GRAPH_PASSES`, or the `-p` spec), `texture-tile` (TMModel,
  with the device's shipped profile, if it has one), `select-layouts{target=gpu
  solver=gcd2}` (every layout chosen together; `solver=local`: the rules op by op),
  `onnx-to-texture` within the device's image limits (every tensor in a buffer where the
  profile's images are slower, `prefers_buffers`: PoCL), `texture-to-ocl`, `ace` and `cse`;
  under a memory budget, `flashmem-split` first (no weight over a quarter of the budget)
  and `flashmem-plan` last.
- DSP: `select-layouts{target=dsp}` (each operator's implementation, GCD²'s local
  choice), `onnx-to-hvx`, `hvx-unroll` (kernels unrolled by output shape, pointer steps
  folded into offsets), then the back end: `hvx-regalloc`, and `vliw-pack` unless the
  printer packs. Hand-built kernels take the back end alone (`dsp_back_end`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.universe import Universe
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from mobile_opt.backends.hexagon.printer import PRINTER_PACKINGS
from mobile_opt.models.device_profile import load_profile, prefers_buffers, profile_for_device
from mobile_opt.transforms.ace import AddressCalculationEliminationPass
from mobile_opt.transforms.flashmem_fuse import FlashMemFusePass
from mobile_opt.transforms.flashmem_plan import FlashMemPlanPass
from mobile_opt.transforms.flashmem_split import FlashMemSplitPass
from mobile_opt.transforms.flashmem_stream import FlashMemStreamPass
from mobile_opt.transforms.hvx_regalloc import HvxRegisterAllocationPass
from mobile_opt.transforms.hvx_unroll import HvxUnrollPass
from mobile_opt.transforms.onnx_to_hvx.lower import OnnxToHvxPass
from mobile_opt.transforms.onnx_to_texture import OnnxToTexturePass
from mobile_opt.transforms.select_layouts import SelectLayoutsPass
from mobile_opt.transforms.texture_tile import TextureTilePass
from mobile_opt.transforms.texture_to_ocl import TextureToOclPass
from mobile_opt.transforms.vliw_pack import VliwPackPass
from mobile_opt.universe import MOBILE_OPT_UNIVERSE

GRAPH_PASSES = "onnx-fold-constants,onnx-fold-batchnorm,onnx-canonicalize,onnx-fuse"
"""The graph passes a GPU run takes when it is given none."""


SPLIT_SHARE = 0.25
"""Under a memory budget, MatMul weights above this share of it are cut in column blocks."""


class PipelineError(Exception):
    """A pass spec that does not parse (unknown pass, bad option); one line."""


def universe() -> Universe:
    """
    xDSL's passes, dialects and targets (`cse`, ...) with this project's, which are merged
    in directly: the entry point that registers them exists only where it is pip-installed.
    """
    everything = Universe.get_multiverse()
    return Universe(
        all_dialects={**everything.all_dialects, **MOBILE_OPT_UNIVERSE.all_dialects},
        all_passes={**everything.all_passes, **MOBILE_OPT_UNIVERSE.all_passes},
        all_targets={**everything.all_targets, **MOBILE_OPT_UNIVERSE.all_targets},
    )


def context(of: Universe | None = None) -> Context:
    """A context that knows every dialect of `of` (by default `universe()`)."""
    ctx = Context()
    for name, factory in (of or universe()).all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx


def parse_passes(spec: str, of: Universe | None = None) -> list[ModulePass]:
    """`-p SPEC` as passes; an unknown pass, bad option or malformed spec is one line."""
    if not spec.strip():
        return []
    try:
        return list(PassPipeline.parse_spec((of or universe()).all_passes, spec).passes)
    except (ValueError, ImportError, ArgSpecParseError) as e:
        # the reason is the last line xDSL gives (after a caret diagram, if any)
        lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
        raise PipelineError(f"-p {spec}: {lines[-1] if lines else type(e).__name__}") from None


def apply(module: ModuleOp, passes: Sequence[ModulePass], ctx: Context | None = None) -> None:
    """Run `passes` over `module` in order, then verify it."""
    PassPipeline(tuple(passes)).apply(ctx or context(), module)
    module.verify()


def gpu_pipeline(
    spec: str, device, fp16: bool = False, of: Universe | None = None,
    ace: bool = True, tile: bool = True, solver: str = "gcd2", partition: int = 13,
    stream: FlashMemPlanPass | None = None,
) -> tuple[list[ModulePass], OnnxToTexturePass]:
    """
    The passes of a GPU compile for `device` (its `max_image_width/height`, `name` and
    `platform`) and its `onnx-to-texture`. `spec` gives the graph passes, or
    `onnx-to-texture`'s own options when it names that pass; a stage it names (before
    the lowering: `texture-tile`, `select-layouts`; after it: `texture-to-ocl`, `ace`,
    `cse`) replaces the default one. `fp16` stores every tensor as half. `ace=False`
    leaves out the default `ace`, `tile=False` the default `texture-tile` (the lowering
    keeps its fixed kernel defaults): a stage `spec` names stays either way. `solver` and
    `partition` are the default `select-layouts`' (`models/solvers.py`). `stream`, a
    `flashmem-plan` pass, plans weight streaming, and `flashmem-stream` realises the plan,
    last (`mobile-run --memory-budget`).
    """
    passes = parse_passes(spec, of)
    at = next((i for i, p in enumerate(passes) if isinstance(p, OnnxToTexturePass)), None)
    given: set[str] = set()  # the options spec gives onnx-to-texture
    if at is None:
        before, lowering, after = passes, OnnxToTexturePass(), []
    else:
        before, lowering, after = passes[:at], passes[at], passes[at + 1 :]
        given = {k.replace("-", "_") for k in list(parse_pipeline(spec))[at].parameters}
    width, height = device.max_image_width, device.max_image_height
    lowering = dataclasses.replace(
        lowering,
        max_image_width=min(lowering.max_image_width, width)
        if "max_image_width" in given
        else width,
        max_image_height=min(lowering.max_image_height, height)
        if "max_image_height" in given
        else height,
        storage="f16" if fp16 else lowering.storage,
        remarks=False,  # the host plan says which storage falls back to a buffer, once each
    )
    profile = profile_for_device(getattr(device, "name", ""), getattr(device, "platform", ""))
    if "buffers" not in given and profile is not None:
        lowering = dataclasses.replace(lowering, buffers=prefers_buffers(load_profile(profile)))
    if stream is not None and not any(isinstance(p, FlashMemSplitPass) for p in before):
        # no weight may need a large share of the budget on its own; before a given
        # flashmem-fuse, which plans within the budget too
        at_fuse = next((i for i, p in enumerate(before) if isinstance(p, FlashMemFusePass)),
                       len(before))
        split = FlashMemSplitPass(max_weight_mb=stream.budget_mb * SPLIT_SHARE)
        before = [*before[:at_fuse], split, *before[at_fuse:]]
    if (tile and profile is not None and not lowering.buffers
            and not any(isinstance(p, TextureTilePass) for p in before)):
        # kernel configurations by TMModel, from the device's shipped profile (the image
        # kernels': in buffers the wide kernels take none)
        before = [*before, TextureTilePass(device=profile, blocked=lowering.blocked)]
    if not any(isinstance(p, SelectLayoutsPass) for p in before):
        # the lowering obeys the recorded layouts and chooses none; costs from the
        # device's profile (PoCL's where it ships none) and its image limits
        before = [*before, SelectLayoutsPass(
            target="gpu", solver=solver, partition=partition, device=profile or "pocl",
            max_image_width=lowering.max_image_width,
            max_image_height=lowering.max_image_height)]
    if not any(isinstance(p, TextureToOclPass) for p in after):
        after = [TextureToOclPass(), *after]
    if ace and not any(isinstance(p, AddressCalculationEliminationPass) for p in after):
        at_ocl = next(i for i, p in enumerate(after) if isinstance(p, TextureToOclPass))
        after = [*after[: at_ocl + 1], AddressCalculationEliminationPass(), *after[at_ocl + 1 :]]
    if not any(isinstance(p, CommonSubexpressionElimination) for p in after):
        after = [*after, CommonSubexpressionElimination()]
    if stream is not None and not any(isinstance(p, FlashMemPlanPass) for p in after):
        # load capacities from the device's measured profile, as tiling's costs
        after = [*after, stream if stream.device or profile is None
                 else dataclasses.replace(stream, device=profile)]
    if stream is not None and not any(isinstance(p, FlashMemStreamPass) for p in after):
        after = [*after, FlashMemStreamPass()]
    return [*before, lowering, *after], lowering


def dsp_pipeline(
    spec: str = "",
    layout: str = "auto",
    function: str = "main_graph",
    packing: str = "sda",
    of: Universe | None = None,
    solver: str = "gcd2",
) -> list[ModulePass]:
    """
    The passes of a DSP compile: `spec`'s graph passes, the layout selection of
    `function` in `layout` by `solver` (a forced layout leaves nothing to solve: the
    local rules place it), its lowering, unrolling and the back end with `packing`.
    """
    if layout != "auto":
        solver = "local"
    return [
        *parse_passes(spec, of),
        SelectLayoutsPass(target="dsp", solver=solver, layout=layout, function=function),
        OnnxToHvxPass(function=function),
        HvxUnrollPass(),
        *dsp_back_end(packing),
    ]


def dsp_back_end(packing: str = "sda") -> list[ModulePass]:
    """
    Register allocation, and `vliw-pack` with `packing` unless the printer packs
    (`greedy`, `single`). SDA tunes its w/p grid per block by the cycle model.
    """
    passes: list[ModulePass] = [HvxRegisterAllocationPass()]
    if packing not in PRINTER_PACKINGS:
        passes.append(VliwPackPass(algorithm=packing, tune=packing == "sda"))
    return passes
