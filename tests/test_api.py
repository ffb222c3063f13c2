"""
The Python API (`mobile_opt.compile`/`load`, `api/compiled.py`): shipped models compiled
for PoCL against onnxruntime, the saved folder read back, bad input as the one error type
with its file and node (and the CLI's one line from it), the DSP target's assembly run
under QEMU against the exact integer reference, and a cheap `import mobile_opt`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from harness import assert_one_line_error, run_mobile_run
from onnx import TensorProto, helper, numpy_helper

import mobile_opt
from mobile_opt.api.errors import user_error
from mobile_opt.checking import (
    FAIL,
    compare,
    compare_lsb,
    criterion,
    make_inputs,
    onnxruntime_session,
    quant_models,
    run_onnxruntime,
    session_outputs,
)
from mobile_opt.reference.interpreter import find_function

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "tests" / "models"


@pytest.fixture(autouse=True)
def weight_dir(tmp_path_factory, monkeypatch):
    """Derived weights and in-memory models go to a folder of the test session's."""
    monkeypatch.setenv("MOBILE_OPT_WEIGHT_DIR", str(tmp_path_factory.getbasetemp() / "weights"))


def conv_relu(bad_stride: bool = False) -> onnx.ModelProto:
    """Conv (named conv0; stride 0 if `bad_stride`) then Relu, with seeded weights."""
    rng = np.random.default_rng(3)
    w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    stride = 0 if bad_stride else 1
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv0", pads=[1, 1, 1, 1],
                          strides=[stride, stride]),
         helper.make_node("Relu", ["c"], ["y"], name="relu0")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [numpy_helper.from_array(w, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def inputs_of(model: mobile_opt.Compiled, seed: int = 0) -> dict[str, np.ndarray]:
    return make_inputs(find_function(model.imported, model.function), {}, seed)


def assert_matches_onnxruntime(outputs, expected, fp16: bool = False) -> None:
    assert set(outputs) == set(expected)
    for name, want in expected.items():
        result = compare(outputs[name], want, criterion(want, None, None, None, fp16))
        assert result.status != FAIL, f"{name}: {result}"


# compiling and running on PoCL ----------------------------------------------------------
@pytest.mark.usefixtures("pocl_device")
@pytest.mark.parametrize("source, fp16", [
    ("mobilenetv2_small.onnx", False),
    ("encoder_emb.onnx", False),
    ("conv_relu", False),
    ("conv_relu", True),
])
def test_compiled_model_matches_onnxruntime(source, fp16):
    model = conv_relu() if source == "conv_relu" else MODELS / source
    compiled = mobile_opt.compile(model, device="pocl", fp16=fp16)
    feeds = inputs_of(compiled)
    outputs = compiled.run(feeds)
    if isinstance(model, onnx.ModelProto):
        expected = session_outputs(onnxruntime_session(model.SerializeToString()), feeds)
    else:
        expected = run_onnxruntime(model, feeds)
    assert_matches_onnxruntime(outputs, expected, fp16)
    assert compiled.fp16 == fp16
    assert "__kernel" in compiled.kernels
    assert [r.kernel for r in compiled.plan.launches]  # the host plan launches them


@pytest.mark.usefixtures("pocl_device")
def test_report_holds_what_mobile_run_prints():
    compiled = mobile_opt.compile(conv_relu(), device="pocl")
    feeds = inputs_of(compiled)
    for _ in range(3):
        compiled.run(feeds)
    report = compiled.report()
    assert report.target == "gpu" and report.runs == 3 and len(report.wall_seconds) == 3
    assert [k.kernel for k in report.kernels] == [r.kernel for r in compiled.plan.launches]
    assert all(k.seconds > 0 for k in report.kernels)
    # onnx-fuse made the Relu part of the Conv: one kernel for both
    assert report.choices["launches"] == [("conv_0", "node 'conv0' (FusedConv)")]
    assert "conv0 (FusedConv)" in str(report)
    assert report.memory == compiled.plan.memory()
    lines = str(report).splitlines()
    assert lines[0] == report.header() and lines[0].startswith("device: ")
    assert "kernel time (median of runs 2..3, profiling events):" in lines
    assert lines[-1] == report.memory_text and lines[-1].startswith("storage: ")


@pytest.mark.usefixtures("pocl_device")
def test_save_and_load_give_the_same_outputs(tmp_path):
    compiled = mobile_opt.compile(MODELS / "mobilenetv2_small.onnx", device="pocl")
    feeds = inputs_of(compiled, seed=5)
    before = compiled.run(feeds)
    compiled.save(tmp_path / "saved")
    names = {p.name for p in (tmp_path / "saved").iterdir()}
    assert {"model.mlir", "model.cl", "plan.json", "weights.json", "compiled.json"} <= names
    manifest = json.loads((tmp_path / "saved" / "weights.json").read_text())
    assert manifest == [{"store": str(MODELS / "mobilenetv2_small.onnx"),
                         "bytes": (MODELS / "mobilenetv2_small.onnx").stat().st_size}]
    loaded = mobile_opt.load(tmp_path / "saved", device="pocl")
    after = loaded.run(feeds)
    assert set(after) == set(before)
    for name in before:
        np.testing.assert_array_equal(after[name], before[name])
    assert loaded.kernels == compiled.kernels
    assert loaded.plan.dumps() == compiled.plan.dumps()


@pytest.mark.usefixtures("pocl_device")
def test_load_refuses_a_changed_weight_store(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(conv_relu(), path)
    mobile_opt.compile(path, device="pocl", build=False).save(tmp_path / "saved")
    with open(path, "ab") as f:
        f.write(b"\0")
    with pytest.raises(mobile_opt.UserError) as caught:
        mobile_opt.load(tmp_path / "saved", device="pocl")
    assert caught.value.file == str(tmp_path / "saved")
    assert f"weight store {path} holds" in caught.value.message


def test_load_of_a_folder_without_a_model_is_one_error(tmp_path):
    with pytest.raises(mobile_opt.UserError, match="no saved model here") as caught:
        mobile_opt.load(tmp_path, device="pocl")
    assert caught.value.file == str(tmp_path)


# the one error type ---------------------------------------------------------------------
def test_a_bad_node_is_one_error_with_file_and_node(tmp_path):
    path = tmp_path / "bad.onnx"
    onnx.save(conv_relu(bad_stride=True), path)
    with pytest.raises(mobile_opt.UserError) as caught:
        mobile_opt.compile(path, device="pocl")
    error = caught.value
    assert (error.file, error.node, error.op) == (str(path), "conv0", "Conv")
    assert "stride" in error.message
    assert str(error) == f"{path}: node 'conv0' (Conv): {error.message}"


def test_the_cli_prints_the_error_as_its_one_line(tmp_path, capsys):
    path = tmp_path / "bad.onnx"
    onnx.save(conv_relu(bad_stride=True), path)
    with pytest.raises(mobile_opt.UserError) as caught:
        mobile_opt.compile(path, device="pocl")
    status, _, err = run_mobile_run([str(path), "--device", "pocl"], capsys)
    assert_one_line_error(status, err, f"{path}: node 'conv0' (Conv): ")
    assert err == f"mobile-run: error: {caught.value}\n"


@pytest.mark.parametrize("options, says", [
    ({"target": "npu"}, "target must be 'gpu' or 'dsp'"),
    ({"target": "dsp", "fp16": True}, "fp16 does not apply to the dsp target"),
    ({"memory_budget": "lots"}, "lots"),
])
def test_bad_options_are_the_one_error(options, says, tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(conv_relu(), path)
    with pytest.raises(mobile_opt.UserError, match=says):
        mobile_opt.compile(path, **options)


def test_a_missing_file_names_it(tmp_path):
    with pytest.raises(mobile_opt.UserError) as caught:
        mobile_opt.compile(tmp_path / "none.onnx")
    assert caught.value.file == str(tmp_path / "none.onnx") and caught.value.node is None
    assert caught.value.message == "no such file"


@pytest.mark.parametrize("message, file, parts", [
    ("m.onnx: node 'a' (Conv): bad pads", "m.onnx", ("m.onnx", "a", "Conv", "bad pads")),
    ("node 'x\\'y' (Add): no kernel", "m.onnx", ("m.onnx", "x\\'y", "Add", "no kernel")),
    ("m.onnx: no such file", "m.onnx", ("m.onnx", None, None, "no such file")),
    ("the budget is 0", None, (None, None, None, "the budget is 0")),
    ("first line\nsecond", "f.mlir", ("f.mlir", None, None, "first line")),
])
def test_user_error_takes_the_file_and_node_out_of_a_message(message, file, parts):
    error = user_error(ValueError(message), file)
    assert (error.file, error.node, error.op, error.message) == parts


def test_a_user_error_with_its_parts_keeps_them():
    error = mobile_opt.UserError("bad", "a.onnx", "n", "Conv")
    assert user_error(error, "b.onnx") is error
    assert str(error) == "a.onnx: node 'n' (Conv): bad"


# the DSP target ------------------------------------------------------------------------
@pytest.fixture
def quantized_conv(tmp_path) -> Path:
    path = tmp_path / "conv.onnx"
    onnx.save(quant_models.conv_model(4, 8, 8, 8, seed=2), path)
    return path


def test_dsp_kernels_are_hvx_assembly(quantized_conv):
    compiled = mobile_opt.compile(quantized_conv, "dsp")
    assert compiled.target == "dsp" and compiled.device is None
    assert "vrmpy" in compiled.kernels  # HVX's multiply-accumulate
    assert [p.role for p in compiled.plan].count("output") == 1


@pytest.mark.usefixtures("hexagon_toolchain")
def test_dsp_run_under_qemu_is_bit_exact(quantized_conv, tmp_path):
    from mobile_opt.reference.qlinear import run_qlinear

    compiled = mobile_opt.compile(quantized_conv, "dsp", count_packets=True)
    feeds = inputs_of(compiled, seed=1)
    outputs = compiled.run(feeds)
    expected = run_qlinear(compiled.imported, feeds, compiled.function)
    for port in compiled.plan:
        if port.role == "output":
            lsb = float(port.scale) if port.host_conversion else 1.0
            result = compare_lsb(outputs[port.name], expected[port.name], lsb)
            assert not result.note and result.worst == 0, port.name
    report = compiled.report()
    assert report.packets and sum(report.packets.values()) > 0
    assert "packets executed" in str(report)
    compiled.save(tmp_path / "saved")
    assert (tmp_path / "saved" / "program.s").read_text() == compiled.kernels


# a cheap import ------------------------------------------------------------------------
def test_import_mobile_opt_loads_no_compiler():
    code = ("import sys, mobile_opt; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'xdsl', 'onnx', 'pyopencl', 'numpy', 'onnxruntime'})); "
            "print(sorted(m for m in sys.modules if m.startswith('mobile_opt.')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout.splitlines() == ["[]", "[]"], done.stdout
    assert callable(mobile_opt.compile) and callable(mobile_opt.load)
    with pytest.raises(AttributeError):
        mobile_opt.no_such_name  # noqa: B018
