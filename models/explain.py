"""
Why a selection is what it is: each op's chosen option and its cost, the runner-up, each
transform the selection keeps, and the total under every solver, as `select-layouts
{explain=true}` (`mobile-opt --explain`) prints it. Target-neutral: it reads only the
`PBQPProblem` and the solutions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from mobile_opt.models.pbqp import PBQPProblem, Solution


def _local_cost(problem: PBQPProblem, node: int, option: int, selection: Sequence[int],
                neighbours: list[set[int]]) -> float:
    """
    `node`'s own cost under `option` plus its edges to its neighbours' chosen options. A
    neighbouring transformed copy may change its mind (be made or dropped) with the
    option, so it counts at its cheaper choice, with all its edges.
    """
    total = float(problem.nodes[node].costs[option])
    for other in neighbours[node]:
        if other not in problem.copies:
            total += float(problem.matrix(node, other)[option, selection[other]])
            continue
        total += min(
            sum(float(problem.matrix(other, n)[c, option if n == node else selection[n]])
                for n in neighbours[other])
            for c in range(problem.options(other)))
    return total


def _number(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.6g}"


def explain(problem: PBQPProblem, selection: Sequence[int],
            totals: Mapping[str, Solution | float | str], unit: str) -> list[str]:
    """
    Lines explaining `selection`: per op (transformed copies are reported as transforms)
    the chosen option with its cost (own plus its edges, `_local_cost`) and the cheapest
    other option with its cost, the other ops' choices kept; then each edge the selection
    pays for; then `totals` (a solver's `Solution`, its cost, or why it has none).
    """
    neighbours = problem.neighbours()
    copy = [n in problem.copies for n in range(len(problem.nodes))]
    lines = [f"{'op':<28} {'chosen':<18} {'cost':>10}   {'runner-up':<18} {'cost':>10}"]
    for node, spec in enumerate(problem.nodes):
        if copy[node]:
            continue
        chosen = selection[node]
        cost = _local_cost(problem, node, chosen, selection, neighbours)
        others = [(o, _local_cost(problem, node, o, selection, neighbours))
                  for o in range(problem.options(node)) if o != chosen]
        runner = min(others, key=lambda oc: oc[1]) if others else None
        line = f"{spec.name:<28} {spec.label(chosen):<18} {_number(cost):>10}   "
        line += f"{spec.label(runner[0]):<18} {_number(runner[1]):>10}" if runner else "(only)"
        lines.append(line.rstrip())
    kept = []
    for (u, v), matrix in sorted(problem.edges.items()):
        cost = float(matrix[selection[u], selection[v]])
        if cost == 0:
            continue
        a, b = problem.nodes[u], problem.nodes[v]
        if copy[v]:
            kept.append(f"  copy {b.name} (from {a.label(selection[u])}): {_number(cost)}")
        else:
            kept.append(f"  {a.name} ({a.label(selection[u])}) -> {b.name} "
                        f"({b.label(selection[v])}): {_number(cost)}")
    lines.append(f"transforms kept: {len(kept)}")
    lines += kept
    parts = []
    for solver, total in totals.items():
        if isinstance(total, Solution):
            proof = "optimal" if total.optimal else (
                f"bound {_number(total.lower_bound)}" if total.lower_bound is not None
                else "heuristic")
            parts.append(f"{solver} {_number(total.cost)} ({proof})")
        elif isinstance(total, str):
            parts.append(f"{solver} - ({total})")
        else:
            parts.append(f"{solver} {_number(total)}")
    lines.append(f"total {unit}: " + ", ".join(parts))
    return lines
