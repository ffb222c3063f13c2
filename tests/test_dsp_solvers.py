"""
`select-layouts{target=dsp solver=local|pbqp|exact}` scored by one function
(`LocalSelection.modelled_cost`: the chosen products' modelled cycles plus each relayout
made): on the quantized models, `pbqp` never costs more than `local`, and equals `exact`
where CP-SAT proves its choice optimal; no solver costs less than a proven `exact`. A
model compiled with `solver=pbqp` runs bit-exact in QEMU, in fewer packets than `local`.
"""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import onnx
import pytest

import quant_models
from mobile_opt import pipelines
from mobile_opt.backends.hexagon.runner import run_module
from mobile_opt.dialects.hvx.ops import RelayoutOp
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.reference.qlinear import run_qlinear
from mobile_opt.transforms.onnx_to_hvx.geometry import GraphGeometry
from mobile_opt.transforms.onnx_to_hvx.quant_graph import find_function, read_quant_graph
from mobile_opt.transforms.onnx_to_hvx.selection import GlobalSelection, make_selection

ZOO = sorted(glob.glob(str(Path(__file__).parent / "models" / "zoo" / "*_q*.onnx")))
BUILT = {
    "mixed_qdq": lambda: quant_models.mixed_layout_model("qdq"),
    "mixed_qlinear": lambda: quant_models.mixed_layout_model("qlinear"),
    "residual_block": lambda: quant_models.residual_block(),
    "shared_input": lambda: quant_models.int8_shared_input_conv(),
}


def _costs(path) -> dict:
    selections = {}
    for solver in ("local", "pbqp", "exact"):
        graph = read_quant_graph(find_function(import_onnx(str(path)), "main_graph"))
        selections[solver] = make_selection(graph, "auto", solver)
    return selections


def _compare(path) -> dict[str, int]:
    selections = _costs(path)
    costs = {s: sel.modelled_cost() for s, sel in selections.items()}
    exact = selections["exact"].solution
    # exact's problem models shared moves exactly: its objective is the modelled cost
    assert exact.cost == costs["exact"]
    assert costs["pbqp"] <= costs["local"], costs
    if exact.optimal:
        assert costs["exact"] <= min(costs.values()), costs
        assert costs["pbqp"] == costs["exact"], costs
    return costs


@pytest.mark.parametrize("path", ZOO, ids=[Path(p).stem for p in ZOO])
def test_zoo_models_pbqp_no_worse_than_local_and_equal_to_exact(path):
    _compare(path)


@pytest.mark.parametrize("name", sorted(BUILT))
def test_built_models_pbqp_no_worse_than_local_and_equal_to_exact(name, tmp_path):
    path = tmp_path / f"{name}.onnx"
    onnx.save(BUILT[name](), path)
    costs = _compare(path)
    if name.startswith("mixed"):
        # local's col2 depthwise conv forces two relayouts the global choice avoids
        assert costs["pbqp"] < costs["local"], costs


def test_small_resnet_pbqp_no_worse_than_local(tmp_path):
    path = tmp_path / "resnet.onnx"
    quant_models.quantized_cnn(str(path), seed=1, reduce_range=False,
                               model=quant_models.small_resnet(1))
    _compare(path)


def test_shared_copies_are_exact_and_per_reader_moves_an_upper_bound(tmp_path):
    """The mixed model's x and h are each read by two products: with shared copies the
    PBQP objective is the modelled cost; charging each reader its own move counts a
    shared relayout twice, so it is never below."""
    path = tmp_path / "mixed.onnx"
    onnx.save(quant_models.mixed_layout_model(), path)
    for copies in (True, False):
        graph = read_quant_graph(find_function(import_onnx(str(path)), "main_graph"))
        selection = GlobalSelection(GraphGeometry(graph), "auto", solver="pbqp",
                                    shared_copies=copies)
        selection.choose()
        problem, _, _ = selection.problem()
        assert len(problem.nodes) > len(graph.nodes) + len(graph.inputs) if copies else \
            len(problem.nodes) == len(graph.nodes) + len(graph.inputs)
        assert selection.solution.cost >= selection.modelled_cost()


@pytest.mark.usefixtures("hexagon_toolchain")
def test_pbqp_compiled_model_runs_bit_exact_in_fewer_packets(tmp_path):
    path = tmp_path / "mixed.onnx"
    onnx.save(quant_models.mixed_layout_model(), path)
    feeds = quant_models.random_inputs(onnx.load(path), 0)
    expected = run_qlinear(import_onnx(str(path)), feeds)
    packets, relayouts = {}, {}
    for solver in ("local", "pbqp"):
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
    assert relayouts == {"local": 2, "pbqp": 0}
    assert packets["pbqp"] < packets["local"], packets
    print(f"executed packets: {packets}, ratio {packets['local'] / packets['pbqp']:.3f}")


@pytest.mark.usefixtures("hexagon_toolchain")
@pytest.mark.parametrize("solver", ["pbqp", "exact"])
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
