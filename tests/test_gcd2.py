"""
`solve_gcd2` (models/gcd2.py) against brute force on chains, residual-block graphs and DAGs
whose shared tensors go through transformed copies (appended last, as the DSP problem
builds them), and against CP-SAT's lower bound on general graphs, those DAGs (where no
solver may report less) and a 1000-node residual graph.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mobile_opt.models.gcd2 import (
    elimination_order,
    frontier_sizes,
    gcd2_partitions,
    solve_gcd2,
)
from mobile_opt.models.pbqp import (
    PBQPProblem,
    add_shared_transform,
    brute_force,
    solve_chain,
    solve_exact,
    solve_pbqp,
)
from pbqp_graphs import SETTINGS, build, general_graphs, shared_copy_graphs


@st.composite
def chains(draw):
    n = draw(st.integers(1, 12))
    ks = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    return build(draw, ks, [(i, i + 1) for i in range(n - 1)])


@st.composite
def residual_graphs(draw, max_nodes=12):
    """A chain of blocks, each with a skip edge over 2-4 nodes; blocks may nest or overlap."""
    n = draw(st.integers(2, max_nodes))
    ks = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    pairs = [(i, i + 1) for i in range(n - 1)]
    i = 0
    while i < n - 2:
        span = draw(st.integers(2, 4))
        if i + span < n:
            pairs.append((i, i + span))
        i += draw(st.integers(1, span))
    return build(draw, ks, pairs)


def assert_cost(solution, expected):
    assert solution.cost == pytest.approx(expected) or solution.cost == expected == math.inf


@SETTINGS
@given(chains(), st.integers(1, 13))
def test_gcd2_equals_brute_force_on_chains(problem, partition):
    solution = solve_gcd2(problem, partition)
    assert solution.optimal
    assert_cost(solution, brute_force(problem).cost)


@SETTINGS
@given(residual_graphs(), st.integers(1, 13))
def test_gcd2_equals_brute_force_on_residual_graphs(problem, partition):
    solution = solve_gcd2(problem, partition)
    assert solution.optimal
    assert_cost(solution, brute_force(problem).cost)


@SETTINGS
@given(general_graphs(), st.integers(1, 13), st.sampled_from([1, 16, 1 << 16]))
def test_gcd2_exact_or_honest_on_general_graphs(problem, partition, max_states):
    """Narrow `max_states` forces the solve_pbqp fallback; `optimal` must then be earned."""
    solution = solve_gcd2(problem, partition, max_states)
    best = brute_force(problem).cost
    if solution.optimal:
        assert_cost(solution, best)
    else:
        assert solution.cost >= best


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_graphs(max_nodes=7))
def test_gcd2_never_below_exact(problem):
    exact = solve_exact(problem, time_limit=10, workers=2)
    solution = solve_gcd2(problem, 3, 16)
    assert solution.cost >= exact.lower_bound - 1e-9


@SETTINGS
@given(general_graphs(max_nodes=12, max_k=4), st.integers(1, 13))
def test_partitions_cover_in_order_with_dominant_cuts(problem, partition):
    parts = gcd2_partitions(problem, partition)
    sizes = frontier_sizes(problem)
    assert [x for p in parts for x in range(p.start, p.end + 1)] == list(
        range(len(problem.nodes))
    )
    for p in parts:
        assert p.end - p.start + 1 <= partition
        assert p.dominant == (sizes[p.end] <= 1)
    # The frontier after i, counted directly.
    for i, size in enumerate(sizes):
        crossing = {u for u, v in problem.edges if u <= i < v}
        assert size == len(crossing)


def residual_problem(n, k, seed):
    """Random costs on a chain of residual blocks, each skipping 2-4 nodes."""
    rng = np.random.default_rng(seed)
    problem = PBQPProblem()
    for _ in range(n):
        problem.add_node(rng.integers(0, 100, k).astype(float))
    i = 0
    while i < n - 1:
        span = int(rng.integers(2, 5))
        for j in range(i, min(i + span, n - 1)):
            problem.add_edge(j, j + 1, rng.integers(0, 50, (k, k)).astype(float))
        if i + span < n:
            problem.add_edge(i, i + span, rng.integers(0, 50, (k, k)).astype(float))
        i += span
    return problem


@SETTINGS
@given(shared_copy_graphs(), st.integers(1, 13))
def test_gcd2_equals_brute_force_with_shared_copies(problem, partition):
    """Copies appended last are eliminated next to their readers: still exact."""
    order = elimination_order(problem)
    assert sorted(order) == list(range(len(problem.nodes)))
    solution = solve_gcd2(problem, partition)
    assert solution.optimal
    assert_cost(solution, brute_force(problem).cost)
    assert solution.cost == problem.cost(solution.selection)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shared_copy_graphs())
def test_no_solver_below_exact_with_shared_copies(problem):
    exact = solve_exact(problem, time_limit=10, workers=2)
    found = [solve_gcd2(problem), solve_gcd2(problem, 2, 16), solve_pbqp(problem)]
    try:
        found.append(solve_chain(problem))
    except ValueError:  # not a chain
        pass
    for solution in found:
        assert solution.cost >= exact.lower_bound - 1e-9
        if exact.optimal:
            assert solution.cost >= exact.cost - 1e-9


def test_copies_move_next_to_their_readers():
    """A producer read by two consumers through copies: the copies sit just before the
    first consumer, so the frontier stays narrow (one dominant cut after the producer)."""
    problem = PBQPProblem()
    for _ in range(4):
        problem.add_node([0.0, 1.0])
    problem.add_edge(0, 1, np.zeros((2, 2)))
    add_shared_transform(problem, 1, [2, 3], [[0.0, 5.0], [5.0, 0.0]], [[0, 1], [0, 1]])
    assert elimination_order(problem) == [0, 1, 4, 5, 2, 3]
    solution = solve_gcd2(problem, 2)
    assert solution.optimal and solution.cost == brute_force(problem).cost == 0


def test_gcd2_within_one_percent_of_exact_on_1000_nodes():
    problem = residual_problem(1000, 4, seed=7)
    exact = solve_exact(problem, time_limit=20)
    solution = solve_gcd2(problem)
    assert solution.cost >= exact.lower_bound - 1e-6
    # When CP-SAT did not prove its selection optimal, compare with its bound instead.
    reference = exact.cost if exact.optimal else exact.lower_bound
    assert solution.cost <= 1.01 * reference


def test_wide_run_falls_back_and_is_not_claimed_optimal():
    # A chain, then K4 (every node three neighbours: RN must run), then a chain again.
    problem = PBQPProblem()
    for _ in range(8):
        problem.add_node([0.0, 100.0])
    pairs = [(0, 1), (1, 2)] + [(u, v) for u in range(2, 6) for v in range(u + 1, 6)]
    for u, v in pairs + [(5, 6), (6, 7)]:
        problem.add_edge(u, v, [[0.0, 1.0], [1.0, 0.0]])
    wide = solve_gcd2(problem, 13, max_states=4)
    assert not wide.optimal and wide.lower_bound is None
    assert wide.cost == brute_force(problem).cost == 0
    dense = solve_gcd2(problem, 13)
    assert dense.optimal and dense.cost == 0
