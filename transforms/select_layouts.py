"""
`select-layouts{target=gpu|dsp solver=local|chain|pbqp|gcd2|exact partition=13
layout=auto|col1|col2|col4 explain=false}`: choose how each value is laid out, and each
operator runs, for the target, and record it in the IR, where the lowering
(`onnx-to-texture`, `onnx-to-hvx`) realises it without choosing anything itself, so that
one solver can be swapped for another.

- `target=gpu`: each value's texture layout (`dialects/texture/value_layouts.py`: the
  `texture.layouts` attribute of an op, one per result, and `texture.layout` on a
  graph argument), and a `texture.relayout` where a reader wants another
  (`transforms/onnx_to_texture/layouts.py`, `.../selection.py`).
- `target=dsp`: each quantized operator's implementation (SIMD layout and multiply
  instruction, with every candidate's modelled cost), each result's and graph input's
  layout, and an `hvx.relayout` wherever a reader wants a tensor in another layout
  (`transforms/onnx_to_hvx/selection.py`). `layout` forces one layout on the whole
  graph; `auto` lets the solver choose.

`solver=local` is each target's rule set, op by op with no global view. The others solve
the target's selection problem (a `LayoutProblem`: one PBQP over the graph) with
`models/solvers.py`: `chain` (eq. 2, chains only), `pbqp` (reductions and RN), `gcd2`
(cost-optimal partitions of at most `partition` ops, each solved exactly) and `exact`
(CP-SAT). `explain=true` (`mobile-opt --explain`) prints each op's choice, its cost and
the runner-up, the transforms kept, and the total under every solver, to stderr.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.models.device_profile import ProfileError
from mobile_opt.models.explain import explain
from mobile_opt.models.pbqp import Solution
from mobile_opt.models.solvers import SOLVERS, LayoutProblem, solve
from mobile_opt.transforms.onnx_to_hvx.quant_graph import find_function, read_quant_graph
from mobile_opt.transforms.onnx_to_hvx.selection import (
    LAYOUT_CHOICES,
    dsp_layout_problem,
    select_dsp_layouts,
)
from mobile_opt.transforms.onnx_to_texture.layouts import select_local
from mobile_opt.transforms.onnx_to_texture.selection import (
    DEFAULT_LIMITS,
    gpu_layout_problem,
)

TARGETS = ("gpu", "dsp")


@dataclass(frozen=True)
class SelectLayoutsPass(ModulePass):
    """Record a layout for every value (`gpu`) or quantized op (`dsp`) of the graph."""

    name = "select-layouts"

    target: str = "gpu"
    solver: str = "local"
    """`local`: each target's rules (no global view); `chain`, `pbqp`, `gcd2`, `exact`:
    every layout chosen together (`models/solvers.py`)."""
    partition: int = 13
    """`gcd2`: the most ops a partition solved exactly holds."""
    layout: str = "auto"
    """`dsp` only: one SIMD layout for every operator, or `auto`."""
    function: str = "main_graph"
    """The function holding the graph (`dsp`; `gpu` selects in every function)."""
    explain: bool = False
    """Print why each op got its choice, and every solver's total, to stderr."""
    device: str = "pocl"
    """`gpu`: the device profile (a shipped name or a path) the costs come from."""
    max_image_width: int = DEFAULT_LIMITS[0]
    """`gpu`: the widest image the device holds (a layout over it is infeasible)."""
    max_image_height: int = DEFAULT_LIMITS[1]
    """`gpu`: the tallest image the device holds."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _check("target", self.target, TARGETS)
        _check("solver", self.solver, SOLVERS)
        _check("layout", self.layout, LAYOUT_CHOICES)
        if self.partition < 1:
            raise DiagnosticException("select-layouts: partition must be at least 1")
        if self.target == "gpu" and self.layout != "auto":
            raise DiagnosticException("select-layouts: layout is an option of target=dsp")
        if self.solver != "local" and self.layout != "auto":
            raise DiagnosticException(
                f"select-layouts: solver={self.solver} chooses the layouts: it needs layout=auto")
        if self.target == "gpu":
            def build() -> LayoutProblem:
                try:
                    return gpu_layout_problem(op, self.device, (self.max_image_width,
                                                                self.max_image_height))
                except ProfileError as e:
                    raise DiagnosticException(f"select-layouts: {e}") from None

            def select_by_rules() -> None:
                select_local(op)
        else:
            function = find_function(op, self.function)
            graph = read_quant_graph(function)

            def build() -> LayoutProblem:
                return dsp_layout_problem(function, graph)

            def select_by_rules() -> None:
                select_dsp_layouts(function, graph, self.layout)

        if self.solver == "local" and not self.explain:
            select_by_rules()
            return
        if self.layout != "auto":  # one layout forced: nothing to choose or explain
            select_by_rules()
            return
        problem = build()
        chosen = self._solve(problem)
        if self.solver == "local":
            select_by_rules()
        else:
            problem.realise(chosen.selection)

    def _solve(self, problem: LayoutProblem) -> Solution:
        """The chosen solver's solution; with `explain`, every solver's, explained."""
        names = SOLVERS if self.explain else (self.solver,)
        totals: dict[str, Solution | float | str] = {}
        seconds: dict[str, float] = {}
        for name in names:
            start = time.perf_counter()
            try:
                if name == "local":
                    local = tuple(problem.local())
                    totals[name] = problem.problem.cost(local)
                else:
                    totals[name] = solve(problem.problem, name, self.partition)
            except ValueError as e:  # chain on a graph that is not one
                if name == self.solver:
                    raise DiagnosticException(f"select-layouts: solver={name}: {e}") from None
                totals[name] = str(e)
            seconds[name] = time.perf_counter() - start
        chosen = totals[self.solver]
        if not isinstance(chosen, Solution):  # local: its cost, and the selection above
            chosen = Solution(local, float(chosen), False)
        if self.explain:
            header = (f"select-layouts{{target={self.target} solver={self.solver}}}: "
                      f"{len(problem.problem.nodes)} nodes, costs in {problem.unit}")
            timing = ", ".join(f"{n} {s:.3f} s" for n, s in seconds.items())
            lines = explain(problem.problem, chosen.selection, totals, problem.unit)
            print("\n".join([header, *lines, f"solve time: {timing}"]), file=sys.stderr)
        return chosen


def _check(option: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise DiagnosticException(
            f"select-layouts: {option} must be one of {', '.join(choices)}, not '{value}'"
        )
