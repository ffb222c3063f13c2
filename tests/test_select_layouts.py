"""
`select-layouts{target=gpu}` and `onnx-to-texture`'s obedience: layouts recorded other
than the local rules would record, and an explicit `texture.relayout`, are realised by
the lowering (the storage it allocates says so) and still compute what onnxruntime
computes (on PoCL).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import InsertPoint, Rewriter

from mobile_opt import pipelines
from mobile_opt.backends.opencl.devices import choose_device
from mobile_opt.backends.opencl.executor import CompiledModel
from mobile_opt.checking import run_onnxruntime
from mobile_opt.dialects import texture
from mobile_opt.dialects.texture import Layout
from mobile_opt.dialects.texture.value_layouts import record_layout, recorded_layout
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.reference.interpreter import describe_location
from mobile_opt.transforms.select_layouts import SelectLayoutsPass
from mobile_opt.transforms.texture_tile import TextureTilePass

RNG = np.random.default_rng(3)


def _save(tmp_path, nodes, inputs, outputs, weights) -> str:
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(RNG.standard_normal(s).astype(np.float32), n)
         for n, s in weights])
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    return str(path)


def _node(module: ModuleOp, name: str):
    return next(op for op in module.walk() if describe_location(op.location) == name)


def _compile_and_check(path: str, module: ModuleOp, edit, device) -> ModuleOp:
    """
    The GPU pipeline with `edit` run on the module right after select-layouts (the
    kernel configurations stay the lowering's: texture-tile models the local layouts);
    its outputs on PoCL checked against onnxruntime's.
    """
    passes, _ = pipelines.gpu_pipeline("", device)
    at = next(i for i, p in enumerate(passes) if isinstance(p, SelectLayoutsPass))
    before = [p for p in passes[:at + 1] if not isinstance(p, TextureTilePass)]
    pipelines.apply(module, before)
    edit(module)
    pipelines.apply(module, passes[at + 1:])
    feeds = {i.name: RNG.uniform(-1, 1, [d.dim_value for d in i.type.tensor_type.shape.dim])
             .astype(np.float32) for i in onnx.load(path).graph.input}
    got = CompiledModel(module, device).run(feeds).outputs
    want = run_onnxruntime(path, feeds)
    for name, value in want.items():
        assert np.allclose(got[name], value, rtol=1e-4, atol=1e-4), name
    return module


def _allocs(module: ModuleOp) -> dict[str, Layout]:
    """The layout of each storage the host allocates, by the value it holds."""
    return {op.result.name_hint: op.layout.data for op in module.walk()
            if isinstance(op, texture.AllocOp)}


def _kernels(module: ModuleOp) -> list[str]:
    return [op.attributes["onnx.node"].data for op in module.walk()
            if op.name == "ocl.kernel"]


def test_recorded_layouts_are_obeyed(pocl_device, tmp_path):
    """
    Sigmoid → Conv → Relu, the local rules' nc4hw4 replaced by rows4 for the Sigmoid and
    the conv: the conv reads and writes rows4, and the Relu (still nc4hw4) gets a
    kernel of its own instead of running in the conv's.
    """
    path = _save(tmp_path, [
        helper.make_node("Sigmoid", ["X"], ["S"], name="sig"),
        helper.make_node("Conv", ["S", "W", "B"], ["C"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["C"], ["Y"], name="relu"),
    ], [("X", [1, 6, 5, 7])], [("Y", [1, 8, 5, 7])], [("W", [8, 6, 3, 3]), ("B", [8])])
    device = choose_device("pocl")

    local = _compile_and_check(path, import_onnx(path), lambda m: None, device)
    assert _allocs(local)["Y"] is Layout.NC4HW4
    assert _kernels(local) == ["node 'sig' (Sigmoid)", "node 'conv' (Conv) + node 'relu' (Relu)"]

    def rows4(module: ModuleOp) -> None:
        for name in ("sig", "conv"):
            result = _node(module, name).results[0]
            assert recorded_layout(result) is Layout.NC4HW4  # what the local rules chose
            record_layout(result, Layout.ROWS4)

    module = _compile_and_check(path, import_onnx(path), rows4, device)
    allocs = _allocs(module)
    assert allocs["S"] is Layout.ROWS4 and allocs["C"] is Layout.ROWS4
    assert allocs["Y"] is Layout.NC4HW4
    assert _kernels(module) == ["node 'sig' (Sigmoid)", "node 'conv' (Conv)",
                                "node 'relu' (Relu)"]


def test_a_relayout_is_a_copy_kernel(pocl_device, tmp_path):
    """
    A MatMul's rank-4 result (rows4) changed to nc4hw4 by an explicit texture.relayout
    before a Conv: one copy kernel, and the conv reads nc4hw4.
    """
    path = _save(tmp_path, [
        helper.make_node("MatMul", ["A", "M"], ["P"], name="mm"),
        helper.make_node("Conv", ["P", "W"], ["Y"], name="conv", pads=[1, 1, 1, 1]),
    ], [("A", [1, 4, 6, 8])], [("Y", [1, 5, 6, 8])], [("M", [8, 8]), ("W", [5, 4, 3, 3])])
    device = choose_device("pocl")

    def relayout(module: ModuleOp) -> None:
        product = _node(module, "mm").results[0]
        assert recorded_layout(product) is Layout.ROWS4
        change = texture.RelayoutOp(product, Layout.NC4HW4)
        Rewriter.insert_op(change, InsertPoint.after(product.owner))
        change.result.name_hint = "P_nc4hw4"
        product.replace_uses_with_if(change.result, lambda use: use.operation is not change)

    module = _compile_and_check(path, import_onnx(path), relayout, device)
    allocs = _allocs(module)
    assert allocs["P"] is Layout.ROWS4 and allocs["P_nc4hw4"] is Layout.NC4HW4
    assert _kernels(module) == ["node 'mm' (MatMul)", "op texture.relayout",
                                "node 'conv' (Conv)"]


def test_the_default_gpu_pipeline_selects_layouts_before_lowering(pocl_device):
    # with images, where texture-tile runs too (PoCL's default, buffers, leaves it out)
    passes, _ = pipelines.gpu_pipeline(f"{pipelines.GRAPH_PASSES},onnx-to-texture{{buffers=false}}",
                                       choose_device("pocl"))
    names = [p.name for p in passes]
    assert names.index("texture-tile") < names.index("select-layouts") \
        < names.index("onnx-to-texture")
    chosen = next(p for p in passes if isinstance(p, SelectLayoutsPass))
    assert (chosen.target, chosen.solver) == ("gpu", "gcd2")
    # a spec that names select-layouts sets its options instead
    passes, _ = pipelines.gpu_pipeline("select-layouts{solver=local}", choose_device("pocl"))
    assert [p.name for p in passes].count("select-layouts") == 1


@pytest.mark.parametrize("options, message", [
    ({"target": "npu"}, "target must be one of gpu, dsp, not 'npu'"),
    ({"solver": "greedy"}, "solver must be one of local, chain, pbqp, gcd2, exact, not 'greedy'"),
    ({"layout": "col2"}, "layout is an option of target=dsp"),
])
def test_bad_options_are_one_line(options, message):
    from xdsl.context import Context
    from xdsl.utils.exceptions import DiagnosticException

    with pytest.raises(DiagnosticException, match=message):
        SelectLayoutsPass(**options).apply(Context(), ModuleOp([]))
