"""
`select-layouts{target=gpu|dsp solver=local layout=auto|col1|col2|col4}`: choose how
each value is laid out, and each operator runs, for the target, and record it in the IR,
where the lowering (`onnx-to-texture`, `onnx-to-hvx`) realises it without choosing
anything itself, so that one solver can be swapped for another.

- `target=gpu`: each value's texture layout (`dialects/texture/value_layouts.py`: the
  `texture.layouts` attribute of an op, one per result, and `texture.layout` on a
  graph argument; `transforms/onnx_to_texture/layouts.py`).
- `target=dsp`: each quantized operator's implementation (SIMD layout and multiply
  instruction, with every candidate's modelled cost), each result's and graph input's
  layout, and an `hvx.relayout` wherever a reader wants a tensor in another layout
  (`transforms/onnx_to_hvx/selection.py`). `layout` forces one layout on the whole
  graph; `auto` lets the solver choose.

`solver=local` is today's rule set (on the DSP, GCD²'s local choice, operator by
operator in graph order); on the DSP, `solver=pbqp` and `solver=exact` choose every
layout together as one PBQP problem.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.transforms.onnx_to_hvx.quant_graph import find_function, read_quant_graph
from mobile_opt.transforms.onnx_to_hvx.selection import (
    DSP_SOLVERS,
    LAYOUT_CHOICES,
    select_dsp_layouts,
)
from mobile_opt.transforms.onnx_to_texture.layouts import select_local

TARGETS = ("gpu", "dsp")
SOLVERS = DSP_SOLVERS


@dataclass(frozen=True)
class SelectLayoutsPass(ModulePass):
    """Record a layout for every value (`gpu`) or quantized op (`dsp`) of the graph."""

    name = "select-layouts"

    target: str = "gpu"
    solver: str = "local"
    """`local`: the rules the lowerings followed before (no global view); `dsp` also
    `pbqp` (GCD²'s reductions) and `exact` (CP-SAT), both choosing every layout together."""
    layout: str = "auto"
    """`dsp` only: one SIMD layout for every operator, or `auto`."""
    function: str = "main_graph"
    """`dsp` only: the function holding the quantized graph."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _check("target", self.target, TARGETS)
        _check("solver", self.solver, SOLVERS)
        if self.target == "gpu":
            if self.layout != "auto":
                raise DiagnosticException("select-layouts: layout is an option of target=dsp")
            if self.solver != "local":
                raise DiagnosticException(
                    f"select-layouts: target=gpu has only solver=local, not '{self.solver}'")
            select_local(op)
            return
        _check("layout", self.layout, LAYOUT_CHOICES)
        function = find_function(op, self.function)
        if self.solver != "local" and self.layout != "auto":
            raise DiagnosticException(
                f"select-layouts: solver={self.solver} chooses the layouts: it needs layout=auto")
        select_dsp_layouts(function, read_quant_graph(function), self.layout, self.solver)


def _check(option: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise DiagnosticException(
            f"select-layouts: {option} must be one of {', '.join(choices)}, not '{value}'"
        )
