"""`checking`: the criterion outputs are held to, and the verdicts it gives."""

from __future__ import annotations

import numpy as np
import pytest
from harness import run_mobile_run
from onnx import TensorProto, helper, numpy_helper

from mobile_opt.checking import (
    FAIL,
    NO_SIGNAL,
    PASS,
    CheckError,
    Criterion,
    checkable,
    compare,
    comparison_cells,
    criterion,
    onnxruntime_session,
    output_lsbs,
    random_weights,
    relative_error,
    run_onnxruntime,
    worst_relative_error,
)
from mobile_opt.frontend.onnx_import import import_onnx


def _f32(values) -> np.ndarray:
    return np.array(values, np.float32)


@pytest.mark.parametrize(
    "got, want, status, max_abs",
    [
        ([1.0, 2.0], [1.0, 2.0], PASS, 0.0),
        ([1.0, 2.001], [1.0, 2.0], FAIL, 0.001),  # 5e-4 of the scale 2: over 1e-4
        ([1.0, 2.0001], [1.0, 2.0], PASS, 1e-4),  # float32: 2.0001 is 2 + 0.99989e-4
        ([np.nan, np.inf, 2.0], [np.nan, np.inf, 1.0], FAIL, 1.0),
        ([np.nan, np.inf, 1.0], [np.nan, np.inf, 2.0], FAIL, 1.0),
        ([np.nan, -np.inf, 2.0], [np.nan, -np.inf, 2.0], PASS, 0.0),
        ([np.nan, 1.0], [0.0, 1.0], FAIL, np.inf),
        ([np.inf, 1.0], [1.0, 2.0], FAIL, np.inf),
    ],
)
def test_errors_are_judged_against_the_outputs_scale(got, want, status, max_abs):
    result = compare(_f32(got), _f32(want), Criterion(rtol=1e-4, atol=0.0))
    assert result.status == status
    assert result.max_abs == pytest.approx(max_abs, rel=2e-3)


def test_a_tiny_output_is_held_to_its_own_scale():
    """Outputs of 1e-9 are not waved through by an absolute floor."""
    want = _f32([1e-9, -2e-9, 3e-9])
    rule = criterion(want)
    assert rule == Criterion(1e-3, 0.0)
    assert compare(want * 1.5, want, rule).status == FAIL
    close = compare(want * (1 + 1e-5), want, rule)
    assert close.status == PASS and "tiny" in close.note


@pytest.mark.parametrize("want", [[0.0, 0.0, 0.0], [1e-3] * 4, [1e-3, 1e-3 + 1e-10]])
def test_an_output_the_check_cannot_tell_from_a_constant_has_no_signal(want):
    want = _f32(want)
    result = compare(want.copy(), want, criterion(want))
    assert result.status == NO_SIGNAL and result.passed
    # a wrong constant still fails
    assert compare(want + 1, want, criterion(want)).status == FAIL


def test_an_absolute_tolerance_larger_than_the_spread_has_no_signal():
    want = _f32([1e-9, -3e-9, 2e-9])
    assert compare(np.zeros(3, np.float32), want, criterion(want, atol=1e-4)).status == NO_SIGNAL


def test_a_single_value_is_compared():
    assert compare(_f32([2.0]), _f32([2.0]), criterion(_f32([2.0]))).status == PASS


def test_quantized_outputs_are_judged_in_lsbs():
    want = np.array([10, 200, 37], np.uint8)
    rule = criterion(want)
    assert rule == Criterion(0.0, 1.0, 1.0)
    result = compare(np.array([11, 200, 36], np.uint8), want, rule)
    assert result.status == PASS and comparison_cells(result) == ["1", "1 LSB"]
    assert compare(np.array([12, 200, 37], np.uint8), want, rule).status == FAIL
    # exact where the caller asks for it
    assert compare(np.array([11, 200, 37], np.uint8), want,
                   criterion(want, rtol=0, atol=0)).status == FAIL


def test_a_dequantized_output_is_judged_in_its_scale():
    want = _f32([0.5, 1.0, -0.25])
    rule = criterion(want, lsb=0.25)
    assert rule == Criterion(0.0, 0.25, 0.25)
    assert compare(_f32([0.75, 1.0, -0.25]), want, rule).status == PASS
    assert compare(_f32([1.0, 1.0, -0.25]), want, rule).status == FAIL


@pytest.mark.parametrize("got, want, note", [
    (np.zeros(2, np.float32), np.zeros(3, np.float32), "shape [3] expected"),
    (np.zeros(2, np.int32), np.zeros(2, np.int64), "dtype int64 expected"),
])
def test_shape_and_dtype_mismatches(got, want, note):
    result = compare(got, want, Criterion(0, 0))
    assert result.status == FAIL and result.note == note


def test_other_integers_and_booleans_must_match_exactly():
    want = np.array([3, 4], np.int64)
    assert criterion(want) == Criterion(0.0, 0.0)
    assert compare(np.array([3, 5], np.int64), want, criterion(want)).status == FAIL


def test_output_lsbs_come_from_dequantize_linear(tmp_path):
    graph = helper.make_graph(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
            helper.make_node("Relu", ["x"], ["r"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, [4])],
        initializer=[numpy_helper.from_array(np.array(0.125, np.float32), "s"),
                     numpy_helper.from_array(np.array(128, np.uint8), "z")],
    )
    path = tmp_path / "q.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                                       ir_version=10).SerializeToString())
    function = import_onnx(path).body.block.first_op
    assert output_lsbs(function) == {"y": 0.125}


def _conv_bn_model(path):
    """Conv (weights all 0.02, as the onnx package's light models make them) then BN."""
    graph = helper.make_graph(
        [
            helper.make_node("ConstantOfShape", ["w_shape"], ["w"],
                             value=numpy_helper.from_array(np.array([0.02], np.float32))),
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("BatchNormalization", ["c", "g", "b", "m", "v"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 8, 8])],
        initializer=[
            numpy_helper.from_array(np.array([6, 3, 3, 3], np.int64), "w_shape"),
            *(numpy_helper.from_array(np.full(6, 0.02, np.float32), n) for n in "gbmv"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    path.write_bytes(model.SerializeToString())
    return model


def test_random_weights_give_a_constant_weight_model_signal(tmp_path):
    model = _conv_bn_model(tmp_path / "light.onnx")
    x = {"x": np.random.default_rng(3).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)}
    y = run_onnxruntime(tmp_path / "light.onnx", x)["y"]
    assert np.ptp(y[0], axis=0).max() == 0  # every channel computes the same
    randomized = random_weights(model, seed=1)
    assert [n.op_type for n in randomized.graph.node] == ["Conv", "BatchNormalization"]
    (tmp_path / "random.onnx").write_bytes(randomized.SerializeToString())
    y = run_onnxruntime(tmp_path / "random.onnx", x)["y"]
    assert np.ptp(y[0], axis=0).max() > 0.1
    # the statistics were estimated on another input of the same kind: about unit variance
    assert 0.2 < y.std() < 5
    again = random_weights(model, seed=1)
    assert again.SerializeToString() == randomized.SerializeToString()


def test_random_weights_of_the_shipped_light_model(capsys):
    status, out, err = run_mobile_run(
        ["--reference", "onnx:light_squeezenet", "--random-weights"], capsys)
    assert status == 0, err
    assert out.splitlines()[1].split()[-1] == "PASS" and "warning" not in err


def test_relative_error_is_against_the_scale_with_no_floor():
    assert relative_error(_f32([1.0, 2.5]), _f32([1.0, 2.0])) == pytest.approx(0.25)
    # outputs of 1e-9 are held to their own scale, not waved through by a floor
    assert relative_error(_f32([2e-9]), _f32([1e-9])) == pytest.approx(1.0)
    assert relative_error(_f32([np.nan, 1.0]), _f32([np.nan, 1.0])) == 0.0
    assert relative_error(_f32([1.0]), _f32([1.0, 1.0])) == np.inf
    assert relative_error(_f32([0.0, 0.0]), _f32([0.0, 0.0])) == 0.0


def test_worst_relative_error_covers_every_expected_output():
    want = {"a": _f32([1.0, 2.0]), "b": _f32([4.0])}
    assert worst_relative_error({"a": _f32([1.0, 2.2]), "b": _f32([4.0])}, want) == (
        pytest.approx(0.1))
    assert worst_relative_error({"a": want["a"]}, want) == np.inf


def test_checkable_keeps_a_model_with_its_own_weights():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert checkable(model) is model


def test_onnxruntime_failures_are_one_line():
    with pytest.raises(CheckError, match="^onnxruntime: [^\n]*$"):
        onnxruntime_session(b"not a model")
