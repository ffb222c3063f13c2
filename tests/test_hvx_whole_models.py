"""
Whole quantized models on the DSP path, assembled by llvm-mc and run under QEMU, bit
for bit against the exact integer reference (`reference/qlinear.py`): pools,
onnxruntime's QOperator (com.microsoft) ops, a residual block whose kernels ran out
of registers before, and an int8 model on which onnxruntime is the inexact side.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest

from mobile_opt.checking import quant_models
from harness import run_mobile_run
from mobile_opt import pipelines
from mobile_opt.backends.hexagon.runner import ports, run_module
from mobile_opt.checking import run_onnxruntime
from mobile_opt.dialects.hvx import LayoutAttr, SimdLayout
from mobile_opt.dialects.hvx.attributes import LAYOUT
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.reference.qlinear import run_qlinear
from mobile_opt.transforms.onnx_to_hvx.lower import OnnxToHvxPass

pytestmark = pytest.mark.usefixtures("hexagon_toolchain")


def _check(path, layout: str = "auto", seed: int = 0, onnxruntime_lsb: int = 0) -> None:
    """The DSP equals the integer reference; onnxruntime is within `onnxruntime_lsb`."""
    feeds = quant_models.random_inputs(onnx.load(path), seed)
    expected = run_qlinear(import_onnx(path), feeds)
    module = import_onnx(path)
    pipelines.apply(module, pipelines.dsp_pipeline(layout=layout, packing="sda"))
    got, _ = run_module(module, feeds)
    theirs = run_onnxruntime(path, feeds)
    for name, want in expected.items():
        assert np.unique(want).size > 1, f"{name}: a constant output proves little"
        assert got[name].dtype == want.dtype
        assert np.array_equal(got[name], want), f"{name}: {int((got[name] != want).sum())} differ"
        scale = _output_step(path, name)
        assert np.abs(theirs[name].astype(np.float64) - want).max() <= onnxruntime_lsb * scale


def _output_step(path, name: str) -> float:
    """The quantisation step of an output: its DequantizeLinear's scale, else 1."""
    model = onnx.load(path)
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "DequantizeLinear" and node.output[0] == name:
            return float(inits[node.input[1]]) * 1.0001
    return 1.0


POOLS = {
    "max_s2_padded": lambda: quant_models.pool_model("max", 5, 9, 11, stride=2, seed=3),
    "max_int8_wide": lambda: quant_models.pool_model("max", 6, 7, 40, signed=True, seed=4),
    "max_operator_form": lambda: quant_models.pool_model("max8", 6, 8, 9, kernel=2, stride=2,
                                                         pad=0, seed=5),
    "average_valid": lambda: quant_models.pool_model("average", 5, 9, 11, pad=0, seed=6),
    "average_padded": lambda: quant_models.pool_model("average", 5, 9, 11, stride=2, seed=7,
                                                      count_include_pad=1),
    "global": lambda: quant_models.pool_model("global", 9, 7, 7, seed=8),
    "global_int8": lambda: quant_models.pool_model("global", 3, 5, 6, signed=True, seed=9),
}


@pytest.mark.parametrize("layout", ["col1", "col2", "col4"])
@pytest.mark.parametrize("kind", POOLS)
def test_pools(kind, layout, tmp_path):
    path = tmp_path / "pool.onnx"
    onnx.save(POOLS[kind](), path)
    _check(path, layout, onnxruntime_lsb=0)


def test_global_average_pool_writes_its_result_in_the_recorded_layout(tmp_path):
    """
    Its product runs in its implementation's layout (col4, vrmpy); the reshape after it
    writes the result in the layout recorded for it, here col1 by hand.
    """
    path = tmp_path / "pool.onnx"
    onnx.save(POOLS["global"](), path)
    feeds = quant_models.random_inputs(onnx.load(path), 0)
    module = import_onnx(path)
    passes = pipelines.dsp_pipeline(layout="col4", packing="greedy")
    at = next(i for i, p in enumerate(passes) if isinstance(p, OnnxToHvxPass))
    pipelines.apply(module, passes[:at])
    pool = next(op for op in module.walk() if op.name == "onnx.GlobalAveragePool")
    pool.attributes[LAYOUT] = LayoutAttr(SimdLayout.COL1)
    pipelines.apply(module, passes[at:])
    assert [p.geometry.layout for p in ports(module) if p.role == "output"] == [SimdLayout.COL1]
    assert any(op.name == "hvx.vrmpy_acc" for op in module.walk())
    got, _ = run_module(module, feeds)
    assert np.array_equal(got["y"], run_qlinear(import_onnx(path), feeds)["y"])


def test_max_pool_of_a_tensor_with_a_nonzero_zero_point_reads_a_zero_filled_copy(tmp_path):
    """Padding must not win the max: int8 data below its zero point."""
    model = quant_models.pool_model("max", 4, 6, 6, stride=1, seed=1, signed=True)
    for t in model.graph.initializer:
        if t.name == "x_zero":
            t.CopyFrom(onnx.numpy_helper.from_array(np.array(100, np.int8), "x_zero"))
    path = tmp_path / "pool.onnx"
    onnx.save(model, path)
    feeds = {"x": np.full((1, 4, 6, 6), -100, np.int8)}
    feeds["x"][0, :, 2, 3] = -50
    module = import_onnx(path)
    pipelines.apply(module, pipelines.dsp_pipeline(packing="greedy"))
    got, _ = run_module(module, feeds)
    assert np.array_equal(got["y"], run_qlinear(import_onnx(path), feeds)["y"])
    assert got["y"].min() == -100


@pytest.mark.parametrize("form", ["qdq", "qop"])
@pytest.mark.parametrize("activations", ["u8", "s8"])
def test_small_resnet_quantized_byrun_onnxruntime(form, activations, tmp_path):
    """MaxPool, residual blocks, GlobalAveragePool and Gemm, as quantize_static writes
    them: QDQ, or QOperator with com.microsoft QLinearAdd, QLinearGlobalAveragePool and
    QGemm."""
    path = tmp_path / "resnet.onnx"
    quant_models.quantized_cnn(str(path), seed=1, reduce_range=False,
                               model=quant_models.small_resnet(1), activations=activations,
                               form=form)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    if form == "qop":
        assert {"QLinearAdd", "QLinearGlobalAveragePool", "QGemm", "MaxPool"} <= ops
    _check(path, onnxruntime_lsb=1)


@pytest.mark.parametrize("op, signed", [("QLinearAdd", False), ("QLinearAdd", True),
                                        ("QLinearGlobalAveragePool", True), ("QGemm", False)])
def test_contrib_ops(op, signed, tmp_path):
    path = tmp_path / "contrib.onnx"
    shape = (3, 40) if op == "QGemm" else (1, 8, 5, 7)
    onnx.save(quant_models.contrib_model(op, shape, seed=2, signed=signed), path)
    _check(path, onnxruntime_lsb=0)


@pytest.mark.parametrize(
    "layout, add_scales",
    [("col1", (0.05, 0.05, 0.1)), ("auto", (0.05, 0.05, 0.1)), ("auto", (0.03, 0.03, 0.1))],
)
def test_residual_block_with_uncalibrated_scales(layout, add_scales, tmp_path):
    """
    64-channel 3x3 convs (which filled col1's vector pairs) and a residual Add with
    round scales: dyadic ratios (onnxruntime's sums land on halves, rounded to even;
    16384 corrections before) or 0.3 (thousands of near-halves: a table lookup).
    """
    path = tmp_path / "block.onnx"
    onnx.save(quant_models.residual_block(add_scales=add_scales), path)
    _check(path, layout, onnxruntime_lsb=0)


def test_int8_model_where_onnxruntime_is_inexact(tmp_path, capsys):
    """
    onnxruntime runs this int8 Conv in float32 (its input is shared): it may leave the
    integer reference, and mobile-run then says that onnxruntime is the inexact side,
    while the DSP run must match the reference exactly either way.
    """
    path = tmp_path / "int8.onnx"
    onnx.save(quant_models.int8_shared_input_conv(), path)
    feeds = quant_models.random_inputs(onnx.load(path))
    given = []
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        given += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    status, out, err = run_mobile_run(["--target", "hexagon", str(path), *given], capsys)
    assert status == 0, err
    for name in ("y", "z"):
        assert re.search(rf"^{name} +\[[0-9, ]+\] +0 LSB +PASS", out, re.MULTILINE), out
    expected = run_qlinear(import_onnx(path), feeds)
    theirs = run_onnxruntime(path, feeds)
    inexact = [n for n in expected if not np.array_equal(theirs[n], expected[n])]
    for name in expected:
        assert (f"onnxruntime leaves the exact integer reference on '{name}'" in out) == (
            name in inexact), out
