"""
Movement ops made views (`texture.view`, `transforms/onnx_to_texture/movement.py`): every
viewable op of small graphs, and of the GPT-2 and ViT exports, is marked after the local
layout selection; the views take no kernel, their readers read the source through the
index map, and the outputs still match ONNX Runtime on PoCL.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from harness import POCL_LIMITS, REPO, check_case, run_against_onnxruntime, with_views
from test_opencl_movement import Case, build_model, ints

from mobile_opt import pipelines
from mobile_opt.backends.opencl.executor import CompiledModel
from mobile_opt.checking import make_inputs, relative_error, run_onnxruntime
from mobile_opt.dialects.texture import Layout
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.reference.interpreter import find_function
from mobile_opt.transforms.onnx_to_texture.nodes import node_label
from mobile_opt.transforms.onnx_to_texture.movement import (
    view_reads_per_element,
    viewable,
)
from onnx import helper

N = helper.make_node


def weights(*dims: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(dims).astype(np.float32)


def attention(d: int, heads: int, tokens: int) -> Case:
    """GPT-2's attention core: QKV split, heads reshaped and transposed, two products."""
    width = d * heads
    return Case(
        [N("Split", ["x"], ["q", "k", "v"], axis=-1, num_outputs=3),
         *[n for name in "qkv" for n in (
             N("Reshape", [name, "heads"], [f"{name}r"]),
             N("Transpose", [f"{name}r"], [f"{name}t"],
               perm=[0, 2, 3, 1] if name == "k" else [0, 2, 1, 3]))],
         N("MatMul", ["qt", "kt"], ["s"]), N("Softmax", ["s"], ["p"], axis=-1),
         N("MatMul", ["p", "vt"], ["o"]), N("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
         N("Reshape", ["ot", "merged"], ["om"]), N("Relu", ["om"], ["y"])],
        {"x": [1, tokens, 3 * width]}, ["y"],
        {"heads": ints(1, tokens, heads, d), "merged": ints(1, tokens, width)}, kernels=4)


CASES = {
    # A transposed for a product: no transpose kernel
    "transpose_matmul": Case(
        [N("Transpose", ["x"], ["t"], perm=[0, 1, 3, 2]), N("MatMul", ["t", "w"], ["y"])],
        {"x": [2, 3, 8, 5]}, ["y"], {"w": weights(8, 6)}),
    # B transposed (K^T): read in cols4, whole pixels
    "matmul_transposed_b": Case(
        [N("Transpose", ["k"], ["t"], perm=[0, 1, 3, 2]), N("MatMul", ["q", "t"], ["y"])],
        {"q": [1, 2, 6, 8], "k": [1, 2, 6, 8]}, ["y"]),
    "attention_aligned": attention(d=4, heads=2, tokens=6),
    "attention_unaligned": attention(d=3, heads=2, tokens=5),
    "reshape_conv": Case(
        [N("Reshape", ["x", "s"], ["r"]), N("Conv", ["r", "w"], ["y"], pads=[1, 1, 1, 1])],
        {"x": [1, 6, 24]}, ["y"], {"s": ints(1, 6, 4, 6), "w": weights(5, 6, 3, 3)}),
    "flatten_gemm": Case(
        [N("Relu", ["x"], ["r"]), N("Flatten", ["r"], ["f"], axis=1),
         N("Gemm", ["f", "w", "b"], ["y"])],
        {"x": [2, 4, 3, 3]}, ["y"], {"w": weights(36, 5), "b": weights(5)}, kernels=2),
    "slice_channels_add": Case(
        [N("Slice", ["x", "b", "e", "a"], ["s"]), N("Add", ["s", "z"], ["y"])],
        {"x": [1, 10, 3, 3], "z": [1, 6, 3, 3]}, ["y"],
        {"b": ints(3), "e": ints(9), "a": ints(1)}),
    # a split's first part ends inside a pixel: its padding lane must read 0 in the product
    "split_padding_matmul": Case(
        [N("Split", ["x", "p"], ["a", "b"], axis=-1), N("MatMul", ["a", "w"], ["y"]),
         N("Neg", ["b"], ["z"])],
        {"x": [3, 8]}, ["y", "z"], {"p": ints(3, 5), "w": weights(3, 4)}, kernels=2),
    # ... and in a dot-form product, whose K-packed A and B both come from such splits
    "split_padding_dot": Case(
        [N("Split", ["x", "p"], ["a", "b"], axis=-1), N("Split", ["z", "p"], ["c", "d"], axis=-1),
         N("Transpose", ["c"], ["t"], perm=[1, 0]), N("MatMul", ["a", "t"], ["y"]),
         N("Concat", ["b", "d"], ["w"], axis=0)],
        {"x": [3, 8], "z": [4, 8]}, ["y", "w"], {"p": ints(3, 5)}, kernels=2),
    "squeeze_unsqueeze_mul": Case(
        [N("Squeeze", ["x", "a"], ["m"]), N("Unsqueeze", ["m", "c"], ["u"]),
         N("Mul", ["u", "z"], ["y"])],
        {"x": [1, 3, 6], "z": [3, 1, 6]}, ["y"], {"a": ints(0), "c": ints(1)}),
    # a copy reading a view composes the two maps
    "transpose_pad": Case(
        [N("Transpose", ["x"], ["t"], perm=[0, 1, 3, 2]), N("Pad", ["t", "p"], ["y"])],
        {"x": [1, 3, 5, 4]}, ["y"], {"p": ints(0, 0, 1, 2, 0, 0, 2, 1)}),
    "concat_of_views": Case(
        [N("Transpose", ["x"], ["t"], perm=[1, 0]), N("Transpose", ["z"], ["u"], perm=[1, 0]),
         N("Concat", ["t", "u"], ["y"], axis=0)],
        {"x": [6, 5], "z": [6, 3]}, ["y"]),
    # Concat views: whole pixels through a branch, then lanes at an unaligned boundary
    "concat_view_rows": Case(
        [N("Concat", ["x", "z"], ["c"], axis=1), N("Add", ["c", "b"], ["y"])],
        {"x": [1, 1, 8], "z": [1, 5, 8]}, ["y"], {"b": weights(6, 8)}),
    "concat_view_unaligned": Case(
        [N("Concat", ["x", "z"], ["c"], axis=-1), N("MatMul", ["c", "w"], ["y"])],
        {"x": [3, 5], "z": [3, 2]}, ["y"], {"w": weights(7, 4)}),
    "concat_of_views_read_by_copy": Case(
        [N("Transpose", ["x"], ["t"], perm=[1, 0]), N("Concat", ["t", "z"], ["c"], axis=0),
         N("Transpose", ["c"], ["u"], perm=[1, 0]), N("Pad", ["u", "p"], ["y"])],
        {"x": [4, 6], "z": [2, 4]}, ["y"], {"p": ints(1, 0, 0, 2)}),
    "reshape_layernorm": Case(
        [N("Reshape", ["x", "s"], ["r"]),
         N("LayerNormalization", ["r", "g", "b"], ["y"], axis=-1)],
        {"x": [2, 3, 4, 5]}, ["y"], {"s": ints(6, 20), "g": weights(20), "b": weights(20)}),
    "transpose_reduce": Case(
        [N("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
         N("ReduceSum", ["t", "a"], ["y"], keepdims=0)],
        {"x": [2, 5, 7]}, ["y"], {"a": ints(-1)}),
}


def lower_with_views(path: Path, views: bool):
    module = import_onnx(str(path))
    passes, _ = pipelines.gpu_pipeline("", POCL_LIMITS, tile=False)
    pipelines.apply(module, with_views(passes) if views else passes)
    return module


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory, pocl_device):
    """(GPU outputs, ONNX Runtime outputs, kernels' node labels) with every view made."""
    path = tmp_path_factory.mktemp("views") / "model.onnx"
    onnx.save(build_model(CASES), str(path))
    return run_against_onnxruntime(path, lower_with_views(path, True), pocl_device)


@pytest.mark.parametrize("name", list(CASES))
def test_views_match_onnxruntime(name, gpu_run):
    check_case(name, CASES[name], gpu_run)


def movement_ops(tmp_path: Path, cases: dict[str, Case]) -> dict[str, object]:
    """The Transpose, Reshape, Split and Concat nodes of the cases imported, by node name."""
    path = tmp_path / "model.onnx"
    onnx.save(build_model(cases), str(path))
    module = import_onnx(str(path))
    return {node_label(op).split("'")[1]: op for op in module.walk()
            if op.name in ("onnx.Transpose", "onnx.Reshape", "onnx.Split", "onnx.Concat")}


def test_what_is_viewable(tmp_path):
    """Graph outputs need storage; a conv's weight is the host's; a product's B is read."""
    ops = movement_ops(tmp_path, {
        "out": Case([N("Transpose", ["x"], ["y"], perm=[1, 0])], {"x": [3, 5]}, ["y"]),
        "weight": Case([N("Reshape", ["w", "s"], ["r"]), N("Conv", ["x", "r"], ["y"])],
                       {"x": [1, 4, 5, 5], "w": [2, 36]}, ["y"], {"s": ints(2, 4, 3, 3)}),
        "b": Case([N("Transpose", ["w"], ["t"], perm=[1, 0]), N("MatMul", ["x", "t"], ["y"])],
                  {"x": [3, 5], "w": [4, 5]}, ["y"]),
    })
    assert {name: viewable(op) for name, op in ops.items()} == {
        "out.0": False, "weight.0": False, "b.0": True}


def test_view_reads_per_element(tmp_path):
    """The cost hook: whole source pixels where the packed axis survives, else gathers."""
    ops = movement_ops(tmp_path, {
        "keep": Case([N("Transpose", ["x"], ["t"], perm=[1, 0, 2]), N("Relu", ["t"], ["y"])],
                     {"x": [3, 5, 8]}, ["y"]),
        "swap": Case([N("Transpose", ["x"], ["t"], perm=[0, 2, 1]), N("Relu", ["t"], ["y"])],
                     {"x": [3, 5, 8]}, ["y"]),
        "odd": Case([N("Split", ["x", "p"], ["a", "b"], axis=-1), N("Relu", ["a"], ["y"]),
                     N("Relu", ["b"], ["z"])], {"x": [3, 8]}, ["y", "z"], {"p": ints(3, 5)}),
        "cat": Case([N("Concat", ["x", "z"], ["c"], axis=-1), N("Relu", ["c"], ["y"])],
                    {"x": [3, 4], "z": [3, 3]}, ["y"]),
        "cat3": Case([N("Concat", ["x", "z"], ["c"], axis=-1), N("Relu", ["c"], ["y"])],
                     {"x": [3, 3], "z": [3, 4]}, ["y"]),
    })
    assert view_reads_per_element(ops["keep.0"], Layout.ROWS4) == 0.25
    # a transpose of the packed axis: whole pixels only when read in cols4
    assert view_reads_per_element(ops["swap.0"], Layout.ROWS4) == 0.25
    assert view_reads_per_element(ops["swap.0"], Layout.ROWS4, Layout.ROWS4) == 1.0
    assert view_reads_per_element(ops["odd.0"], Layout.ROWS4, result=0) == 0.25
    assert view_reads_per_element(ops["odd.0"], Layout.ROWS4, result=1) == 1.0
    # a concat: whole pixels unless an operand boundary falls inside one
    assert view_reads_per_element(ops["cat.0"], Layout.ROWS4) == 0.25
    assert view_reads_per_element(ops["cat3.0"], Layout.ROWS4) == 1.0


@pytest.mark.parametrize("model", ["gpt2_small", "vit_tiny"])
def test_models_with_views(model, pocl_device):
    """Every viewable op of the transformer exports a view: fewer kernels, same outputs."""
    path = REPO / "tests" / "models" / f"{model}.onnx"
    counts = {}
    for views in (False, True):
        module = import_onnx(str(path))
        feeds = make_inputs(find_function(module, "main_graph"), {}, 0)
        passes, _ = pipelines.gpu_pipeline(pipelines.GRAPH_PASSES, POCL_LIMITS, tile=False,
                                           solver="local")
        pipelines.apply(module, with_views(passes) if views else passes)
        result = CompiledModel(module, pocl_device).run(feeds)
        expected = run_onnxruntime(path, feeds)
        for name, want in expected.items():
            assert relative_error(result.outputs[name], want) <= 1e-3, name
        counts[views] = len(result.kernel_times)
    assert counts[True] < counts[False], counts
