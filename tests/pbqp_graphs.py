"""Random PBQP problems for the solver tests (`test_pbqp.py`, `test_gcd2.py`)."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from mobile_opt.models.pbqp import PBQPProblem, add_shared_transform

SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def costs(draw, shape):
    """Small integer costs (ties are likely) with some infeasible entries."""
    size = int(np.prod(shape))
    values = draw(st.lists(st.integers(0, 9), min_size=size, max_size=size))
    infs = draw(st.lists(st.integers(0, 9), min_size=size, max_size=size))
    out = np.array(values, dtype=float).reshape(shape)
    out[np.array(infs).reshape(shape) == 0] = math.inf
    return out


def build(draw, ks, pairs):
    problem = PBQPProblem()
    for k in ks:
        problem.add_node(costs(draw, (k,)))
    for u, v in pairs:
        problem.add_edge(u, v, costs(draw, (ks[u], ks[v])))
    return problem


@st.composite
def general_graphs(draw, max_nodes=8, max_k=3):
    n = draw(st.integers(1, max_nodes))
    ks = draw(st.lists(st.integers(1, max_k), min_size=n, max_size=n))
    # Dense enough that reductions get stuck and RN runs.
    density = draw(st.sampled_from([0.3, 0.6, 0.9]))
    pairs = [
        pair
        for pair in itertools.combinations(range(n), 2)
        if draw(st.floats(0, 1)) < density
    ]
    return build(draw, ks, pairs)


@st.composite
def shared_copy_graphs(draw, max_ops=7, max_k=3, max_layouts=3):
    """A DAG of ops (edges only forward, so node order is topological) in which some
    tensors read by two or more consumers go through `add_shared_transform`'s copies
    (appended last, as the DSP problem builds them); the other edges are plain."""
    n = draw(st.integers(2, max_ops))
    ks = draw(st.lists(st.integers(1, max_k), min_size=n, max_size=n))
    consumers = {
        u: [v for v in range(u + 1, n) if v == u + 1 or draw(st.floats(0, 1)) < 0.35]
        for u in range(n - 1)
    }
    shared = {u for u, vs in consumers.items() if len(vs) > 1 and draw(st.booleans())}
    pairs = [(u, v) for u, vs in consumers.items() if u not in shared for v in vs]
    problem = build(draw, ks, pairs)
    for u in sorted(shared):
        layouts = draw(st.integers(1, max_layouts))
        reads = [
            draw(st.lists(st.integers(0, layouts - 1), min_size=ks[v], max_size=ks[v]))
            for v in consumers[u]
        ]
        add_shared_transform(problem, u, consumers[u], costs(draw, (ks[u], layouts)), reads)
    return problem
