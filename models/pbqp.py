"""
The selection problem of GCD² (§IV.A) as a Partitioned Boolean Quadratic Problem, and its
solvers.

A node is an op with `k` options (execution plans: an instruction and its layouts, or a
texture layout); its cost vector holds each option's own cost, `math.inf` where the option
is infeasible. An edge (u, v) is a tensor from producer u to consumer v; its matrix
`[k_u x k_v]` holds the cost of transforming u's output under u's option into what v's option
reads (0 where they agree). The cost of a selection (one option per node) is the sum of the
chosen node costs and the chosen edge entries; a solver looks for the cheapest one.

Nothing here knows a target: the GPU and DSP passes build the costs (through `CostModel`)
and read back the selection.

Solvers, each `solve_<name>(problem) -> Solution`:
- `solve_chain`: the dynamic program of eq. 2 on chains, plus each node's own cost.
- `solve_pbqp`: reductions R0, RI, RII (exact on series-parallel graphs) and the RN
  heuristic, then back-propagation.
- `solve_exact`: CP-SAT, with a time limit and a proven lower bound.
- `brute_force`: every selection, for tests on small graphs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass
class PBQPNode:
    """An op and the own cost of each of its options (`math.inf`: infeasible)."""

    name: str
    costs: np.ndarray
    labels: tuple[str, ...] = ()
    """What each option is (a layout, an instruction), for explanations; may be empty."""

    def label(self, option: int) -> str:
        return self.labels[option] if option < len(self.labels) else f"option {option}"


@dataclass
class PBQPProblem:
    """
    Nodes 0..n-1 and edges between them. Edges are stored once per unordered pair, under
    the key (u, v) with u < v and a matrix indexed [option of u, option of v]; adding a
    second edge between the same pair adds its matrix to the first.
    """

    nodes: list[PBQPNode] = field(default_factory=list)
    edges: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)
    copies: set[int] = field(default_factory=set)
    """The transformed-copy nodes `add_shared_transform` added."""

    def add_node(self, costs: Sequence[float], name: str | None = None,
                 labels: Sequence[str] = ()) -> int:
        """Add an op with the own cost (and optionally the label) of each option; returns
        its index."""
        vector = np.array(costs, dtype=float).reshape(-1)
        if vector.size == 0:
            raise ValueError("a node needs at least one option")
        if np.isnan(vector).any() or (vector == -math.inf).any():
            raise ValueError("node costs must be numbers or +inf")
        if labels and len(labels) != vector.size:
            raise ValueError(f"{len(labels)} labels for {vector.size} options")
        index = len(self.nodes)
        self.nodes.append(
            PBQPNode(name if name is not None else f"n{index}", vector, tuple(labels)))
        return index

    def add_edge(self, u: int, v: int, matrix: Sequence[Sequence[float]] | np.ndarray):
        """Add the transform costs `matrix[option of u][option of v]` between u and v."""
        if u == v:
            raise ValueError(f"edge from node {u} to itself")
        m = np.array(matrix, dtype=float)
        if m.shape != (self.options(u), self.options(v)):
            raise ValueError(
                f"edge ({u}, {v}) needs a {self.options(u)}x{self.options(v)} matrix, "
                f"got {m.shape}"
            )
        if np.isnan(m).any() or (m == -math.inf).any():
            raise ValueError("edge costs must be numbers or +inf")
        if u > v:
            u, v, m = v, u, m.T
        key = (u, v)
        self.edges[key] = self.edges[key] + m if key in self.edges else m

    def options(self, node: int) -> int:
        """How many options `node` has."""
        return self.nodes[node].costs.size

    def matrix(self, u: int, v: int) -> np.ndarray:
        """The summed edge matrix indexed [option of u, option of v] (zeros if no edge)."""
        if u < v:
            m = self.edges.get((u, v))
            return m if m is not None else np.zeros((self.options(u), self.options(v)))
        return self.matrix(v, u).T

    def reordered(self, order: Sequence[int]) -> PBQPProblem:
        """The same problem with node `order[i]` as node i."""
        position = {node: i for i, node in enumerate(order)}
        result = PBQPProblem()
        for node in order:
            spec = self.nodes[node]
            result.add_node(spec.costs, spec.name, spec.labels)
        for (u, v), matrix in self.edges.items():
            result.add_edge(position[u], position[v], matrix)
        result.copies = {position[c] for c in self.copies}
        return result

    def neighbours(self) -> list[set[int]]:
        """Each node's neighbours, edge direction forgotten."""
        result: list[set[int]] = [set() for _ in self.nodes]
        for u, v in self.edges:
            result[u].add(v)
            result[v].add(u)
        return result

    def cost(self, selection: Sequence[int]) -> float:
        """The total cost of one option per node."""
        if len(selection) != len(self.nodes):
            raise ValueError(f"{len(selection)} options chosen for {len(self.nodes)} nodes")
        total = sum(float(n.costs[s]) for n, s in zip(self.nodes, selection))
        total += sum(float(m[selection[u], selection[v]]) for (u, v), m in self.edges.items())
        return total


def add_shared_transform(
    problem: PBQPProblem,
    producer: int,
    consumers: Sequence[int],
    transform: Sequence[Sequence[float]] | np.ndarray,
    reads: Sequence[Sequence[int]],
    layouts: Sequence[str] = (),
) -> list[int]:
    """
    Connect one tensor, read by several consumers, so that each layout it is needed in is
    made once, however many consumers read it in that layout.

    `transform[a][l]` is the cost of turning the producer's output under its option `a`
    into layout `l` (0 where option `a` already writes `l`). `reads[i][b]` is the layout
    that option `b` of `consumers[i]` reads this tensor in; `layouts` names the layouts
    (the copies are named after them).

    One transformed-copy node is added per layout `l` some consumer can read, with two
    options, absent (0) and present (1). Its edge from the producer costs `transform[a][l]`
    when present; its edge to each consumer forbids (inf) a consumer option reading `l`
    while the copy is absent. Each needed copy is so paid for once, and a copy in the
    producer's own layout is free. Returns the copy nodes, in layout order.
    """
    t = np.array(transform, dtype=float)
    if t.ndim != 2 or t.shape[0] != problem.options(producer):
        raise ValueError(f"transform needs {problem.options(producer)} rows, got {t.shape}")
    if len(reads) != len(consumers):
        raise ValueError("one `reads` row per consumer")
    copies = []
    for layout in range(t.shape[1]):
        readers = [
            (c, r) for c, r in zip(consumers, reads) if any(x == layout for x in r)
        ]
        if not readers:
            continue
        into = layouts[layout] if layout < len(layouts) else str(layout)
        name = f"{problem.nodes[producer].name} in {into}"
        copy = problem.add_node([0.0, 0.0], name, ("absent", "present"))
        problem.add_edge(producer, copy, np.stack([np.zeros(t.shape[0]), t[:, layout]], 1))
        for consumer, row in readers:
            if len(row) != problem.options(consumer):
                raise ValueError(f"`reads` of node {consumer} needs one layout per option")
            absent = [math.inf if x == layout else 0.0 for x in row]
            problem.add_edge(copy, consumer, [absent, [0.0] * len(row)])
        copies.append(copy)
    problem.copies.update(copies)
    return copies


@dataclass(frozen=True)
class Solution:
    """A selection (one option per node), its total cost, and what is proven about it."""

    selection: tuple[int, ...]
    cost: float
    optimal: bool
    """True when the solver proved that no selection costs less."""
    lower_bound: float | None = None
    """A proven bound below every selection's cost, where the solver gives one."""


def _solution(problem: PBQPProblem, selection: Sequence[int], optimal: bool) -> Solution:
    selection = tuple(int(s) for s in selection)
    cost = problem.cost(selection)
    return Solution(selection, cost, optimal, cost if optimal else None)


def brute_force(problem: PBQPProblem, limit: int = 1 << 24) -> Solution:
    """Try every selection (at most `limit` of them), a slice of nodes at once in numpy."""
    n = len(problem.nodes)
    ks = [problem.options(i) for i in range(n)]
    if math.prod(ks) > limit:
        raise ValueError(f"{math.prod(ks)} selections is more than brute force tries")
    # The last nodes are broadcast, the first ones enumerated.
    split = n
    while split > 0 and math.prod(ks[split - 1 :]) <= 1 << 18:
        split -= 1
    inner = list(range(split, n))
    shape = [ks[i] for i in inner]

    def axis(i: int) -> list[int]:
        s = [1] * len(inner)
        s[i - split] = ks[i]
        return s

    best, best_sel = math.inf, None
    for outer in itertools.product(*(range(k) for k in ks[:split])):
        acc = np.zeros(shape)
        for i in range(split):
            acc += problem.nodes[i].costs[outer[i]]
        for i in inner:
            acc += problem.nodes[i].costs.reshape(axis(i))
        for (u, v), m in problem.edges.items():
            if v < split:
                acc += m[outer[u], outer[v]]
            elif u < split:
                acc += m[outer[u], :].reshape(axis(v))
            else:
                s = [1] * len(inner)
                s[u - split], s[v - split] = ks[u], ks[v]
                acc += m.reshape(s)
        flat = int(np.argmin(acc))
        if best_sel is None or acc.flat[flat] < best:
            best = float(acc.flat[flat])
            best_sel = outer + tuple(int(x) for x in np.unravel_index(flat, shape))
    return _solution(problem, best_sel or (0,) * n, True)


def _path_orders(problem: PBQPProblem) -> list[list[int]]:
    """Each connected component as a path from one end, or ValueError if one is not."""
    nbrs = problem.neighbours()
    for node, ns in enumerate(nbrs):
        if len(ns) > 2:
            raise ValueError(
                f"not a chain: node {node} ({problem.nodes[node].name}) has "
                f"{len(ns)} neighbours"
            )
    seen: set[int] = set()
    paths = []
    for start in range(len(nbrs)):
        if start in seen or len(nbrs[start]) == 2:
            continue
        path, prev, node = [start], None, start
        while True:
            nxt = [x for x in nbrs[node] if x != prev]
            if not nxt:
                break
            prev, node = node, nxt[0]
            path.append(node)
        seen.update(path)
        paths.append(path)
    if len(seen) != len(nbrs):
        cycle = min(set(range(len(nbrs))) - seen)
        raise ValueError(f"not a chain: node {cycle} ({problem.nodes[cycle].name}) is on a cycle")
    return paths


def solve_chain(problem: PBQPProblem) -> Solution:
    """
    Eq. 2 of GCD² on a chain (each component a path), with each node's own cost added:
    Sol(i, j) = cost_i[j] + min_l (Sol(i-1, l) + TC_{i-1,i}[l, j]). O(|V| k²).
    """
    selection = [0] * len(problem.nodes)
    for path in _path_orders(problem):
        sol = problem.nodes[path[0]].costs.copy()
        back = []
        for prev, node in itertools.pairwise(path):
            through = sol[:, None] + problem.matrix(prev, node)
            back.append(np.argmin(through, axis=0))
            sol = problem.nodes[node].costs + through.min(axis=0)
        choice = int(np.argmin(sol))
        for node, arg in zip(reversed(path), reversed([None, *back])):
            selection[node] = choice
            if arg is not None:
                choice = int(arg[choice])
    return _solution(problem, selection, True)


def solve_pbqp(problem: PBQPProblem) -> Solution:
    """
    Reduce the graph node by node, then choose options in the reverse order:
    - R0, a node without neighbours: its cheapest option;
    - RI, one neighbour y: fold the node's best cost for each option of y into y's vector;
    - RII, two neighbours y, z: fold it into the (y, z) matrix, made if absent;
    - RN, when every node has three or more neighbours: fix the node of most neighbours to
      the option cheapest counting each neighbour's best reply, and add its row to the
      neighbours' vectors. This is the only inexact step.
    R0, RI and RII keep the optimum, so the result is optimal if RN never ran, which holds
    on series-parallel graphs.
    """
    costs = [n.costs.copy() for n in problem.nodes]
    edges = {key: m.copy() for key, m in problem.edges.items()}
    nbrs = problem.neighbours()
    live = set(range(len(costs)))

    def mat(u: int, v: int) -> np.ndarray:
        return edges[(u, v)] if u < v else edges[(v, u)].T

    def drop(x: int):
        for y in nbrs[x]:
            nbrs[y].discard(x)
            edges.pop((min(x, y), max(x, y)))
        live.discard(x)

    # (node, neighbours at reduction, vector, their matrices) or (node, fixed option)
    steps: list[tuple] = []
    heuristic = False
    while live:
        x = min(live, key=lambda i: (len(nbrs[i]), i))
        ys = sorted(nbrs[x])
        if len(ys) == 1:
            (y,) = ys
            m = mat(x, y)
            costs[y] = costs[y] + (costs[x][:, None] + m).min(axis=0)
            steps.append((x, ys, costs[x], [m]))
        elif len(ys) == 2:
            y, z = ys
            my, mz = mat(x, y), mat(x, z)
            delta = (costs[x][:, None, None] + my[:, :, None] + mz[:, None, :]).min(axis=0)
            key = (y, z)
            edges[key] = edges[key] + delta if key in edges else delta
            nbrs[y].add(z)
            nbrs[z].add(y)
            steps.append((x, ys, costs[x], [my, mz]))
        elif len(ys) == 0:
            steps.append((x, ys, costs[x], []))
        else:
            heuristic = True
            x = max(live, key=lambda i: (len(nbrs[i]), -i))
            local = costs[x].copy()
            for y in nbrs[x]:
                local += (mat(x, y) + costs[y][None, :]).min(axis=1)
            option = int(np.argmin(local))
            for y in nbrs[x]:
                costs[y] = costs[y] + mat(x, y)[option]
            steps.append((x, option))
        drop(x)

    selection = [0] * len(costs)
    for step in reversed(steps):
        if len(step) == 2:
            selection[step[0]] = step[1]
            continue
        x, ys, vector, ms = step
        total = vector.copy()
        for y, m in zip(ys, ms):
            total += m[:, selection[y]]
        selection[x] = int(np.argmin(total))
    return _solution(problem, selection, not heuristic)


def solve_exact(
    problem: PBQPProblem,
    time_limit: float = 60.0,
    scale: float | None = None,
    workers: int = 8,
) -> Solution:
    """
    Solve with CP-SAT: one Boolean per node option with exactly one per node true, and per
    edge one Boolean per finite matrix entry whose row and column sums equal the two
    nodes' Booleans (so it is true exactly when both ends take those options). Infeasible
    (inf) options and entries get no Boolean.

    CP-SAT needs integers: every cost is rounded to a multiple of 1/scale. By default scale
    makes the largest finite cost 2**20, so the result is within
    (terms / 2) / scale of the optimum, terms being the node and edge costs summed; the
    reported lower bound has that slack taken off. `Solution.cost` is the exact float cost of
    the selection found.

    `workers` is CP-SAT's portfolio size, not a core count: with 8 (its LP-based workers
    included) it proved a 1000-node residual-like graph optimal in 2 s on 2 cores, where
    1 or 2 workers did not within 15 s.
    """
    from ortools.sat.python import cp_model

    finite = [n.costs[np.isfinite(n.costs)] for n in problem.nodes]
    finite += [m[np.isfinite(m)] for m in problem.edges.values()]
    largest = max((float(np.abs(f).max()) for f in finite if f.size), default=0.0)
    if scale is None:
        scale = (1 << 20) / largest if largest > 0 else 1.0

    model = cp_model.CpModel()
    objective = []
    xs = []
    for i, node in enumerate(problem.nodes):
        row = []
        for j, c in enumerate(node.costs):
            if math.isinf(c):
                row.append(None)
                continue
            b = model.new_bool_var(f"x{i}_{j}")
            row.append(b)
            objective.append(round(c * scale) * b)
        model.add_exactly_one([b for b in row if b is not None])
        xs.append(row)
    for (u, v), m in problem.edges.items():
        ys = {}
        for a, b in itertools.product(range(m.shape[0]), range(m.shape[1])):
            if xs[u][a] is None or xs[v][b] is None or math.isinf(m[a, b]):
                continue
            y = model.new_bool_var(f"y{u}_{v}_{a}_{b}")
            ys[a, b] = y
            objective.append(round(m[a, b] * scale) * y)
        for a, x in enumerate(xs[u]):
            if x is not None:
                model.add(sum(y for (r, _), y in ys.items() if r == a) == x)
        for b, x in enumerate(xs[v]):
            if x is not None:
                model.add(sum(y for (_, c), y in ys.items() if c == b) == x)
    model.minimize(sum(objective))

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = workers
    status = solver.solve(model)
    if status == cp_model.INFEASIBLE:
        # Every selection costs inf; any one is optimal.
        return Solution(tuple([0] * len(xs)), math.inf, True, math.inf)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(f"CP-SAT found no selection within {time_limit} s")
    selection = [next(j for j, b in enumerate(row) if b is not None and solver.value(b))
                 for row in xs]
    slack = 0.5 * (len(problem.nodes) + len(problem.edges)) / scale
    bound = solver.best_objective_bound / scale - slack
    return Solution(
        tuple(selection), problem.cost(selection), status == cp_model.OPTIMAL, bound
    )
