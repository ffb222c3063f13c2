"""
The PyTorch-exported benchmark models (`bench/models.py`, committed as
`tests/models/NAME.onnx` so that no test needs torch): their op set, the numpy
reference and the OpenCL path against onnxruntime, and the `bench/e2e.py` benchmark
run as a program (tests import no bench script).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from harness import run_on_device
from onnx import TensorProto, helper, numpy_helper

from mobile_opt.checking import checkable, light_model, worst_relative_error
from mobile_opt.dialects.onnx import ONNX_OPS
from mobile_opt.tools import mobile_run

REPO = Path(__file__).resolve().parent.parent
MODELS_DIR = Path(__file__).resolve().parent / "models"
MODELS = ["vit_tiny", "mobilenetv2_small", "gpt2_small"]


@pytest.mark.parametrize("name", MODELS)
def test_committed_model_is_small_and_uses_dialect_ops(name: str):
    path = MODELS_DIR / f"{name}.onnx"
    assert path.stat().st_size < 2_000_000
    model = onnx.load(str(path))
    onnx.checker.check_model(model)
    ops = {n.op_type for n in model.graph.node}
    assert ops <= set(ONNX_OPS), f"not in the onnx dialect: {sorted(ops - set(ONNX_OPS))}"


@pytest.mark.parametrize("name", MODELS)
def test_reference_matches_onnxruntime(name: str, capsys):
    with pytest.raises(SystemExit) as exit_info:
        mobile_run.main(["--reference", str(MODELS_DIR / f"{name}.onnx")])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 0, out + err
    assert "PASS" in out


@pytest.mark.parametrize("name", MODELS)
def test_opencl_matches_onnxruntime(name: str, pocl_device):
    """The whole GPU pipeline on PoCL, within 1e-3 of onnxruntime relative to the output's scale."""
    from mobile_opt.backends.opencl.devices import choose_device

    outputs = run_on_device(MODELS_DIR / f"{name}.onnx", choose_device("pocl"))
    assert worst_relative_error(*outputs) <= 1e-3


def test_committed_models_are_what_the_exporter_writes(tmp_path: Path):
    """
    `bench/models.py` writes the committed files again (it checks each export against
    its PyTorch module as it writes it).
    """
    pytest.importorskip("torch")
    import onnxruntime

    subprocess.run([sys.executable, str(REPO / "bench" / "models.py"), str(tmp_path)],
                   check=True, capture_output=True, timeout=600)
    # the full-scale models (hundreds of MB) are written only where named
    assert sorted(p.stem for p in tmp_path.iterdir()) == sorted(MODELS)
    rng = np.random.default_rng(0)
    for name in MODELS:
        committed = onnxruntime.InferenceSession(str(MODELS_DIR / f"{name}.onnx"))
        fresh = onnxruntime.InferenceSession(str(tmp_path / f"{name}.onnx"))
        (value,) = committed.get_inputs()
        x = rng.uniform(-1, 1, value.shape).astype(np.float32)
        np.testing.assert_allclose(
            fresh.run(None, {"input": x})[0], committed.run(None, {value.name: x})[0], atol=1e-5
        )


def test_light_model_weights_are_randomized():
    """Light models fill every weight with 0.02 and so return a constant; checking draws them."""
    model = onnx.load(str(light_model("light_squeezenet")))
    randomized = checkable(model, seed=0)
    onnx.checker.check_model(randomized)
    assert not any(n.op_type == "ConstantOfShape" for n in randomized.graph.node)
    assert len(randomized.graph.output) == 2  # the softmax and the logits before it
    import onnxruntime

    session = onnxruntime.InferenceSession(randomized.SerializeToString())
    feeds = {session.get_inputs()[0].name: np.zeros((1, 3, 224, 224), np.float32)}
    probabilities, logits = session.run(None, feeds)
    assert logits.std() > 1e-2 and probabilities.std() > 0


def test_e2e_writes_a_row_per_model(tmp_path: Path, pocl_device):
    """One passing model and one failing to load: both get a row, neither crashes the run."""
    bias = np.random.default_rng(0).standard_normal((1, 8, 1, 1)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["t"]), helper.make_node("Relu", ["t"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 5, 5])],
        initializer=[numpy_helper.from_array(bias, "b")],
    )
    model = tmp_path / "add_relu.onnx"
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9), model
    )
    out = tmp_path / "e2e.json"
    argv = ["--device", "pocl", "--repeat", "2", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "e2e.py"), *argv,
         "--models", f"{model},{tmp_path / 'missing.onnx'}"],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["platform"] == "Portable Computing Language"
    ok, missing = report["rows"]
    assert ok["model"] == "add_relu" and ok["status"] == "ok" and ok["rel_err"] == 0.0
    assert ok["ours_ms"] > 0 and ok["ort_ms"] > 0 and ok["kernels"] == 1
    assert missing["status"] == "load failed" and "no such file" in missing["error"]
    assert "add_relu" in done.stdout
