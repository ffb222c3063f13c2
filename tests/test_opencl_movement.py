"""
Data-movement ops on the OpenCL texture path (`transforms/onnx_to_texture/movement.py`):
one-node (and a few chained) ONNX models are lowered, run on PoCL and compared
with ONNX Runtime. Odd sizes, channel counts that are not multiples of 4 and
negative axes exercise the lane-by-lane kernels next to the whole-pixel ones and
the free (aliased) reshapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
import pytest
from harness import check_case, lower_for_pocl, prefixed_nodes, run_against_onnxruntime

from mobile_opt.dialects.onnx import ONNX
from mobile_opt.dialects.texture import Layout
from mobile_opt.transforms.onnx_to_texture import OnnxToTexturePass
from mobile_opt.transforms.onnx_to_texture.context import Stored
from mobile_opt.transforms.onnx_to_texture.movement import (
    ALIAS,
    BLOCK,
    LANES,
    Reshaped,
    Strided,
    copy_method,
)
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

N = helper.make_node


def ints(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def floats(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


@dataclass
class Case:
    """Nodes over named inputs {name: shape} and constants, with the kernels they should take."""

    nodes: list
    inputs: dict
    outputs: list
    constants: dict = field(default_factory=dict)
    kernels: int = 1


def one(op_type, inputs, constants=None, kernels=1, **attrs):
    """One node on the inputs (then the constants, in order) with output 'y'."""
    constants = constants or {}
    return Case([N(op_type, [*inputs, *constants], ["y"], **attrs)], inputs, ["y"], constants,
                kernels)


CASES = {
    # reshapes: free when the packed axis keeps its pixels
    "reshape_rows_free": one("Reshape", {"x": [2, 3, 10]}, {"s": ints(6, -1)}, kernels=0),
    "reshape_nchw_to_rows": one("Reshape", {"x": [1, 6, 5, 7]}, {"s": ints(6, 35)}),
    "reshape_rows_to_nchw": one("Reshape", {"x": [3, 70]}, {"s": ints(1, 6, 5, 7)}),
    "reshape_zero_dim": one("Reshape", {"x": [2, 9, 5]}, {"s": ints(0, 3, 0, 3)}),
    "flatten_pooled": one("Flatten", {"x": [2, 6, 1, 1]}, axis=1),
    "flatten_negative_axis": one("Flatten", {"x": [2, 3, 5]}, axis=-1, kernels=0),
    "squeeze": one("Squeeze", {"x": [3, 5, 1]}, {"a": ints(-1)}),
    # select-layouts{solver=gcd2} stores x rows4, whose pixels are [3, 5]'s: a free alias
    # (the local rules store it nc4hw4 and copy)
    "squeeze_all": one("Squeeze", {"x": [1, 3, 1, 5]}, kernels=0),
    "squeeze_leading": one("Squeeze", {"x": [1, 5, 7]}, {"a": ints(0)}, kernels=0),
    "unsqueeze": one("Unsqueeze", {"x": [3, 5]}, {"a": ints(0, -1)}),
    "identity": one("Identity", {"x": [2, 3, 5]}, kernels=0),
    "dropout": one("Dropout", {"x": [1, 5, 3, 3]}, kernels=0),
    # transposes
    "transpose_to_nhwc": one("Transpose", {"x": [1, 6, 5, 7]}, perm=[0, 2, 3, 1]),
    "transpose_reverse": one("Transpose", {"x": [3, 5, 6]}),
    "transpose_keeps_last": one("Transpose", {"x": [2, 3, 4, 5, 7]}, perm=[0, 2, 1, 3, 4]),
    # concat
    "concat_channels_aligned": one(
        "Concat", {"x": [1, 8, 5, 7], "z": [1, 4, 5, 7], "u": [1, 3, 5, 7]}, axis=1),
    "concat_channels_unaligned": one("Concat", {"x": [1, 6, 5, 7], "z": [1, 5, 5, 7]}, axis=-3),
    "concat_last_axis": one("Concat", {"x": [2, 3, 3], "z": [2, 3, 5], "u": [2, 3, 2]}, axis=-1),
    "concat_rows": one("Concat", {"x": [2, 5], "z": [3, 5]}, axis=0),
    # slices
    "slice_spatial": one("Slice", {"x": [1, 6, 9, 8]}, {
        "b": ints(1, -7), "e": ints(8, 100), "a": ints(2, -1), "t": ints(2, 3)}),
    "slice_channels": one("Slice", {"x": [1, 10, 3, 3]},
                          {"b": ints(3), "e": ints(9), "a": ints(1)}),
    "slice_reversed": one("Slice", {"x": [3, 7]}, {
        "b": ints(-1, -1), "e": ints(-100, 0), "a": ints(0, 1), "t": ints(-1, -2)}),
    # pads
    "pad_spatial_value": one("Pad", {"x": [1, 5, 4, 3]}, {
        "p": ints(0, 0, 1, 2, 0, 0, 2, 1), "v": floats(1.5)}),
    "pad_channels_value": one("Pad", {"x": [1, 5, 2, 3]}, {
        "p": ints(0, 2, 0, 0, 0, 3, 0, 0), "v": floats(-2.0)}),
    "pad_crop": one("Pad", {"x": [2, 9]}, {"p": ints(-1, 2, 0, -3)}),
    "pad_reflect": one("Pad", {"x": [1, 3, 5, 6]}, {"p": ints(0, 0, 2, 3, 0, 0, 4, 1)},
                       mode="reflect"),
    "pad_edge_axes": one("Pad", {"x": [2, 3, 5]}, {
        "p": ints(2, 1, 3, 2), "v": floats(0), "a": ints(-1, 0)}, mode="edge"),
    "pad_wrap": one("Pad", {"x": [2, 5]}, {"p": ints(1, 2, 0, 3)}, mode="wrap"),
    # expand, gather
    "expand_rows": one("Expand", {"x": [3, 1]}, {"s": ints(2, 3, 5)}),
    "expand_scalar": one("Expand", {"x": []}, {"s": ints(3, 5)}),
    "expand_channels": one("Expand", {"x": [1, 6, 1, 1]}, {"s": ints(2, 6, 3, 3)}),
    "gather_row": one("Gather", {"x": [5, 6]}, {"i": np.array(-2, np.int64)}, axis=0),
    "gather_table": one("Gather", {"x": [3, 5, 4]}, {"i": np.array([[0, 2], [-1, 1]])}, axis=1),
    "gather_last_axis": one("Gather", {"x": [3, 4, 9]}, {"i": ints(1, 3, 5, 7, 8)}, axis=-1),
    "gather_scalar": one("Gather", {"x": [7]}, {"i": np.array(3, np.int64)}),
    # resize
    "resize_upsample": one("Resize", {"x": [1, 3, 4, 5]}, {
        "r": floats(), "s": floats(1, 1, 2, 2)}, mode="nearest",
        coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    "resize_half_pixel_sizes": one("Resize", {"x": [1, 5, 4, 6]}, {
        "r": floats(), "s": floats(), "z": ints(1, 5, 7, 9)}, mode="nearest"),
    "resize_downsample": one("Resize", {"x": [1, 2, 8, 9]}, {
        "r": floats(), "s": floats(1, 1, 0.5, 0.5)}, mode="nearest"),
    "resize_align_corners_ceil": one("Resize", {"x": [1, 3, 5, 4]}, {
        "r": floats(), "s": floats(1, 1, 2.5, 1.75)}, mode="nearest",
        coordinate_transformation_mode="align_corners", nearest_mode="ceil"),
    "resize_crop_extrapolate": one("Resize", {"x": [1, 2, 6, 6]}, {
        "r": floats(0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3), "s": floats(1, 1, 1.5, 1.2)},
        mode="nearest", coordinate_transformation_mode="tf_crop_and_resize",
        extrapolation_value=3.0),
    # chains: ShuffleNet's channel shuffle is one kernel, a squeeze/unsqueeze pair none
    "channel_shuffle": Case(
        [N("Reshape", ["x", "s"], ["a"]), N("Transpose", ["a"], ["b"], perm=[0, 2, 1, 3, 4]),
         N("Reshape", ["b", "t"], ["y"])],
        {"x": [1, 14, 5, 7]}, ["y"], {"s": ints(1, 2, 7, 5, 7), "t": ints(1, 14, 5, 7)}),
    "squeeze_unsqueeze": Case(
        [N("Squeeze", ["x", "a"], ["m"]), N("Unsqueeze", ["m", "a"], ["y"])],
        {"x": [1, 3, 6]}, ["y"], {"a": ints(0)}, kernels=0),
    # a following elementwise op runs in the copy kernel
    "transpose_then_relu": Case(
        [N("Transpose", ["x"], ["t"], perm=[1, 0]), N("Relu", ["t"], ["y"])], {"x": [5, 6]}, ["y"]),
    "shuffle_then_relu": Case(
        [N("Reshape", ["x", "s"], ["a"]), N("Transpose", ["a"], ["b"], perm=[0, 2, 1, 3, 4]),
         N("Reshape", ["b", "t"], ["c"]), N("Relu", ["c"], ["y"])],
        {"x": [1, 6, 3, 2]}, ["y"], {"s": ints(1, 3, 2, 3, 2), "t": ints(1, 6, 3, 2)}),
    "split_then_add": Case(
        [N("Split", ["x", "p"], ["a", "b"], axis=1), N("Add", ["a", "z"], ["y"]),
         N("Neg", ["b"], ["w"])],
        {"x": [1, 10, 3, 3], "z": [1, 3, 3, 3]}, ["y", "w"], {"p": ints(3, 7)}, kernels=3),
    "split_even": Case([N("Split", ["x"], ["a", "b", "c"], axis=-1, num_outputs=3)],
                       {"x": [2, 3, 7]}, ["a", "b", "c"], kernels=3),
}


def build_model(cases: dict[str, Case]):
    """The cases side by side in one model, each one's names prefixed by its own name."""
    nodes, inputs, outputs, initializers = [], [], [], []
    for case_name, case in cases.items():
        def named(n: str, prefix: str = case_name) -> str:
            return f"{prefix}.{n}"

        nodes += prefixed_nodes(case_name, case.nodes)
        inputs += [helper.make_tensor_value_info(named(n), TensorProto.FLOAT, s)
                   for n, s in case.inputs.items()]
        outputs += [helper.make_tensor_value_info(named(n), TensorProto.FLOAT, None)
                    for n in case.outputs]
        initializers += [numpy_helper.from_array(v, named(n)) for n, v in case.constants.items()]
    graph = helper.make_graph(nodes, "movement", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory, pocl_device):
    """(GPU outputs, ONNX Runtime outputs, kernels' node labels) for random inputs."""
    path = tmp_path_factory.mktemp("movement") / "model.onnx"
    onnx.save(build_model(CASES), str(path))  # one OpenCL build
    return run_against_onnxruntime(path, lower_for_pocl(path), pocl_device)


@pytest.mark.parametrize("name", list(CASES))
def test_movement_matches_onnxruntime(name, gpu_run):
    check_case(name, CASES[name], gpu_run)


BUFFERS = ["onnx-to-texture{buffers=true}"]

CHANNEL_MAPS = {  # copies that move only channels, in buffers (`store_channel_map`)
    "channel_shuffle": CASES["channel_shuffle"],  # groups of 7 channels, not whole blocks
    "shuffle_then_relu": CASES["shuffle_then_relu"],
    "channel_shuffle_4x4": Case(
        [N("Reshape", ["x", "s"], ["a"]), N("Transpose", ["a"], ["b"], perm=[0, 2, 1, 3, 4]),
         N("Reshape", ["b", "t"], ["y"])],
        {"x": [2, 16, 3, 5]}, ["y"], {"s": ints(2, 4, 4, 3, 5), "t": ints(2, 16, 3, 5)}),
    "channel_slice": one("Slice", {"x": [1, 12, 2, 3]}, {"b": ints(3), "e": ints(10),
                                                         "a": ints(1)}),
}


@pytest.fixture(scope="module")
def buffers_run(tmp_path_factory, pocl_device):
    """(the lowered module, `run_against_onnxruntime`'s result) of CHANNEL_MAPS in buffers."""
    path = tmp_path_factory.mktemp("channel_maps") / "model.onnx"
    onnx.save(build_model(CHANNEL_MAPS), str(path))
    module = lower_for_pocl(path, BUFFERS)
    return module, run_against_onnxruntime(path, module, pocl_device)


@pytest.mark.parametrize("name", list(CHANNEL_MAPS))
def test_channel_maps_in_buffers(name, buffers_run):
    check_case(name, CHANNEL_MAPS[name], buffers_run[1])


def test_channel_maps_pick_lanes_at_compile_time(buffers_run):
    """A work-item per pixel (n, h, w) writes every channel block, no lane picked at run
    time; the one-pixel gather would launch a work-item per output pixel."""
    from mobile_opt.dialects import ocl

    module = buffers_run[0]
    kernels = {op.sym_name.data: op.attributes["onnx.node"].data for op in module.walk()
               if isinstance(op, ocl.KernelOp)}
    sizes = {kernels[op.kernel.root_reference.data].split("'")[1].split(".")[0]:
             tuple(op.global_size.get_values())
             for op in module.walk() if isinstance(op, ocl.LaunchOp)}
    # (the first case's tensors take another layout there, rows4: no channel map)
    assert {name: sizes[name] for name in list(CHANNEL_MAPS)[1:]} == {
        "shuffle_then_relu": (2, 3), "channel_shuffle_4x4": (5, 6), "channel_slice": (3, 2)}
    lanes = {op.parent_op().sym_name.data for op in module.walk() if isinstance(op, ocl.LaneOp)}
    assert lanes <= {name for name, node in kernels.items() if "'channel_shuffle.0'" in node}


def test_copy_methods():
    """Choosing the kernel: the numpy form sees whole pixels, lanes or a free alias."""
    def method(layout, dims, out_layout, imap):
        return copy_method(Stored(None, layout, dims), out_layout, imap)

    def strided(dims, out, starts):
        return Strided(None, out, starts, (1,) * len(dims))

    nchw = (1, 10, 3, 3)
    nc4hw4 = Layout.NC4HW4
    assert method(nc4hw4, nchw, nc4hw4, strided(nchw, (1, 4, 3, 3), (0, 0, 0, 0))) == BLOCK
    assert method(nc4hw4, nchw, nc4hw4, strided(nchw, (1, 6, 3, 3), (0, 4, 0, 0))) == BLOCK
    assert method(nc4hw4, nchw, nc4hw4, strided(nchw, (1, 7, 3, 3), (0, 3, 0, 0))) == LANES
    assert method(Layout.ROWS4, (2, 3, 8), Layout.ROWS4, Reshaped(None, (6, 8))) == ALIAS
    assert method(Layout.ROWS4, (2, 3, 8), Layout.ROWS4, Reshaped(None, (2, 24))) == BLOCK
    assert method(Layout.ROWS4, (2, 3, 7), Layout.ROWS4, Reshaped(None, (2, 21))) == LANES


def test_shape_computations_ask_for_constant_folding():
    # a shape computed from a graph input: only constant folding can remove it (written
    # as IR: the ONNX import folds a Shape of a static value that a node reads itself)
    ctx = Context()
    for dialect in (Builtin, Func, ONNX):
        ctx.load_dialect(dialect)
    module = Parser(ctx, """
      func.func @main_graph(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
        %s = onnx.Shape %x : (tensor<2x3xf32>) -> tensor<2xi64>
        %y = onnx.ConstantOfShape %s {value = dense<2.0> : tensor<1xf32>}
          : (tensor<2xi64>) -> tensor<2x3xf32>
        func.return %y : tensor<2x3xf32>
      }""").parse_module()
    with pytest.raises(DiagnosticException, match="run onnx-fold-constants"):
        OnnxToTexturePass().apply(Context(), module)
