"""
Quantized models on the DSP path, end to end: onnx import, the DSP pipeline
(`select-layouts`, `onnx-to-hvx`, ...), assembly, qemu-hexagon, compared bit for bit
with onnxruntime on the same inputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from mobile_opt.checking import quant_models
from mobile_opt import pipelines
from mobile_opt.transforms.onnx_to_hvx.quant_graph import find_function, read_quant_graph
from mobile_opt.transforms.onnx_to_hvx.selection import dsp_layout_problem
from mobile_opt.backends.hexagon.runner import run_module
from mobile_opt.checking import run_onnxruntime
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.transforms.onnx_to_hvx.eltwise import AddQuant, fit_add, reference_add_table

pytestmark = pytest.mark.usefixtures("hexagon_toolchain")


def _compile(module, layout="auto"):
    pipelines.apply(module, pipelines.dsp_pipeline(layout=layout, packing="greedy"))
    return module


def _run(path, feeds, layout="auto", counting=False):
    return run_module(_compile(import_onnx(path), layout), feeds, counting=counting)


def _same(model: onnx.ModelProto, tmp_path, layout="auto", seed=0):
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    feeds = quant_models.random_inputs(model, seed)
    got, _ = _run(path, feeds, layout)
    want = run_onnxruntime(path, feeds)
    for name, value in want.items():
        assert got[name].dtype == value.dtype
        assert np.array_equal(got[name], value), f"{name}: {int((got[name] != value).sum())} differ"


@pytest.mark.parametrize("layout", ["col1", "col2", "col4", "auto"])
@pytest.mark.parametrize(
    "kind", ["conv", "pointwise", "conv_stride2", "depthwise", "qlinear_conv", "int8_conv"]
)
def test_conv_models(kind, layout, tmp_path):
    build = {
        "conv": lambda: quant_models.conv_model(5, 9, 11, 6, seed=1),
        "pointwise": lambda: quant_models.conv_model(12, 7, 9, 10, kernel=1, pad=0, seed=6),
        "conv_stride2": lambda: quant_models.conv_model(4, 13, 10, 8, stride=2, seed=2),
        "depthwise": lambda: quant_models.conv_model(6, 10, 12, 6, depthwise=True, seed=3),
        "qlinear_conv": lambda: quant_models.conv_model(3, 8, 8, 4, form="qlinear", seed=4),
        "int8_conv": lambda: quant_models.conv_model(3, 8, 8, 4, form="qlinear", signed=True,
                                                     seed=5),
    }
    _same(build[kind](), tmp_path, layout)


@pytest.mark.parametrize("layout", ["col1", "col2", "col4"])
@pytest.mark.parametrize("shape", [(1, 16, 8), (37, 24, 10), (130, 7, 5)])
def test_qlinear_matmul(shape, layout, tmp_path):
    _same(quant_models.matmul_model(*shape, seed=sum(shape)), tmp_path, layout)


@pytest.mark.parametrize("signed", [False, True])
def test_add(signed, tmp_path):
    _same(quant_models.add_model([1, 6, 7, 9], seed=3, signed=signed), tmp_path)


def test_add_table_is_onnxruntime_for_every_input_pair(tmp_path):
    """All 65536 (a, b) pairs through onnxruntime against the tabulated formula."""
    model = quant_models.add_model([256, 256], seed=11)
    path = tmp_path / "add.onnx"
    onnx.save(model, path)
    a = np.repeat(np.arange(256, dtype=np.uint8)[:, None], 256, 1)
    want = run_onnxruntime(path, {"a": a, "b": a.T.copy()})["y"]
    params = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    quant = AddQuant(float(params["a_scale"]), int(params["a_zero"]), float(params["b_scale"]),
                     int(params["b_zero"]), float(params["y_scale"]), int(params["y_zero"]), False)
    table = reference_add_table(quant)
    assert np.array_equal(table, want)
    assert np.array_equal(fit_add(quant).model(a, a.T), table)


@pytest.mark.parametrize("layout", ["auto", "col1", "col2", "col4"])
def test_quantized_cnn(layout, tmp_path):
    """A small CNN quantized by onnxruntime (QDQ): conv, depthwise, residual Add,
    stride 2, Flatten, Gemm."""
    path = tmp_path / "cnn.onnx"
    quant_models.quantized_cnn(str(path))
    feeds = {"x": np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)}
    got, execution = _run(path, feeds, layout, counting=True)
    want = run_onnxruntime(path, feeds)
    assert np.array_equal(got["y"], want["y"])
    assert execution.total_packets > 0


def test_vmpa_refuses_weights_that_overflow_16_bits(tmp_path):
    """Full-range int8 weights can overflow vmpa's 16-bit pair sums: col2 has no kernel."""
    path = tmp_path / "conv.onnx"
    onnx.save(quant_models.conv_model(4, 6, 6, 4, weight_range=128, seed=7), path)
    module = import_onnx(path)
    with pytest.raises(Exception, match="cannot run in layout col2"):
        _compile(module, "col2")


def test_relayout_in_the_graph_is_honoured(tmp_path):
    """Two QLinearMatMuls with an `hvx.relayout` col1 → col4 between them, run exactly."""
    from xdsl.parser import Parser

    source = Path(__file__).parent / "filecheck" / "transforms" / "onnx-to-hvx-relayout.mlir"
    module = Parser(pipelines.context(), source.read_text()).parse_module()
    _compile(module)
    kernels = [op.sym_name.data for op in module.walk() if op.name == "hvx.func"]
    assert any(k.startswith("relayout_") for k in kernels)
    a = np.random.default_rng(0).integers(0, 256, (8, 4)).astype(np.uint8)
    got, _ = run_module(module, {"a": a})
    # the same computation without the relayout, as onnxruntime runs it
    w1, w2 = (np.array(v, np.int64) for v in (
        [[44, 17, 1, -30], [-25, -59, -55, -62], [-42, 40, 19, 52], [0, 13, 60, 29]],
        [[16, 5, 7, 55], [-29, 40, 21, -64], [-14, 45, 6, -60], [33, 29, 44, -42]]))
    from mobile_opt.reference.qlinear import requantize_accumulators

    scale = np.float32(np.float32(np.float32(0.02) * np.float32(0.005)) / np.float32(0.02))
    h = requantize_accumulators((a.astype(np.int64) - 128) @ w1, scale, 128, 0, 255)
    y = requantize_accumulators((h - 128) @ w2, scale, 128, 0, 255)
    assert np.array_equal(got["y"], y.astype(np.uint8))


@pytest.mark.parametrize("form", ["qdq", "qlinear"])
def test_relayouts_a_selection_places_run_bit_exact(form, tmp_path):
    """
    A selection that runs the depthwise conv in col2 and the 3x3 convs reading its
    result and the input in col4 (the relayouts cost more than col4 saves here, so no
    solver picks it: it is realised by hand, as `select-layouts` realises a solver's)
    moves both tensors with relayouts, the result once for its two readers, in QDQ
    through copies of their DequantizeLinear; the relayout kernels run bit-exact.
    """
    path = tmp_path / "mixed.onnx"
    model = quant_models.mixed_layout_model(form)
    onnx.save(model, path)
    module = import_onnx(path)
    function = find_function(module, "main_graph")
    problem = dsp_layout_problem(function, read_quant_graph(function))
    pbqp = problem.problem
    wanted = {"x": "col2", "dw": "col2/vmpy", "conv1": "col4/vrmpy", "conv2": "col4/vrmpy",
              "conv3": "col4/vrmpy"}
    selection = [0] * len(pbqp.nodes)
    for i, node in enumerate(pbqp.nodes):
        name = next((k for k in wanted if node.name in (k, f"node '{k}' (Conv)",
                                                        f"node '{k}' (QLinearConv)")), None)
        if name is not None:
            selection[i] = node.labels.index(wanted[name])
    near = pbqp.neighbours()
    for copy in pbqp.copies:  # present where a reader needs it
        selection[copy] = int(any(np.isinf(pbqp.matrix(copy, n)[0, selection[n]])
                                  for n in near[copy] if n not in pbqp.copies))
    assert np.isfinite(pbqp.cost(selection))
    problem.realise(selection)
    passes = pipelines.dsp_pipeline(packing="greedy")
    pipelines.apply(module, passes[1:])  # the lowering and back end, after select-layouts
    kernels = [op.sym_name.data for op in module.walk() if op.name == "hvx.func"]
    assert sorted(k for k in kernels if k.startswith("relayout_")) == [
        "relayout_h_col4", "relayout_x_col4"]
    feeds = quant_models.random_inputs(model, 0)
    got, _ = run_module(module, feeds)
    want = run_onnxruntime(path, feeds)
    for name, value in want.items():
        assert np.array_equal(got[name], value), f"{name}: {int((got[name] != value).sum())} differ"


def test_tensor_names_that_start_with_a_digit(tmp_path):
    """nn.Sequential exports name tensors `/1/Relu_output_0`: their buffers still assemble."""
    model = quant_models.conv_model(3, 6, 6, 4, seed=7)
    renames = {"xq": "/0/xq", "c": "/1/Conv_output_0", "yq": "1_yq"}
    for node in model.graph.node:
        node.input[:] = [renames.get(n, n) for n in node.input]
        node.output[:] = [renames.get(n, n) for n in node.output]
    _same(model, tmp_path)
