"""
GPU (OpenCL texture) lowering of convolutions, pools and normalisations: small
ONNX models run on PoCL through `onnx-to-texture` and `texture-to-ocl`, compared
with ONNX Runtime. Each test puts its cases side by side in one model (one
program build), with one output per case.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import lower_for_pocl

from mobile_opt.checking import relative_error
from mobile_opt.pipelines import GRAPH_PASSES

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
pytest.importorskip("pyopencl")

from onnx import TensorProto, helper
from xdsl.utils.exceptions import DiagnosticException

RTOL = 1e-3
PASS_PIPELINE = GRAPH_PASSES.split(",")


def rand(*shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


class ModelBuilder:
    """Cases side by side in one graph: each adds its nodes, inputs, outputs, weights."""

    def __init__(self):
        self.nodes, self.inputs, self.outputs, self.initializers = [], [], [], []

    def node(self, op, inputs, outputs, **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, **attrs))

    def input(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def output(self, name):
        self.outputs.append(name)
        return name

    def weight(self, name, array):
        array = np.asarray(array, np.float32)
        tensor = helper.make_tensor(name, TensorProto.FLOAT, array.shape, array.ravel())
        self.initializers.append(tensor)
        return name

    def save(self, path: Path) -> Path:
        graph = helper.make_graph(
            self.nodes, "g", self.inputs,
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in self.outputs],
            self.initializers,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 9
        onnx.save(onnx.shape_inference.infer_shapes(model), path)
        return path


def run(path: Path, device, feeds, passes=(), fp16: bool = False) -> dict[str, np.ndarray]:
    from mobile_opt.backends.opencl.executor import CompiledModel

    return CompiledModel(lower_for_pocl(path, passes, fp16=fp16), device).run(feeds).outputs


def errors(path: Path, device, passes=(), seed=0, fp16: bool = False) -> dict[str, float]:
    """Each output's max error relative to its largest reference magnitude."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(seed)
    feeds = {
        i.name: rng.standard_normal(i.shape).astype(np.float32) for i in session.get_inputs()
    }
    names = [o.name for o in session.get_outputs()]
    expected = dict(zip(names, session.run(None, feeds), strict=True))
    got = run(path, device, feeds, passes, fp16)
    result = {}
    for name, want in expected.items():
        assert got[name].shape == want.shape, name
        result[name] = relative_error(got[name], want)
    return result


def assert_close(path: Path, device, passes=()):
    errs = errors(path, device, passes)
    bad = {name: err for name, err in errs.items() if not err < RTOL}
    assert not bad, f"relative errors over {RTOL}: {bad}"


def add_conv(m: ModelBuilder, name, x_shape, w_shape, bias=True, op="Conv", **attrs):
    x = m.input(f"{name}_x", x_shape)
    operands = [x, m.weight(f"{name}_w", rand(*w_shape))]
    if bias:
        out_channels = w_shape[0] if op == "Conv" else w_shape[1] * attrs.get("group", 1)
        operands.append(m.weight(f"{name}_b", rand(out_channels, seed=2)))
    m.node(op, operands, [m.output(name)], **attrs)


CONVS = {
    "conv_1x1": ([1, 8, 5, 7], [12, 8, 1, 1], {}),
    "conv_1x1_c6_o10": ([2, 6, 5, 5], [10, 6, 1, 1], {}),
    "conv_3x3_pad": ([1, 3, 9, 11], [8, 3, 3, 3], {"pads": [1, 1, 1, 1]}),
    "conv_3x3_stride2_asym": ([1, 5, 10, 9], [6, 5, 3, 3],
                              {"strides": [2, 2], "pads": [0, 1, 1, 0]}),
    "conv_dilated": ([1, 4, 11, 11], [4, 4, 3, 3], {"dilations": [2, 3], "pads": [2, 3, 2, 3]}),
    "conv_same_upper": ([1, 4, 7, 8], [8, 4, 4, 3], {"auto_pad": "SAME_UPPER", "strides": [2, 1]}),
    "conv_same_lower": ([1, 4, 7, 8], [4, 4, 2, 2], {"auto_pad": "SAME_LOWER"}),
    "conv_grouped_blocked": ([1, 16, 6, 6], [8, 8, 3, 3], {"group": 2, "pads": [1, 1, 1, 1]}),
    "conv_grouped_odd": ([1, 6, 6, 6], [9, 2, 3, 3], {"group": 3, "pads": [1, 1, 1, 1]}),
    "conv_grouped_unaligned": ([1, 12, 5, 5], [10, 6, 3, 3], {"group": 2}),
    "conv_depthwise": ([1, 6, 8, 8], [6, 1, 3, 3],
                       {"group": 6, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    "conv_depthwise_multiplier": ([1, 3, 6, 6], [6, 1, 3, 3], {"group": 3}),
    "conv_narrow": ([1, 4, 6, 2], [4, 4, 3, 1], {"pads": [1, 0, 1, 0]}),
}

TRANSPOSED = {
    "convt_plain": ([1, 4, 5, 5], [4, 6, 3, 3], {}),
    "convt_stride2_pad": ([1, 3, 4, 5], [3, 5, 3, 3],
                          {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 0]}),
    "convt_dilated": ([1, 4, 4, 4], [4, 4, 2, 3], {"dilations": [2, 1], "strides": [1, 2]}),
    "convt_grouped": ([1, 8, 4, 4], [8, 4, 3, 3], {"group": 2, "strides": [2, 2]}),
    "convt_grouped_odd": ([1, 6, 3, 5], [6, 1, 2, 2], {"group": 3, "strides": [2, 3]}),
    "convt_same_upper": ([1, 4, 5, 6], [4, 4, 3, 3], {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    "convt_output_shape": ([1, 4, 3, 3], [4, 4, 3, 3], {"strides": [2, 2], "output_shape": [8, 7]}),
}


def test_conv(tmp_path, pocl_device):
    """Blocked, depthwise and grouped kernels; strides, pads, dilations, auto_pad."""
    m = ModelBuilder()
    for name, (x, w, attrs) in CONVS.items():
        add_conv(m, name, x, w, **attrs)
    add_conv(m, "conv_no_bias", [1, 5, 6, 6], [7, 5, 3, 3], bias=False, pads=[1, 1, 1, 1])
    assert_close(m.save(tmp_path / "m.onnx"), pocl_device)


def test_conv_transpose(tmp_path, pocl_device):
    m = ModelBuilder()
    for name, (x, w, attrs) in TRANSPOSED.items():
        add_conv(m, name, x, w, op="ConvTranspose", **attrs)
    add_conv(m, "convt_no_bias", [1, 4, 3, 3], [4, 4, 3, 3], bias=False, op="ConvTranspose",
             strides=[3, 3])
    assert_close(m.save(tmp_path / "m.onnx"), pocl_device)


def test_fused_conv_with_activation(tmp_path, pocl_device):
    """onnx-fuse forms FusedConv(Clip); the trailing Sigmoid runs as its epilogue."""
    m = ModelBuilder()
    m.node("Conv", [m.input("x", [1, 5, 7, 7]), m.weight("w", rand(6, 5, 3, 3)),
                    m.weight("b", rand(6, seed=2))], ["c"], pads=[1, 1, 1, 1])
    m.node("Clip", ["c", m.weight("lo", -0.5), m.weight("hi", 2.0)], ["r"])
    m.node("Sigmoid", ["r"], [m.output("y")])
    assert_close(m.save(tmp_path / "m.onnx"), pocl_device, PASS_PIPELINE)


def test_blocked_conv(tmp_path, pocl_device):
    """
    Convs with enough output positions and channels run as implicit GEMMs by the blocked
    product; a deep one with few positions splits K into slices that a second kernel adds
    (with the bias and the fused epilogue). Pads on one side, strides, dilations, input
    channels that end mid-block; zeros off the input.
    """
    from mobile_opt.dialects import ocl

    m = ModelBuilder()
    m.node("Conv", [m.input("x", [1, 128, 14, 14]), m.weight("w", rand(256, 128, 3, 3)),
                    m.weight("b", rand(256, seed=2))], ["deep"], pads=[1, 1, 1, 1])
    m.node("Add", ["deep", m.input("skip", [1, 256, 14, 14])], ["sum"])
    m.node("Relu", ["sum"], [m.output("split")])
    m.node("Conv", [m.input("p", [1, 30, 56, 56]), m.weight("pw", rand(130, 30, 1, 1))],
           ["pointwise"])
    m.node("Relu", ["pointwise"], [m.output("pointwise_relu")])
    add_conv(m, "strided_dilated", [2, 13, 66, 62], [130, 13, 3, 3], pads=[2, 1, 0, 2],
             strides=[2, 1], dilations=[2, 1])
    path = m.save(tmp_path / "m.onnx")
    assert_close(path, pocl_device, PASS_PIPELINE)
    module = lower_for_pocl(path, PASS_PIPELINE)
    kernels = [op for op in module.body.block.ops if isinstance(op, ocl.KernelOp)]
    staged = [k.sym_name.data for k in kernels
              if any(isinstance(op, ocl.LocalArrayOp) for op in k.walk())]
    assert len(staged) == 3 and sum(name.startswith("conv_slices") for name in staged) == 1
    assert len(kernels) == 4  # the slices' sums are added in the split conv's own kernel
    unblocked = lower_for_pocl(path, [*PASS_PIPELINE, "onnx-to-texture{blocked=false}"])
    assert not any(isinstance(op, ocl.LocalArrayOp) for op in unblocked.walk())


def test_a_conv_of_few_groups_takes_the_blocked_product_dense(tmp_path, pocl_device):
    """
    In images, a conv of at most `DENSE_BLOCKED_GROUPS` groups runs as the dense conv whose
    weight is zero between groups, by the blocked product: whole channel blocks a group
    (AlexNet's 2) and not (4 groups of 6), split K too. Depthwise convs stay one-pixel.
    """
    from mobile_opt.dialects import ocl

    m = ModelBuilder()
    add_conv(m, "two_groups", [1, 64, 56, 56], [128, 32, 3, 3], pads=[1, 1, 1, 1], group=2)
    add_conv(m, "four_groups_of_6", [1, 24, 96, 96], [64, 6, 3, 3], pads=[1, 1, 1, 1], group=4)
    add_conv(m, "depthwise", [1, 16, 40, 40], [16, 1, 3, 3], pads=[1, 1, 1, 1], group=16)
    path = m.save(tmp_path / "m.onnx")
    assert_close(path, pocl_device, PASS_PIPELINE)
    module = lower_for_pocl(path, PASS_PIPELINE)
    staged = [k.sym_name.data for k in module.body.block.ops if isinstance(k, ocl.KernelOp)
              and any(isinstance(op, ocl.LocalArrayOp) for op in k.walk())]
    assert len(staged) == 2 and sum(name.startswith("conv_slices") for name in staged) == 1


BUFFERS = ["onnx-to-texture{buffers=true}"]
"""Every tensor in a buffer (`prefers_buffers`, PoCL's choice): ungrouped convs take the
wide kernel, 16 output channels at 8 output pixels a work-item."""

WIDE = {  # the wide kernels: dense (hwio4) and depthwise, 16 channels a work-item
    "wide_groups_partial": ([1, 8, 5, 10], [20, 8, 3, 3], {"pads": [1, 1, 1, 1]}),
    "wide_ragged_19": ([2, 16, 4, 19], [32, 16, 1, 1], {}),
    "wide_stem_7x7_s2": ([1, 3, 21, 23], [16, 3, 7, 7], {"strides": [2, 2], "pads": [3, 3, 3, 3]}),
    "wide_stride2_1x1": ([1, 12, 9, 9], [48, 12, 1, 1], {"strides": [2, 2]}),
    "wide_depthwise_20": ([1, 20, 6, 19], [20, 1, 3, 3], {"group": 20, "pads": [1, 1, 1, 1]}),
    # grouped, dense over the groups' band: ShuffleNet's groups of 34 (a 16-output
    # window meets two groups), whole blocks a group (12), and the most groups (8)
    "wide_groups_of_34": ([1, 136, 3, 5], [136, 34, 1, 1], {"group": 4}),
    "wide_groups_of_12": ([1, 48, 5, 6], [48, 12, 3, 3], {"group": 4, "pads": [1, 1, 1, 1]}),
    "wide_groups_8": ([1, 64, 4, 5], [40, 8, 1, 1], {"group": 8}),
    # the row depthwise kernel (stride 1): dilated, unpadded (every tap whole), 5x5
    "row_depthwise_dilated": ([1, 8, 7, 13], [8, 1, 3, 3],
                              {"group": 8, "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    "row_depthwise_unpadded": ([1, 12, 5, 6], [12, 1, 3, 3], {"group": 12}),
    "row_depthwise_5x5": ([1, 4, 6, 4], [4, 1, 5, 5], {"group": 4, "pads": [2, 2, 2, 2]}),
    "wide_depthwise_s2": ([1, 32, 11, 11], [32, 1, 3, 3],
                          {"group": 32, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
}


def test_conv_in_buffers(tmp_path, pocl_device):
    """The conv cases, and the wide kernel's: partial channel groups, ragged tiles, C=3."""
    m = ModelBuilder()
    for name, (x, w, attrs) in {**CONVS, **WIDE}.items():
        add_conv(m, name, x, w, **attrs)
    add_conv(m, "wide_no_bias", [1, 5, 6, 6], [7, 5, 3, 3], bias=False, pads=[1, 1, 1, 1])
    for name, (x, w, attrs) in TRANSPOSED.items():
        add_conv(m, name, x, w, op="ConvTranspose", **attrs)
    assert_close(m.save(tmp_path / "m.onnx"), pocl_device, BUFFERS)


def test_buffer_kernels_in_half(tmp_path, pocl_device):
    """Half buffers (vload_half4, vload_half16, one half a lane) through the banded
    grouped, row depthwise and wide kernels, within fp16's 1e-2."""
    m = ModelBuilder()
    for name in ("wide_groups_of_34", "wide_groups_of_12", "row_depthwise_dilated",
                 "wide_depthwise_20", "wide_ragged_19"):
        x, w, attrs = WIDE[name]
        add_conv(m, name, x, w, **attrs)
    errs = errors(m.save(tmp_path / "m.onnx"), pocl_device, BUFFERS, fp16=True)
    assert all(err < 1e-2 for err in errs.values()), errs


def test_wide_conv_epilogue(tmp_path, pocl_device):
    """A residual block's conv in buffers: Relu, then Add and Relu fused as the epilogue."""
    m = ModelBuilder()
    m.node("Conv", [m.input("x", [1, 16, 6, 9]), m.weight("w", rand(20, 16, 3, 3)),
                    m.weight("b", rand(20, seed=2))], ["c"], pads=[1, 1, 1, 1])
    m.node("Add", ["c", m.input("skip", [1, 20, 6, 9])], ["s"])
    m.node("Relu", ["s"], [m.output("y")])
    assert_close(m.save(tmp_path / "m.onnx"), pocl_device,
                 [*PASS_PIPELINE, *BUFFERS])


POOLS = {
    "max_3x3_s2": ("MaxPool", [1, 6, 9, 9], {"kernel_shape": [3, 3], "strides": [2, 2]}),
    "max_pads_ceil": ("MaxPool", [1, 5, 8, 7], {"kernel_shape": [3, 3], "strides": [2, 2],
                                                "pads": [1, 0, 1, 1], "ceil_mode": 1}),
    "max_dilated": ("MaxPool", [1, 6, 9, 9], {"kernel_shape": [2, 3], "dilations": [2, 2]}),
    "avg_excl_pad": ("AveragePool", [1, 6, 7, 7], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    "avg_incl_pad": ("AveragePool", [1, 6, 7, 7], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
                                                   "count_include_pad": 1, "strides": [2, 2]}),
    "avg_ceil": ("AveragePool", [2, 3, 8, 8], {"kernel_shape": [3, 3], "strides": [2, 2],
                                               "ceil_mode": 1}),
    "avg_ceil_incl_pad": ("AveragePool", [1, 6, 8, 8], {"kernel_shape": [3, 3], "strides": [2, 2],
                                                        "pads": [1, 1, 1, 1], "ceil_mode": 1,
                                                        "count_include_pad": 1}),
    "avg_same_upper": ("AveragePool", [1, 4, 7, 6], {"kernel_shape": [2, 3],
                                                     "auto_pad": "SAME_UPPER"}),
    "global_avg": ("GlobalAveragePool", [2, 6, 5, 7], {}),
    "global_max": ("GlobalMaxPool", [1, 10, 4, 3], {}),
    "lrn": ("LRN", [1, 10, 4, 5], {"size": 5, "alpha": 0.5, "beta": 0.75, "bias": 2.0}),
    "lrn_wide": ("LRN", [1, 13, 2, 2], {"size": 11, "alpha": 0.3}),
}


def test_pools_and_lrn(tmp_path, pocl_device):
    m = ModelBuilder()
    for name, (op, x, attrs) in POOLS.items():
        m.node(op, [m.input(f"{name}_x", x)], [m.output(name)], **attrs)
    c = 6
    m.node("BatchNormalization",
           [m.input("bn_x", [2, c, 3, 5]), m.weight("s", rand(c, seed=3)),
            m.weight("b", rand(c, seed=4)), m.weight("mu", rand(c, seed=5)),
            m.weight("v", np.abs(rand(c, seed=6)) + 0.1)],
           [m.output("batchnorm")], epsilon=1e-3)
    assert_close(m.save(tmp_path / "m.onnx"), pocl_device)


def test_lrn_even_size(tmp_path, pocl_device):
    """ONNX Runtime refuses an even size; compare with the ONNX formula directly."""
    size, alpha, beta, bias = 4, 0.3, 0.6, 1.5
    m = ModelBuilder()
    m.node("LRN", [m.input("x", [1, 7, 3, 3])], [m.output("y")],
           size=size, alpha=alpha, beta=beta, bias=bias)
    x = rand(1, 7, 3, 3)
    squares = np.pad(x * x, [(0, 0), (1, 2), (0, 0), (0, 0)])
    window = sum(squares[:, i : i + 7] for i in range(size))
    expected = x / (bias + alpha / size * window) ** beta
    got = run(m.save(tmp_path / "m.onnx"), pocl_device, {"x": x})["y"]
    assert np.abs(got - expected).max() / np.abs(expected).max() < RTOL


def test_small_network(tmp_path, pocl_device):
    """Conv + BatchNorm (folded) + Relu + MaxPool + LRN + depthwise conv + AveragePool."""
    m = ModelBuilder()
    m.node("Conv", [m.input("x", [1, 3, 16, 16]), m.weight("w1", rand(8, 3, 3, 3)),
                    m.weight("b1", rand(8, seed=2))], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2])
    m.node("BatchNormalization",
           ["c1", m.weight("s", rand(8, seed=3)), m.weight("b", rand(8, seed=4)),
            m.weight("mu", rand(8, seed=5)), m.weight("v", np.abs(rand(8, seed=6)) + 0.5)], ["n1"])
    m.node("Relu", ["n1"], ["r1"])
    m.node("MaxPool", ["r1"], ["p1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    m.node("LRN", ["p1"], ["l1"], size=3)
    m.node("Conv", ["l1", m.weight("w2", rand(8, 1, 3, 3, seed=7))], ["c2"], group=8,
           pads=[1, 1, 1, 1])
    m.node("AveragePool", ["c2"], [m.output("y")], kernel_shape=[2, 2], strides=[2, 2])
    assert_close(m.save(tmp_path / "m.onnx"), pocl_device, PASS_PIPELINE)


def test_row_layout_neighbours(tmp_path, pocl_device):
    """Between Softmaxes the NCHW tensors are stored in rows4 (w packed), not nc4hw4."""
    m = ModelBuilder()
    cases = {
        "conv": ("Conv", [m.weight("w", rand(6, 2, 3, 3)), m.weight("b", rand(6, seed=2))],
                 {"pads": [1, 0, 1, 2], "group": 3}),
        "maxpool": ("MaxPool", [], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
        "lrn": ("LRN", [], {"size": 3, "alpha": 0.5}),
        "batchnorm": ("BatchNormalization",
                      [m.weight(n, rand(6, seed=s)) for n, s in (("g", 3), ("sh", 4), ("mu", 5))]
                      + [m.weight("v", np.abs(rand(6, seed=6)) + 0.5)], {}),
    }
    for name, (op, weights, attrs) in cases.items():
        m.node("Softmax", [m.input(f"{name}_x", [1, 6, 5, 7])], [f"{name}_s"])
        m.node(op, [f"{name}_s", *weights], [f"{name}_m"], **attrs)
        m.node("Softmax", [f"{name}_m"], [m.output(name)])
    assert_close(m.save(tmp_path / "m.onnx"), pocl_device)


def test_unsupported_raise(tmp_path):
    m = ModelBuilder()
    add_conv(m, "y", [1, 4, 9], [4, 4, 3])
    with pytest.raises(DiagnosticException, match="rank-4"):
        lower_for_pocl(m.save(tmp_path / "conv1d.onnx"))

    m = ModelBuilder()
    m.node("MaxPool", [m.input("x", [1, 4, 4, 4])], [m.output("y"), "indices"], kernel_shape=[2, 2])
    m.outputs.pop()
    graph_path = tmp_path / "indices.onnx"
    graph = helper.make_graph(
        m.nodes, "g", m.inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3, 3]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [1, 4, 3, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.save(model, graph_path)
    # the importer refuses the Indices output before the lowering sees it
    with pytest.raises(Exception, match="'indices'|Indices"):
        lower_for_pocl(graph_path)


def test_a_max_pool_round_trips_through_printed_ir(tmp_path):
    """A max pool starts from -inf: the printed IR, parsed again, gives the same OpenCL (xDSL
    reads `dense<0xff800000>` as 4286578688.0, so no non-finite dense constant is printed)."""
    from mobile_opt import pipelines
    from mobile_opt.backends.opencl.printer import opencl_source
    from xdsl.parser import Parser

    m = ModelBuilder()
    op, x, attrs = POOLS["global_max"]
    m.node(op, [m.input("x", x)], [m.output("y")], **attrs)
    module = lower_for_pocl(m.save(tmp_path / "m.onnx"))
    parsed = Parser(pipelines.context(), str(module)).parse_module()
    assert "INFINITY" in opencl_source(module)
    assert opencl_source(parsed) == opencl_source(module)


def test_grouped_conv_in_buffers_runs_dense(tmp_path):
    """In buffers a conv of few groups runs as a dense conv with a block-diagonal weight
    (the wide kernel, over its outputs' groups alone); numerics are in
    `test_conv_in_buffers` (conv_grouped_*, wide_groups_*)."""
    from mobile_opt.dialects import texture
    from mobile_opt.dialects.texture import Layout

    def packed_weights(group: int, channels: int) -> list[tuple[int, ...]]:
        m = ModelBuilder()
        add_conv(m, "g", [1, channels, 5, 5], [10, channels // group, 3, 3], group=group)
        module = lower_for_pocl(m.save(tmp_path / f"g{group}.onnx"), BUFFERS)
        return [tuple(op.source.type.get_shape()) for op in module.walk()
                if isinstance(op, texture.PackOp) and op.layout.data is Layout.HWIO4]

    assert packed_weights(2, 12) == [(10, 12, 3, 3)]  # 5 outputs, 6 inputs a group
    assert packed_weights(2, 16) == [(10, 16, 3, 3)]  # whole blocks of inputs a group
    assert packed_weights(10, 20) == []  # too many groups: the grouped kernel
