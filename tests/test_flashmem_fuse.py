"""
`flashmem-fuse` (FlashMem §4.3): a split kernel computes what the fused one did (every
fused kind and activation, against the unsplit module and onnxruntime); the pass splits a
conv chain whose plan needs capacity, after which the plan keeps C3 and the outputs are
unchanged; the α rule, the hierarchical rule, the onnx-level problem, capacities at a
device profile's load ratios, and the options.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.checking import run_onnxruntime
from mobile_opt.dialects.onnx.fused import FusedConvOp, FusedGemmOp, FusedMatMulOp
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.models import flashmem
from mobile_opt.models.device_profile import load_profile
from mobile_opt.reference.interpreter import run_reference
from mobile_opt.transforms.flashmem_fuse import (
    SPLIT,
    FlashMemFusePass,
    Part,
    Split,
    graph_problem,
    kernels,
    split_kernel,
)
from mobile_opt.transforms.onnx_fuse import ALL_ACTIVATIONS
from mobile_opt.universe import PASSES

FUSED = (FusedConvOp, FusedGemmOp, FusedMatMulOp)


def _save(path: Path, nodes, inputs, output, inits) -> Path:
    graph = helper.make_graph(nodes, "g", inputs, [output], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), path)
    return path


def _fused_module(path: Path) -> ModuleOp:
    module = import_onnx(str(path))
    PassPipeline.parse_spec(PASSES, "onnx-fuse").apply(Context(), module)
    return module


def _function(module: ModuleOp) -> func.FuncOp:
    return next(op for op in module.walk() if isinstance(op, func.FuncOp))


def _activation_nodes(name: str, x: str, y: str) -> tuple[list, list]:
    """ONNX nodes computing activation `name` (as onnx-fuse absorbs it) and their constants."""
    attrs = {"LeakyRelu": {"alpha": 0.3}, "HardSigmoid": {"alpha": 0.3, "beta": 0.4}}
    if name == "Clip":  # one bound only: the other fuses as the f32 extreme
        lo = numpy_helper.from_array(np.array(-0.5, np.float32), "lo")
        return [helper.make_node("Clip", [x, "lo", ""], [y])], [lo]
    return [helper.make_node(name, [x], [y], **attrs.get(name, {}))], []


def _kernel_model(tmp_path: Path, kind: str, activation: str, rng) -> Path:
    """One fused kernel of `kind` ending in `activation` ("" for none), from ONNX nodes."""
    def init(name, shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    if kind == "conv":
        x_shape, y_shape = [1, 3, 6, 6], [1, 4, 6, 6]
        inits = [init("w", (4, 3, 3, 3)), init("b", (4,))]
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["p"], pads=[1, 1, 1, 1])]
    elif kind == "gemm":
        x_shape, y_shape = [3, 5], [3, 4]
        inits = [init("w", (4, 5)), init("b", (4,))]
        nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["p"], transB=1, alpha=0.7)]
    else:  # matmul, with a bias Add
        x_shape, y_shape = [2, 3, 5], [2, 3, 4]
        inits = [init("w", (5, 4)), init("b", (4,))]
        nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
                 helper.make_node("Add", ["m", "b"], ["p"])]
    if activation:
        act, consts = _activation_nodes(activation, "p", "y")
        nodes += act
        inits += consts
    else:
        nodes[-1].output[0] = "y"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)
    return _save(tmp_path / f"{kind}_{activation or 'none'}.onnx", nodes, [x], y, inits)


CASES = [(kind, act) for kind in ("conv", "gemm", "matmul") for act in ALL_ACTIVATIONS]
CASES.append(("matmul", ""))  # a bias-only FusedMatMul splits into MatMul and Add


@pytest.mark.parametrize("kind, activation", CASES)
def test_split_computes_the_fused_kernel(tmp_path: Path, kind: str, activation: str):
    rng = np.random.default_rng(len(kind) * 31 + len(activation))
    path = _kernel_model(tmp_path, kind, activation, rng)
    module = _fused_module(path)
    (fused,) = [op for op in _function(module).walk() if isinstance(op, FUSED)]
    x = rng.standard_normal(_function(module).function_type.inputs.data[0].get_shape())
    x = x.astype(np.float32)
    want = run_reference(module, [x])

    split_kernel(fused, "test")
    # a FusedMatMul with a bias and an activation splits twice: MatMul, Add, activation
    while rest := [op for op in _function(module).walk() if isinstance(op, FUSED)
                   if op.activation.data or isinstance(op, FusedMatMulOp)]:
        split_kernel(rest[0], "test")
    module.verify()
    types = [op.name for op in kernels(_function(module))]
    assert not any(isinstance(op, FUSED) for op in _function(module).walk()), types
    assert len(types) == (3 if kind == "matmul" and activation else 2), types
    got = run_reference(module, [x])
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-6, atol=1e-6)
    ort = run_onnxruntime(path, {"x": x})
    np.testing.assert_allclose(got["y"], ort["y"], rtol=1e-4, atol=1e-5)


def _conv_chain(tmp_path: Path, n: int = 4, c: int = 32, hw: int = 16) -> Path:
    """n Conv + bias + Relu of c channels on hw x hw: fused, each moves 3 chunks of 4 KiB."""
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "x"
    for i in range(n):
        w = rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c)
        inits += [numpy_helper.from_array(w.astype(np.float32), f"w{i}"),
                  numpy_helper.from_array(rng.standard_normal(c).astype(np.float32), f"b{i}")]
        out = "y" if i == n - 1 else f"r{i}"
        nodes += [helper.make_node("Conv", [prev, f"w{i}", f"b{i}"], [f"c{i}"],
                                   pads=[1, 1, 1, 1], name=f"conv{i}"),
                  helper.make_node("Relu", [f"c{i}"], [out], name=f"relu{i}")]
        prev = out
    shape = [1, c, hw, hw]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    return _save(tmp_path / "chain.onnx", nodes, [x], y, inits)


TIGHT = FlashMemFusePass(budget_mb=0.206, chunk_kb=4)
"""Below what a plan within C3 needs for the fused conv chain (0.2075 MiB: every weight
preloaded, as no layer may move a weight's 9 chunks before its use), above the least of any
plan (0.2036)."""


def _plan(module: ModuleOp, p: FlashMemFusePass):
    graph = graph_problem(_function(module), p.budget_bytes, p.chunk_bytes, p.lambda_, p.mu)
    assert graph is not None
    return graph.problem, flashmem.plan(graph.problem, p.time_limit_s, workers=1)


def test_pass_splits_where_the_plan_needs_capacity(tmp_path: Path):
    path = _conv_chain(tmp_path)
    module = _fused_module(path)
    x = np.random.default_rng(1).standard_normal((1, 32, 16, 16)).astype(np.float32)
    want = run_reference(module, [x])
    problem, before = _plan(module, TIGHT)
    assert flashmem.replay(problem, before).over_capacity  # the fused graph breaks C3

    TIGHT.apply(Context(), module)
    module.verify()
    split = [op for op in _function(module).walk() if SPLIT in op.attributes]
    assert split and len(split) % 2 == 0
    problem, after = _plan(module, TIGHT)
    flashmem.check(problem, after)  # within C3 and the budget
    assert not after.relaxed and problem.n == 4 + len(split) // 2
    got = run_reference(module, [x])
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got["y"], run_onnxruntime(path, {"x": x})["y"],
                               rtol=1e-4, atol=1e-5)



def test_the_lowering_keeps_a_split_kernel_apart(tmp_path: Path, pocl_device):
    """The texture lowering runs an elementwise op in its producer's kernel, but not the
    second part of a kernel `flashmem-fuse` split: each split adds a kernel launch, so the
    overlap plan after the lowering has the layers whose capacity the split gained. The
    outputs still match onnxruntime on PoCL."""
    from mobile_opt import pipelines
    from mobile_opt.backends.opencl.devices import choose_device
    from mobile_opt.backends.opencl.executor import CompiledModel

    path = _conv_chain(tmp_path)
    x = np.random.default_rng(1).standard_normal((1, 32, 16, 16)).astype(np.float32)
    want = run_onnxruntime(path, {"x": x})["y"]
    launches = []
    for spec in ("onnx-fuse", "onnx-fuse,flashmem-fuse{budget-mb=0.206 chunk-kb=4}"):
        module = import_onnx(str(path))
        passes, _ = pipelines.gpu_pipeline(spec, choose_device("pocl"))
        pipelines.apply(module, passes)
        launches.append(sum(op.name == "ocl.launch" for op in module.walk()))
        got = CompiledModel(module, pocl_device).run({"x": x}).outputs["y"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    splits = sum(SPLIT in op.attributes for op in _function(_split_chain(path)).walk()) // 2
    assert splits and launches[1] == launches[0] + splits, (launches, splits)


def _split_chain(path: Path) -> ModuleOp:
    module = _fused_module(path)
    TIGHT.apply(Context(), module)
    return module

def test_pass_keeps_fusion_under_a_loose_budget(tmp_path: Path):
    module = _fused_module(_conv_chain(tmp_path))
    before = str(module)
    loose = FlashMemFusePass(budget_mb=0.21, chunk_kb=4)  # above preloading all (0.2075)
    problem, plan = _plan(module, loose)
    flashmem.check(problem, plan)  # the fused graph keeps C3 here
    loose.apply(Context(), module)
    assert str(module) == before


def test_alpha_rule_and_hierarchical_parts():
    conv, relu = Part("Conv", 69760), Part("Relu", 32768, 32768)  # one conv of the chain
    split = Split.of(3, (conv, relu), 4096, alpha=8)
    assert split == Split(3, fused=3, first=3, second=24) and split.gain == 24
    assert Split.of(3, (conv, relu), 4096, alpha=8.01) is None  # 27 < 9.01 * 3
    assert Split.of(3, (conv,), 4096, alpha=0) is None  # nothing to split
    assert Split.of(3, (conv, Part("Softmax", 32768)), 4096, alpha=0) is None
    assert Split.of(3, (Part("LayerNormalization", 32768), relu), 4096, alpha=0) is None
    # no gain, whatever α: a part that moves nothing more than the kernel
    assert Split.of(3, (Part("Conv", 100), Part("Relu", 100, 100)), 4096, alpha=0) is None


def test_capacities_follow_the_device_profile(tmp_path: Path):
    """With `device`, C_l is `flashmem-plan`'s: the kernel's class at the profile's ratios
    (on PoCL a Relu tolerates less than a Conv, so a FusedConv{Relu} is elemental)."""
    ratios = flashmem.load_ratios(load_profile("pocl"))
    module = _fused_module(_conv_chain(tmp_path, n=2))
    layers = graph_problem(_function(module), 1 << 20, 4096, ratios=ratios).problem.layers
    cls = flashmem.kernel_class(["Conv", "Relu"], ratios)
    assert cls == flashmem.OpClass.ELEMENTAL and {layer.op_class for layer in layers} == {cls}
    assert [layer.capacity_chunks for layer in layers] == [
        flashmem.load_capacity(cls, 69760, 4096, ratios)] * 2
    split = Split.of(1, (Part("Conv", 69760), Part("Relu", 32768, 32768)), 4096, 0.2, ratios)
    assert split == Split(1, fused=flashmem.load_capacity(cls, 69760, 4096, ratios),
                          first=flashmem.load_capacity(flashmem.OpClass.REUSABLE, 69760, 4096,
                                                       ratios),
                          second=flashmem.load_capacity(cls, 32768, 4096, ratios))


def test_graph_problem_of_the_chain(tmp_path: Path):
    module = _fused_module(_conv_chain(tmp_path, n=3))
    graph = graph_problem(_function(module), 1 << 20, 4096)
    problem = graph.problem
    assert [layer.name for layer in problem.layers] == ["conv0", "conv1", "conv2"]
    # input and output of 32 KiB live at each layer
    assert [layer.activation_bytes for layer in problem.layers] == [65536] * 3
    assert [layer.capacity_chunks for layer in problem.layers] == [3] * 3
    assert [(w.name, w.bytes, w.first_use, w.last_use) for w in problem.weights][:2] == [
        ("w0", 36864, 1, 1), ("b0", 128, 1, 1)]



def test_graph_problem_counts_split_column_blocks_as_weights(tmp_path: Path):
    """After `flashmem-split`, each column block (a Slice of the weight, packed by the host)
    is a weight of its own bytes read by its own MatMul, and the Slices are not layers: the
    budget need only hold one block, as `flashmem-plan` sees it after the lowering."""
    from mobile_opt.transforms.flashmem_split import FlashMemSplitPass

    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.standard_normal((8, 48)).astype(np.float32), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 48])
    module = import_onnx(str(_save(tmp_path / "head.onnx",
                                   [helper.make_node("MatMul", ["x", "w"], ["y"])], [x], y,
                                   [weight])))
    PassPipeline((FlashMemSplitPass(max_weight_mb=512 / (1 << 20)),)).apply(Context(), module)
    problem = graph_problem(_function(module), 1 << 20, 256).problem
    assert [op.name for op in kernels(_function(module))] == ["onnx.MatMul"] * 3 + [
        "onnx.Concat"]
    # 1536 B in blocks of 16 columns, 512 B each, each read by its own layer
    assert [(w.bytes, w.first_use, w.last_use) for w in problem.weights] == [
        (512, 1, 1), (512, 2, 2), (512, 3, 3)]

def test_options():
    (p,) = PassPipeline.parse_spec(
        PASSES, "flashmem-fuse{budget-mb=2 chunk-kb=16 alpha=1 lambda=0.5 mu=0}").passes
    assert p == FlashMemFusePass(budget_mb=2, chunk_kb=16, alpha=1, lambda_=0.5, mu=0)
    assert p.budget_bytes == 2 << 20 and p.chunk_bytes == 16384
    assert str(p) == "flashmem-fuse{budget_mb=2 chunk_kb=16 alpha=1 lambda=0.5 mu=0}"
    with pytest.raises(ValueError, match="lambda must not be negative"):
        PassPipeline.parse_spec(PASSES, "flashmem-fuse{budget-mb=1 lambda=-1}")
    with pytest.raises(ValueError, match="budget-mb must be positive"):
        FlashMemFusePass(budget_mb=0)
    (p,) = PassPipeline.parse_spec(PASSES, "flashmem-fuse{budget-mb=1 device=pocl}").passes
    assert p == FlashMemFusePass(budget_mb=1, device="pocl")
    with pytest.raises(DiagnosticException, match="flashmem-fuse: nosuch: no such device"):
        FlashMemFusePass(budget_mb=1, device="nosuch").apply(Context(), ModuleOp([]))


def test_budget_pipeline_splits_weights_before_a_given_fuse():
    """Under a budget, `flashmem-split` comes before a `flashmem-fuse` of the spec (which
    plans within the same budget, and would find a weight too large for it otherwise), and
    after the graph passes where there is none; the plan and its realisation come last."""
    from types import SimpleNamespace

    from mobile_opt import pipelines
    from mobile_opt.transforms.flashmem_plan import FlashMemPlanPass

    device = SimpleNamespace(name="cpu", platform="none", max_image_width=8192,
                             max_image_height=8192)
    stream = FlashMemPlanPass(budget_mb=64)
    for spec, want in (
            ("onnx-fuse,flashmem-fuse{budget-mb=64}",
             ["onnx-fuse", "flashmem-split", "flashmem-fuse"]),
            ("onnx-fuse", ["onnx-fuse", "flashmem-split"])):
        passes, _ = pipelines.gpu_pipeline(spec, device, stream=stream)
        names = [p.name for p in passes]
        assert names[: len(want)] == want, names
        assert names[-2:] == ["flashmem-plan", "flashmem-stream"], names
