"""models/explain.py and models/solvers.py on small problems whose answers are known."""

import math

import pytest

from mobile_opt.models.explain import explain
from mobile_opt.models.pbqp import PBQPProblem, add_shared_transform
from mobile_opt.models.solvers import SOLVERS, solve


def _problem() -> PBQPProblem:
    """a (x: 1, y: 4) feeds b (x: 5, y: 0) and c (x: 0, y: 3); moving x<->y costs 2."""
    p = PBQPProblem()
    a = p.add_node([1, 4], "a", ("x", "y"))
    b = p.add_node([5, 0], "b", ("x", "y"))
    c = p.add_node([0, 3], "c", ("x", "y"))
    move = [[0, 2], [2, 0]]
    p.add_edge(a, b, move)
    p.add_edge(a, c, move)
    return p


def test_explain_names_choice_runner_up_transforms_and_totals():
    p = _problem()
    best = solve(p, "exact")
    # a=x, b=y (pays the move, 2), c=x: 1 + 0 + 0 + 2 = 3
    assert best.selection == (0, 1, 0) and best.cost == 3
    lines = explain(p, best.selection, {"exact": best, "chain": "not a chain", "local": 7.0},
                    "cycles")
    rows = {line.split()[0]: line.split() for line in lines[1:4]}
    # a: chosen x (1 + 2 to b), runner-up y (4 + 0 to b + 2 to c)
    assert rows["a"] == ["a", "x", "3", "y", "6"]
    assert rows["b"] == ["b", "y", "2", "x", "5"]
    assert "transforms kept: 1" in lines
    assert "  a (x) -> b (y): 2" in lines
    assert lines[-1] == "total cycles: exact 3 (optimal), chain - (not a chain), local 7"


def test_explain_reports_shared_copies_as_transforms():
    p = PBQPProblem()
    a = p.add_node([0, 9], "a", ("x", "y"))
    b = p.add_node([9, 0], "b", ("x", "y"))
    c = p.add_node([9, 0], "c", ("x", "y"))
    add_shared_transform(p, a, [b, c], [[0, 2], [2, 0]], [[0, 1], [0, 1]], ["x", "y"])
    s = solve(p, "gcd2")
    assert s.cost == 2  # one copy of a into y serves both readers
    lines = explain(p, s.selection, {"gcd2": s}, "ns")
    assert not any(line.startswith("a in y") for line in lines)
    assert "  copy a in y (from x): 2" in lines


@pytest.mark.parametrize("solver", [s for s in SOLVERS if s != "local"])
def test_every_solver_solves_the_example(solver):
    assert solve(_problem(), solver).cost == pytest.approx(3)


def test_unknown_solver_is_an_error():
    with pytest.raises(ValueError, match="no solver 'local'"):
        solve(_problem(), "local")


def test_infinite_cost_prints_inf():
    p = PBQPProblem()
    p.add_node([math.inf, 1], "only", ("bad", "good"))
    lines = explain(p, (1,), {"pbqp": solve(p, "pbqp")}, "ns")
    assert lines[1].split() == ["only", "good", "1", "bad", "inf"]
