"""
FlashMem's overlap planner (`models/flashmem.py`): plans on random problems pass the
independent checker within their budget; on problems small enough to list every plan, the
solver's plan is the best one the checker's replay finds; the checker rejects each kind of
broken plan; budgets below what works fail with one line naming the layer; each fallback
tier is reached; and plans survive the trip through the `stream` dialect's attributes.
"""

from __future__ import annotations

import dataclasses
import itertools
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.parser import Parser

from mobile_opt.dialects.stream import STREAM, Decision, SolverStatus, WeightPlanAttr
from mobile_opt.models import flashmem
from mobile_opt.models.flashmem import (
    MB,
    BudgetError,
    Layer,
    OpClass,
    Plan,
    PlanError,
    Problem,
    Weight,
    WeightPlan,
    baselines,
    check,
    compare,
    cost,
    least_budget,
    load_capacity,
    load_next_layer,
    op_class,
    plan,
    plan_attributes,
    preload_all,
    replay,
    same_type_prefetch,
    weight_plans,
)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LIMIT = 10.0
"""CP-SAT's time limit in these tests; the problems are small enough to prove well within it."""
WORKERS = 4


@st.composite
def problems(draw, max_layers=12, max_weights=10, max_chunks=12, capacities=True,
             weights_of_objective=True):
    n = draw(st.integers(3, max_layers))
    chunk = draw(st.sampled_from([256, 1000, 1024]))
    layers = [
        Layer(f"L{layer}", draw(st.sampled_from(list(OpClass))), draw(st.integers(0, 6000)),
              draw(st.one_of(st.none(), st.integers(0, 6))) if capacities else None)
        for layer in range(1, n + 1)
    ]
    weights = []
    for j in range(draw(st.integers(2, max_weights))):
        first = draw(st.integers(1, n))
        last = draw(st.integers(first, n))
        size = draw(st.integers(1, max_chunks * chunk))
        weights.append(Weight(f"w{j}", size, first, last))
    lam = draw(st.sampled_from([0.0, 0.01, 0.3, 1.0])) if weights_of_objective else 0.0
    mu = draw(st.sampled_from([0.0, 0.01, 0.5, 2.0])) if weights_of_objective else 0.0
    return Problem(layers, weights, 1, chunk, lam, mu)


def with_budget(problem: Problem, budget: int) -> Problem:
    return dataclasses.replace(problem, budget_bytes=budget)


def draw_budget(draw, problem: Problem) -> tuple[Problem, flashmem.LeastBudget]:
    """A budget between the least that works and what preloading everything holds."""
    least = least_budget(problem, LIMIT, WORKERS)
    top = max(least.least, preload_all(problem).peak)
    return with_budget(problem, draw(st.integers(least.least, top))), least


def over(problem: Problem, p: Plan) -> int:
    return sum(replay(problem, p).over_capacity.values())


# Plans on random problems ----------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_plans_fit_their_budget_and_move_every_chunk(data):
    problem, _ = draw_budget(data.draw, data.draw(problems()))
    p = plan(problem, LIMIT, WORKERS)
    r = check(problem, p)
    assert p.peak == r.peak <= problem.budget_bytes
    for w in problem.weights:
        assert sum(p.weights[w.name].moves.values()) == problem.chunks(w)
    assert p.status in (SolverStatus.OPTIMAL, SolverStatus.FEASIBLE, SolverStatus.HEURISTIC)
    assert p.tier in (1, 2) and p.source.startswith("cp-sat")
    assert (p.tier == 1) == (not p.relaxed)
    if p.tier == 1:
        assert not r.over_capacity


@SETTINGS
@given(st.data())
def test_the_least_budget_works_and_one_byte_less_does_not(data):
    problem = data.draw(problems(max_layers=8, max_weights=6))
    least = least_budget(problem, LIMIT, WORKERS)
    assume(least.exact)
    assert least.need <= least.least
    check(with_budget(problem, least.least), plan(with_budget(problem, least.least), LIMIT,
                                                   WORKERS))
    with pytest.raises(BudgetError, match=r"^budget \d+\.\d\d MB is below [^\n]*MB\)?$"):
        plan(with_budget(problem, least.least - 1), LIMIT, WORKERS)


@SETTINGS
@given(st.data())
def test_without_capacities_the_least_peak_is_the_least_budget(data):
    """With λ = μ = 0 and no C3 the optimal plan's peak is the least budget, and so no
    baseline holds less."""
    problem = data.draw(problems(capacities=False, weights_of_objective=False))
    problem, least = draw_budget(data.draw, problem)
    p = plan(problem, LIMIT, WORKERS)
    assume(p.status is SolverStatus.OPTIMAL and least.exact)
    assert p.tier == 1
    assert p.peak == least.least
    for name, b in baselines(problem).items():
        assert p.peak <= b.peak, name


@SETTINGS
@given(st.data())
def test_the_plan_beats_each_baseline_that_fits(data):
    """
    What an OPTIMAL plan guarantees against any plan that fits the same budget (a baseline
    here): no more chunks over C3 (none in tier 1), and, at the same excess, no higher cost;
    with λ = μ = 0 the cost is the peak.
    """
    problem, _ = draw_budget(data.draw, data.draw(problems()))
    p = plan(problem, LIMIT, WORKERS)
    assume(p.status is SolverStatus.OPTIMAL)
    scores = compare(problem, p)
    assert scores["flashmem"].fits and scores["flashmem"].peak == p.peak
    for name, b in baselines(problem).items():
        if not scores[name].fits:
            continue
        assert over(problem, p) <= over(problem, b), name
        if over(problem, p) == over(problem, b):
            assert cost(problem, p) <= cost(problem, b), name
            if problem.lambda_ == problem.mu == 0:
                assert p.peak <= b.peak, name


def test_flashmem_beats_both_naive_baselines_on_an_example():
    """
    conv2's 16-chunk weight: Always-Next moves it whole while add1 runs (16 chunks staged,
    over add1's capacity of 10), Same-Op-Type while conv1 runs, beside conv1's large
    activations (each with a ring of 16 staging buffers); preloading holds it beside them
    too, with one buffer. FlashMem moves 8 chunks in each of relu1 and add1 through a ring
    of 8: 1000 + 16000 + 8000 + k1's 2000 (preloaded, so kept) = 27000 bytes, within
    capacity.
    """
    layers = [Layer("conv1", OpClass.REUSABLE, 10000, 10),
              Layer("relu1", OpClass.ELEMENTAL, 1000, 10),
              Layer("add1", OpClass.ELEMENTAL, 1000, 10), Layer("conv2", OpClass.REUSABLE, 1000, 10)]
    weights = [Weight("k1", 2000, 1, 1), Weight("k2", 16000, 4, 4)]
    problem = Problem(layers, weights, 64000, 1000, 0.0, 0.0)
    p = plan(problem, LIMIT, WORKERS)
    assert p.tier == 1 and p.status is SolverStatus.OPTIMAL
    assert p.weights["k2"] == WeightPlan(2, {2: 8, 3: 8}) and p.peak == 27000
    scores = compare(problem, p)
    assert (scores["load-next-layer"].peak, scores["same-type-prefetch"].peak,
            scores["preload-all"].peak) == (35000, 44000, 29000)
    for name in ("load-next-layer", "same-type-prefetch"):
        assert scores["flashmem"].peak < scores[name].peak, name
        assert scores["flashmem"].over_capacity == 0 < scores[name].over_capacity, name


def test_lambda_prices_preloading():
    """One 10-chunk weight read by layer 2: preloaded it holds 11 chunks at layer 0; streamed
    over layer 1, 20 (itself and its staging). λ = 1 adds its 10 chunks to preloading."""
    layers = [Layer("first"), Layer("second")]
    problem = Problem(layers, [Weight("w", 10000, 2, 2)], 64000, 1000, 0.0, 0.0)
    assert plan(problem, LIMIT, WORKERS).weights["w"] == WeightPlan(0, {0: 10})
    costly = dataclasses.replace(problem, lambda_=1.0)
    p = plan(costly, LIMIT, WORKERS)
    assert p.weights["w"] == WeightPlan(1, {1: 10}) and cost(costly, p) == 20000


def test_mu_prices_loading_early():
    """A 16-chunk weight read by layer 4 (N = 4), preloading priced out by λ: loaded at layer
    1 it holds 16000 + 6000 at most, at layer 3, 32000. μ = 3 charges 3 · 16000 · (4 - z) / 4
    for loading at z, which makes loading at layer 3 the cheapest."""
    layers = [Layer(f"L{layer}") for layer in range(1, 5)]
    problem = Problem(layers, [Weight("w", 16000, 4, 4)], 64000, 1000, 1.0, 0.0)
    p = plan(problem, LIMIT, WORKERS)
    assert p.weights["w"].load == 1 and p.peak == 22000
    late = dataclasses.replace(problem, mu=3.0)
    p = plan(late, LIMIT, WORKERS)
    assert p.weights["w"] == WeightPlan(3, {3: 16}) and cost(late, p) == 32000 + 12000


# The solver against every plan of small problems ------------------------------------------


def compositions(total: int, parts: int):
    """Every way to write `total` as `parts` counts, the first at least 1."""
    if parts == 1:
        if total >= 1:
            yield (total,)
        return
    for head in range(1, total + 1):
        for rest in itertools.product(range(total - head + 1), repeat=parts - 1):
            if sum(rest) == total - head:
                yield (head, *rest)


def every_plan(problem: Problem):
    """Every plan whose weights load at their first move (any other plan holds more)."""
    options = []
    for w in problem.weights:
        chunks = problem.chunks(w)
        mine = [WeightPlan(0, {0: chunks})]
        for z in range(1, w.first_use):
            for counts in compositions(chunks, w.first_use - z):
                mine.append(WeightPlan(z, {z + k: c for k, c in enumerate(counts) if c}))
        options.append(mine)
    for choice in itertools.product(*options):
        yield {w.name: wp for w, wp in zip(problem.weights, choice)}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_layers=5, max_weights=3, max_chunks=3), st.integers(1, 30000))
def test_the_plan_is_the_best_of_every_plan(problem, budget):
    """Listing every plan and replaying it with the checker's replay: a fitting plan with
    no chunk over C3 means tier 1, of the least cost; else the least excess, then the least
    cost at it (tier 2); no fitting plan at all means BudgetError."""
    problem = with_budget(problem, budget)
    fitting = []
    for weights in every_plan(problem):
        r = replay(problem, weights)
        if r.peak <= budget:
            fitting.append((sum(r.over_capacity.values()), flashmem._scaled_cost(problem, weights)))
    if not fitting:
        with pytest.raises(BudgetError):
            plan(problem, LIMIT, WORKERS)
        return
    p = plan(problem, LIMIT, WORKERS)
    check(problem, p)
    assert p.status is SolverStatus.OPTIMAL
    best = min(fitting)
    assert p.tier == (1 if best[0] == 0 else 2)
    assert (over(problem, p), flashmem._scaled_cost(problem, p)) == best


# The checker, one rule at a time ---------------------------------------------------------


def small() -> tuple[Problem, Plan]:
    """Four layers; `a` read by layer 1 (preloaded), `b` streamed over layers 1-2."""
    layers = [Layer(f"L{layer}", OpClass.ELEMENTAL, 100, 3) for layer in range(1, 5)]
    weights = [Weight("a", 2000, 1, 2), Weight("b", 4000, 3, 4)]
    problem = Problem(layers, weights, 20000, 1000, 0.0, 0.0)
    weights_plan = {"a": WeightPlan(0, {0: 2}), "b": WeightPlan(1, {1: 2, 2: 2})}
    return problem, flashmem._make(problem, weights_plan, SolverStatus.OPTIMAL, "test", 1, False)


def broken(p: Plan, **weights: WeightPlan | None) -> Plan:
    """`p` with some weights' plans replaced (None: dropped), its peak left as it was."""
    new = {**p.weights, **weights}
    return dataclasses.replace(p, weights={k: v for k, v in new.items() if v is not None})


def test_the_unbroken_plan_passes():
    problem, p = small()
    r = check(problem, p)
    # layer 1: activations 100, a 2000, b 4000 (loaded whole), a ring of 2 staging buffers
    # a, preloaded, stays after its last use at layer 2
    assert r.resident == (4000, 8100, 8100, 8100, 8100)
    assert r.staging == (2000,) * 5 and r.ring == 2


@pytest.mark.parametrize(("change", "message"), [
    ({"b": None}, "no entry for weight 'b'"),
    ({"c": WeightPlan(0, {0: 1})}, "weight 'c', which the problem does not"),
    ({"b": WeightPlan(1, {1: 2, 2: 1})}, r"weight 'b' moves 3 chunks in all, not its T\(w\) = 4"),
    ({"b": WeightPlan(1, {1: 4, 2: 0})}, "weight 'b' moves 0 chunks at layer 2"),
    ({"a": WeightPlan(0, {0: 1, 1: 1})}, "weight 'a' is preloaded but moves chunks at layer 1"),
    ({"a": WeightPlan(1, {1: 2})}, "weight 'a' is read by layer 1, so it is preloaded"),
    ({"b": WeightPlan(3, {3: 4})}, "weight 'b' loads at layer 3; .* from 1 to 2"),
    ({"b": WeightPlan(2, {1: 2, 2: 2})},
     r"weight 'b' moves chunks at layer 1, before its load at layer 2 \(C1\)"),
    ({"b": WeightPlan(1, {1: 2, 3: 2})},
     "weight 'b' moves chunks at layer 3, not before its first use at layer 3"),
])
def test_the_checker_rejects_a_weight_plan(change, message):
    problem, p = small()
    with pytest.raises(PlanError, match=message):
        check(problem, broken(p, **change))


def test_the_checker_holds_capacity_unless_relaxed():
    problem, p = small()
    moved = broken(p, b=WeightPlan(2, {2: 4}))
    fixed = dataclasses.replace(moved, peak=replay(problem, moved).peak)
    with pytest.raises(PlanError, match=r"layer 2 \('L2'\) moves 4 chunks, over its load "
                                        r"capacity of 3 \(C3\)"):
        check(problem, fixed)
    assert check(problem, dataclasses.replace(fixed, relaxed=True)).over_capacity == {2: 1}


def test_the_checker_holds_the_budget():
    problem, p = small()
    with pytest.raises(PlanError, match=r"layer 1 \('L1'\) holds 8100 bytes, over the budget "
                                        r"of 8099 \(C2\)"):
        check(with_budget(problem, 8099), p)
    check(with_budget(problem, 8100), p)


def test_the_checker_holds_the_recorded_peak():
    problem, p = small()
    with pytest.raises(PlanError, match="records a peak of 8000 bytes, but it holds 8100 at "
                                        r"layer 1 \('L1'\)"):
        check(problem, dataclasses.replace(p, peak=8000))


# Bad input -------------------------------------------------------------------------------


def test_a_budget_below_a_layers_own_need_names_it():
    layers = [Layer("stem", OpClass.REUSABLE, 2 * MB), Layer("big", OpClass.REUSABLE, 6 * MB),
              Layer("head", OpClass.ELEMENTAL, MB)]
    weights = [Weight("w1", 3 * MB, 1, 1), Weight("w2", 4 * MB, 2, 3)]
    problem = Problem(layers, weights, 9 * MB, MB // 4)
    # 'big' holds its 6 MB of activations, w1 (read by layer 1, so preloaded, and kept),
    # w2 and one staging buffer
    message = ("budget 9.00 MB is below what layer 'big' needs alone: 13.25 MB (the least "
               "budget that works is 13.25 MB)")
    with pytest.raises(BudgetError, match=f"^{re.escape(message)}$"):
        plan(problem, LIMIT, WORKERS)


def test_a_budget_above_every_layers_need_can_still_be_too_small():
    """One weight read at layer 2: layer 2 needs 11 MB (it and one staging buffer), but the
    weight is resident beside layer 1's 5 MB too: preloaded with one buffer, 16 MB; streamed
    over layer 1 through a ring of 10, 25 MB. 16 MB is the least."""
    layers = [Layer("first", OpClass.ELEMENTAL, 5 * MB), Layer("second", OpClass.REUSABLE)]
    problem = Problem(layers, [Weight("w", 10 * MB, 2, 2)], 12 * MB, MB)
    message = ("budget 12.00 MB is below the least budget that works, 16.00 MB; layer "
               "'second' alone needs 11.00 MB")
    with pytest.raises(BudgetError, match=f"^{re.escape(message)}$"):
        plan(problem, LIMIT, WORKERS)
    assert plan(with_budget(problem, 16 * MB), LIMIT, WORKERS).weights["w"].preloaded


@SETTINGS
@given(problems(max_layers=8, max_weights=6))
def test_a_budget_below_the_largest_need_names_that_layer(problem):
    needs = flashmem._needs(problem)
    assume(max(needs) > 1)
    layer = needs.index(max(needs))
    name = problem.layer_name(layer)
    with pytest.raises(BudgetError, match=f"below what layer '{re.escape(name)}' needs alone"):
        plan(with_budget(problem, max(needs) - 1), LIMIT, WORKERS)


@pytest.mark.parametrize(("weights", "message"), [
    ([Weight("w", 10, 2, 1)], "1 <= first <= last <= 2"),
    ([Weight("w", 10, 1, 3)], "1 <= first <= last <= 2"),
    ([Weight("w", 0, 1, 1)], "needs bytes > 0"),
    ([Weight("w", 10, 1, 1), Weight("w", 10, 2, 2)], "weight names repeat"),
])
def test_malformed_problems_are_rejected(weights, message):
    layers = [Layer("a"), Layer("b")]
    with pytest.raises(ValueError, match=message):
        Problem(layers, weights, 100, 10)


# Tiers -----------------------------------------------------------------------------------


def capacity_bound() -> Problem:
    """
    No layer may move a chunk (C3 = 0), so with C3 both weights are preloaded, holding
    21000 bytes with one staging buffer; the budget of 20500 forces streaming both (a
    preloaded weight stays all run): each moves whole while the layer before its reader
    runs, through a ring of 10 buffers, 20000 bytes at layers 1 and 3.
    """
    layers = [Layer(f"L{layer}", OpClass.HIERARCHICAL, 0, 0) for layer in range(1, 5)]
    weights = [Weight("a", 10000, 2, 2), Weight("b", 10000, 4, 4)]
    return Problem(layers, weights, 20500, 1000, 0.0, 0.0)


def test_capacity_too_small_relaxes_c3():
    problem = capacity_bound()
    p = plan(problem, LIMIT, WORKERS)
    assert (p.tier, p.source, p.relaxed, p.status) == (2, "cp-sat, C3 relaxed", True,
                                                       SolverStatus.OPTIMAL)
    r = check(problem, p)
    assert p.weights["a"] == WeightPlan(1, {1: 10}) and p.weights["b"] == WeightPlan(3, {3: 10})
    assert sum(r.over_capacity.values()) == 20
    with pytest.raises(PlanError, match="C3"):
        check(problem, dataclasses.replace(p, relaxed=False))


def failing_unless_forced(monkeypatch, forced_at_least: int):
    """Make every solve with fewer than `forced_at_least` forced preloads find nothing, as
    a timed-out CP-SAT would."""
    real = flashmem._solve
    calls = []

    def solve(problem, relaxed, forced, *rest):
        calls.append((relaxed, tuple(forced)))
        if len(forced) < forced_at_least:
            return flashmem._Solved("unknown")
        return real(problem, relaxed, forced, *rest)

    monkeypatch.setattr(flashmem, "_solve", solve)
    return calls


def test_a_timed_out_solver_preloads_the_largest_weight(monkeypatch):
    problem = with_budget(capacity_bound(), 40000)
    problem = dataclasses.replace(problem, weights=[*problem.weights, Weight("c", 3000, 3, 4)])
    calls = failing_unless_forced(monkeypatch, 1)
    p = plan(problem, LIMIT, WORKERS)
    assert calls == [(False, ()), (True, ()), (True, ("a",))]  # largest, then by name
    assert (p.tier, p.forced, p.status) == (3, ("a",), SolverStatus.FEASIBLE)
    assert p.weights["a"].preloaded
    check(problem, p)


def test_when_every_solve_fails_the_greedy_plan_is_used(monkeypatch):
    problem = with_budget(capacity_bound(), 40000)
    calls = failing_unless_forced(monkeypatch, 99)
    p = plan(problem, LIMIT, WORKERS)
    assert len(calls) == 4  # tiers 1 and 2, then tier 3 forcing `a`, then `b`
    assert (p.tier, p.source, p.status) == (4, "greedy", SolverStatus.HEURISTIC)
    check(problem, p)


def test_when_the_greedy_plan_does_not_fit_either_planning_fails(monkeypatch):
    problem = capacity_bound()
    failing_unless_forced(monkeypatch, 99)
    monkeypatch.setattr(flashmem, "greedy", lambda problem, window=None: preload_all(problem))
    with pytest.raises(PlanError, match="no plan within the budget of 0.02 MB was found"):
        plan(problem, LIMIT, WORKERS)


@SETTINGS
@given(st.data())
def test_the_greedy_plan_passes_the_checker_when_it_fits(data):
    problem, _ = draw_budget(data.draw, data.draw(problems()))
    g = flashmem.greedy(problem)
    r = replay(problem, g)
    assert g.peak == r.peak and g.relaxed == bool(r.over_capacity)
    if g.peak <= problem.budget_bytes:
        check(problem, g)


# Baselines -------------------------------------------------------------------------------


@SETTINGS
@given(problems())
def test_the_baselines_are_the_papers(problem):
    nxt, same, everything = (load_next_layer(problem), same_type_prefetch(problem),
                             preload_all(problem))
    for w in problem.weights:
        chunks = problem.chunks(w)
        assert nxt.weights[w.name] == WeightPlan(w.first_use - 1, {w.first_use - 1: chunks})
        assert everything.weights[w.name] == WeightPlan(0, {0: chunks})
        load = same.weights[w.name].load
        cls = problem.layers[w.first_use - 1].op_class
        between = [problem.layers[j - 1].op_class for j in range(load + 1, w.first_use)]
        assert cls not in between
        assert load == 0 or problem.layers[load - 1].op_class == cls
        assert same.weights[w.name].moves == {load: chunks}
    for b in (nxt, same, everything):
        assert replay(problem, b).peak == b.peak


# Capacity classes (§4.2) -----------------------------------------------------------------


def test_load_capacity_follows_the_op_classes():
    assert op_class("MatMul") is OpClass.REUSABLE and op_class("Relu") is OpClass.ELEMENTAL
    assert op_class("Softmax") is OpClass.HIERARCHICAL
    assert op_class("SomethingNew") is OpClass.HIERARCHICAL
    assert load_capacity(OpClass.REUSABLE, 100 * 1024, 1024) == 20
    assert load_capacity(OpClass.ELEMENTAL, 100 * 1024, 1024) == 300
    assert load_capacity(OpClass.HIERARCHICAL, 100 * 1024, 1024) == 0


# Attributes ------------------------------------------------------------------------------


def parse(text: str):
    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(STREAM)
    return Parser(ctx, text).parse_attribute()


@SETTINGS
@given(st.data())
def test_plans_round_trip_through_the_stream_attributes(data):
    problem, _ = draw_budget(data.draw, data.draw(problems()))
    p = plan(problem, LIMIT, WORKERS)
    head, attrs = plan_attributes(problem, p)
    head.verify()
    assert (head.chunk.data, head.budget.data, head.layers.data, head.status.data) == (
        problem.chunk_bytes, problem.budget_bytes, problem.n, p.status)
    assert parse(str(head)) == head
    parsed = {}
    for w in problem.weights:
        attr = attrs[w.name]
        attr.verify()
        assert attr.chunks.data == problem.chunks(w) and attr.use.data == w.first_use
        expected = Decision.PRELOAD if p.weights[w.name].preloaded else Decision.STREAM
        assert attr.decision.data is expected
        parsed[w.name] = parse(str(attr))
        assert isinstance(parsed[w.name], WeightPlanAttr) and parsed[w.name] == attr
    back = weight_plans(parsed)
    assert back == dict(p.weights)
    assert check(problem, dataclasses.replace(p, weights=back)).peak == p.peak
