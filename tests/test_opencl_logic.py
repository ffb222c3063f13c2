"""
What transformer exports run on the OpenCL texture path beyond float arithmetic:
comparisons, boolean logic, Where, Mod, integer Div and Cast, Range, Trilu,
ConstantOfShape and Expand with computed shapes, and Gather with run-time indices
(embedding lookups), over int64/int32 and boolean tensors that live as exact
integers in float pixels.

Every new op gets run-time operands (graph inputs), so nothing is folded away: the
cases sit side by side in one model, which is lowered, built and run on PoCL once
and compared with ONNX Runtime (integers and booleans exactly). A small exported
`nn.TransformerEncoder` with `nn.Embedding` (`tests/models/encoder_emb.onnx`) runs
through `mobile-run` as a user would run it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from harness import lower_for_pocl, prefixed_nodes, run_mobile_run
from mobile_opt.backends.opencl.executor import CompiledModel, OpenCLRunError
from mobile_opt.dialects.texture import Layout
from mobile_opt.transforms.onnx_to_texture.context import Stored
from mobile_opt.transforms.onnx_to_texture.movement import BLOCK, LANES, GatheredAtRunTime
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import TensorType, i64
from xdsl.utils.test_value import create_ssa_value

N = helper.make_node
RNG = np.random.default_rng(18)


def small_ints(*shape: int, dtype=np.float32) -> np.ndarray:
    """Values in -3..3, so that comparisons meet ties."""
    return RNG.integers(-3, 4, shape).astype(dtype)


def bools(*shape: int) -> np.ndarray:
    return RNG.integers(0, 2, shape).astype(np.bool_)


def scalar(value, dtype=np.int64) -> np.ndarray:
    return np.array(value, dtype)


@dataclass
class Case:
    """
    Nodes over graph inputs and constants (both by name, with values), with the
    outputs to compare; `declared` gives output types ONNX cannot infer (shapes
    computed from run-time values); `kernels` the launches expected, if checked.
    """

    nodes: list
    inputs: dict
    outputs: list
    constants: dict = field(default_factory=dict)
    declared: dict = field(default_factory=dict)
    kernels: int | None = None


def one(op_type, inputs, constants=None, declared=None, kernels=None, **attrs) -> Case:
    """One node on the inputs (then the constants, in order), its output 'y'."""
    constants = constants or {}
    return Case([N(op_type, [*inputs, *constants], ["y"], **attrs)], inputs, ["y"], constants,
                {"y": declared} if declared else {}, kernels)


TIES = small_ints(3, 4)
"""Compared with its own row 1: every comparison meets ties, and both outcomes."""
COMPARISONS = ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual")

CASES = {
    # comparisons: float with broadcasting and ties, int64, booleans
    **{f"{op.lower()}_float_bcast": one(op, {"a": TIES, "b": TIES[1]}, kernels=1)
       for op in COMPARISONS},
    **{f"{op.lower()}_int64": one(op, {"a": small_ints(2, 5, dtype=np.int64),
                                       "b": small_ints(2, 5, dtype=np.int64)})
       for op in COMPARISONS},
    "equal_bool": one("Equal", {"a": bools(6), "b": bools(2, 6)}),
    "less_nchw": one("Less", {"a": small_ints(1, 6, 3, 5), "b": small_ints(6, 1, 1)}),
    # boolean logic
    **{f"{op.lower()}_bcast": one(op, {"a": bools(3, 1, 4), "b": bools(2, 1)})
       for op in ("And", "Or", "Xor")},
    "not": one("Not", {"a": bools(3, 5)}),
    "isnan": one("IsNaN", {"a": np.array([0, np.nan, np.inf, -np.inf, -1.5, np.nan], np.float32)}),
    "isinf": one("IsInf", {"a": np.array([0, np.nan, np.inf, -np.inf, 3e38, -2], np.float32)}),
    "isinf_negative": one("IsInf", {"a": np.array([np.inf, -np.inf, 1, np.nan], np.float32)},
                          detect_positive=0),
    # Where: masks filled with -inf, int64 selections, an nc4hw4 operand
    "where_mask_fill": one("Where", {"c": bools(2, 1, 1, 5), "x": RNG.standard_normal(
        (2, 3, 4, 5)).astype(np.float32)}, {"fill": scalar(-np.inf, np.float32)}),
    "where_int64": one("Where", {"c": bools(2, 1, 5), "x": small_ints(3, 5, dtype=np.int64),
                                 "z": small_ints(1, dtype=np.int64)}),
    # integer division and remainders of both signs; C's fmod on floats
    **{f"mod_int64_fmod{fmod}": one("Mod", {"a": RNG.integers(-20, 21, (4, 6)),
                                            "b": np.array([-7, -3, 2, 5, 9, -1])}, fmod=fmod)
       for fmod in (0, 1)},
    "mod_int32_bcast": one("Mod", {"a": small_ints(3, 4, dtype=np.int32),
                                   "b": np.array([2, -3], np.int32).reshape(2, 1, 1)}),
    "mod_float": one("Mod", {
        "a": np.array([7.0, -7.0, 5.5, -5.5, 1e6 + 0.5, 0.3, 3.0, -2.25], np.float32),
        "b": np.array([0.1, 0.1, -2.0, 2.0, 3.0, 0.1, 0.75, 0.5], np.float32)}, fmod=1),
    "div_int64": one("Div", {"a": RNG.integers(-50, 50, (3, 4)), "b": np.array([-4, 3, 7, -1])}),
    # casts between float, integers and booleans
    "cast_float_int64": one("Cast", {"a": np.array([-2.7, -0.5, 0, 0.5, 2.7, 99.9], np.float32)},
                            to=TensorProto.INT64),
    "cast_float_bool": one("Cast", {"a": np.array([0, -0.0, 1.5, -2, 1e-3, np.nan], np.float32)},
                           to=TensorProto.BOOL),
    "cast_bool_float": one("Cast", {"a": bools(7)}, to=TensorProto.FLOAT),
    "cast_int64_float": one("Cast", {"a": RNG.integers(-1000, 1000, (9,))}, to=TensorProto.FLOAT),
    "cast_int64_bool": one("Cast", {"a": small_ints(9, dtype=np.int64)}, to=TensorProto.BOOL),
    # padding masks as exporters write them: each chain runs in one kernel
    "mask_chain": Case(
        [N("Equal", ["ids", "zero"], ["pad"]), N("Where", ["pad", "fill", "x"], ["w"]),
         N("Add", ["w", "b"], ["y"])],
        {"ids": RNG.integers(0, 3, (2, 9)), "x": RNG.standard_normal((2, 9)).astype(np.float32),
         "b": RNG.standard_normal(9).astype(np.float32)},
        ["y"], {"zero": scalar(0), "fill": scalar(-np.inf, np.float32)}, kernels=1),
    "keep_chain": Case(
        [N("Equal", ["ids", "zero"], ["pad"]), N("Not", ["pad"], ["keep"]),
         N("Cast", ["keep"], ["k"], to=TensorProto.FLOAT), N("Mul", ["k", "x"], ["y"])],
        {"ids": RNG.integers(0, 3, (2, 9)), "x": RNG.standard_normal((2, 9)).astype(np.float32)},
        ["y"], {"zero": scalar(0)}, kernels=1),
    # Range, Trilu, ConstantOfShape and Expand from run-time values
    "range_int64": one("Range", {"s": scalar(-3), "l": scalar(20), "d": scalar(4)},
                       declared=(TensorProto.INT64, [6])),
    "range_float": one("Range", {"s": scalar(0.5, np.float32), "l": scalar(3.7, np.float32),
                                 "d": scalar(0.25, np.float32)},
                       declared=(TensorProto.FLOAT, [13])),
    "range_down_const_delta": one("Range", {"s": scalar(9, np.int32), "l": scalar(-1, np.int32)},
                                  {"d": scalar(-2, np.int32)}, declared=(TensorProto.INT32, [5])),
    "trilu_upper": one("Trilu", {"x": RNG.standard_normal((2, 5, 6)).astype(np.float32)}),
    "trilu_lower_k": one("Trilu", {"x": RNG.standard_normal((3, 5, 6)).astype(np.float32),
                                   "k": scalar(-1)}, upper=0),
    "trilu_int64_k": one("Trilu", {"x": small_ints(4, 7, dtype=np.int64)}, {"k": scalar(2)}),
    "trilu_nchw": one("Trilu", {"x": RNG.standard_normal((1, 6, 5, 7)).astype(np.float32),
                                "k": scalar(1)}),
    "fill_float": one("ConstantOfShape", {"s": np.array([2, 3, 5])},
                      value=numpy_helper.from_array(np.array([2.5], np.float32)),
                      declared=(TensorProto.FLOAT, [2, 3, 5])),
    "fill_int64": one("ConstantOfShape", {"s": np.array([4, 6])},
                      value=numpy_helper.from_array(np.array([7], np.int64)),
                      declared=(TensorProto.INT64, [4, 6])),
    "expand_run_time_shape": one("Expand", {"x": RNG.standard_normal((3, 1)).astype(np.float32),
                                            "s": np.array([2, 3, 4])},
                                 declared=(TensorProto.FLOAT, [2, 3, 4])),
    # Gather with run-time indices
    "gather_embedding": Case([N("Gather", ["emb", "ids"], ["y"])],
                             {"ids": np.array([[0, 1, 49, 7, 0, 9, 4], [3, 0, -1, -50, 2, 0, 11]])},
                             ["y"], {"emb": RNG.standard_normal((50, 12)).astype(np.float32)},
                             kernels=1),
    "gather_packed_axis": one("Gather", {"x": RNG.standard_normal((2, 5, 6)).astype(np.float32),
                                         "i": np.array([[5, 0], [-2, 3]], np.int32)}, axis=-1),
    "gather_middle_axis": one("Gather", {"x": RNG.standard_normal((2, 5, 6)).astype(np.float32),
                                         "i": np.array([4, -1, 0])}, axis=1),
    "gather_scalar_index": one("Gather", {"x": RNG.standard_normal((5, 6)).astype(np.float32),
                                          "i": scalar(-2)}),
    "gather_nchw_rows": one("Gather", {"x": RNG.standard_normal((1, 6, 5, 7)).astype(np.float32),
                                       "i": np.array([4, 0])}, axis=2),
    "gather_nchw_channels": one("Gather", {"x": RNG.standard_normal((1, 6, 5, 7)).astype(
        np.float32), "i": np.array([5, -6, 2])}, axis=1),
    "gather_into_channels": one("Gather", {"x": RNG.standard_normal((10, 5, 7)).astype(np.float32),
                                           "i": np.array([[9, 0, -3]])}),
    # x sits next to a MatMul (rows4), its gathered rows not (nc4hw4): lanes differ in layout
    "gather_rows4_to_nc4hw4": Case(
        [N("MatMul", ["x", "w"], ["p"]), N("Gather", ["x", "i"], ["y"], axis=0)],
        {"x": RNG.standard_normal((2, 6, 5, 7)).astype(np.float32), "i": np.array([1])},
        ["y", "p"], {"w": RNG.standard_normal((7, 3)).astype(np.float32)}),
    "gather_int64_table": Case([N("Gather", ["t", "i"], ["y"])],
                               {"i": np.array([[3, 0], [19, -4]])}, ["y"],
                               {"t": RNG.integers(-5000, 5000, (20,))}),
    "gather_computed_data": Case(
        [N("Relu", ["x"], ["r"]), N("Gather", ["r", "i"], ["y"], axis=0)],
        {"x": RNG.standard_normal((6, 8)).astype(np.float32), "i": np.array([5, 5, 0])}, ["y"]),
}


def build_model(cases: dict[str, Case]) -> onnx.ModelProto:
    """The cases side by side in one model, each one's names prefixed by its own name."""
    nodes, inputs, outputs, initializers = [], [], [], []
    for case_name, case in cases.items():
        def named(n: str, prefix: str = case_name) -> str:
            return f"{prefix}.{n}"

        nodes += prefixed_nodes(case_name, case.nodes)
        inputs += [helper.make_tensor_value_info(
            named(n), helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for n, v in case.inputs.items()]
        outputs += [helper.make_tensor_value_info(named(n), *case.declared[n])
                    if n in case.declared else onnx.ValueInfoProto(name=named(n))
                    for n in case.outputs]
        initializers += [numpy_helper.from_array(v, named(n)) for n, v in case.constants.items()]
    graph = helper.make_graph(nodes, "logic", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return onnx.shape_inference.infer_shapes(model)


def feeds_of(cases: dict[str, Case]) -> dict[str, np.ndarray]:
    return {f"{c}.{n}": v for c, case in cases.items() for n, v in case.inputs.items()}


def assert_matches(got: np.ndarray, want: np.ndarray, rtol: float = 1e-5) -> None:
    """Integers and booleans exactly; floats to `rtol` of the output's range (infinities equal)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        scale = float(np.abs(want[np.isfinite(want)]).max(initial=1.0))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


def run_both(path, cases: dict[str, Case], device, fp16: bool = False):
    """(GPU outputs, ONNX Runtime outputs, kernels' node labels) of the cases' model."""
    onnx.save(build_model(cases), str(path))
    module = lower_for_pocl(path, fp16=fp16)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = feeds_of(cases)
    names = [o.name for o in session.get_outputs()]
    expected = dict(zip(names, session.run(None, feeds), strict=True))
    result = CompiledModel(module, device).run(feeds)
    return result.outputs, expected, [k.node for k in result.kernel_times], module


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory, pocl_device):
    return run_both(tmp_path_factory.mktemp("logic") / "model.onnx", CASES, pocl_device)[:3]


@pytest.mark.parametrize("name", list(CASES))
def test_matches_onnxruntime(name, gpu_run):
    outputs, expected, kernel_nodes = gpu_run
    for output in CASES[name].outputs:
        key = f"{name}.{output}"
        assert_matches(outputs[key], expected[key])
    if CASES[name].kernels is not None:
        launched = [node for node in kernel_nodes if f"'{name}." in node]
        assert len(launched) == CASES[name].kernels, launched


def test_run_time_gather_methods():
    """Whole pixels where no packed axis meets the gathered ones, whatever the indices hold."""
    def method(layout, data, indices, axis, out_layout):
        out = data[:axis] + indices + data[axis + 1:]
        gather = GatheredAtRunTime(None, out, axis, create_ssa_value(TensorType(i64, indices)))
        return gather.method(Stored(None, layout, data), out_layout)

    assert method(Layout.ROWS4, (50, 12), (2, 7), 0, Layout.ROWS4) == BLOCK  # an embedding
    assert method(Layout.ROWS4, (2, 5, 6), (3,), 1, Layout.ROWS4) == BLOCK
    assert method(Layout.NC4HW4, (1, 6, 5, 7), (2,), 2, Layout.NC4HW4) == BLOCK
    assert method(Layout.ROWS4, (2, 5, 6), (2, 2), 2, Layout.ROWS4) == LANES  # the packed axis
    assert method(Layout.NC4HW4, (1, 6, 5, 7), (3,), 1, Layout.NC4HW4) == LANES  # channels
    assert method(Layout.ROWS4, (20,), (2, 2), 0, Layout.ROWS4) == LANES  # into the packed axis
    assert method(Layout.ROWS4, (10, 5, 7), (1, 3), 0, Layout.NC4HW4) == LANES  # into channels
    assert method(Layout.ROWS4, (2, 6, 5, 7), (1,), 0, Layout.NC4HW4) == LANES  # layouts differ


def test_masks_are_not_trivial(gpu_run):
    """The cases see both outcomes: a mask that is all true or all false tests little."""
    _, expected, _ = gpu_run
    for name in ("mask_chain", "where_mask_fill"):
        y = expected[f"{name}.y"]
        assert np.isinf(y).any() and np.isfinite(y).any()
    for op in COMPARISONS:
        y = expected[f"{op.lower()}_float_bcast.y"]
        assert y.any() and not y.all()


FP16_CASES = {
    # integers above 2048, which half pixels would round, stay exact under f16 storage
    "add_int64": one("Add", {"a": RNG.integers(-30000, 30000, (3, 5))}, {"b": scalar(4097)}),
    "gather_int64_table": CASES["gather_int64_table"],
    "gather_embedding": CASES["gather_embedding"],
    "mask_chain": CASES["mask_chain"],
}


def test_integers_stay_exact_under_f16_storage(tmp_path, pocl_device):
    outputs, expected, _, module = run_both(tmp_path / "f16.onnx", FP16_CASES, pocl_device,
                                            fp16=True)
    for name, case in FP16_CASES.items():
        for output in case.outputs:
            key = f"{name}.{output}"
            assert_matches(outputs[key], expected[key], rtol=1e-2)
    # the int64 tensors' storage is f32, the float ones' f16
    kinds = {op.source.type.element_type.name if hasattr(op, "source") else "": op.result.type
             for op in module.walk() if op.name == "texture.pack"}
    assert any(str(t).endswith("xf32>") for t in kinds.values())
    assert any(str(t).endswith("xf16>") for t in kinds.values())


def test_inputs_beyond_exact_integers_are_refused(tmp_path, pocl_device):
    case = {"c": Case([N("Gather", ["t", "i"], ["y"])], {"i": np.array([1, 2])}, ["y"],
                      {"t": RNG.standard_normal((3, 4)).astype(np.float32)})}
    path = tmp_path / "big.onnx"
    onnx.save(build_model(case), str(path))
    compiled = CompiledModel(lower_for_pocl(path), pocl_device)
    assert compiled.run({"c.i": np.array([1, 2])}).outputs["c.y"].shape == (2, 4)
    with pytest.raises(OpenCLRunError, match=r"input 'c.i': integers beyond ±2\^24"):
        compiled.run({"c.i": np.array([1, 2**24 + 1])})


ENCODER = Path(__file__).resolve().parent / "models" / "encoder_emb.onnx"
"""A 2-layer nn.TransformerEncoder with nn.Embedding, as torch's dynamo exporter writes it
(`bench/encoder_emb.py`)."""


def encoder_ids(tmp_path: Path) -> tuple[np.ndarray, str]:
    """Token ids, the second row padded (0) after 9 tokens, and `--input` for them."""
    ids = np.random.default_rng(5).integers(1, 100, (2, 16))
    ids[1, 9:] = 0
    np.save(tmp_path / "ids.npy", ids)
    return ids, f"ids={tmp_path / 'ids.npy'}"


def test_exported_encoder_with_embedding_on_pocl(tmp_path, capsys, pocl_device):
    """
    Token ids with padding through the whole `mobile-run` pipeline against onnxruntime:
    the embedding Gather and the padding mask's Equal and Where run on the GPU.
    """
    ids, given = encoder_ids(tmp_path)
    status, out, err = run_mobile_run([str(ENCODER), "--input", given, "--device", "pocl",
                                       "--save-dir", str(tmp_path / "run")], capsys)
    assert status == 0 and "logits" in out and "PASS" in out, out + err
    plan = json.loads((tmp_path / "run" / "plan.json").read_text())
    nodes = " ".join(launch["node"] for launch in plan["launches"])
    for op in ("(Gather)", "(Equal)", "(Where)"):
        assert op in nodes, f"no kernel runs {op}"
    # the mask matters: the padded row's logits differ from those of its unmasked run
    session = ort.InferenceSession(str(ENCODER), providers=["CPUExecutionProvider"])
    masked = session.run(None, {"ids": ids})[0]
    unmasked = session.run(None, {"ids": np.where(ids == 0, 1, ids)})[0]
    assert np.abs(masked[1, :9] - unmasked[1, :9]).max() > 1e-3


def test_exported_encoder_with_embedding_in_the_reference(tmp_path, capsys):
    _, given = encoder_ids(tmp_path)
    status, out, err = run_mobile_run([str(ENCODER), "--input", given, "--reference"], capsys)
    assert status == 0 and "PASS" in out, out + err
