"""
`select-layouts{target=gpu|dsp solver=local layout=auto|col1|col2|col4}`: choose how
each operator runs and record the choice in the IR, for the lowering to realise.

- `dsp`: each quantized operator's implementation (SIMD layout and multiply
  instruction, with every candidate's modelled cost), each result's and graph input's
  layout, and an `hvx.relayout` wherever a reader wants a tensor in another layout
  (`transforms/onnx_to_hvx/selection.py`). `layout` forces one layout on the whole
  graph; `auto` lets the solver choose.

`solver=local` is today's rule set (GCD²'s local choice, operator by operator in graph
order); a global solver is another value of the same option.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.transforms.onnx_to_hvx.quant_graph import find_function, read_quant_graph
from mobile_opt.transforms.onnx_to_hvx.selection import LAYOUT_CHOICES, select_dsp_layouts

TARGETS = ("gpu", "dsp")
SOLVERS = ("local",)


@dataclass(frozen=True)
class SelectLayoutsPass(ModulePass):
    name = "select-layouts"

    target: str
    solver: str = "local"
    layout: str = "auto"
    """dsp: one layout for every operator, or `auto`."""
    function: str = "main_graph"
    """dsp: the function holding the quantized graph."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _check("target", self.target, TARGETS)
        _check("solver", self.solver, SOLVERS)
        if self.target == "gpu":
            raise DiagnosticException("select-layouts: target=gpu is not in this branch yet")
        _check("layout", self.layout, LAYOUT_CHOICES)
        function = find_function(op, self.function)
        select_dsp_layouts(function, read_quant_graph(function), self.layout)


def _check(option: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise DiagnosticException(
            f"select-layouts: {option} must be one of {', '.join(choices)}, not '{value}'"
        )
