"""`run_reference`: binding inputs, naming outputs, one-line errors, and IR with fused ops."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, load, numpy_helper, save
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.parser import Parser

from mobile_opt.reference.errors import ReferenceRunError
from mobile_opt.reference.interpreter import run_reference
from mobile_opt.dialects.onnx import ONNX
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.tools.cli import USER_ERRORS

RNG = np.random.default_rng(3)


def two_output_model(tmp_path: Path) -> Path:
    """`sum = x + w` (w a 64-element initializer, so an onnx.Weight) and `pick = Gather(x, idx)`."""
    w = RNG.uniform(-1, 1, (4, 16)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["x", "w"], ["sum"], name="adder"),
            helper.make_node("Gather", ["x", "idx"], ["pick"], name="picker", axis=1),
        ],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16]),
            helper.make_tensor_value_info("idx", TensorProto.INT64, [3]),
        ],
        [
            helper.make_tensor_value_info("sum", TensorProto.FLOAT, [4, 16]),
            helper.make_tensor_value_info("pick", TensorProto.FLOAT, [4, 3]),
        ],
        initializer=[numpy_helper.from_array(w, "w")],
    )
    path = tmp_path / "two.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10), path)
    return path


@pytest.fixture
def module_and_weight(tmp_path: Path) -> tuple[ModuleOp, np.ndarray]:
    path = two_output_model(tmp_path)
    w = numpy_helper.to_array(load(path).graph.initializer[0])
    return import_onnx(path), w


def test_runs_by_name_and_by_position(module_and_weight):
    module, w = module_and_weight
    x = RNG.uniform(-1, 1, (4, 16)).astype(np.float32)
    idx = np.array([0, -1, 5], np.int64)
    by_name = run_reference(module, {"idx": idx, "x": x})
    by_position = run_reference(module, [x, idx])
    assert list(by_name) == ["sum", "pick"]
    for got in (by_name, by_position):
        np.testing.assert_array_equal(got["sum"], x + w)
        np.testing.assert_array_equal(got["pick"], x[:, [0, 15, 5]])


@pytest.mark.parametrize(
    "inputs, message",
    [
        ({"x": np.zeros((4, 16), np.float32)}, "input 'idx' is not given"),
        (
            {"x": np.zeros((4, 16), np.float32), "idx": np.zeros(3, np.int64), "y": np.zeros(1)},
            "unknown input 'y'; the model's inputs are x, idx",
        ),
        ([np.zeros((4, 16), np.float32)], "expected 2 inputs, got 1"),
        (
            {"x": np.zeros((4, 16)), "idx": np.zeros(3, np.int64)},
            "input 'x' has dtype float64, expected float32",
        ),
        (
            {"x": np.zeros((16, 4), np.float32), "idx": np.zeros(3, np.int64)},
            r"input 'x' has shape \[16, 4\], expected \[4, 16\]",
        ),
    ],
)
def test_bad_inputs_are_one_line_errors(module_and_weight, inputs, message):
    module, _ = module_and_weight
    with pytest.raises(ReferenceRunError, match=message) as info:
        run_reference(module, inputs)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, USER_ERRORS)


def test_a_failing_kernel_names_the_op_and_node(module_and_weight):
    module, _ = module_and_weight
    inputs = {"x": np.zeros((4, 16), np.float32), "idx": np.array([1, 16, 2], np.int64)}
    with pytest.raises(ReferenceRunError) as info:
        run_reference(module, inputs)
    assert str(info.value) == "onnx.Gather 'picker': an index is out of range [-16, 15]"


def test_missing_function(module_and_weight):
    module, _ = module_and_weight
    with pytest.raises(ReferenceRunError, match="the module has no function @forward"):
        run_reference(module, [], function="forward")


def test_outputs_do_not_alias_inputs(tmp_path: Path):
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10),
        tmp_path / "id.onnx",
    )
    x = np.arange(3, dtype=np.float32)
    y = run_reference(import_onnx(tmp_path / "id.onnx"), [x])["y"]
    assert not np.shares_memory(x, y)


def parse(text: str) -> ModuleOp:
    ctx = Context()
    for dialect in (Builtin, Func, Arith, ONNX):
        ctx.load_dialect(dialect)
    return Parser(ctx, text).parse_module()


def test_an_op_without_kernel_is_reported_before_running():
    module = parse(
        """
        func.func @main_graph() -> tensor<2xf32> {
          %c = arith.constant dense<1.0> : tensor<2xf32>
          func.return %c : tensor<2xf32>
        }
        """
    )
    with pytest.raises(
        ReferenceRunError,
        match="arith.constant: the reference interpreter has no kernel for this op",
    ):
        run_reference(module, [])


UNFUSED = """
func.func @main_graph(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>,
                      %a: tensor<4x6xf32>, %m: tensor<6x3xf32>, %c: tensor<3xf32>)
    -> (tensor<1x3x5x5xf32>, tensor<4x3xf32>) {
  %conv = onnx.Conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %relu = onnx.Relu %conv : (tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %mm = onnx.MatMul %a, %m : (tensor<4x6xf32>, tensor<6x3xf32>) -> tensor<4x3xf32>
  %add = onnx.Add %mm, %c : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %lo = onnx.Constant {value = dense<-0.5> : tensor<f32>} : tensor<f32>
  %hi = onnx.Constant {value = dense<0.5> : tensor<f32>} : tensor<f32>
  %clip = onnx.Clip %add, %lo, %hi : (tensor<4x3xf32>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
  func.return %relu, %clip : tensor<1x3x5x5xf32>, tensor<4x3xf32>
}
"""

FUSED = """
func.func @main_graph(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>,
                      %a: tensor<4x6xf32>, %m: tensor<6x3xf32>, %c: tensor<3xf32>)
    -> (tensor<1x3x5x5xf32>, tensor<4x3xf32>) {
  %conv = onnx.FusedConv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, activation = "Relu"}
      : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %mm = onnx.FusedMatMul %a, %m, %c {activation = "Clip", activation_params = array<f32: -0.5, 0.5>}
      : (tensor<4x6xf32>, tensor<6x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return %conv, %mm : tensor<1x3x5x5xf32>, tensor<4x3xf32>
}
"""


def test_fused_ir_runs_like_its_unfused_form():
    inputs = [
        RNG.uniform(-1, 1, shape).astype(np.float32)
        for shape in ((1, 2, 5, 5), (3, 2, 3, 3), (3,), (4, 6), (6, 3), (3,))
    ]
    unfused = run_reference(parse(UNFUSED), inputs)
    fused = run_reference(parse(FUSED), inputs)
    assert list(fused) == ["output_0", "output_1"]  # no ONNX names in hand-written IR
    for name in unfused:
        np.testing.assert_allclose(fused[name], unfused[name], rtol=1e-6, atol=1e-6)


def test_weight_store_rereads_a_rewritten_file(tmp_path):
    """A model file rewritten in place must not serve the old weights from the cache."""
    import os

    from mobile_opt.dialects.weights import load_weight

    path = tmp_path / "w.npy"
    np.save(path, np.zeros(4, np.float32))
    assert load_weight(str(path), "").tolist() == [0, 0, 0, 0]
    np.save(path, np.ones(4, np.float32))
    os.utime(path, ns=(1, 10**18))  # a different modification time, however fast the rewrite
    assert load_weight(str(path), "").tolist() == [1, 1, 1, 1]
