"""
The GPU and DSP pass lists, each built here and nowhere else, and the named pipelines
that expand to them: `gpu-pipeline` and `dsp-pipeline`, passes in the project's universe
(so `mobile-opt -p`, stock `xdsl-opt` and the Python API all know them by name).
`pipelines.py` builds its lists with these functions after parsing the user's spec.

- GPU: the graph passes (`GRAPH_PASSES`, or those given), `texture-tile` (TMModel,
  with the device's shipped profile, if it has one), `select-layouts{target=gpu
  solver=gcd2}` (every layout chosen together; `solver=local`: the rules op by op),
  `onnx-to-texture` within the device's image limits (every tensor in a buffer where the
  profile's images are slower, `prefers_buffers`: PoCL), `texture-to-ocl`, `ace` and `cse`;
  under a memory budget, `flashmem-split` first (no weight over a quarter of the budget)
  and `flashmem-plan` and `flashmem-stream` last.
- DSP: `select-layouts{target=dsp}` (each operator's implementation, GCD²'s local
  choice), `onnx-to-hvx`, `hvx-unroll` (kernels unrolled by output shape, pointer steps
  folded into offsets), then the back end: `hvx-regalloc`, and `vliw-pack` unless the
  printer packs. Hand-built kernels take the back end alone (`dsp_back_end`).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from mobile_opt.backends.hexagon.printer import PRINTER_PACKINGS
from mobile_opt.dialects.limits import LimitError, parse_size
from mobile_opt.models.device_profile import load_profile, prefers_buffers, profile_for_device
from mobile_opt.models.solvers import SOLVERS
from mobile_opt.transforms.ace import AddressCalculationEliminationPass
from mobile_opt.transforms.flashmem_fuse import FlashMemFusePass
from mobile_opt.transforms.flashmem_plan import FlashMemPlanPass
from mobile_opt.transforms.flashmem_split import FlashMemSplitPass
from mobile_opt.transforms.flashmem_stream import FlashMemStreamPass
from mobile_opt.transforms.hvx_regalloc import HvxRegisterAllocationPass
from mobile_opt.transforms.hvx_unroll import HvxUnrollPass
from mobile_opt.transforms.onnx_canonicalize import OnnxCanonicalizePass
from mobile_opt.transforms.onnx_fold_batchnorm import OnnxFoldBatchNormPass
from mobile_opt.transforms.onnx_fold_constants import OnnxFoldConstantsPass
from mobile_opt.transforms.onnx_fuse import OnnxFusePass
from mobile_opt.transforms.onnx_to_hvx.lower import OnnxToHvxPass
from mobile_opt.transforms.onnx_to_hvx.selection import LAYOUT_CHOICES
from mobile_opt.transforms.onnx_to_texture import OnnxToTexturePass
from mobile_opt.transforms.select_layouts import SelectLayoutsPass
from mobile_opt.transforms.texture_tile import TextureTilePass
from mobile_opt.transforms.texture_to_ocl import TextureToOclPass
from mobile_opt.transforms.vliw_pack import ALGORITHMS, VliwPackPass

GRAPH_PASS_LIST: tuple[ModulePass, ...] = (
    OnnxFoldConstantsPass(), OnnxFoldBatchNormPass(), OnnxCanonicalizePass(), OnnxFusePass(),
)
"""The graph passes a GPU compile takes when it is given none."""

GRAPH_PASSES = ",".join(str(p) for p in GRAPH_PASS_LIST)
"""`GRAPH_PASS_LIST` as a `-p` spec."""

SPLIT_SHARE = 0.25
"""Under a memory budget, MatMul weights above this share of it are cut in column blocks."""

MOST_BUDGET = 1 << 50
"""The largest memory budget: 1 PiB (the planner's integers overflow long before int64)."""

PACKINGS = (*ALGORITHMS, *PRINTER_PACKINGS)
"""A DSP compile's packings: a `vliw-pack` algorithm, or the printer's own packer."""


class PipelineError(ValueError):
    """A pass spec that does not parse (unknown pass, bad option), or a named pipeline's
    option value that names nothing (a device, a solver); one line."""


def gpu_passes(
    graph: Sequence[ModulePass], device, fp16: bool = False, *,
    given: Collection[str] = (), ace: bool = True, tile: bool = True, solver: str = "gcd2",
    partition: int = 13, stream: FlashMemPlanPass | None = None,
) -> tuple[list[ModulePass], OnnxToTexturePass]:
    """
    The passes of a GPU compile for `device` (its `max_image_width/height`, `name` and
    `platform`) and its `onnx-to-texture`. `graph` gives the graph passes, and may hold
    an `onnx-to-texture` whose options given explicitly are `given` (field names); a stage
    it holds (before the lowering: `texture-tile`, `select-layouts`; after it:
    `texture-to-ocl`, `ace`, `cse`) replaces the default one. `fp16` stores every tensor
    as half. `ace=False` leaves out the default `ace`, `tile=False` the default
    `texture-tile` (the lowering keeps its fixed kernel defaults): a stage `graph` holds
    stays either way. `solver` and `partition` are the default `select-layouts'`
    (`models/solvers.py`). `stream`, a `flashmem-plan` pass, plans weight streaming, and
    `flashmem-stream` realises the plan, last.
    """
    passes = list(graph)
    at = next((i for i, p in enumerate(passes) if isinstance(p, OnnxToTexturePass)), None)
    if at is None:
        before, lowering, after, given = passes, OnnxToTexturePass(), [], ()
    else:
        before, lowering, after = passes[:at], passes[at], passes[at + 1 :]
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


def dsp_passes(
    graph: Sequence[ModulePass] = (),
    layout: str = "auto",
    function: str = "main_graph",
    packing: str = "sda",
    solver: str = "gcd2",
) -> list[ModulePass]:
    """
    The passes of a DSP compile: the `graph` passes, the layout selection of `function`
    in `layout` by `solver` (a forced layout leaves nothing to solve: the local rules
    place it), its lowering, unrolling and the back end with `packing`.
    """
    if layout != "auto":
        solver = "local"
    return [
        *graph,
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


# Named pipelines ----------------------------------------------------------------------
def option(default: Any, help: str, shown: str | None = None) -> Any:
    """A named pipeline's option: its default, one line of help, and how `--list-pipelines`
    shows the default where its value alone would not say it (`shown`)."""
    return field(default=default, metadata={"help": help, "shown": shown})


def _check(name: str, value: object, choices: Sequence[str]) -> None:
    if value not in choices:
        raise PipelineError(f"{name} must be one of {', '.join(choices)}, not '{value}'")


@dataclass(frozen=True)
class NamedPipeline(ModulePass):
    """A pass that stands for a list of passes (`passes`), which it runs in order; drivers
    may run the list in its place, so that each pass in it is timed, printed, explained."""

    summary: ClassVar[str]
    """One line for `--list-pipelines`."""

    def expansion(self) -> tuple[str, list[ModulePass]]:
        """What the list was built for ("" where it does not vary), and the list."""
        raise NotImplementedError

    def passes(self) -> list[ModulePass]:
        return self.expansion()[1]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PassPipeline(tuple(self.passes())).apply(ctx, op)


def resolve_device(spec: str | None):
    """The OpenCL device `spec` names, as `mobile-run --device` resolves it (`pocl`, `gpu`,
    `cpu`, a platform or device name substring; None: the default device, with its remark
    on stderr); a PipelineError where there is none."""
    from mobile_opt.backends.opencl.devices import DeviceError, named_or_default

    try:
        device, remark = named_or_default(spec)
    except DeviceError as e:
        raise PipelineError(str(e)) from None
    if remark:
        print(f"remark: {remark}", file=sys.stderr)
    return device


@dataclass(frozen=True)
class GpuPipelinePass(NamedPipeline):
    """`gpu-pipeline{device=pocl fp16=false solver=gcd2 memory-budget=200MB}`: mobile-run's
    OpenCL compile (`gpu_passes` with the graph passes), for the device it names."""

    name = "gpu-pipeline"
    summary = ("an ONNX graph to OpenCL kernels for a device: graph passes, layouts, "
               "tiling, lowering, address folding (mobile-run's OpenCL compile)")

    device: str | None = option(
        None, "the OpenCL device whose image limits and profile the kernels fit: pocl, "
        "gpu, cpu, or a platform or device name substring",
        shown="the newest PoCL that runs here, else a CPU runtime")
    fp16: bool = option(False, "store every tensor as half")
    solver: str = option("gcd2", f"how select-layouts chooses the layouts: "
                         f"{'|'.join(SOLVERS)}")
    memory_budget: str | int | None = option(
        None, "stream the weights within SIZE of device memory (e.g. 200MB): "
        "flashmem-split first, flashmem-plan and flashmem-stream last", shown="none")

    def __post_init__(self) -> None:
        _check("solver", self.solver, SOLVERS)
        self.budget_bytes()

    def budget_bytes(self) -> int | None:
        """The memory budget in bytes, None if none; a PipelineError if malformed."""
        if self.memory_budget is None:
            return None
        try:
            return parse_size(str(self.memory_budget), "memory-budget", most=MOST_BUDGET)
        except LimitError as e:
            raise PipelineError(str(e)) from None

    def expansion(self) -> tuple[str, list[ModulePass]]:
        budget = self.budget_bytes()
        stream = None if budget is None else FlashMemPlanPass(budget_mb=budget / (1 << 20))
        device = resolve_device(self.device)
        passes, _ = gpu_passes(GRAPH_PASS_LIST, device, self.fp16, solver=self.solver,
                               stream=stream)
        return f"{device.name} [{device.platform}]", passes


@dataclass(frozen=True)
class DspPipelinePass(NamedPipeline):
    """`dsp-pipeline{layout=auto packing=sda solver=gcd2 function=main_graph}`: mobile-run's
    Hexagon compile (`dsp_passes`) of a quantized model to packed HVX kernels."""

    name = "dsp-pipeline"
    summary = ("a quantized ONNX graph to HVX kernels: layouts, lowering, unrolling, "
               "register allocation, VLIW packing (mobile-run --target hexagon's compile)")

    layout: str = option("auto", "one SIMD layout for every operator, or auto (the "
                         f"cheapest per operator): {'|'.join(LAYOUT_CHOICES)}")
    packing: str = option("sda", f"VLIW packing: {'|'.join(PACKINGS)} (greedy and single "
                          "are the printer's: give -t 'hexagon-asm{packing=...}' too)")
    solver: str = option("gcd2", f"how select-layouts chooses (layout=auto): "
                         f"{'|'.join(SOLVERS)}")
    function: str = option("main_graph", "the function holding the graph")

    def __post_init__(self) -> None:
        _check("layout", self.layout, LAYOUT_CHOICES)
        _check("packing", self.packing, PACKINGS)
        _check("solver", self.solver, SOLVERS)

    def expansion(self) -> tuple[str, list[ModulePass]]:
        return "", dsp_passes((), self.layout, self.function, self.packing, self.solver)


NAMED_PIPELINES: tuple[type[NamedPipeline], ...] = (GpuPipelinePass, DspPipelinePass)
