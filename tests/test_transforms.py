"""
The graph passes preserve what a model computes, and do the rewrites they promise.

Numerics are checked with the reference interpreter: the optimised module against the
module as imported (light model zoo), or against ONNX Runtime (small models built with
onnx.helper). The light models' conv weights are constant fills (all output channels
alike, softmax outputs uniform), so each is also run with random weights in place of
every weight and batch-norm statistic.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline

from mobile_opt.reference.interpreter import run_reference
from mobile_opt.dialects.onnx import OnnxOp
from mobile_opt.dialects.onnx.fused import FusedActivationOp
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.transforms.onnx_fuse import ALL_ACTIVATIONS, OnnxFusePass
from mobile_opt.transforms.onnx_pattern_models import PATTERNS, pattern_model
from mobile_opt.pipelines import GRAPH_PASSES
from mobile_opt.universe import PASSES

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
STAGES = GRAPH_PASSES.split(",")
PIPELINE = GRAPH_PASSES
RTOL = 1e-3


def optimize(module: ModuleOp, spec: str) -> ModuleOp:
    """Apply the pass pipeline `spec` (as `mobile-opt -p` takes it) in place, and verify."""
    PassPipeline.parse_spec(PASSES, spec).apply(Context(), module)
    module.verify()
    return module


def op_counts(module: ModuleOp) -> Counter[str]:
    return Counter(op.name.removeprefix("onnx.") for op in module.walk() if isinstance(op, OnnxOp))


def compute_ops(module: ModuleOp) -> Counter[str]:
    """Op counts without the constant-like ops (None, Constant, Weight)."""
    counts = op_counts(module)
    for name in ("None", "Constant", "Weight"):
        counts.pop(name, None)
    return counts


def input_for(module: ModuleOp, seed: int = 0) -> np.ndarray:
    function = module.body.block.first_op
    shape = function.function_type.inputs.data[0].get_shape()
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def assert_same_outputs(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert got.keys() == want.keys()
    for name in want:
        assert np.isfinite(want[name]).all(), f"{name}: reference output not finite"
        # rtol 1e-3, plus an atol far below the output's scale for entries near zero
        atol = 1e-6 * float(np.abs(want[name]).max())
        np.testing.assert_allclose(got[name], want[name], rtol=RTOL, atol=atol, err_msg=name)


def ort_run(path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    # no graph optimisations: ORT should compute the graph as written
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))


# ---------------------------------------------------------------------------
# light model zoo, as shipped (constant-fill weights from ConstantOfShape)

EXPECTED = {
    # after the whole pipeline: ops other than constants. Derived from the graphs:
    # resnet50: 53 Conv+BN, 49 Relu of which 33 follow a Conv+BN and 16 a residual Sum.
    # densenet121: pre-activation blocks, so of 121 BN only conv1's and the 58
    # bottleneck convs' follow a Conv; BN+Mul+Add after Concat/pools become one BN.
    # squeezenet: 26 Conv+Relu; Dropout is an inference no-op.
    # inception_v2: 69 Conv+BN+Mul+Add+Relu.
    "resnet50": {"FusedConv": 33, "Conv": 20, "Relu": 16, "Sum": 16, "BatchNormalization": 0},
    "densenet121": {
        "FusedConv": 59, "Conv": 62, "Relu": 62, "BatchNormalization": 62, "Mul": 0, "Add": 0
    },
    "squeezenet": {"FusedConv": 26, "Conv": 0, "Relu": 0, "Dropout": 0},
    "inception_v2": {
        "FusedConv": 69, "Conv": 0, "Relu": 0, "BatchNormalization": 0, "Mul": 0, "Add": 0
    },
}


@pytest.mark.parametrize("model", sorted(EXPECTED))
def test_light_model_pipeline(model: str):
    module = import_onnx(LIGHT / f"light_{model}.onnx")
    x = input_for(module)
    want = run_reference(module, [x])
    before = op_counts(module)
    assert before["ConstantOfShape"] > 0
    for stage in STAGES:
        optimize(module, stage)
        assert_same_outputs(run_reference(module, [x]), want)
        counts = op_counts(module)
        if stage == "onnx-fold-constants":
            # the weight generators and the Unsqueeze of BN's affine parameters fold
            assert counts["ConstantOfShape"] == 0 and counts["Unsqueeze"] == 0
    after = op_counts(module)
    for name, count in EXPECTED[model].items():
        assert after[name] == count, f"{model}: {name} {before[name]} -> {after[name]}, not {count}"
    print(f"\n{model}: {dict(sorted(before.items()))} -> {dict(sorted(after.items()))}")


# ---------------------------------------------------------------------------
# light models with random weights: every pass alone, then the pipeline


GAIN = 0.7
"""Scale on He's weight std: with 1.0 resnet50's residual stream overflows its softmax."""


def _fan_in(shape: tuple[int, ...], op_type: str, trans_b: bool) -> int:
    if op_type == "Gemm":
        return shape[1] if trans_b else shape[0]
    return int(np.prod(shape[1:]))


def randomized(model: onnx.ModelProto, seed: int) -> onnx.ModelProto:
    """
    `model` with random values for every conv/gemm weight and bias, batch-norm
    parameter and Mul/Add constant (ConstantOfShape generators become Constant nodes):
    (scaled) He-initialised weights keep a deep net's activations in range.
    """
    rng = np.random.default_rng(seed)
    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    generated = {n.output[0]: n for n in graph.node if n.op_type == "ConstantOfShape"}

    def shape_of(name: str) -> tuple[int, ...] | None:
        if name in initializers:
            return tuple(initializers[name].dims)
        if name in generated:
            dims = numpy_helper.to_array(initializers[generated[name].input[0]])
            return tuple(int(d) for d in dims)
        return None

    values: dict[str, np.ndarray] = {}
    for node in graph.node:
        trans_b = any(a.name == "transB" and a.i for a in node.attribute)
        for index, name in enumerate(node.input):
            shape = shape_of(name)
            if shape is None or name in values:
                continue
            if node.op_type in ("Conv", "Gemm") and index == 1:
                std = GAIN * math.sqrt(2.0 / _fan_in(shape, node.op_type, trans_b))
                values[name] = rng.standard_normal(shape) * std
            elif (node.op_type in ("Conv", "Gemm") and index == 2) or (
                node.op_type == "BatchNormalization" and index in (2, 3)
            ) or node.op_type == "Add":
                values[name] = rng.normal(0.0, 0.1, shape)
            elif (
                node.op_type == "BatchNormalization" and index in (1, 4)
            ) or node.op_type == "Mul":
                values[name] = rng.uniform(0.5, 1.5, shape)
    for name, value in values.items():
        array = value.astype(np.float32)
        if name in initializers:
            initializers[name].CopyFrom(numpy_helper.from_array(array, name))
        else:
            node = generated[name]
            value = numpy_helper.from_array(array)
            node.CopyFrom(helper.make_node("Constant", [], [name], name=node.name, value=value))
    # the generators' shape tensors are unused now (IR v3 also lists them as inputs)
    used = {name for node in graph.node for name in node.input}
    for unused in [t for t in graph.initializer if t.name not in used]:
        graph.initializer.remove(unused)
    for unused in [i for i in graph.input if i.name not in used]:
        graph.input.remove(unused)
    return model


@pytest.fixture(scope="module")
def randomized_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("randomized")
    paths = {}
    for seed, model in enumerate(sorted(EXPECTED)):
        path = folder / f"{model}.onnx"
        onnx.save(randomized(onnx.load(LIGHT / f"light_{model}.onnx"), seed), path)
        paths[model] = path
    return paths


@pytest.mark.parametrize("model", sorted(EXPECTED))
def test_randomized_light_model_each_pass(model: str, randomized_models: dict[str, Path]):
    imported = import_onnx(randomized_models[model])
    x = input_for(imported, seed=1)
    want = run_reference(imported, [x])
    for spec in [*STAGES, PIPELINE]:
        module = optimize(imported.clone(), spec)
        assert_same_outputs(run_reference(module, [x]), want)
    counts = compute_ops(module)
    # with real per-channel parameters the same folds and fusions happen
    for name, count in EXPECTED[model].items():
        assert counts[name] == count, f"{model}: {name} is {counts[name]}, expected {count}"


# ---------------------------------------------------------------------------
# written-out activations (onnx-canonicalize) against ONNX Runtime


def _pattern_case(name: str, tmp_path: Path, prologue: str = "none"):
    shape = (3, 16)
    path = tmp_path / f"{name}.onnx"
    onnx.save(pattern_model(name, shape, prologue=prologue), path)
    # spread the inputs so Clip/Relu6 and HardSigmoid see both of their corners
    x = (np.random.default_rng(7).standard_normal(shape) * 3).astype(np.float32)
    return path, x, ort_run(path, {"x": x})


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_canonicalize_patterns(name: str, tmp_path: Path):
    path, x, want = _pattern_case(name, tmp_path)
    module = import_onnx(path)
    written_out = compute_ops(module)
    optimize(module, "onnx-canonicalize")
    counts = compute_ops(module)
    expected = PATTERNS[name].expected
    if expected is None:
        assert counts["Gelu"] == counts["HardSwish"] == 0
        # the near miss stays as written (only the output Identity goes)
        written_out.pop("Identity")
        assert counts == written_out
    else:
        assert counts == Counter({expected: 1}), counts
        if expected == "Gelu":
            gelu = next(op for op in module.walk() if op.name == "onnx.Gelu")
            assert gelu.approximate.data == PATTERNS[name].approximate
    got = run_reference(module, [x])
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-4, atol=1e-5, err_msg=key)


@pytest.mark.parametrize(
    "name, activation",
    [("gelu_erf_div", "Gelu"), ("gelu_erf_swapped", "Gelu"), ("hardswish_clip_div", "HardSwish")],
)
def test_matmul_bias_activation_fuses_after_canonicalize(
    name: str, activation: str, tmp_path: Path
):
    path, x, want = _pattern_case(name, tmp_path, prologue="matmul")
    module = optimize(import_onnx(path), PIPELINE)
    assert compute_ops(module) == Counter({"FusedMatMul": 1})
    fused = next(op for op in module.walk() if op.name == "onnx.FusedMatMul")
    assert isinstance(fused, FusedActivationOp) and fused.activation.data == activation
    np.testing.assert_allclose(run_reference(module, [x])["y"], want["y"], rtol=1e-4, atol=1e-5)


def test_gelu_tanh_form_is_recognised_but_not_fused(tmp_path: Path):
    """FusedMatMul has no encoding for the tanh approximation: MatMul+Add fuse, Gelu stays."""
    path, x, want = _pattern_case("gelu_tanh_pow", tmp_path, prologue="matmul")
    module = optimize(import_onnx(path), PIPELINE)
    assert compute_ops(module) == Counter({"FusedMatMul": 1, "Gelu": 1})
    np.testing.assert_allclose(run_reference(module, [x])["y"], want["y"], rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# an exporter-style CNN head built with onnx.helper, end to end against ORT


def _cnn_model(rng: np.random.Generator) -> onnx.ModelProto:
    """
    Conv -> BatchNormalization -> Relu -> (Shape/Gather/Unsqueeze/Concat) Reshape ->
    MatMul -> Add -> written-out Gelu, with random parameters.
    """

    def init(name: str, array: np.ndarray) -> onnx.TensorProto:
        dtype = np.float32 if array.dtype.kind == "f" else np.int64
        return numpy_helper.from_array(np.asarray(array, dtype), name)

    inits = [
        init("w", rng.standard_normal((4, 3, 3, 3)) * 0.3),
        init("scale", rng.uniform(0.5, 1.5, 4)),
        init("beta", rng.normal(0, 0.1, 4)),
        init("mean", rng.normal(0, 0.1, 4)),
        init("var", rng.uniform(0.5, 1.5, 4)),
        init("zero", np.array(0, np.int64)),
        init("axes", np.array([0], np.int64)),
        init("minus_one", np.array([-1], np.int64)),
        init("w2", rng.standard_normal((256, 10)) * 0.1),
        init("b2", rng.normal(0, 0.1, 10)),
        init("sqrt2", np.array(math.sqrt(2), np.float32)),
        init("one", np.array(1.0, np.float32)),
        init("half", np.array(0.5, np.float32)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "beta", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("Shape", ["r"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"]),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["r", "target"], ["flat"]),
        helper.make_node("MatMul", ["flat", "w2"], ["m"]),
        helper.make_node("Add", ["m", "b2"], ["h"]),
        helper.make_node("Div", ["h", "sqrt2"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["e1"]),
        helper.make_node("Mul", ["h", "e1"], ["he"]),
        helper.make_node("Mul", ["he", "half"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


def test_cnn_pipeline_against_onnxruntime(tmp_path: Path):
    rng = np.random.default_rng(3)
    path = tmp_path / "cnn.onnx"
    onnx.save(_cnn_model(rng), path)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    want = ort_run(path, {"x": x})
    module = import_onnx(path)
    assert_same_outputs(run_reference(module, [x]), want)
    optimize(module, PIPELINE)
    assert compute_ops(module) == Counter({"FusedConv": 1, "Reshape": 1, "FusedMatMul": 1})
    activations = {
        op.name: op.activation.data for op in module.walk() if isinstance(op, FusedActivationOp)
    }
    assert activations == {"onnx.FusedConv": "Relu", "onnx.FusedMatMul": "Gelu"}
    assert_same_outputs(run_reference(module, [x]), want)


# ---------------------------------------------------------------------------
# pass options


def test_fuse_activation_option():
    (only_relu,) = PassPipeline.parse_spec(PASSES, "onnx-fuse{activations=Relu}").passes
    assert only_relu == OnnxFusePass(activations=("Relu",))
    (default,) = PassPipeline.parse_spec(PASSES, "onnx-fuse").passes
    assert set(default.activations) == set(ALL_ACTIVATIONS)
    with pytest.raises(ValueError, match="unknown activations"):
        PassPipeline.parse_spec(PASSES, "onnx-fuse{activations=Relu,Swish}")


def test_fold_constants_respects_max_elements(tmp_path: Path):
    module = import_onnx(LIGHT / "light_squeezenet.onnx")
    optimize(module, "onnx-fold-constants{max-elements=1000}")
    # only generators of at most 1000 elements (biases, small kernels) were folded
    left = [op for op in module.walk() if op.name == "onnx.ConstantOfShape"]
    assert left and all(op.results[0].type.element_count() > 1000 for op in left)
