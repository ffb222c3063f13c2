"""
The GPU and DSP pass pipelines as the Python API (`api/compiled.py`, which the tools
and the benchmarks compile through) and the tests of passes ask for them: a `-p` spec
parsed against the project's universe, then the list `pass_lists.py` builds (the one
place each list is defined), and run. The named pipelines `gpu-pipeline` and
`dsp-pipeline` live there too; a spec given here takes graph passes and stages, not them.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.universe import Universe
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from mobile_opt.pass_lists import (
    GRAPH_PASSES,
    NamedPipeline,
    PipelineError,
    dsp_back_end,
    dsp_passes,
    gpu_passes,
)
from mobile_opt.transforms.flashmem_plan import FlashMemPlanPass
from mobile_opt.transforms.onnx_to_texture import OnnxToTexturePass
from mobile_opt.universe import MOBILE_OPT_UNIVERSE

__all__ = ["GRAPH_PASSES", "PipelineError", "apply", "context",
           "dsp_back_end", "dsp_pipeline", "gpu_pipeline", "parse_passes", "universe"]


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



def _stages(spec: str, of: Universe | None) -> list[ModulePass]:
    """`spec`'s passes, which a tool's own pipeline takes in: no named pipeline among them."""
    passes = parse_passes(spec, of)
    named = next((p for p in passes if isinstance(p, NamedPipeline)), None)
    if named is not None:
        raise PipelineError(f"-p {spec}: {named.name} is a whole pipeline; give the passes "
                            "to run before or in place of its stages")
    return passes


def gpu_pipeline(
    spec: str, device, fp16: bool = False, of: Universe | None = None,
    ace: bool = True, tile: bool = True, solver: str = "gcd2", partition: int = 13,
    stream: FlashMemPlanPass | None = None,
) -> tuple[list[ModulePass], OnnxToTexturePass]:
    """
    The passes of a GPU compile for `device` and its `onnx-to-texture`
    (`pass_lists.gpu_passes`). `spec` gives the graph passes, or `onnx-to-texture`'s own
    options when it names that pass; a stage it names replaces the default one. The other
    arguments are `gpu_passes'`; `stream` serves `mobile-run --memory-budget`.
    """
    passes = _stages(spec, of)
    at = next((i for i, p in enumerate(passes) if isinstance(p, OnnxToTexturePass)), None)
    # the options spec gives onnx-to-texture: those it leaves out follow the device
    given = set() if at is None else {
        k.replace("-", "_") for k in list(parse_pipeline(spec))[at].parameters}
    return gpu_passes(passes, device, fp16, given=given, ace=ace, tile=tile, solver=solver,
                      partition=partition, stream=stream)


def dsp_pipeline(
    spec: str = "",
    layout: str = "auto",
    function: str = "main_graph",
    packing: str = "sda",
    of: Universe | None = None,
    solver: str = "gcd2",
) -> list[ModulePass]:
    """The passes of a DSP compile (`pass_lists.dsp_passes`) after `spec`'s graph passes."""
    return dsp_passes(_stages(spec, of), layout, function, packing, solver)
