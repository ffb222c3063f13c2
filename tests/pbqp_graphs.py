"""Random PBQP problems for the solver tests (`test_pbqp.py`, `test_gcd2.py`)."""

from __future__ import annotations

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
