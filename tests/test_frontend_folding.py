"""
The importer folds the constant subgraphs of torch exports before it judges their
ops (`frontend/folding.py`), and sizes each dynamic dim on its own (`frontend/dims.py`):
the folded models run on PoCL and on the numpy reference against onnxruntime.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from folding_models import F, attention, channel_split, unnamed_dims
from harness import assert_one_line_error, run_mobile_run
from onnx import helper, numpy_helper

from mobile_opt.dialects.onnx.constants import WeightOp
from mobile_opt.frontend.folding import FOLD_LIMIT
from mobile_opt.frontend.onnx_import import import_onnx

CASES = {
    "channel_split_opset17": (lambda: channel_split(opset=17), ["--dim", "N=2"]),
    "channel_split_opset18": (lambda: channel_split(opset=18), ["--dim", "N=3"]),
    "attention": (attention, []),
    "unnamed_dims": (unnamed_dims, ["--dim", "x:0=1", "--dim", "x:2=5", "--dim", "x:-1=7"]),
}


def save(tmp_path: Path, name: str, model: onnx.ModelProto) -> Path:
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    return path


def op_names(path: Path, dims: dict[str, int] | None = None) -> list[str]:
    return [op.name for op in import_onnx(path, dims).walk() if op.name.startswith("onnx.")]


@pytest.mark.parametrize("name", CASES)
def test_folded_model_runs_on_pocl(name: str, tmp_path: Path, pocl_device, capsys):
    build, dims = CASES[name]
    path = save(tmp_path, name, build())
    status, out, err = run_mobile_run([str(path), *dims], capsys)
    assert status == 0, out + err
    assert "Portable Computing Language" in out.splitlines()[0]
    row = next(line for line in out.splitlines() if line.startswith("y "))
    assert row.endswith("PASS"), out


@pytest.mark.parametrize("name", CASES)
def test_folded_model_runs_on_the_reference(name: str, tmp_path: Path, capsys):
    build, dims = CASES[name]
    path = save(tmp_path, name, build())
    status, out, err = run_mobile_run(["--reference", str(path), *dims], capsys)
    assert status == 0, out + err
    assert next(line for line in out.splitlines() if line.startswith("y ")).endswith("PASS")


@pytest.mark.parametrize("name", CASES)
def test_outputs_are_large_enough_to_check(name: str, tmp_path: Path):
    """The PASSes above say something: the outputs are O(1), not near zero."""
    model = CASES[name][0]()
    session = onnxruntime.InferenceSession(model.SerializeToString())
    shape = [d.dim_value or 2 for d in model.graph.input[0].type.tensor_type.shape.dim]
    shape = [d if d > 0 else 2 for d in shape]
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    (y,) = session.run(None, {"x": x})
    assert np.abs(y).max() > 0.1


def test_only_run_time_ops_are_left(tmp_path: Path):
    split = op_names(save(tmp_path, "split", channel_split()), {"N": 2})
    assert not {"onnx.Shape", "onnx.Gather", "onnx.Add", "onnx.Div", "onnx.Mul"} & set(split)
    assert split.count("onnx.Slice") == 2
    ops = op_names(save(tmp_path, "attention", attention()))
    assert not {"onnx.Shape", "onnx.ConstantOfShape", "onnx.Expand", "onnx.Cast"} & set(ops)
    # weight-only arithmetic the dialect supports is left to onnx-fold-constants
    assert "onnx.Transpose" in ops


def _shape_model(shape: list[int], output_of_shape: bool = False) -> onnx.ModelProto:
    """x -> Relu; Shape(x) -> ConstantOfShape (a derived value of x's size) -> Add."""
    fill = numpy_helper.from_array(np.array([0.5], np.float32))
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("ConstantOfShape", ["s"], ["half"], name="fill", value=fill),
        helper.make_node("Add", ["r", "half"], ["y"], name="add"),
    ]
    outputs = [helper.make_tensor_value_info("y", F, shape)]
    if output_of_shape:
        nodes.append(helper.make_node("Shape", ["y"], ["dims"], name="dims"))
        outputs.append(helper.make_tensor_value_info("dims", onnx.TensorProto.INT64, [3]))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, shape)], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def test_a_derived_value_folds_up_to_the_limit(tmp_path: Path):
    small = op_names(save(tmp_path, "small", _shape_model([1, 4, 4])))
    assert "onnx.ConstantOfShape" not in small and "onnx.Shape" not in small
    # a derived value over FOLD_LIMIT elements is computed at run time; its shape folds
    side = int(np.sqrt(FOLD_LIMIT)) + 1
    large = op_names(save(tmp_path, "large", _shape_model([1, side, side])))
    assert "onnx.ConstantOfShape" in large and "onnx.Shape" not in large


def test_a_shape_that_only_a_graph_output_reads_stays(tmp_path: Path, capsys):
    path = save(tmp_path, "out", _shape_model([1, 4, 4], output_of_shape=True))
    assert op_names(path).count("onnx.Shape") == 1
    status, out, err = run_mobile_run(["--reference", str(path)], capsys)
    assert status == 0 and out.count("PASS") == 2, out + err


def test_a_large_fold_the_dialect_needs_is_a_derived_weight(tmp_path: Path, capsys):
    """Where over a 64x64 weight has no dialect op: it folds, and is stored, not printed."""
    rng = np.random.default_rng(4)
    w = numpy_helper.from_array(rng.uniform(-1, 1, (64, 64)).astype(np.float32), "w")
    zero = numpy_helper.from_array(np.array(0.0, np.float32), "zero")
    graph = helper.make_graph(
        [
            helper.make_node("Greater", ["w", "zero"], ["positive"], name="greater"),
            helper.make_node("Where", ["positive", "w", "zero"], ["relu_w"], name="where"),
            helper.make_node("MatMul", ["x", "relu_w"], ["y"], name="matmul"),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, [2, 64])],
        [helper.make_tensor_value_info("y", F, [2, 64])],
        [w, zero],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    path = save(tmp_path, "where", model)
    weights = [op for op in import_onnx(path).walk() if isinstance(op, WeightOp)]
    assert [op.store.data.endswith(".npy") for op in weights] == [True]
    status, out, err = run_mobile_run(["--reference", str(path)], capsys)
    assert status == 0 and "PASS" in out, out + err


@pytest.mark.parametrize(
    "dims, message",
    [
        ([], "input 'x' has dynamic dims #0 (-1), #2 ('?'), #3 ('?'); a static shape is needed"),
        (["x:0=1", "x:2=5"], "input 'x' has dynamic dim #3 ('?')"),
        (["?=5"], "--dim ?=5: no input dim is named '?'"),
        (["x=1"], "--dim x=1: no input dim is named 'x' ('x' is an input"),
        (["y:0=1"], "--dim y:0=1: the model has no input 'y' (inputs: x)"),
        (["x:4=1"], "--dim x:4=1: input 'x' has 4 axes, no axis 4"),
        (["x:1=4"], "--dim x:1=4: axis 1 of input 'x' is static (3)"),
    ],
)
def test_dims_left_dynamic_or_sizing_nothing_are_one_line(
    dims: list[str], message: str, tmp_path: Path, capsys
):
    path = save(tmp_path, "ppocr", unnamed_dims())
    argv = [str(path)] + [arg for d in dims for arg in ("--dim", d)]
    status, _, err = run_mobile_run(argv, capsys)
    assert_one_line_error(status, err, message)


def test_a_malformed_dim_is_a_usage_error(tmp_path: Path, capsys):
    path = save(tmp_path, "ppocr", unnamed_dims())
    status, _, err = run_mobile_run([str(path), "--dim", "x:0=0"], capsys)
    assert_one_line_error(status, err, "--dim expects NAME=N or INPUT:AXIS=N with N >= 1, "
                          "got 'x:0=0'", code=2)
