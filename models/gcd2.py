"""
GCD²'s cost-optimal partitioning (§IV.B) on a `PBQPProblem`.

The node order is taken as the graph's topological order (producers before consumers), as
the passes build it, except that transformed copies, which `add_shared_transform` appends
last, are moved to just before their first reader (`elimination_order`); any order is
correct, but cuts are only found where that order makes
the graph narrow. The *frontier* after position i is the set of nodes at or before i with
an edge to a node after i.

- A *dominant cut* is a position whose frontier is one node (or none): every edge crossing
  it touches that node, e.g. a single-predecessor consumer or the join of a residual block.
  Between dominant cuts the problem splits exactly: given the cut node's option, both sides
  are independent.
- A run between dominant cuts longer than `partition` nodes is split by *complementary
  cuts* at its narrowest positions (smallest frontier), so that each partition has at most
  `partition` nodes.

Each partition is solved exactly by eliminating its nodes in order, keeping the best cost
of every joint option of the frontier (k^|frontier| states); the partitions are stitched by
carrying that table across each cut, so the result is exact whenever the tables stay under
`max_states`. A run between dominant cuts whose table would not is solved instead by
`solve_pbqp` once per option pair of its two boundary nodes; the result is then claimed
optimal only if every such solve was (RII is exact on series-parallel runs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mobile_opt.models.pbqp import PBQPProblem, Solution, solve_pbqp


@dataclass(frozen=True)
class Partition:
    """Nodes `start..end` (inclusive); `dominant`: the cut after `end` is dominant."""

    start: int
    end: int
    dominant: bool


def _last_neighbour(problem: PBQPProblem) -> list[int]:
    """Each node's highest-numbered neighbour (itself if none is higher)."""
    last = list(range(len(problem.nodes)))
    for u, v in problem.edges:
        last[u] = max(last[u], v)
    return last


def frontier_sizes(problem: PBQPProblem) -> list[int]:
    """The frontier's size after each position 0..n-1."""
    n = len(problem.nodes)
    delta = [0] * (n + 1)
    for u, last in enumerate(_last_neighbour(problem)):
        delta[u] += 1
        delta[last] -= 1
    sizes, running = [], 0
    for i in range(n):
        running += delta[i]
        sizes.append(running)
    return sizes


def gcd2_partitions(problem: PBQPProblem, partition: int = 13) -> list[Partition]:
    """Dominant cuts first, then complementary cuts so no partition exceeds `partition`."""
    if partition < 1:
        raise ValueError("a partition holds at least one node")
    sizes = frontier_sizes(problem)
    dominant = [i for i, s in enumerate(sizes) if s <= 1]
    result = []
    start = 0
    for end in dominant:
        # Complementary cuts: within each window of `partition` nodes, the latest of the
        # narrowest positions.
        while end - start + 1 > partition:
            window = range(start, start + partition)
            cut = min(window, key=lambda i: (sizes[i], -i))
            result.append(Partition(start, cut, False))
            start = cut + 1
        result.append(Partition(start, end, True))
        start = end + 1
    return result


class _TooWide(Exception):
    pass


def _eliminate(problem, last, factor, axes, nodes, records, max_states):
    """
    Add `nodes` (in order) to the factor `factor` over the options of `axes`, and
    min out each node once its last neighbour is in. Appends ("node", x, remaining axes,
    argmin table) records for back-propagation. Raises _TooWide past `max_states`.
    """
    for v in nodes:
        if factor.size * problem.options(v) > max_states:
            raise _TooWide
        factor = factor[..., None] + problem.nodes[v].costs
        axes = [*axes, v]
        for u in axes[:-1]:
            if (min(u, v), max(u, v)) in problem.edges:
                shape = [1] * len(axes)
                shape[axes.index(u)] = problem.options(u)
                shape[-1] = problem.options(v)
                factor = factor + problem.matrix(u, v).reshape(shape)
        for x in [a for a in axes if last[a] <= v]:
            i = axes.index(x)
            moved = np.moveaxis(factor, i, -1)
            arg = np.argmin(moved, axis=-1)
            factor = np.take_along_axis(moved, arg[..., None], -1)[..., 0]
            axes = axes[:i] + axes[i + 1 :]
            records.append(("node", x, list(axes), arg))
    return factor, axes


def _fallback(problem, last, factor, axes, start, end, records):
    """
    Solve nodes start..end with `solve_pbqp`, once per option p of the entry cut node
    (axes, at most one) and q of the exit cut node. Returns the factor over the exit node
    and whether every solve was optimal.
    """
    exits = [x for x in range(start, end + 1) if last[x] > end] + [
        a for a in axes if last[a] > end
    ]
    assert len(axes) <= 1 and len(exits) <= 1
    members = sorted(set(axes) | set(range(start, end + 1)))
    index = {x: i for i, x in enumerate(members)}
    ps = range(problem.options(axes[0])) if axes else [None]
    qs = range(problem.options(exits[0])) if exits else [None]
    table = np.full((len(ps), len(qs)), math.inf)
    chosen: dict[tuple, tuple[int, ...]] = {}
    optimal = True
    for p in ps:
        for q in qs:
            sub = PBQPProblem()
            for x in members:
                # The entry node's own cost is already in `factor`.
                c = np.zeros(problem.options(x)) if axes and x == axes[0] else None
                c = problem.nodes[x].costs.copy() if c is None else c
                for fixed, o in ((axes[0] if axes else None, p), (exits[0] if exits else None, q)):
                    if x == fixed:
                        keep = c[o]
                        c[:] = math.inf
                        c[o] = keep
                sub.add_node(c)
            for (u, v), m in problem.edges.items():
                if u in index and v in index and not (u in axes and v in axes):
                    sub.add_edge(index[u], index[v], m)
            s = solve_pbqp(sub)
            optimal &= s.optimal
            table[p or 0, q or 0] = s.cost
            chosen[p or 0, q or 0] = s.selection
    total = np.asarray(factor).reshape(-1, 1) + table
    arg = np.argmin(total, axis=0)
    records.append(("run", axes[0] if axes else None, exits[0] if exits else None, arg,
                    members, chosen))
    return total.min(axis=0).reshape([len(qs)] if exits else []), exits, optimal


def solve_gcd2(
    problem: PBQPProblem, partition: int = 13, max_states: int = 1 << 16
) -> Solution:
    """
    GCD²(partition): cut at dominant and complementary cuts (`gcd2_partitions`), solve each
    partition exactly conditioned on the options of the nodes crossing its cuts, stitch.
    `optimal` is True unless a run too wide for `max_states` states needed a heuristic
    `solve_pbqp` step. Runs in O(n · k^(w+1)) for frontier width w. Nodes are eliminated
    in `elimination_order` (the transformed copies moved next to their readers); the
    selection is returned in the problem's own indices.
    """
    order = elimination_order(problem)
    if order != list(range(len(problem.nodes))):
        inner = _solve(problem.reordered(order), partition, max_states)
        selection = [0] * len(order)
        for position, node in enumerate(order):
            selection[node] = inner.selection[position]
        cost = problem.cost(selection)
        return Solution(tuple(selection), cost, inner.optimal, cost if inner.optimal else None)
    return _solve(problem, partition, max_states)


def elimination_order(problem: PBQPProblem) -> list[int]:
    """
    The problem's nodes with each transformed copy (`problem.copies`, appended last by
    `add_shared_transform`) moved to just before its first consumer: its first neighbour
    after its producer, its lowest-numbered neighbour. There the copy joins the frontier
    only while its readers are being eliminated, not from its producer to the end.
    """
    nbrs = problem.neighbours()
    before: dict[int, list[int]] = {}
    late = []
    for copy in sorted(problem.copies):
        others = sorted(x for x in nbrs[copy] if x not in problem.copies)
        if len(others) >= 2:
            before.setdefault(others[1], []).append(copy)
        else:
            late.append(copy)
    order = []
    for node in range(len(problem.nodes)):
        if node not in problem.copies:
            order += before.get(node, [])
            order.append(node)
    return order + late


def _solve(problem: PBQPProblem, partition: int, max_states: int) -> Solution:
    """`solve_gcd2` in the problem's own node order."""
    n = len(problem.nodes)
    last = _last_neighbour(problem)
    parts = gcd2_partitions(problem, partition)
    records: list[tuple] = []
    factor, axes = np.zeros(()), []
    optimal = True
    run: list[Partition] = []
    for part in parts:
        run.append(part)
        if not part.dominant:
            continue
        # A run of partitions between two dominant cuts, stitched exactly.
        start, end = run[0].start, run[-1].end
        trial: list[tuple] = []
        try:
            new = factor, axes
            for p in run:
                new = _eliminate(problem, last, *new, range(p.start, p.end + 1), trial,
                                 max_states)
            factor, axes = new
        except _TooWide:
            trial = []
            factor, axes, exact = _fallback(problem, last, factor, axes, start, end, trial)
            optimal &= exact
        records += trial
        run = []

    selection = [0] * n
    for record in reversed(records):
        if record[0] == "node":
            _, x, rest, arg = record
            selection[x] = int(arg[tuple(selection[a] for a in rest)])
        else:
            _, entry, exit_, arg, members, chosen = record
            q = selection[exit_] if exit_ is not None else 0
            p = int(arg[q])
            for x, o in zip(members, chosen[p, q]):
                selection[x] = o
    cost = problem.cost(selection)
    return Solution(tuple(selection), cost, optimal, cost if optimal else None)
