"""
The exact integer reference (`reference/qlinear.py`) and the import of
onnxruntime's com.microsoft quantized ops (`frontend/contrib_ops.py`) against
onnxruntime itself: QLinearAdd for every pair of input bytes (rounding, ties,
saturation), QLinearGlobalAveragePool and QGemm on random and extreme inputs.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest

from mobile_opt.checking import quant_models
from mobile_opt.reference.qlinear import run_qlinear
from mobile_opt.checking import compare_lsb
from mobile_opt.frontend.onnx_import import OnnxImportError, import_onnx


def _both(model: onnx.ModelProto, feeds, tmp_path):
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    theirs = session.run(None, feeds)[0]
    return run_qlinear(import_onnx(path), feeds)["y"], theirs


def _pairs(signed: bool, shape=(1, 1, 256, 256)):
    dtype = np.int8 if signed else np.uint8
    info = np.iinfo(dtype)
    a = np.repeat(np.arange(info.min, info.max + 1)[:, None], 256, 1).astype(dtype)
    return {"a": a.reshape(shape), "b": a.T.copy().reshape(shape)}


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("scales", [
    None,                    # drawn: no special relation
    (0.02, 0.02, 0.04),      # dyadic ratios: the float32 sums land on halves
    (0.03, 0.03, 0.1),       # simple fractions: thousands of near-halves
    (0.5, 0.25, 0.01),       # saturation on both sides
])
def test_qlinear_add_every_input_pair(signed, scales, tmp_path):
    model = quant_models.contrib_model("QLinearAdd", (1, 1, 256, 256), seed=5, signed=signed,
                                       scales=scales)
    ours, theirs = _both(model, _pairs(signed), tmp_path)
    assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("shape", [(1, 16, 7, 7), (1, 5, 3, 11), (1, 3, 1, 1)])
def test_qlinear_global_average_pool(signed, shape, tmp_path):
    model = quant_models.contrib_model("QLinearGlobalAveragePool", shape, seed=6, signed=signed)
    dtype = np.int8 if signed else np.uint8
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    x = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    x[0, 0] = info.max  # the sums' extremes
    x[0, -1] = info.min
    ours, theirs = _both(model, {"a": x}, tmp_path)
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("signed", [False, True])
def test_qgemm(signed, tmp_path):
    model = quant_models.contrib_model("QGemm", (9, 70), seed=7, signed=signed, cols=12)
    dtype = np.int8 if signed else np.uint8
    info = np.iinfo(dtype)
    x = np.random.default_rng(1).integers(info.min, info.max + 1, (9, 70)).astype(dtype)
    ours, theirs = _both(model, {"a": x}, tmp_path)
    assert np.array_equal(ours, theirs)


def test_qgemm_without_output_scale_is_float(tmp_path):
    model = quant_models.contrib_model("QGemm", (4, 16), seed=8)
    node = model.graph.node[0]
    del node.input[7:]
    model.graph.output[0].type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    x = np.random.default_rng(2).integers(0, 256, (4, 16)).astype(np.uint8)
    ours, theirs = _both(model, {"a": x}, tmp_path)
    assert ours.dtype == np.float32
    assert np.allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_channels_last_is_refused_naming_the_node(tmp_path):
    model = quant_models.contrib_model("QLinearGlobalAveragePool", channels_last=1)
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    with pytest.raises(OnnxImportError, match=r"node 'pool' \(QLinearGlobalAveragePool\): "
                                              "channels_last=1 is not supported"):
        import_onnx(path)


def test_lsb_comparison():
    want = np.array([0.0, 0.5, 1.0], np.float32)
    result = compare_lsb(want + np.float32([0, 0.5, 1.0]), want, 0.5)
    assert (result.worst, result.count, result.size) == (2, 2, 3)
    assert result.describe() == "2 LSB (2 of 3 values)"
    assert compare_lsb(want, want, 0.5).describe() == "0 LSB"
    assert not compare_lsb(want[:2], want, 0.5).exact
