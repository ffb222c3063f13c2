"""
`select-layouts{target=dsp solver=...}` on one problem (`DspLayoutProblem`): every solver's
cost and the local rules' are costs of the same PBQP problem, whose cost of a selection is
`LocalSelection.modelled_cost` of its layouts (the chosen products' modelled cycles plus
each relayout made once). On the quantized models `gcd2` never costs more than `local` and
equals `exact` where CP-SAT proves its choice optimal; no solver costs less than `exact`'s
bound. `realise(local())` records what the local rules record, byte for byte. Models
compiled with a global solver run bit-exact in QEMU, `gcd2` in fewer packets than `local`.
"""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import onnx
import pytest

from mobile_opt.checking import quant_models
from mobile_opt import pipelines
from mobile_opt.backends.hexagon.runner import run_module
from mobile_opt.dialects.hvx.ops import RelayoutOp
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.models.solvers import solve
from mobile_opt.reference.qlinear import run_qlinear
from mobile_opt.transforms.onnx_to_hvx.quant_graph import find_function, read_quant_graph
from mobile_opt.transforms.onnx_to_hvx.selection import (
    DspLayoutProblem,
    dsp_layout_problem,
    select_dsp_layouts,
)

ZOO = sorted(glob.glob(str(Path(__file__).parent / "models" / "zoo" / "*_q*.onnx")))
BUILT = {
    "mixed_qdq": lambda: quant_models.mixed_layout_model("qdq"),
    "mixed_qlinear": lambda: quant_models.mixed_layout_model("qlinear"),
    "residual_block": lambda: quant_models.residual_block(),
    "shared_input": lambda: quant_models.int8_shared_input_conv(),
}


def _problem(path) -> DspLayoutProblem:
    function = find_function(import_onnx(str(path)), "main_graph")
    return dsp_layout_problem(function, read_quant_graph(function))


def _compare(path) -> dict[str, float]:
    problem = _problem(path)
    local = problem.local()
    costs = {"local": problem.problem.cost(local)}
    assert costs["local"] == problem.rules.modelled_cost()
    solutions = {s: solve(problem.problem, s) for s in ("pbqp", "gcd2", "exact")}
    costs.update({s: sol.cost for s, sol in solutions.items()})
    exact = solutions["exact"]
    assert costs["gcd2"] <= costs["local"], costs
    for solver, cost in costs.items():
        assert cost >= exact.lower_bound - 1e-6, (solver, costs)
    if exact.optimal:
        assert costs["gcd2"] == costs["exact"], costs
    # the layouts realised cost what the solver's selection costs
    realised = problem.realise(solutions["gcd2"].selection)
    assert realised.modelled_cost() == costs["gcd2"]
    return costs


@pytest.mark.parametrize("path", ZOO, ids=[Path(p).stem for p in ZOO])
def test_zoo_models_gcd2_no_worse_than_local_and_equal_to_exact(path):
    _compare(path)


@pytest.mark.parametrize("name", sorted(BUILT))
def test_built_models_gcd2_no_worse_than_local_and_equal_to_exact(name, tmp_path):
    path = tmp_path / f"{name}.onnx"
    onnx.save(BUILT[name](), path)
    costs = _compare(path)
    if name.startswith("mixed"):
        # local's col2 depthwise conv forces two relayouts the global choice avoids
        assert costs["gcd2"] < costs["local"], costs


def test_small_resnet_gcd2_no_worse_than_local(tmp_path):
    path = tmp_path / "resnet.onnx"
    quant_models.quantized_cnn(str(path), seed=1, reduce_range=False,
                               model=quant_models.small_resnet(1))
    _compare(path)


def test_realising_the_local_choice_records_what_the_rules_record(tmp_path):
    """`local()` as a selection, realised, prints as `select_dsp_layouts` does; the mixed
    mixed model's rules keep every op in col2, so no copy is present."""
    path = tmp_path / "mixed.onnx"
    onnx.save(quant_models.mixed_layout_model(), path)
    printed = []
    for by_rules in (True, False):
        module = import_onnx(str(path))
        function = find_function(module, "main_graph")
        graph = read_quant_graph(function)
        if by_rules:
            select_dsp_layouts(function, graph, "auto")
        else:
            problem = dsp_layout_problem(function, graph)
            local = problem.local()
            pbqp, near = problem.problem, problem.problem.neighbours()
            moved = [c for c in sorted(pbqp.copies) if local[c] and sum(
                pbqp.matrix(c, n)[1, local[n]] for n in near[c])]
            assert moved == []  # each reader alone finds moving its input too dear
            problem.realise(local)
        printed.append(str(module))
    assert printed[0] == printed[1]


@pytest.mark.usefixtures("hexagon_toolchain")
def test_gcd2_compiled_model_runs_bit_exact_in_fewer_packets(tmp_path):
    path = tmp_path / "mixed.onnx"
    onnx.save(quant_models.mixed_layout_model(), path)
    feeds = quant_models.random_inputs(onnx.load(path), 0)
    expected = run_qlinear(import_onnx(str(path)), feeds)
    packets, relayouts = {}, {}
    for solver in ("local", "gcd2"):
        module = import_onnx(str(path))
        passes = pipelines.dsp_pipeline(packing="sda", solver=solver)
        pipelines.apply(module, passes[:1])
        relayouts[solver] = sum(isinstance(op, RelayoutOp) for op in module.walk())
        pipelines.apply(module, passes[1:])
        got, execution = run_module(module, feeds, counting=True)
        for name, want in expected.items():
            assert np.unique(want).size > 1
            assert np.array_equal(got[name], want), f"{solver} {name}"
        packets[solver] = execution.total_packets
    assert relayouts == {"local": 0, "gcd2": 0}  # local: all col2; gcd2: all col4
    assert packets["gcd2"] < packets["local"], packets
    print(f"executed packets: {packets}, ratio {packets['local'] / packets['gcd2']:.3f}")


@pytest.mark.usefixtures("hexagon_toolchain")
@pytest.mark.parametrize("solver", ["pbqp", "gcd2", "exact"])
def test_small_resnet_compiled_by_a_global_solver_runs_bit_exact(solver, tmp_path):
    """MaxPool, residual Adds, GlobalAveragePool and Gemm, laid out by a global solver."""
    path = tmp_path / "resnet.onnx"
    quant_models.quantized_cnn(str(path), seed=1, reduce_range=False,
                               model=quant_models.small_resnet(1))
    feeds = quant_models.random_inputs(onnx.load(path), 0)
    expected = run_qlinear(import_onnx(str(path)), feeds)
    module = import_onnx(str(path))
    pipelines.apply(module, pipelines.dsp_pipeline(packing="sda", solver=solver))
    got, _ = run_module(module, feeds)
    for name, want in expected.items():
        assert np.unique(want).size > 1
        assert np.array_equal(got[name], want), name


def _float_chain() -> onnx.ModelProto:
    """conv 3x3 + relu, depthwise 3x3 + relu, conv 1x1: a chain, as `solver=chain` needs."""
    rng = np.random.default_rng(3)
    nodes, inits, x = [], [], "x"
    for i, (cin, cout, k, group) in enumerate([(8, 16, 3, 1), (16, 16, 3, 16), (16, 8, 1, 1)]):
        w = rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / (cin // group * k * k))
        inits.append(onnx.numpy_helper.from_array(w.astype(np.float32), f"w{i}"))
        nodes.append(onnx.helper.make_node("Conv", [x, f"w{i}"], [f"c{i}"], name=f"conv{i}",
                                           pads=[k // 2] * 4, group=group))
        nodes.append(onnx.helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}"))
        x = f"r{i}"
    graph = onnx.helper.make_graph(
        nodes, "chain", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT,
                                                            [1, 8, 12, 12])],
        [onnx.helper.make_tensor_value_info(x, onnx.TensorProto.FLOAT, [1, 8, 12, 12])], inits)
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])


@pytest.mark.usefixtures("hexagon_toolchain")
def test_chain_solver_on_a_chain_costs_what_exact_does_and_runs_bit_exact(tmp_path):
    path = tmp_path / "chain.onnx"
    quant_models.quantized_cnn(str(path), seed=3, reduce_range=False, model=_float_chain())
    problem = _problem(path).problem
    assert solve(problem, "chain").cost == solve(problem, "exact").cost
    feeds = quant_models.random_inputs(onnx.load(path), 0)
    expected = run_qlinear(import_onnx(str(path)), feeds)
    module = import_onnx(str(path))
    pipelines.apply(module, pipelines.dsp_pipeline(packing="sda", solver="chain"))
    got, _ = run_module(module, feeds)
    for name, want in expected.items():
        assert np.unique(want).size > 1
        assert np.array_equal(got[name], want), name
