"""`mobile-run --reference`: its report, its exit status, and its one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from harness import assert_one_line_error, run_mobile_run
from onnx import TensorProto, helper, numpy_helper, save

from mobile_opt.tools import model_checks
from mobile_opt.tools.mobile_translate import main as translate
from mobile_opt.tools.cli import MANIFEST


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """`out/y = Relu(Conv(x, w) + b)` and `count = Shape(x)`: a float and an int64 output."""
    w = np.random.default_rng(0).uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["out/y"]),
            helper.make_node("Shape", ["x"], ["count"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [
            helper.make_tensor_value_info("out/y", TensorProto.FLOAT, ["N", 4, 8, 8]),
            helper.make_tensor_value_info("count", TensorProto.INT64, [4]),
        ],
        initializer=[numpy_helper.from_array(w, "w")],
    )
    path = tmp_path / "net.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10), path)
    return path


run = run_mobile_run


def test_passing_run_prints_a_table(model: Path, capsys):
    status, out, err = run(["--reference", str(model), "--dim", "N=2"], capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["output", "shape", "max", "abs", "err", "relative", "status"]
    assert lines[1].split()[0] == "out/y" and lines[1].endswith("PASS")
    assert lines[2].split()[:2] == ["count", "[4]"] and lines[2].endswith("PASS")


def test_given_inputs_and_saved_outputs(model: Path, tmp_path: Path, capsys):
    x = np.random.default_rng(1).normal(size=(1, 3, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    status, out, err = run(
        [
            "--reference",
            str(model),
            "--dim",
            "N=1",
            "--input",
            f"x={tmp_path / 'x.npy'}",
            "--save-dir",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert status == 0, err
    saved = sorted(p.name for p in (tmp_path / "o").iterdir() if p.name != MANIFEST)
    assert saved == ["count.npy", "out_y.npy"]
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "count.npy"), [1, 3, 8, 8])
    assert np.load(tmp_path / "o" / "out_y.npy").shape == (1, 4, 8, 8)


def test_seeded_inputs_are_reproducible(model: Path, tmp_path: Path, capsys):
    def outputs(seed: int, folder: str) -> np.ndarray:
        status, _, err = run(
            [
                "--reference",
                str(model),
                "--dim",
                "N=1",
                "--seed",
                str(seed),
                "--save-dir",
                str(tmp_path / folder),
            ],
            capsys,
        )
        assert status == 0, err
        return np.load(tmp_path / folder / "out_y.npy")

    np.testing.assert_array_equal(outputs(5, "a"), outputs(5, "b"))
    assert not np.array_equal(outputs(5, "a"), outputs(6, "c"))


def test_an_output_out_of_tolerance_fails(model: Path, capsys, monkeypatch):
    real = model_checks.run_onnxruntime

    def perturbed(path, feeds):
        results = real(path, feeds)
        results["out/y"] = results["out/y"] + np.float32(0.01)
        return results

    monkeypatch.setattr(model_checks, "run_onnxruntime", perturbed)
    status, out, _ = run(["--reference", str(model), "--dim", "N=1"], capsys)
    assert status == 1
    row = next(line for line in out.splitlines() if line.startswith("out/y"))
    assert row.endswith("FAIL") and "0.01" in row
    status, out, _ = run(["--reference", str(model), "--dim", "N=1", "--atol", "0.02"], capsys)
    assert status == 0


def test_shipped_model_by_name(capsys):
    """
    A ResNet-50 the onnx package ships, against onnxruntime. Its weights are all 0.02,
    so its softmax is uniform: the check cannot tell it from a constant, and says so.
    """
    status, out, err = run(["--reference", "onnx:light_resnet50"], capsys)
    assert status == 0, err
    row = out.splitlines()[1].split()
    assert row[:3] == ["gpu_0/softmax_1", "[1,", "1000]"] and row[-2:] == ["NO", "SIGNAL"]
    assert "warning: output 'gpu_0/softmax_1' says nothing" in err


def test_unknown_shipped_model(capsys):
    status, _, err = run(["--reference", "onnx:light_resnet51"], capsys)
    assert_one_line_error(status, err, "onnx:light_resnet51: the onnx package ships no such model")


def test_wrong_input_shape(model: Path, tmp_path: Path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((1, 3, 4, 4), np.float32))
    status, _, err = run(
        ["--reference", str(model), "--dim", "N=1", "--input", f"x={tmp_path / 'x.npy'}"], capsys
    )
    assert_one_line_error(status, err, "input 'x' has shape [1, 3, 4, 4], expected [1, 3, 8, 8]")


def test_wrong_input_dtype(model: Path, tmp_path: Path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((1, 3, 8, 8)))
    status, _, err = run(
        ["--reference", str(model), "--dim", "N=1", "--input", f"x={tmp_path / 'x.npy'}"], capsys
    )
    assert_one_line_error(status, err, "input 'x' has dtype float64, expected float32")


@pytest.mark.parametrize(
    "extra, message, code",
    [
        (["--input", "x"], "--input expects NAME=FILE.npy, got 'x'", 2),
        (["--input", "x=/nonexistent/x.npy"], "--input x: /nonexistent/x.npy: no such file", 1),
        (["--input", "z=a.npy"], "the model has no input 'z' (inputs: x)", 1),
        (["-p", "no-such-pass"], "Unrecognized passes: ['no-such-pass']", 1),
    ],
)
def test_bad_options(model: Path, capsys, extra: list[str], message: str, code: int):
    status, _, err = run(["--reference", str(model), "--dim", "N=1", *extra], capsys)
    assert_one_line_error(status, err, message, code)


@pytest.mark.parametrize("seed", ["one", "-1"])
def test_a_bad_seed_is_a_usage_error(model: Path, capsys, seed: str):
    status, _, err = run(["--reference", str(model), "--dim", "N=1", "--seed", seed], capsys)
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("mobile-run: error: argument --seed: expects a whole number") \
        and f"got '{seed}'" in err, err


def test_dynamic_dim_needs_a_size(model: Path, capsys):
    status, _, err = run(["--reference", str(model)], capsys)
    assert_one_line_error(status, err, "has dynamic dim 'N'")


def test_missing_model(tmp_path: Path, capsys):
    status, _, err = run(["--reference", str(tmp_path / "absent.onnx")], capsys)
    assert_one_line_error(status, err, "absent.onnx: no such file")


def test_reference_takes_no_device_options(model: Path, capsys):
    status, _, err = run(["--reference", "--fp16", str(model), "--dim", "N=2"], capsys)
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err


def test_mlir_input_after_passes(model: Path, tmp_path: Path, capsys):
    mlir = tmp_path / "net.mlir"
    with pytest.raises(SystemExit) as exit_info:
        translate(["--import-onnx", str(model), "--dim", "N=2", "-o", str(mlir)])
    assert exit_info.value.code == 0
    status, out, err = run(
        ["--reference", str(mlir), "-p", "dce", "--save-dir", str(tmp_path / "o")], capsys
    )
    assert status == 0, err
    assert out.splitlines()[1].split() == ["out/y", "[2,", "4,", "8,", "8]", "float32"]
    assert np.load(tmp_path / "o" / "out_y.npy").shape == (2, 4, 8, 8)


def test_console_entry_point_reports_without_traceback(tmp_path: Path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mobile_opt.tools.mobile_run",
            "--reference",
            str(tmp_path / "none.onnx"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stderr == f"mobile-run: error: {tmp_path / 'none.onnx'}: no such file\n"


@pytest.mark.parametrize("lsbs, status, code", [(1, "PASS", 0), (2, "FAIL", 1)])
def test_a_quantized_output_is_held_to_one_lsb(tmp_path: Path, capsys, monkeypatch,
                                                lsbs, status, code):
    """A QDQ graph's float output: onnxruntime's integer kernels may round once the other way."""
    from mobile_opt.checking import quant_models

    path = tmp_path / "qdq.onnx"
    save(quant_models.conv_model(4, 6, 6, 4, seed=3), path)
    real = model_checks.run_onnxruntime
    scale = float(numpy_helper.to_array(
        next(t for t in quant_models.conv_model(4, 6, 6, 4, seed=3).graph.initializer
             if t.name == "y_scale")))

    def off_by(path, feeds):
        results = real(path, feeds)
        results["y"].flat[7] += np.float32(lsbs * scale)
        return results

    monkeypatch.setattr(model_checks, "run_onnxruntime", off_by)
    code_, out, _ = run(["--reference", str(path)], capsys)
    row = next(line for line in out.splitlines() if line.startswith("y "))
    assert code_ == code and row.endswith(status) and f"{lsbs} LSB" in row


def test_a_solver_that_does_not_apply_is_one_line_naming_the_file(pocl_device, capsys):
    """`--solver chain` on a graph that is not a chain: the pass's diagnostic, with the file."""
    model = str(Path(__file__).parent / "models" / "gpt2_small.onnx")
    status, _, err = run_mobile_run([model, "--solver", "chain"], capsys)
    assert_one_line_error(status, err, f"{model}: select-layouts: solver=chain: not a chain")
