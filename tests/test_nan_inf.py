"""
NaN and ±inf through the ops whose handling of them differs between implementations:
each case is a tiny model fed NaN, +inf and -inf at chosen places (padding borders,
both horizontal and vertical taps of a conv's weight), run by onnxruntime, the numpy
reference and OpenCL on PoCL. NaNs must sit at the same places, infinities be equal,
the rest within tolerance. Where onnxruntime's answer depends on where a NaN sits in a
window (MaxPool, ReduceMax) or on which of its kernels runs (a grouped conv's padding),
the defined semantics is checked instead (README, "NaN and infinity").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from harness import lower_for_pocl, run_mobile_run

from mobile_opt.checking import FAIL, PASS, compare, compare_lsb, criterion, run_onnxruntime
from mobile_opt.pipelines import GRAPH_PASSES

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("pyopencl")

from onnx import TensorProto, helper

NAN, INF = np.nan, np.inf
SPECIALS = {(0, 0, 0, 0): NAN, (0, 1, 2, 4): INF, (0, 2, 4, 0): -INF, (0, 3, 1, 2): NAN,
            (0, 0, 4, 5): NAN, (0, 1, 0, 5): -INF}
"""Where the input of shape `SHAPE` holds NaN and ±inf: corners and borders (each a
padded window's first or last tap) and the inside."""
SHAPE = [1, 4, 5, 6]


def specials(shape=SHAPE, seed=0, at=SPECIALS) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    for index, value in at.items():
        x[index] = value
    return x


@dataclass
class Case:
    nodes: list
    inputs: dict[str, np.ndarray]
    weights: dict[str, np.ndarray] = field(default_factory=dict)
    oracle: str = "onnxruntime"
    """"onnxruntime", or "reference" where onnxruntime's answer is not one (see above)."""
    passes: tuple[str, ...] = ()

    def save(self, path: Path) -> Path:
        def info(name: str, shape) -> onnx.ValueInfoProto:
            return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)

        graph = helper.make_graph(
            self.nodes, "g", [info(n, list(v.shape)) for n, v in self.inputs.items()],
            [info("y", None)],
            [helper.make_tensor(n, TensorProto.INT64 if a.dtype == np.int64 else
                                TensorProto.FLOAT, a.shape, a.ravel())
             for n, a in self.weights.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 9
        onnx.save(onnx.shape_inference.infer_shapes(model), path)
        return path


def node(op: str, inputs, **attrs) -> onnx.NodeProto:
    return helper.make_node(op, inputs, ["y"], **attrs)


def unary(op: str, **attrs) -> Case:
    return Case([node(op, ["x"], **attrs)], {"x": specials()})


def clip(lo, hi) -> Case:
    weights = {n: np.array(v, np.float32) for n, v in (("lo", lo), ("hi", hi)) if v is not None}
    operands = ["x", "lo" if lo is not None else "", "hi" if hi is not None else ""]
    while not operands[-1]:
        operands.pop()
    return Case([node("Clip", operands)], {"x": specials()}, weights)


def variadic(op: str, n: int) -> Case:
    inputs = {f"x{i}": specials(seed=i, at={k: v for j, (k, v) in enumerate(SPECIALS.items())
                                            if j % n == i or i == 0 and j == 0})
              for i in range(n)}
    inputs["x1"][0, 1, 2, 4] = -INF  # +inf against -inf
    return Case([node(op, list(inputs))], inputs)


def fused(producer: str, activation: str, **attrs) -> Case:
    """`activation` after an Add or a Conv, fused into its kernel by onnx-fuse."""
    x = specials()
    if producer == "Add":
        nodes = [helper.make_node("Add", ["x", "b"], ["t"])]
        weights = {"b": np.random.default_rng(5).standard_normal(SHAPE).astype(np.float32)}
    else:
        nodes = [helper.make_node("Conv", ["x", "w"], ["t"], pads=[1, 1, 1, 1])]
        weights = {"w": np.random.default_rng(5).standard_normal((8, 4, 3, 3)).astype(np.float32)}
    if activation == "Clip":
        weights |= {"lo": np.array(0.0, np.float32), "hi": np.array(6.0, np.float32)}
        nodes.append(helper.make_node("Clip", ["t", "lo", "hi"], ["y"]))
    else:
        nodes.append(helper.make_node(activation, ["t"], ["y"], **attrs))
    return Case(nodes, {"x": x}, weights)


TAPS = {"top": (0, 1), "bottom": (2, 1), "left": (1, 0), "right": (1, 2), "corner": (0, 0)}
"""A 3x3 weight's taps that meet the padding in the first or last row or column."""


def conv(tap: str, value: float, group: int = 1, channels: int = 4, oracle="onnxruntime",
         runtime_weight: bool = False, passes=(), **attrs) -> Case:
    """A padded 3x3 conv whose weight holds `value` at `tap` of output channel 1, input
    channel 0 of its group; the input finite (else every tap would tell)."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((channels, channels // group, 3, 3)).astype(np.float32)
    w[(1, 0, *TAPS[tap])] = value
    x = rng.standard_normal([1, channels, 5, 6]).astype(np.float32)
    attrs = {"pads": [1, 1, 1, 1], "group": group, **attrs}
    if runtime_weight:
        return Case([node("Conv", ["x", "w"], **attrs)], {"x": x, "w": w}, oracle=oracle,
                    passes=passes)
    return Case([node("Conv", ["x", "w"], **attrs)], {"x": x}, {"w": w}, oracle, passes)


def conv_transpose(tap: str, value: float) -> Case:
    w = np.random.default_rng(4).standard_normal((4, 4, 3, 3)).astype(np.float32)
    w[(0, 1, *TAPS[tap])] = value
    x = np.random.default_rng(5).standard_normal(SHAPE).astype(np.float32)
    return Case([node("ConvTranspose", ["x", "w"], pads=[1, 1, 1, 1], strides=[2, 2])],
                {"x": x}, {"w": w})


def softmax_rows() -> Case:
    rows = [[INF, 1, 2, 3], [-INF, 1, 2, 3], [-INF] * 4, [INF, INF, 0, 0], [NAN, 1, 2, 3],
            [1, 2, 3, 4]]
    return Case([node("Softmax", ["x"], axis=-1)], {"x": np.array(rows, np.float32)})


def pad(value: float | None, mode: str = "constant") -> Case:
    weights = {"p": np.array([0, 0, 1, 2, 0, 0, 1, 1], np.int64)}
    operands = ["x", "p"]
    if value is not None:
        weights["v"] = np.array(value, np.float32)
        operands.append("v")
    return Case([node("Pad", operands, mode=mode)], {"x": specials()}, weights)


CASES: dict[str, Callable[[], Case]] = {
    "relu": lambda: unary("Relu"),
    "leaky_relu": lambda: unary("LeakyRelu", alpha=0.1),
    "hard_sigmoid": lambda: unary("HardSigmoid", alpha=0.2, beta=0.5),
    "hard_swish": lambda: unary("HardSwish"),  # -inf * 0: NaN
    "sigmoid": lambda: unary("Sigmoid"),
    "tanh": lambda: unary("Tanh"),
    "sign": lambda: unary("Sign"),
    "shrink": lambda: unary("Shrink", lambd=0.5, bias=0.1),  # NaN: 0
    "clip_0_6": lambda: clip(0.0, 6.0),
    "clip_low_only": lambda: clip(-1.0, None),  # +inf: the largest float
    "clip_high_only": lambda: clip(None, 1.0),
    "clip_nan_low": lambda: clip(NAN, 1.0),  # a NaN bound: none
    "clip_nan_high": lambda: clip(-1.0, NAN),
    "clip_infinite_bounds": lambda: clip(-INF, INF),
    "max_2": lambda: variadic("Max", 2),
    "min_2": lambda: variadic("Min", 2),
    "max_3": lambda: variadic("Max", 3),
    "min_3": lambda: variadic("Min", 3),
    "max_nan_constant": lambda: Case(
        [node("Max", ["x", "c"])], {"x": specials()},
        {"c": np.array([0.0, NAN, INF, -INF], np.float32).reshape(1, 4, 1, 1)}),
    "add_relu": lambda: fused("Add", "Relu"),
    "add_leaky_relu": lambda: fused("Add", "LeakyRelu", alpha=0.1),
    "add_clip": lambda: fused("Add", "Clip"),
    "conv_relu": lambda: fused("Conv", "Relu"),
    "conv_clip": lambda: fused("Conv", "Clip"),
    "conv_hard_sigmoid": lambda: fused("Conv", "HardSigmoid"),
    "softmax_infinities": softmax_rows,
    "average_pool_padded": lambda: unary("AveragePool", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    "pad_zero": lambda: pad(0.0),
    "pad_nan": lambda: pad(NAN),
    "pad_inf": lambda: pad(INF),
    "pad_reflect": lambda: pad(None, "reflect"),
    "pad_edge": lambda: pad(None, "edge"),
    **{f"conv_{name}_{label}": (lambda t=name, v=value: conv(t, v))
       for name in TAPS for label, value in (("nan", NAN), ("inf", INF))},
    "conv_left_nan_stride2": lambda: conv("left", NAN, strides=[2, 2]),
    "conv_left_nan_8_channels": lambda: conv("left", NAN, channels=8),
    "conv_depthwise_left_nan": lambda: conv("left", NAN, group=4),
    "conv_depthwise_top_inf": lambda: conv("top", INF, group=4),
    "conv_buffers_left_nan": lambda: conv("left", NAN, channels=16,
                                          passes=("onnx-to-texture{buffers=true}",)),
    "conv_buffers_depthwise_right_inf": lambda: conv(
        "right", INF, group=16, channels=16, passes=("onnx-to-texture{buffers=true}",)),
    # onnxruntime multiplies the padding's zeros in these (im2col): the defined semantics
    "conv_grouped_left_nan": lambda: conv("left", NAN, group=2, channels=8, oracle="reference"),
    "conv_runtime_weight_top_nan": lambda: conv("top", NAN, runtime_weight=True,
                                                oracle="reference"),
    "conv_transpose_left_nan": lambda: conv_transpose("left", NAN),
    "conv_transpose_bottom_inf": lambda: conv_transpose("bottom", INF),
    # onnxruntime's NaN depends on its place in the window: the defined semantics
    "max_pool_padded": lambda: Case([node("MaxPool", ["x"], kernel_shape=[3, 3],
                                          pads=[1, 1, 1, 1])], {"x": specials()},
                                    oracle="reference"),
    "global_max_pool": lambda: Case([node("GlobalMaxPool", ["x"])], {"x": specials()},
                                    oracle="reference"),
    "reduce_max_w": lambda: Case([node("ReduceMax", ["x"], axes=[3], keepdims=1)],
                                 {"x": specials()}, oracle="reference"),
    "reduce_max_c": lambda: Case([node("ReduceMax", ["x"], axes=[1], keepdims=1)],
                                 {"x": specials()}, oracle="reference"),
}


def assert_same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """NaNs at the same places, infinities equal, the rest within 1e-4 of the scale."""
    assert got.shape == want.shape, what
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: NaNs")
    finite = want[np.isfinite(want)]
    scale = float(np.abs(finite).max(initial=1.0))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale, equal_nan=True,
                               err_msg=what)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory, pocl_device):
    """Per case: (onnxruntime's output, the reference's, OpenCL's, the case)."""
    from mobile_opt.backends.opencl.executor import CompiledModel
    from mobile_opt.frontend.onnx_import import import_onnx
    from mobile_opt.reference.interpreter import run_reference

    folder = tmp_path_factory.mktemp("nan")
    results = {}
    for name, make in CASES.items():
        case = make()
        path = case.save(folder / f"{name}.onnx")
        ort = run_onnxruntime(path, case.inputs)["y"]
        reference = run_reference(import_onnx(str(path)), case.inputs)["y"]
        module = lower_for_pocl(path, [*GRAPH_PASSES.split(","), *case.passes])
        ours = CompiledModel(module, pocl_device).run(case.inputs).outputs["y"]
        results[name] = ort, reference, ours, case
    return results


@pytest.mark.parametrize("name", CASES)
def test_opencl_and_reference_match_the_oracle(name, outputs):
    ort, reference, ours, case = outputs[name]
    want = ort if case.oracle == "onnxruntime" else reference
    assert_same(reference, want, "reference")
    assert_same(ours, want, "OpenCL")
    if case.oracle == "onnxruntime":
        return
    # the defined semantics differs from onnxruntime's only at NaNs and infinities
    ok = np.isfinite(ort) & np.isfinite(reference)
    np.testing.assert_allclose(reference[ok], ort[ok], rtol=1e-4, atol=1e-4)


def test_the_cases_hold_what_they_test(outputs):
    """Every case's expected output holds a NaN or an infinity, or (a padded conv's
    weight) a finite value where a NaN would be if the padding were multiplied."""
    for name, (ort, reference, _, case) in outputs.items():
        want = ort if case.oracle == "onnxruntime" else reference
        assert (~np.isfinite(want)).any() or name.startswith("conv_"), name


def window_max(x: np.ndarray, kernel: int, pad: int) -> np.ndarray:
    """MaxPool as defined here: the IEEE maximum (a NaN in the window wins) of the taps
    that land in the input."""
    padded = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)], constant_values=-np.inf)
    view = np.lib.stride_tricks.sliding_window_view(padded, (kernel, kernel), axis=(2, 3))
    return view.max(axis=(-2, -1))


def test_max_pool_propagates_every_nan(outputs):
    """onnxruntime's MaxPool keeps a NaN only where it is a window's last tap (its kernels
    compare `max > x`); here any NaN in a window is the window's max."""
    ort, reference, ours, case = outputs["max_pool_padded"]
    want = window_max(case.inputs["x"], 3, 1)
    assert_same(ours, want, "OpenCL")
    assert np.isnan(want).sum() > np.isnan(ort).sum()


@pytest.mark.parametrize("tap", TAPS)
def test_a_padded_tap_adds_nothing_whatever_its_weight(tap, outputs):
    """A NaN weight's outputs are NaN exactly where its tap meets the input."""
    _, _, ours, case = outputs[f"conv_{tap}_nan"]
    kh, kw = TAPS[tap]
    inside = np.zeros((5, 6), bool)  # output (h, w) reads input (h + kh - 1, w + kw - 1)
    inside[max(0, 1 - kh):5 + min(0, 1 - kh), max(0, 1 - kw):6 + min(0, 1 - kw)] = True
    np.testing.assert_array_equal(np.isnan(ours[0, 1]), inside)
    assert np.isfinite(np.delete(ours, 1, axis=1)).all()


# the comparison -------------------------------------------------------------------------


@pytest.mark.parametrize("got, want, status", [
    ([1.0, NAN, 2.0], [1.0, NAN, 2.0], PASS),
    ([1.0, NAN, 2.0], [1.0, 0.0, 2.0], FAIL),  # NaN in ours alone
    ([1.0, 0.0, 2.0], [1.0, NAN, 2.0], FAIL),  # in onnxruntime's alone
    ([NAN, NAN], [1.0, 1.0], FAIL),  # a constant expectation: FAIL, not NO SIGNAL
    ([INF, 2.0], [3.4028235e38, 2.0], FAIL),
    ([-INF, 2.0], [-INF, 2.0], PASS),
])
def test_the_comparison_fails_a_nan_on_one_side(got, want, status):
    got, want = np.array(got, np.float32), np.array(want, np.float32)
    assert compare(got, want, criterion(want, rtol=1e9, atol=1e9)).status == status
    assert compare_lsb(got, want, 0.5).exact == (status == PASS)


def test_mobile_run_fails_a_nan_onnxruntime_has_not(tmp_path, capsys):
    """MaxPool with a NaN that onnxruntime's window skips: the reference's NaN is one
    side's alone, so the run fails (a comparison that ignored NaN would pass it)."""
    x = np.zeros([1, 1, 3, 3], np.float32)
    x[0, 0, 0, 0] = NAN  # the first tap of the only window
    case = Case([node("MaxPool", ["x"], kernel_shape=[3, 3])], {"x": x})
    path = case.save(tmp_path / "pool.onnx")
    np.save(tmp_path / "x.npy", x)
    assert not np.isnan(run_onnxruntime(path, {"x": x})["y"]).any()
    status, out, _ = run_mobile_run(["--reference", str(path), "--input",
                                     f"x={tmp_path / 'x.npy'}"], capsys)
    assert status == 1 and FAIL in out, out
