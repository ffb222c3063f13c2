"""
`select-layouts{target=gpu}` with a solver that chooses every layout together
(`transforms/onnx_to_texture/selection.py`): the problem's modelled costs, the choice of a
relayout where two readers want one tensor in different layouts, and the outputs on PoCL
against onnxruntime's under `gcd2` (and the other solvers).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from mobile_opt import pipelines
from mobile_opt.backends.opencl.executor import CompiledModel
from mobile_opt.checking import run_onnxruntime
from mobile_opt.dialects import texture
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.models.solvers import solve
from mobile_opt.transforms.onnx_to_texture.selection import TIE_NS, gpu_layout_problem
from mobile_opt.transforms.select_layouts import SelectLayoutsPass
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(20)


def _save(tmp_path, name, nodes, inputs, outputs, weights) -> str:
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array((RNG.standard_normal(s) * 0.3).astype(np.float32), n)
         for n, s in weights])
    path = tmp_path / f"{name}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return str(path)


def two_readers(tmp_path) -> str:
    """A tensor a conv (nc4hw4) and a wide MatMul (rows4) both read many times."""
    return _save(tmp_path, "two_readers", [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Conv", ["r", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("MatMul", ["r", "b"], ["m"], name="mm"),
        helper.make_node("Sigmoid", ["c"], ["y"], name="sig"),
        helper.make_node("Tanh", ["m"], ["z"], name="tanh"),
    ], [("x", [1, 8, 8, 64])], [("y", [1, 8, 8, 64]), ("z", [1, 8, 8, 64])],
        [("w", [8, 8, 3, 3]), ("b", [64, 64])])


def residual(tmp_path) -> str:
    """Conv, a residual add, a transpose into a MatMul and a Softmax."""
    return _save(tmp_path, "residual", [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Add", ["r", "x"], ["a"], name="add"),
        helper.make_node("Transpose", ["a"], ["t"], name="tr", perm=[0, 2, 3, 1]),
        helper.make_node("MatMul", ["t", "b"], ["m"], name="mm"),
        helper.make_node("Softmax", ["m"], ["s"], name="softmax", axis=-1),
        helper.make_node("Mul", ["s", "s"], ["y"], name="mul"),
    ], [("x", [1, 8, 6, 6])], [("y", [1, 6, 6, 8]), ("a", [1, 8, 6, 6])],
        [("w", [8, 8, 3, 3]), ("b", [8, 8])])


def attention(tmp_path) -> str:
    """Heads split by Reshape and Transpose, scores, softmax, heads merged back."""
    shape = helper.make_tensor("shape", TensorProto.INT64, [4], [1, 6, 2, 8])
    merged = helper.make_tensor("merged", TensorProto.INT64, [3], [1, 6, 16])
    return _save(tmp_path, "attention", [
        helper.make_node("Constant", [], ["shape"], value=shape),
        helper.make_node("Constant", [], ["merged"], value=merged),
        helper.make_node("MatMul", ["x", "wq"], ["q"], name="q"),
        helper.make_node("Reshape", ["q", "shape"], ["qh"], name="qh"),
        helper.make_node("Transpose", ["qh"], ["qt"], name="qt", perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["qh"], ["kt"], name="kt", perm=[0, 2, 3, 1]),
        helper.make_node("MatMul", ["qt", "kt"], ["sc"], name="scores"),
        helper.make_node("Softmax", ["sc"], ["p"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["p", "qt"], ["o"], name="o"),
        helper.make_node("Transpose", ["o"], ["ot"], name="ot", perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ot", "merged"], ["y"], name="y"),
    ], [("x", [1, 6, 16])], [("y", [1, 6, 16])], [("wq", [16, 16])])


def chain(tmp_path) -> str:
    """A chain (what `solver=chain` takes): conv, transpose, MatMul, softmax."""
    return _save(tmp_path, "chain", [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Transpose", ["r"], ["t"], name="tr", perm=[0, 2, 3, 1]),
        helper.make_node("MatMul", ["t", "b"], ["m"], name="mm"),
        helper.make_node("Softmax", ["m"], ["y"], name="softmax", axis=-1),
    ], [("x", [1, 8, 6, 6])], [("y", [1, 6, 6, 8])], [("w", [8, 8, 3, 3]), ("b", [8, 8])])


GRAPHS = [two_readers, residual, attention, chain]


@pytest.fixture(scope="module")
def device(pocl_device):
    """The PoCL device as the pipelines take it (skips with `pocl_device` where none is)."""
    from mobile_opt.backends.opencl.devices import choose_device

    return choose_device("pocl")


def _prepared(path: str, device):
    """The module after the GPU pipeline's passes up to select-layouts, and those after."""
    module = import_onnx(path)
    passes, _ = pipelines.gpu_pipeline(pipelines.GRAPH_PASSES, device)
    at = next(i for i, p in enumerate(passes) if isinstance(p, SelectLayoutsPass))
    pipelines.apply(module, passes[:at])
    return module, passes[at:]


def _run_checked(path: str, solver: str, device):
    """The model compiled with `solver`, run on PoCL, its outputs checked against onnxruntime's."""
    module = import_onnx(path)
    passes, _ = pipelines.gpu_pipeline(pipelines.GRAPH_PASSES, device, solver=solver)
    pipelines.apply(module, passes)
    feeds = {i.name: RNG.uniform(-1, 1, [d.dim_value for d in i.type.tensor_type.shape.dim])
             .astype(np.float32) for i in onnx.load(path).graph.input}
    got = CompiledModel(module, device).run(feeds).outputs
    for name, value in run_onnxruntime(path, feeds).items():
        np.testing.assert_allclose(got[name], value, rtol=1e-4, atol=1e-4, err_msg=name)
    return module


@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.__name__)
def test_gcd2_costs_no_more_than_local(graph, tmp_path, device):
    module, _ = _prepared(graph(tmp_path), device)
    problem = gpu_layout_problem(module)
    local = problem.problem.cost(problem.local())
    assert np.isfinite(local)
    chosen = solve(problem.problem, "gcd2")
    assert chosen.cost <= local + 1e-6
    assert chosen.cost >= solve(problem.problem, "exact").cost - 1e-6


def test_relayout_is_chosen_where_two_readers_want_two_layouts(tmp_path, device):
    """
    The local rules store the ReLU rows4 (a MatMul reads it), so the conv gathers every
    lane of its 3x3 window; a solver pays for one relayout copy instead, and says it is
    cheaper.
    """
    path = two_readers(tmp_path)
    module, _ = _prepared(path, device)
    problem = gpu_layout_problem(module)
    local = problem.problem.cost(problem.local())
    chosen = solve(problem.problem, "gcd2")
    assert chosen.cost < local
    assert any(chosen.selection[c] == 1 for c in problem.problem.copies)
    compiled = _run_checked(path, "gcd2", device)
    kernels = [op.sym_name.data for op in compiled.walk() if op.name == "ocl.kernel"]
    assert any(k.startswith("relayout") for k in kernels), kernels
    local_kernels = [op.sym_name.data for op in _run_checked(path, "local", device).walk()
                     if op.name == "ocl.kernel"]
    assert not any(k.startswith("relayout") for k in local_kernels)


@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.__name__)
@pytest.mark.parametrize("solver", ["local", "pbqp", "gcd2", "exact"])
def test_outputs_match_onnxruntime(graph, solver, tmp_path, device):
    _run_checked(graph(tmp_path), solver, device)


def test_chain_solver_outputs_match_onnxruntime_and_cost_what_exact_does(tmp_path, device):
    """`chain` solves a chain exactly (eq. 2 with the nodes' own costs) and its layouts run."""
    path = chain(tmp_path)
    module, _ = _prepared(path, device)
    problem = gpu_layout_problem(module).problem
    assert solve(problem, "chain").cost == pytest.approx(solve(problem, "exact").cost)
    _run_checked(path, "chain", device)


def test_realise_local_selection_is_the_local_rules(tmp_path, device):
    """Realising the local selection records what select-layouts{solver=local} does."""
    path = residual(tmp_path)
    by_rules, _ = _prepared(path, device)
    SelectLayoutsPass(target="gpu").apply(None, by_rules)  # type: ignore[arg-type]
    realised, _ = _prepared(path, device)
    problem = gpu_layout_problem(realised)
    problem.realise(problem.local())
    assert str(realised) == str(by_rules)
    assert not any(isinstance(op, texture.RelayoutOp) for op in realised.walk())


def test_viewable_ops_get_a_view_option(tmp_path, device, monkeypatch):
    """
    Where `movement.viewable` accepts a data-movement op, the problem offers "view" (no
    kernel: own cost 0) and `realise` records it (`texture.view`); the lowering of views
    is not here, so nothing runs.
    """
    from mobile_opt.dialects.onnx import TransposeOp
    from mobile_opt.dialects.texture.value_layouts import is_view
    from mobile_opt.transforms.onnx_to_texture import movement

    monkeypatch.setattr(movement, "viewable", lambda op: isinstance(op, TransposeOp))
    module, _ = _prepared(residual(tmp_path), device)
    problem = gpu_layout_problem(module)
    nodes = problem.problem.nodes
    views = [i for i, n in enumerate(nodes) if "view" in n.labels]
    assert [nodes[i].name for i in views] == ["node 'tr' (Transpose)"]
    (view,) = views
    # no kernel: nothing but the tie-break off the local rules' layout
    assert nodes[view].costs[nodes[view].labels.index("view")] == TIE_NS
    selection = list(problem.local())
    selection[view] = nodes[view].labels.index("view")
    problem.realise(selection)
    assert [op.name for op in module.walk() if is_view(op)] == ["onnx.Transpose"]


def test_a_profile_is_read_once_and_again_when_it_changes(tmp_path, device):
    """The selection's cost models are read once per profile file (CDMPP's cost model
    selects for every candidate layout of every node), and read again when the file
    changes: a device twice as fast to read from costs the same selection less."""
    import json
    import os

    from mobile_opt.models.device_profile import PROFILE_DIR

    module, _ = _prepared(two_readers(tmp_path), device)
    profile = json.loads((PROFILE_DIR / "pocl.json").read_text())
    path = tmp_path / "device.json"
    path.write_text(json.dumps(profile))
    first = gpu_layout_problem(module, str(path))
    assert gpu_layout_problem(module, str(path)).problem.cost(first.local()) == \
        first.problem.cost(first.local())
    for key in ("texture", "buffer"):
        profile["bandwidth_gbs"][key] *= 2
    path.write_text(json.dumps(profile))
    stamp = path.stat().st_mtime_ns
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))  # a changed file, however coarse the clock
    faster = gpu_layout_problem(module, str(path))
    assert faster.problem.cost(faster.local()) < first.problem.cost(first.local())
