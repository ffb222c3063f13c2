"""Random PBQP problems for the solver tests (`test_pbqp.py`, `test_gcd2.py`)."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from mobile_opt.models.pbqp import PBQPProblem

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
