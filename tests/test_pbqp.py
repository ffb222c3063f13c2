"""
The PBQP solvers of `models/pbqp.py` against brute force on random graphs: chains for the
dynamic program, series-parallel graphs for the reductions, general graphs for CP-SAT.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mobile_opt.models.pbqp import (
    PBQPProblem,
    add_shared_transform,
    brute_force,
    solve_chain,
    solve_exact,
    solve_pbqp,
)
from pbqp_graphs import SETTINGS, build, costs, general_graphs


@st.composite
def chains(draw):
    n = draw(st.integers(1, 8))
    ks = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    order = draw(st.permutations(range(n)))
    # Some links twice, in either direction: both are summed.
    pairs = []
    for a, b in itertools.pairwise(order):
        pairs += [(a, b)] * draw(st.integers(1, 2))
        if draw(st.booleans()):
            pairs.append((b, a))
    return build(draw, ks, pairs)


@st.composite
def series_parallel(draw):
    """
    A two-terminal series-parallel graph grown from one edge 0-1: each step either splits
    an edge in series (s-t becomes s-m-t) or adds a parallel path s-m-t beside it, and
    sometimes a parallel copy of an edge.
    """
    n = draw(st.integers(2, 12))
    edges = [(0, 1)]
    for m in range(2, n):
        i = draw(st.integers(0, len(edges) - 1))
        s, t = edges[i]
        if draw(st.booleans()):
            edges[i : i + 1] = [(s, m), (m, t)]
        else:
            edges += [(s, m), (m, t)]
        if draw(st.integers(0, 3)) == 0:
            edges.append(edges[draw(st.integers(0, len(edges) - 1))])
    ks = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    if math.prod(ks) > 1 << 22:
        ks = [min(k, 3) for k in ks]
    return build(draw, ks, edges)


def assert_same_cost(solution, expected):
    assert solution.cost == pytest.approx(expected.cost)
    assert solution.cost == solution.cost  # not nan


@SETTINGS
@given(chains())
def test_chain_equals_brute_force(problem):
    solution = solve_chain(problem)
    assert solution.optimal
    assert_same_cost(solution, brute_force(problem))
    assert solution.cost == problem.cost(solution.selection)


@SETTINGS
@given(series_parallel())
def test_pbqp_equals_brute_force_on_series_parallel(problem):
    solution = solve_pbqp(problem)
    assert solution.optimal
    assert_same_cost(solution, brute_force(problem))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_graphs())
def test_exact_equals_brute_force(problem):
    best = brute_force(problem)
    solution = solve_exact(problem, time_limit=10)
    assert solution.optimal
    assert_same_cost(solution, best)
    assert solution.lower_bound <= best.cost + 1e-9


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_graphs(max_nodes=12, max_k=4))
def test_no_solver_below_exact(problem):
    exact = solve_exact(problem, time_limit=10)
    heuristic = solve_pbqp(problem)
    assert heuristic.cost >= exact.lower_bound - 1e-9
    if exact.optimal and math.isfinite(exact.cost):
        assert heuristic.cost >= exact.cost - 1e-6 * max(1.0, abs(exact.cost))
    if heuristic.optimal:
        assert heuristic.cost == pytest.approx(exact.cost)
    try:
        chain = solve_chain(problem)
    except ValueError:
        return
    assert chain.cost == pytest.approx(exact.cost)


def test_pbqp_heuristic_is_not_claimed_optimal():
    # K4: every node has three neighbours, so RN must run.
    problem = PBQPProblem()
    for _ in range(4):
        problem.add_node([0.0, 100.0])
    for u, v in itertools.combinations(range(4), 2):
        problem.add_edge(u, v, [[0.0, 1.0], [1.0, 0.0]])
    solution = solve_pbqp(problem)
    assert not solution.optimal
    # RN takes the locally cheapest option, which here is the optimum: all zeros.
    assert solution.selection == brute_force(problem).selection == (0, 0, 0, 0)


def test_exact_scales_fractional_costs():
    problem = PBQPProblem()
    problem.add_node([1.0, 1.0 - 1e-5])
    problem.add_node([0.3, 0.30001])
    problem.add_edge(0, 1, [[0.0, 0.0], [0.0, 0.0]])
    best = brute_force(problem)
    assert best.selection == (1, 0)
    assert solve_exact(problem).selection == best.selection
    # Rounded to whole units the two are tied; the bound still holds, less the slack.
    coarse = solve_exact(problem, scale=1.0)
    assert coarse.lower_bound <= best.cost <= coarse.cost


def test_chain_rejects_branches_and_cycles():
    problem = PBQPProblem()
    for _ in range(4):
        problem.add_node([0.0])
    for v in (1, 2, 3):
        problem.add_edge(0, v, [[0.0]])
    with pytest.raises(ValueError, match="not a chain: node 0 .* 3 neighbours"):
        solve_chain(problem)
    cycle = PBQPProblem()
    for _ in range(3):
        cycle.add_node([0.0])
    for u, v in ((0, 1), (1, 2), (2, 0)):
        cycle.add_edge(u, v, [[0.0]])
    with pytest.raises(ValueError, match="cycle"):
        solve_chain(cycle)


def test_edges_between_one_pair_are_summed():
    problem = PBQPProblem()
    a = problem.add_node([0.0, 0.0])
    b = problem.add_node([0.0, 0.0, 0.0])
    problem.add_edge(a, b, [[1, 2, 3], [4, 5, 6]])
    problem.add_edge(b, a, [[10, 40], [20, 50], [30, 60]])
    assert problem.cost((1, 2)) == 66
    assert problem.matrix(b, a)[2, 1] == 66


@st.composite
def shared_tensors(draw):
    """A producer, its consumers, and what each option writes and reads."""
    layouts = draw(st.integers(1, 3))
    kp = draw(st.integers(1, 3))
    consumers = draw(st.integers(1, 3))
    kc = draw(st.lists(st.integers(1, 3), min_size=consumers, max_size=consumers))
    writes = draw(st.lists(st.integers(0, layouts - 1), min_size=kp, max_size=kp))
    reads = [draw(st.lists(st.integers(0, layouts - 1), min_size=k, max_size=k)) for k in kc]
    transform = np.array(
        [[0 if w == l else draw(st.integers(1, 20)) for l in range(layouts)] for w in writes],
        dtype=float,
    )
    own = [costs(draw, (k,)) for k in [kp, *kc]]
    return transform, reads, own


@SETTINGS
@given(shared_tensors())
def test_shared_transform_is_paid_once_per_layout(case):
    transform, reads, own = case
    problem = PBQPProblem()
    producer = problem.add_node(own[0])
    consumers = [problem.add_node(c) for c in own[1:]]
    add_shared_transform(problem, producer, consumers, transform, reads)

    # The cost model stated directly: own costs plus one transform per distinct layout read.
    expected = math.inf
    for a in range(len(own[0])):
        for bs in itertools.product(*(range(len(c)) for c in own[1:])):
            needed = {reads[i][b] for i, b in enumerate(bs)}
            total = own[0][a] + sum(own[i + 1][b] for i, b in enumerate(bs))
            total += sum(transform[a, layout] for layout in needed)
            expected = min(expected, total)
    assert brute_force(problem).cost == pytest.approx(expected)
    assert solve_exact(problem).cost == pytest.approx(expected)
    assert solve_pbqp(problem).cost >= expected - 1e-9


def test_bad_problems_are_refused():
    problem = PBQPProblem()
    with pytest.raises(ValueError, match="at least one option"):
        problem.add_node([])
    with pytest.raises(ValueError, match="numbers or"):
        problem.add_node([float("nan")])
    a = problem.add_node([0.0, 1.0])
    with pytest.raises(ValueError, match="itself"):
        problem.add_edge(a, a, [[0.0, 0.0], [0.0, 0.0]])
    b = problem.add_node([0.0])
    with pytest.raises(ValueError, match="2x1 matrix"):
        problem.add_edge(a, b, [[0.0, 0.0]])


def test_empty_and_infeasible_problems():
    empty = PBQPProblem()
    for solve in (brute_force, solve_chain, solve_pbqp, solve_exact):
        assert solve(empty).cost == 0.0
    infeasible = PBQPProblem()
    infeasible.add_node([math.inf, 1.0])
    infeasible.add_node([0.0])
    infeasible.add_edge(0, 1, [[0.0], [math.inf]])
    for solve in (brute_force, solve_chain, solve_pbqp, solve_exact):
        assert solve(infeasible).cost == math.inf
