"""
The selection solvers by the names `select-layouts{solver=...}` gives them, each taking a
`PBQPProblem` and returning a `Solution` (`local` is not here: it is each target's own
rule set, not a solver of the problem).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from mobile_opt.models.gcd2 import solve_gcd2
from mobile_opt.models.pbqp import PBQPProblem, Solution, solve_chain, solve_exact, solve_pbqp

SOLVERS = ("local", "chain", "pbqp", "gcd2", "exact")
"""Every `solver=` value; `local` is the target's rule set."""

EXACT_SECONDS = 60.0
"""CP-SAT's time limit: past it `exact` reports its best selection and a proven bound."""


def solve(problem: PBQPProblem, solver: str, partition: int = 13) -> Solution:
    """`problem` solved by `solver` (any of `SOLVERS` but `local`)."""
    solvers: dict[str, Callable[[], Solution]] = {
        "chain": lambda: solve_chain(problem),
        "pbqp": lambda: solve_pbqp(problem),
        "gcd2": lambda: solve_gcd2(problem, partition),
        "exact": lambda: solve_exact(problem, EXACT_SECONDS),
    }
    if solver not in solvers:
        raise ValueError(f"no solver '{solver}' (one of {', '.join(solvers)})")
    return solvers[solver]()


class LayoutProblem(Protocol):
    """A target's selection problem over one graph: what `select-layouts` solves, explains
    and records. The GPU and DSP halves each build one."""

    problem: PBQPProblem
    """Nodes in topological order (producers first), options labelled."""
    unit: str
    """What the costs count (`cycles`, `ns`)."""

    def local(self) -> tuple[int, ...]:
        """The local rules' choice, as a selection of `problem` (for the baseline)."""
        ...

    def realise(self, selection: Sequence[int]) -> None:
        """Record `selection` in the IR for the lowering."""
        ...
