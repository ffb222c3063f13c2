"""
GPU lowering of matrix products (MatMul, Gemm, their fused forms) and reductions
(Softmax, LogSoftmax, LayerNormalization, ReduceSum/Mean/Max), run on an OpenCL
CPU device and compared with ONNX Runtime.

Each test builds one model of several independent nodes, so one OpenCL build
covers many cases; outputs are named after their case.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from harness import lower_for_pocl
from onnx import TensorProto, helper, numpy_helper
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.backends.opencl.executor import CompiledModel
from mobile_opt.checking import relative_error
from mobile_opt.dialects import ocl, texture

RNG = np.random.default_rng(7)
RTOL = 1e-3


def rand(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


Node = tuple[str, dict[str, Sequence[int] | np.ndarray | None], dict[str, Any]]
"""(op type, inputs: a shape for a graph input, an array for an initializer, None
for an omitted optional input, attributes)."""


def build(cases: dict[str, Node]) -> onnx.ModelProto:
    """One model computing every case; case `name`'s output is `name`, its inputs `name_<input>`."""
    nodes, inputs, inits = [], [], []
    for name, (op, operands, attrs) in cases.items():
        names = []
        for key, value in operands.items():
            if value is None:
                names.append("")
                continue
            full = f"{name}_{key}"
            names.append(full)
            if isinstance(value, np.ndarray):
                inits.append(numpy_helper.from_array(value, full))
            else:
                inputs.append(helper.make_tensor_value_info(full, TensorProto.FLOAT, list(value)))
        while names and not names[-1]:
            names.pop()  # ONNX Runtime wants trailing omitted inputs left out
        nodes.append(helper.make_node(op, names, [name], name=name, **attrs))
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in cases]
    graph = helper.make_graph(nodes, "cases", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 9
    return onnx.shape_inference.infer_shapes(model)


def check(tmp_path: Path, device, model: onnx.ModelProto, passes: Sequence[str] = (),
          shift: float = 0.0, kernels: int | None = None):
    """Lower, build and run `model`; every output within RTOL of ONNX Runtime."""
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    module = lower_for_pocl(path, passes)
    compiled = CompiledModel(module, device)
    session = ort.InferenceSession(str(path))
    feeds = {
        i.name: (RNG.standard_normal(i.shape) + shift).astype(np.float32)
        for i in session.get_inputs()
    }
    expected = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    result = compiled.run(feeds)
    if kernels is not None:
        assert len(result.kernel_times) == kernels
    for name, want in expected.items():
        got = result.outputs[name]
        assert got.shape == want.shape, name
        err = relative_error(got, want)
        assert err <= RTOL, f"{name}: relative error {err}"
    return module


def extend(model: onnx.ModelProto, nodes, outputs: dict[str, list[int]],
           inputs: dict[str, list[int]] | None = None,
           constants: dict[str, np.ndarray] | None = None) -> onnx.ModelProto:
    """`model` with more nodes, inputs and initializers, and `outputs` as its only outputs."""
    graph = model.graph
    for name, dims in (inputs or {}).items():
        graph.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, dims))
    for name, value in (constants or {}).items():
        graph.initializer.append(numpy_helper.from_array(value, name))
    graph.node.extend(nodes)
    del graph.output[:]
    graph.output.extend(helper.make_tensor_value_info(n, TensorProto.FLOAT, d)
                        for n, d in outputs.items())
    return model


MATMULS: dict[str, Node] = {
        "aligned": ("MatMul", {"a": [4, 8], "b": [8, 8]}, {}),
        "odd_k_n": ("MatMul", {"a": [5, 7], "b": [7, 6]}, {}),
        "k1": ("MatMul", {"a": [3, 1], "b": [1, 5]}, {}),
        "rank3_weight": ("MatMul", {"a": [2, 5, 9], "b": rand(9, 10)}, {}),
        "attention": ("MatMul", {"a": [1, 2, 6, 5], "b": [1, 2, 5, 6]}, {}),
        "broadcast": ("MatMul", {"a": [2, 1, 5, 6], "b": [3, 6, 7]}, {}),
        "vec_mat": ("MatMul", {"a": [6], "b": [6, 5]}, {}),
        "mat_vec": ("MatMul", {"a": [2, 7, 6], "b": [6]}, {}),
        "vec_vec": ("MatMul", {"a": [9], "b": [9]}, {}),
}

GEMMS: dict[str, Node] = {
        "alpha_beta": ("Gemm", {"a": [3, 5], "b": [5, 6], "c": [3, 6]},
                       {"alpha": 0.5, "beta": 2.0}),
        "trans_both": ("Gemm", {"a": [5, 3], "b": [6, 5], "c": rand(6)},
                       {"transA": 1, "transB": 1}),
        "trans_weight": ("Gemm", {"a": [2, 9], "b": rand(7, 9), "c": rand(2, 1)}, {"transB": 1}),
        "scalar_c": ("Gemm", {"a": [2, 4], "b": rand(4, 3), "c": rand(1)}, {"beta": -1.5}),
        "beta_zero": ("Gemm", {"a": [2, 4], "b": [4, 3], "c": [2, 3]}, {"beta": 0.0}),
        "no_c": ("Gemm", {"a": [3, 6], "b": rand(6, 5)}, {}),
        "trans_rows": ("Gemm", {"a": [9, 10], "b": rand(7, 10), "c": [9, 7]}, {"transB": 1}),
}

BUFFERS = ["onnx-to-texture{buffers=true}"]
"""Every tensor in a buffer (PoCL's choice): the axpy form takes 16 columns a work-item
(`wide_axpy`), a transB weight packed along N (cols4)."""


def test_matmul_shapes(tmp_path, pocl_device):
    check(tmp_path, pocl_device, build(MATMULS))


def test_gemm_attributes(tmp_path, pocl_device):
    check(tmp_path, pocl_device, build(GEMMS))


def test_products_in_buffers(tmp_path, pocl_device):
    wide = {
        "ragged_columns": ("MatMul", {"a": [9, 13], "b": rand(13, 37)}, {}),
        "gemv_trans": ("Gemm", {"a": [1, 70], "b": rand(50, 70), "c": rand(50)}, {"transB": 1}),
    }
    check(tmp_path, pocl_device, build({**MATMULS, **GEMMS, **wide}), BUFFERS)


def local_arrays(module) -> int:
    return sum(isinstance(op, ocl.LocalArrayOp) for op in module.walk())


def test_blocked_products(tmp_path, pocl_device):
    """
    Products of enough blocks take the blocked kernel (A and B staged in local memory),
    each block size of `GEMM_BLOCKS`: rows, columns and K that end mid-block (the images
    read zeros past them; the stores are guarded), batch axes of A folded into rows, a
    transB weight packed along N, Gemm's alpha and bias, a fused bias and Relu.
    """
    model = build({
        "block256": ("MatMul", {"a": [2100, 13], "b": [13, 1800]}, {}),
        "block128": ("MatMul", {"a": [1100, 20], "b": rand(20, 2000)}, {}),
        "batched": ("MatMul", {"a": [2, 300, 45], "b": rand(45, 901)}, {}),
        "gemm_t": ("Gemm", {"a": [530, 70], "b": rand(1030, 70), "c": rand(1030)},
                   {"transB": 1, "alpha": 0.5}),
        "mm": ("MatMul", {"a": [600, 33], "w": rand(33, 1000)}, {}),
    })
    model = extend(model, [
        helper.make_node("Add", ["mm", "mm_bias"], ["mm_add"]),
        helper.make_node("Relu", ["mm_add"], ["relu"]),
    ], {"block256": [2100, 1800], "block128": [1100, 2000], "batched": [2, 300, 901],
        "gemm_t": [530, 1030], "relu": [600, 1000]},
        constants={"mm_bias": rand(1000)})
    module = check(tmp_path, pocl_device, model, ["onnx-fuse"], kernels=5)
    assert local_arrays(module) == 2 * 5
    groups = sorted(tuple(g // n for g, n in zip(op.global_size.get_values(),
                                                 op.local_size.get_values(), strict=True))
                    for op in module.walk() if isinstance(op, ocl.LaunchOp))
    # (column blocks, row blocks): 256 x 128, 128 x 128, then 64 x 64 blocks from the top
    assert groups == sorted([(15, 9), (16, 9), (15, 10), (17, 9), (16, 10)])
    # small products keep the one-pixel kernel
    assert local_arrays(check(tmp_path, pocl_device, build(MATMULS))) == 0


def test_split_gemv(tmp_path, pocl_device):
    """
    Products of up to four rows over a long K split K across a work group and add the
    shares in local memory: a transB weight with a bias (a classifier), several rows, A's
    batch axes as rows, an activation B; a transposed weight wider than the image limit
    keeps the one-pixel kernel.
    """
    model = build({
        "fc": ("Gemm", {"a": [1, 2048], "b": rand(1000, 2048), "c": rand(1000)}, {"transB": 1}),
        "rows3": ("MatMul", {"a": [3, 4200], "b": rand(4200, 70)}, {}),
        "batched": ("MatMul", {"a": [1, 4, 300], "b": [300, 9]}, {}),
        "too_wide": ("Gemm", {"a": [2, 17000], "b": rand(10, 17000, scale=0.1)}, {"transB": 1}),
    })
    module = check(tmp_path, pocl_device, model, kernels=4)
    groups = sorted(op.local_size.get_values() for op in module.walk()
                    if isinstance(op, ocl.LaunchOp) and op.local_size is not None)
    assert groups == [(64, 1), (64, 1), (128, 1)] and local_arrays(module) == 3


def test_fused_matmul_and_gemm(tmp_path, pocl_device):
    """onnx-fuse folds the bias and activation into FusedMatMul/FusedGemm; one kernel each."""
    model = build({
        "mm": ("MatMul", {"a": [2, 5, 9], "w": rand(9, 6)}, {}),
        "gm": ("Gemm", {"a": [3, 9], "w": rand(5, 9), "c": rand(5)},
               {"transB": 1, "alpha": 0.7, "beta": 0.3}),
    })
    model = extend(model, [
        helper.make_node("Add", ["mm", "mm_bias"], ["mm_add"]),
        helper.make_node("Relu", ["mm_add"], ["relu"]),
        helper.make_node("Sigmoid", ["gm"], ["sigmoid"]),
    ], {"relu": [2, 5, 6], "sigmoid": [3, 5]}, constants={"mm_bias": rand(5, 1)})
    passes = ["onnx-fold-constants", "onnx-canonicalize", "onnx-fuse"]
    check(tmp_path, pocl_device, model, [*passes, *BUFFERS], kernels=2)
    module = check(tmp_path, pocl_device, model, passes, kernels=2)
    nodes = [op.attributes["onnx.node"].data for op in module.body.block.ops
             if "onnx.node" in op.attributes]
    assert any("FusedMatMul" in n for n in nodes) and any("FusedGemm" in n for n in nodes)


def test_elementwise_epilogues(tmp_path, pocl_device):
    """Trailing elementwise ops (with graph-input operands) run in the producer's kernel."""
    model = build({
        "mm": ("MatMul", {"a": [2, 3, 6], "w": rand(6, 5)}, {}),
        "sm": ("Softmax", {"x": [12, 9]}, {"axis": 1}),
        "rm": ("ReduceMean", {"x": [2, 7, 5], "axes": np.array([1], np.int64)}, {"keepdims": 0}),
    })
    model = extend(model, [
        helper.make_node("Add", ["mm", "res"], ["mm_res"]),
        helper.make_node("Tanh", ["mm_res"], ["mm_out"]),
        helper.make_node("Mul", ["sm", "gain"], ["sm_out"]),
        helper.make_node("Relu", ["rm"], ["rm_out"]),
    ], {"mm_out": [2, 3, 5], "sm_out": [12, 9], "rm_out": [2, 5]},
        inputs={"res": [3, 5]}, constants={"gain": rand(9)})
    check(tmp_path, pocl_device, model, kernels=3)


def test_weights_beyond_the_image_limit(tmp_path, pocl_device):
    """A weight taller or wider than 8192 pixels lives in a buffer2d; the kernel still runs."""
    module = check(tmp_path, pocl_device, build({
        "tall": ("MatMul", {"a": [2, 9000], "w": rand(9000, 8, scale=0.01)}, {}),
        "wide": ("Gemm", {"a": [2, 33001], "w": rand(6, 33001, scale=0.01), "c": rand(6)},
                 {"transB": 1}),
    }))
    kernels = [op for op in module.body.block.ops if op.name == "ocl.kernel"]
    buffers = [a for k in kernels for a in k.body.block.args
               if isinstance(a.type, texture.PixelBufferType)]
    assert len(buffers) >= 2


def _softmax_cases() -> dict[str, Node]:
    cases: dict[str, Node] = {}
    for shape in ([3, 10], [2, 3, 5], [2, 3, 4, 6]):
        for axis in range(-1, len(shape)):
            for op in ("Softmax", "LogSoftmax"):
                name = f"{op}_{'x'.join(map(str, shape))}_axis{axis}".replace("-", "m")
                cases[name] = (op, {"x": shape}, {"axis": axis})
    # more rows than pixels per row: one work-item per row
    cases["Softmax_rows"] = ("Softmax", {"x": [2, 40, 18]}, {"axis": -1})
    cases["LogSoftmax_rows"] = ("LogSoftmax", {"x": [40, 18]}, {"axis": 1})
    return cases


def test_softmax_every_axis(tmp_path, pocl_device):
    check(tmp_path, pocl_device, build(_softmax_cases()))


def test_softmax_negative_rows(tmp_path, pocl_device):
    """All-negative inputs: padding lanes must not take part in the max."""
    check(tmp_path, pocl_device, build({
        "soft": ("Softmax", {"x": [3, 7]}, {}),
        "log": ("LogSoftmax", {"x": [2, 1000]}, {}),
        "max": ("ReduceMax", {"x": [3, 6]}, {"keepdims": 0}),
    }), shift=-20.0)


@pytest.mark.parametrize("passes", [[], BUFFERS], ids=["images", "buffers"])
def test_erf_and_tanh_formulas(tmp_path, pocl_device, passes):
    """Erf (Abramowitz and Stegun's 7.1.26) and tanh (through exp) as the kernels compute
    them, alone and in both GELUs, over [-8, 8] and at 0: within 2e-6 of onnxruntime
    (their own error is under 5e-7; a coefficient off in its fourth digit is 1e-4 off)."""
    x = np.concatenate([np.linspace(-8, 8, 255), [0.0]]).astype(np.float32).reshape(1, 256)
    model = build({"erf": ("Erf", {"x": [1, 256]}, {}), "tanh": ("Tanh", {"x": [1, 256]}, {}),
                   "gelu": ("Gelu", {"x": [1, 256]}, {}),
                   "gelu_tanh": ("Gelu", {"x": [1, 256]}, {"approximate": "tanh"})})
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    compiled = CompiledModel(lower_for_pocl(path, passes), pocl_device)
    feeds = {f"{name}_x": x for name in ("erf", "tanh", "gelu", "gelu_tanh")}
    session = ort.InferenceSession(str(path))
    expected = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    got = compiled.run(feeds).outputs
    for name, want in expected.items():
        assert np.abs(got[name] - want).max() <= 2e-6 * max(1.0, np.abs(want).max()), name


def test_softmax_whole_rows_in_buffers(tmp_path, pocl_device):
    """In buffers (a CPU device) one work-item takes each whole row, even a classifier's
    one row of 1000, and writes its pixels in a loop."""
    module = check(tmp_path, pocl_device, build({
        "soft": ("Softmax", {"x": [1, 1000]}, {}),
        "log": ("LogSoftmax", {"x": [2, 3, 40]}, {"axis": -1}),
    }), BUFFERS, shift=-20.0)
    sizes = sorted(op.global_size.get_values() for op in module.walk()
                   if isinstance(op, ocl.LaunchOp))
    assert sizes == [(1, 1), (1, 6)]


def test_layer_normalization(tmp_path, pocl_device):
    cases: dict[str, Node] = {}
    for name, shape, axis in (("last", [2, 5, 7], -1), ("two_axes", [2, 5, 7], 1),
                              ("rank4", [2, 3, 4, 6], 2), ("long", [3, 1000], -1),
                              ("all", [3, 8], 0), ("row_groups", [16, 3, 6], 1),
                              ("rows", [24, 10], 1)):
        cases[name] = ("LayerNormalization",
                       {"x": shape, "scale": rand(*shape[axis:]), "bias": rand(*shape[axis:])},
                       {"axis": axis, "epsilon": 1e-5})
    cases["no_bias"] = ("LayerNormalization", {"x": [2, 6], "scale": rand(6), "bias": None}, {})
    cases["broadcast_scale"] = ("LayerNormalization", {"x": [2, 3, 5], "scale": rand(5)},
                                {"axis": 1})
    check(tmp_path, pocl_device, build(cases))


def test_reductions(tmp_path, pocl_device):
    cases: dict[str, Node] = {}
    for op in ("ReduceSum", "ReduceMean", "ReduceMax"):
        for tag, shape, axes, keep in (
            ("middle", [2, 3, 5], [1], 0),
            ("last", [2, 3, 5], [2], 1),
            ("last_flat", [3, 7], [-1], 0),
            ("outer", [2, 3, 5], [0, 2], 0),
            ("everything", [2, 3, 5], None, 0),
            ("spatial", [2, 3, 4, 6], [2, 3], 1),
            ("channels", [2, 6, 4, 3], [1], 0),
            ("width", [2, 3, 4, 6], [3], 0),
        ):
            operands: dict = {"x": shape}
            if axes is not None:
                operands["axes"] = np.array(axes, np.int64)
            cases[f"{op}_{tag}"] = (op, operands, {"keepdims": keep})
    cases["noop"] = ("ReduceSum", {"x": [2, 5]}, {"noop_with_empty_axes": 1})
    check(tmp_path, pocl_device, build(cases))


def test_reduction_axes_must_be_constant(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    axes = helper.make_tensor_value_info("axes", TensorProto.INT64, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1])
    graph = helper.make_graph([helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="r")],
                              "g", [x, axes], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 9
    path = tmp_path / "axes.onnx"
    onnx.save(model, path)
    with pytest.raises(DiagnosticException, match="axes must be a constant"):
        lower_for_pocl(path)
