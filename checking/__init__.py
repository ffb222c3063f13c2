"""
Checking what a compiled model computes: the inputs it is fed, the onnxruntime
oracle, and the criterion each output is held to. `mobile-run`, the benchmarks and
the tests share it.

An output passes when `max |got - want| <= atol + rtol * scale`, where `scale` is the
largest magnitude of the expected output: errors are judged against the output's own
range, so a network whose outputs are 1e-9 is held to 1e-12, not waved through by an
absolute floor. A quantized output is judged in its least significant bits (LSBs):
an integer output in units of 1, a dequantized float output in units of its scale.
An output that the criterion cannot tell from a constant (its values spread less than
the tolerance, e.g. the uniform softmax of constant weights, or outputs of 1e-9 under
an absolute tolerance) is NO SIGNAL: it does not fail, but it does not pass either,
and the report says so.

`relative_error` is that error as one number, max |got - want| over the scale, which
the benchmarks report and the tests bound. `checkable` gives a model whose outputs carry
signal (`random_weights`), and `light_model` finds the onnx package's shipped models.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType

from mobile_opt.reference.interpreter import input_dtype
from mobile_opt.dialects.limits import RunTotal, check_tensor
from mobile_opt.dialects.onnx.base import constant_array
from mobile_opt.dialects.onnx.quant import DequantizeLinearOp
from mobile_opt.dialects.onnx.graph import graph_io_names, printable


class CheckError(Exception):
    """The check itself cannot run (no onnxruntime, a bad input); one line."""


RELATIVE_TOLERANCE = {"float16": 2e-2, "f": 1e-3}
"""Default rtol (of the expected output's largest magnitude) per dtype name or kind."""
FP16_STORAGE_RTOL = 2e-2
"""Default rtol when the device stores tensors as half (11 significant bits a tensor)."""
LSB_TOLERANCE = 1.0
"""Default tolerance of quantized outputs, in LSBs: a rounding may go the other way."""
TINY = 1e-6
"""An expected output whose largest magnitude is below this is remarked on."""


# inputs ------------------------------------------------------------------------------
def random_input(name: str, t: object, rng: np.random.Generator) -> np.ndarray:
    """A random value of tensor type `t`: floats in [-1, 1), integers in 0..2, any booleans."""
    if not isinstance(t, TensorType):
        raise CheckError(f"input '{printable(name)}' has non-tensor type {t}; give it with --input")
    shape = t.get_shape()
    if any(d < 0 for d in shape):
        raise CheckError(f"input '{printable(name)}' has a dynamic shape; give it with "
                         "--input (or --dim)")
    dtype = input_dtype(name, t)
    # sized before drawing: the draw is 64-bit, then cast
    check_tensor(shape, max(dtype.itemsize, 8), f"input '{name}'")
    if dtype.kind == "f":
        return rng.uniform(-1, 1, shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    return rng.integers(0, 3, shape).astype(dtype)


def make_inputs(
    function: func.FuncOp, given: Mapping[str, np.ndarray], seed: int
) -> dict[str, np.ndarray]:
    """A value for each input of `function`: the given one, or a seeded random one."""
    names, _ = graph_io_names(function)
    rng = np.random.default_rng(seed)
    feeds = {}
    held = RunTotal("the inputs")
    for name, t in zip(names, function.function_type.inputs.data):
        feeds[name] = given[name] if name in given else random_input(name, t, rng)
        held.add(feeds[name].nbytes, f"input '{name}'")
    return feeds


# the oracle --------------------------------------------------------------------------
def _onnxruntime_error(e: Exception) -> CheckError:
    lines = str(e).strip().splitlines()
    return CheckError(f"onnxruntime: {lines[0] if lines else type(e).__name__}")


def onnxruntime_session(model: str | bytes):
    """onnxruntime's CPU provider on a model file or its bytes (one session, to time)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # no warnings about unused initializers
    try:
        return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception types
        raise _onnxruntime_error(e) from None


def session_run(session, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """One run of an onnxruntime `session` on the feeds it takes: its outputs in order."""
    wanted = {i.name for i in session.get_inputs()}
    try:
        return session.run(None, {k: v for k, v in feeds.items() if k in wanted})
    except Exception as e:  # onnxruntime raises its own exception types
        raise _onnxruntime_error(e) from None


def session_outputs(session, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One run of an onnxruntime `session` on the feeds it takes: its outputs by name."""
    results = session_run(session, feeds)
    return {o.name: np.asarray(r) for o, r in zip(session.get_outputs(), results)}


def run_onnxruntime(path: Path, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The outputs onnxruntime computes for the model file `path`, by name."""
    return session_outputs(onnxruntime_session(str(path)), feeds)


# the criterion -----------------------------------------------------------------------
@dataclass(frozen=True)
class Criterion:
    """`max |got - want| <= atol + rtol * scale`; `lsb` is a quantized output's step."""

    rtol: float
    atol: float
    lsb: float | None = None


def criterion(
    want: np.ndarray,
    lsb: float | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    fp16: bool = False,
) -> Criterion:
    """
    The default criterion of an expected output, with the given `rtol`/`atol` in its
    place: floats within 1e-3 of their scale (2e-2 with half storage), quantized
    outputs within one LSB, other integers and booleans exactly.
    """
    if want.dtype.kind in "iu" and want.dtype.itemsize == 1:
        lsb = 1.0
    if lsb is not None:
        return Criterion(0.0 if rtol is None else rtol,
                         LSB_TOLERANCE * lsb if atol is None else atol, lsb)
    if want.dtype.kind == "f":
        default = FP16_STORAGE_RTOL if fp16 else RELATIVE_TOLERANCE.get(
            want.dtype.name, RELATIVE_TOLERANCE["f"])
        return Criterion(default if rtol is None else rtol, 0.0 if atol is None else atol)
    return Criterion(0.0 if rtol is None else rtol, 0.0 if atol is None else atol)


PASS, FAIL, NO_SIGNAL = "PASS", "FAIL", "NO SIGNAL"


@dataclass(frozen=True)
class Comparison:
    """How far an output is from its expected value, and the verdict."""

    max_abs: float
    scale: float  # the largest magnitude of the expected output
    status: str
    note: str = ""
    lsb: float | None = None

    @property
    def relative(self) -> float:
        """The error relative to the expected output's scale."""
        if self.max_abs == 0:
            return 0.0
        # no scale: an all-zero expectation, or a shape or dtype that differs
        return self.max_abs / self.scale if 0 < self.scale < np.inf else float("inf")

    @property
    def passed(self) -> bool:
        return self.status != FAIL


def compare(got: np.ndarray, want: np.ndarray, rule: Criterion) -> Comparison:
    """`got` against `want` under `rule`; NaNs must coincide, infinities be equal."""
    if got.shape != want.shape:
        return Comparison(np.inf, np.inf, FAIL, f"shape {list(want.shape)} expected")
    if got.dtype != want.dtype:
        return Comparison(np.inf, np.inf, FAIL, f"dtype {want.dtype} expected")
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        error = np.nan_to_num(np.where(same, 0.0, np.abs(g - w)), nan=np.inf, posinf=np.inf)
    finite = w[np.isfinite(w)]
    scale = float(np.abs(finite).max(initial=0.0))
    max_abs = float(error.max(initial=0.0))
    bound = rule.atol + rule.rtol * scale
    if rule.lsb:  # a float's LSB multiple is inexact: a thousandth of an LSB of slack
        bound += 1e-3 * rule.lsb
    passed = max_abs <= bound
    note = ""
    spread = float(finite.max() - finite.min()) if finite.size else 0.0
    if w.size > 1 and finite.size == w.size and spread / 2 <= bound:
        # a constant (the midrange) would pass too: the comparison cannot tell the
        # output from a constant, so it says nothing of the computation
        status = NO_SIGNAL if passed else FAIL
        note = (f"every expected value is {finite.flat[0]:.6g}" if spread == 0 else
                f"the expected values lie within {spread:.3g} of each other, inside the "
                f"tolerance")
    else:
        status = PASS if passed else FAIL
        if rule.lsb is None and want.dtype.kind == "f" and 0 < scale < TINY:
            note = f"the expected output is tiny (at most {scale:.3g}); judged at that scale"
    return Comparison(max_abs, scale, status, note, rule.lsb)


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """
    max |got - want| over the expected output's scale (`Comparison.relative`): inf
    where shapes or dtypes differ, NaNs must coincide, no absolute floor.
    """
    return compare(np.asarray(got), np.asarray(want), Criterion(0.0, 0.0)).relative


def worst_relative_error(got: Mapping[str, np.ndarray], want: Mapping[str, np.ndarray]) -> float:
    """The largest `relative_error` over the outputs of `want`; inf if `got` lacks one."""
    return max((relative_error(got[name], value) if name in got else np.inf
                for name, value in want.items()), default=0.0)


LSB_APART = 2**62
"""The steps between a NaN or infinity and anything but itself (more than any real gap)."""


def lsb_error(got: np.ndarray, want: np.ndarray, scale: float) -> np.ndarray:
    """Per element, how many quantisation steps (of `scale`) `got` is from `want`; NaNs
    must coincide, infinities be equal (else `LSB_APART`)."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        steps = np.where(same, 0.0, np.abs(g - w) / float(scale))
    steps = np.nan_to_num(steps, nan=LSB_APART, posinf=LSB_APART)
    return np.rint(np.minimum(steps, LSB_APART)).astype(np.int64)




@dataclass(frozen=True)
class LsbComparison:
    """How far an output is from another, in quantisation steps."""

    worst: int
    """The largest difference, in LSBs."""
    count: int
    """How many values differ at all."""
    size: int
    note: str = ""

    @property
    def exact(self) -> bool:
        return self.worst == 0 and not self.note

    def describe(self) -> str:
        if self.note:
            return self.note
        if self.worst == 0:
            return "0 LSB"
        return f"{self.worst} LSB ({self.count} of {self.size} values)"


def compare_lsb(got: np.ndarray, want: np.ndarray, scale: float) -> LsbComparison:
    """`got` against `want`, both quantized or both dequantized with step `scale`."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return LsbComparison(0, want.size, want.size, f"shape {list(got.shape)}, "
                             f"expected {list(want.shape)}")
    error = lsb_error(got, want, scale)
    return LsbComparison(int(error.max(initial=0)), int(np.count_nonzero(error)), want.size)


def output_lsbs(function: func.FuncOp) -> dict[str, float]:
    """
    The LSB of each output of `function` that a DequantizeLinear with a constant
    per-tensor scale produces: its value in float units.
    """
    _, names = graph_io_names(function)
    returned = function.body.block.last_op.operands
    lsbs = {}
    for name, value in zip(names, returned):
        op = value.owner
        if isinstance(op, DequantizeLinearOp):
            scale = constant_array(op.x_scale)
            if scale is not None and scale.size == 1:
                lsbs[name] = float(scale.reshape(()))
    return lsbs


# tables ------------------------------------------------------------------------------
def format_table(rows: list[list[str]]) -> str:
    """Rows of cells as left-aligned columns."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def number(x: float) -> str:
    return "inf" if np.isinf(x) else f"{x:.3g}"


def comparison_cells(result: Comparison) -> list[str]:
    """The error cells of a report row: max abs error, and relative or in LSBs."""
    if result.lsb is not None:
        lsbs = result.max_abs / result.lsb if result.lsb else np.inf
        return [number(result.max_abs), f"{number(lsbs)} LSB"]
    return [number(result.max_abs), number(result.relative)]


# models to check ---------------------------------------------------------------------
ONNX_TEST_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
"""The models the onnx package ships for its backend tests."""


def light_model(name: str) -> Path:
    """The onnx package's light model NAME (`resnet50` or `light_resnet50`)."""
    name = name if name.startswith("light_") else f"light_{name}"
    return ONNX_TEST_DATA / "light" / f"{name}.onnx"


def checkable(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """
    `model` as it is, or, where ConstantOfShape fills its weights with one constant (the
    onnx package's light models, which return the same for any input, so a comparison
    of outputs would check nothing), with seeded `random_weights` and the logits each
    final Softmax takes as one more output (`expose_logits`).
    """
    if not any(n.op_type == "ConstantOfShape" for n in model.graph.node):
        return model
    return expose_logits(random_weights(model, seed))


def expose_logits(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` with the input of each Softmax that makes an output as one more output."""
    model = copy.deepcopy(model)
    producers = {o: n for n in model.graph.node for o in n.output}
    inferred = shape_inference.infer_shapes(model, data_prop=True)
    typed = {v.name: v for v in inferred.graph.value_info}
    for output in list(model.graph.output):
        node = producers.get(output.name)
        if node is not None and node.op_type == "Softmax" and node.input[0] in typed:
            model.graph.output.append(typed[node.input[0]])
    return model


# random weights ----------------------------------------------------------------------
WEIGHT_INPUTS = {"Conv": 1, "ConvTranspose": 1, "Gemm": 1, "MatMul": 1}
"""Each op's input that holds a weight matrix, drawn He-normal from its fan-in."""
BIAS_INPUTS = {"Conv": 2, "ConvTranspose": 2, "Gemm": 2}


def _fan_in(node: onnx.NodeProto, shape: tuple[int, ...]) -> int:
    if node.op_type == "Gemm":
        trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
        return shape[1] if trans_b else shape[0]
    if node.op_type == "MatMul":
        return shape[-2] if len(shape) > 1 else shape[0]
    return int(np.prod(shape[1:]))


def random_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """
    `model` with seeded random weights, for a check whose outputs must carry signal
    (the onnx package's `light_*` models make every weight 0.02 with ConstantOfShape,
    so that each channel computes the same and the softmax is uniform). Weights of
    Conv, ConvTranspose, Gemm and MatMul are drawn He-normal from their fan-in, their
    biases and the BatchNormalization and LayerNormalization scales and shifts near
    1 and 0, and the mean and variance of each BatchNormalization over an input with
    spatial axes are then estimated on a random input (`_estimate_batch_norms`), so
    activations stay of order one.
    """
    for t in model.graph.initializer:  # declared sizes, before any is read or drawn
        check_tensor(list(t.dims), 8, f"initializer '{t.name}'")
    model = copy.deepcopy(model)
    graph = model.graph
    _constants_of_shape_as_initializers(graph)
    if model.ir_version < 4:  # initializers need not be graph inputs from IR 4
        model.ir_version = 4
    initializers = {t.name: t for t in graph.initializer}
    rng = np.random.default_rng(seed)
    drawn: dict[str, np.ndarray] = {}

    def draw(name: str, make) -> None:
        if name in initializers and name not in drawn:
            old = numpy_helper.to_array(initializers[name])
            if old.dtype.kind == "f" and old.size > 1:
                drawn[name] = make(old.shape).astype(old.dtype)

    for node in graph.node:
        inputs = list(node.input) + [""] * 5
        if node.op_type in WEIGHT_INPUTS:
            name = inputs[WEIGHT_INPUTS[node.op_type]]
            if name in initializers:
                shape = tuple(initializers[name].dims)
                std = np.sqrt(2.0 / max(_fan_in(node, shape), 1))
                draw(name, lambda s, std=std: rng.normal(0.0, std, s))
            if node.op_type in BIAS_INPUTS:
                draw(inputs[BIAS_INPUTS[node.op_type]], lambda s: rng.normal(0.0, 0.1, s))
        elif node.op_type in ("BatchNormalization", "LayerNormalization"):
            draw(inputs[1], lambda s: rng.uniform(0.5, 1.5, s))
            draw(inputs[2], lambda s: rng.normal(0.0, 0.1, s))
    for name, value in drawn.items():
        initializers[name].CopyFrom(numpy_helper.from_array(value, name))
    _estimate_batch_norms(model, rng)
    return model


def _constants_of_shape_as_initializers(graph: onnx.GraphProto) -> None:
    """Each ConstantOfShape of a constant shape becomes the initializer it makes."""
    initializers = {t.name: t for t in graph.initializer}
    kept = []
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in initializers:
            shape = numpy_helper.to_array(initializers[node.input[0]]).astype(np.int64)
            value = next((numpy_helper.to_array(a.t) for a in node.attribute
                          if a.name == "value"), np.zeros(1, np.float32))
            check_tensor(shape.tolist(), value.dtype.itemsize,
                         f"node '{node.name or node.output[0]}' (ConstantOfShape)")
            full = np.full(tuple(shape), value.reshape(-1)[0], value.dtype)
            graph.initializer.append(numpy_helper.from_array(full, node.output[0]))
        else:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)
    produced = {t.name for t in graph.initializer}
    inputs = [v for v in graph.input if v.name not in produced]
    del graph.input[:]
    graph.input.extend(inputs)


def _estimate_batch_norms(model: onnx.ModelProto, rng: np.random.Generator) -> None:
    """
    Set each BatchNormalization's mean and variance to those of its input on one random
    input, all in one onnxruntime run: a copy of the model normalises with the input's
    own statistics (InstanceNormalization, which is batch statistics for a batch of
    one) and returns every BatchNormalization's input.
    """
    graph = model.graph
    ranks = {v.name: len(v.type.tensor_type.shape.dim)
             for v in (*shape_inference.infer_shapes(model).graph.value_info, *graph.input)}
    # InstanceNormalization needs spatial axes: others keep the statistics they have
    norms = [n for n in graph.node
             if n.op_type == "BatchNormalization" and ranks.get(n.input[0], 0) >= 3]
    if not norms:
        return
    probe = copy.deepcopy(model)
    for node in probe.graph.node:
        if node.op_type == "BatchNormalization" and ranks.get(node.input[0], 0) >= 3:
            eps = [a for a in node.attribute if a.name == "epsilon"]
            inputs, outputs = list(node.input[:3]), list(node.output[:1])
            node.Clear()
            node.op_type, node.name = "InstanceNormalization", outputs[0]
            node.input.extend(inputs)
            node.output.extend(outputs)
            node.attribute.extend(eps)
    del probe.graph.output[:]
    probe.graph.output.extend(
        helper.make_tensor_value_info(n.input[0], TensorProto.FLOAT, None) for n in norms)
    initializers = {t.name for t in graph.initializer}
    feeds = {}
    for value in graph.input:
        if value.name in initializers:
            continue
        dims = [d.dim_value or 1 for d in value.type.tensor_type.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        check_tensor(dims, 8, f"input '{value.name}'")  # drawn as 64-bit, then cast
        feeds[value.name] = rng.uniform(-1, 1, dims).astype(dtype)
    seen = session_run(onnxruntime_session(probe.SerializeToString()), feeds)
    for node, x in zip(norms, seen):
        axes = tuple(i for i in range(x.ndim) if i != 1)
        for index, stat in ((3, x.mean(axis=axes)), (4, x.var(axis=axes))):
            name = f"{node.output[0]}__{'mean' if index == 3 else 'var'}"
            graph.initializer.append(numpy_helper.from_array(stat.astype(np.float32), name))
            node.input[index] = name
