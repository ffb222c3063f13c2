"""
Small ONNX models with the constant subgraphs that torch exports compute shapes,
indices and masks with, for the importer's folding (the filecheck tests build them
through `tests/filecheck/Inputs/make_model.py`, the pytest ones directly). Weights are
random and O(1), so that the outputs are too.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
INT64_MAX = np.iinfo(np.int64).max


def _model(nodes, inputs, outputs, initializers=(), opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="folding_models"
    )
    model.ir_version = 8
    return model


def _const(name: str, value, dtype=np.int64) -> onnx.NodeProto:
    """A Constant node, as torch writes every scalar and index."""
    array = numpy_helper.from_array(np.array(value, dtype), name)
    return helper.make_node("Constant", [], [name], name=f"{name}_node", value=array)


def _weight(name: str, shape, seed: int) -> onnx.TensorProto:
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.uniform(-1, 1, shape).astype(np.float32), name)


def channel_split(batch: int | str = "N", opset: int = 17) -> onnx.ModelProto:
    """
    ShuffleNetV2's channel split and shuffle as torch (opset 17, dynamo=False) exports
    them: x[N, 8, 4, 4] -> Relu -> the two halves along the channels, whose Slice ends
    are computed as Shape -> Gather -> Add -> Div -> Mul (ONNX's data propagation stops
    at Div) -> Concat(second half, Sigmoid(first half)) -> Reshape to [N, 2, 4, 4, 4]
    with a target made of slices of the Shape -> Transpose -> Reshape back to Shape.
    """
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Shape", ["r"], ["s"], name="shape"),
        _const("one", [1]),
        helper.make_node("Gather", ["s", "one"], ["c"], name="channels", axis=0),
        helper.make_node("Add", ["c", "one"], ["c1"], name="add"),
        _const("two", [2]),
        helper.make_node("Div", ["c1", "two"], ["half"], name="div"),
        helper.make_node("Mul", ["half", "one"], ["end1"], name="mul"),
        helper.make_node("Mul", ["half", "two"], ["end2"], name="mul_1"),
        _const("zero", [0]),
        helper.make_node("Slice", ["r", "zero", "end1", "one"], ["a"], name="slice"),
        helper.make_node("Slice", ["r", "end1", "end2", "one"], ["b"], name="slice_1"),
        helper.make_node("Sigmoid", ["a"], ["sa"], name="sigmoid"),
        helper.make_node("Concat", ["b", "sa"], ["cat"], name="concat", axis=1),
        _const("four", [4]),
        helper.make_node("Slice", ["s", "zero", "one"], ["n"], name="batch"),
        helper.make_node("Slice", ["s", "two", "four"], ["hw"], name="spatial"),
        _const("groups", [2, 4]),
        helper.make_node("Concat", ["n", "groups", "hw"], ["target"], name="target", axis=0),
        helper.make_node("Reshape", ["cat", "target"], ["grouped"], name="reshape"),
        helper.make_node("Transpose", ["grouped"], ["shuffled"], name="shuffle",
                         perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", ["shuffled", "s"], ["y"], name="reshape_1"),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", F, [batch, 8, 4, 4])],
        [helper.make_tensor_value_info("y", F, [batch, 8, 4, 4])],
        opset=opset,
    )


def attention() -> onnx.ModelProto:
    """
    One attention head over x[1, 6, 8] with the constant subgraphs of torch's ViT and
    `nn.MultiheadAttention` exports:
    - the class token Expand-ed to a shape made by Equal/Where over ConstantOfShape;
    - the packed q/k/v Reshape whose target is Shape slices ended by a Mod;
    - the 1/sqrt(head dim) scale from Shape -> Gather -> Cast -> Sqrt -> Div;
    - a causal mask from Shape -> Concat -> ConstantOfShape -> Trilu -> Equal -> Where.
    The q/k/v weight is stored transposed and transposed back: weight-only arithmetic,
    which the import leaves to onnx-fold-constants.
    """
    nodes = [
        # ViT: expand the class token to [batch, -1, -1], then prepend it
        _const("cls_shape", [1, -1, -1]),
        _const("rank", [3]),
        helper.make_node("ConstantOfShape", ["rank"], ["ones3"], name="ones3",
                         value=numpy_helper.from_array(np.array([1], np.int64))),
        _const("minus_one", -1),
        helper.make_node("Mul", ["ones3", "minus_one"], ["minus_ones"], name="minus_ones"),
        helper.make_node("Equal", ["cls_shape", "minus_ones"], ["is_free"], name="equal"),
        helper.make_node("Where", ["is_free", "ones3", "cls_shape"], ["expand_to"],
                         name="where"),
        helper.make_node("Expand", ["cls_token", "expand_to"], ["cls"], name="expand"),
        helper.make_node("Concat", ["cls", "x"], ["seq"], name="prepend", axis=1),
        # nn.MultiheadAttention: unflatten the packed projection with a Mod-ended slice
        helper.make_node("Transpose", ["w_qkv_t"], ["w_qkv"], name="weight_t", perm=[1, 0]),
        helper.make_node("MatMul", ["seq", "w_qkv"], ["qkv"], name="in_proj"),
        helper.make_node("Shape", ["qkv"], ["qkv_shape"], name="qkv_shape"),
        _const("dim", -1),
        _const("three", 3),
        helper.make_node("Mod", ["dim", "three"], ["axis"], name="mod"),
        _const("flat", [-1]),
        helper.make_node("Reshape", ["axis", "flat"], ["axis1"], name="axis1"),
        _const("zero", [0]),
        helper.make_node("Slice", ["qkv_shape", "zero", "axis1"], ["lead"], name="lead"),
        _const("one", [1]),
        helper.make_node("Add", ["axis1", "one"], ["after"], name="after"),
        _const("end", [INT64_MAX]),
        helper.make_node("Slice", ["qkv_shape", "after", "end"], ["trail"], name="trail"),
        _const("split", [3, 8]),
        helper.make_node("Concat", ["lead", "split", "trail"], ["unflat"], name="unflat",
                         axis=0),
        helper.make_node("Reshape", ["qkv", "unflat"], ["qkv4"], name="unflatten"),
        _const("i0", 0),
        _const("i1", 1),
        _const("i2", 2),
        helper.make_node("Gather", ["qkv4", "i0"], ["q"], name="q", axis=2),
        helper.make_node("Gather", ["qkv4", "i1"], ["k"], name="k", axis=2),
        helper.make_node("Gather", ["qkv4", "i2"], ["v"], name="v", axis=2),
        # the scale 1/sqrt(head dim), from the shape of q
        helper.make_node("Shape", ["q"], ["q_shape"], name="q_shape"),
        helper.make_node("Gather", ["q_shape", "dim"], ["head_dim"], name="head_dim"),
        helper.make_node("Cast", ["head_dim"], ["head_dim_f"], name="cast", to=F),
        helper.make_node("Sqrt", ["head_dim_f"], ["root"], name="sqrt"),
        _const("unit", 1.0, np.float32),
        helper.make_node("Div", ["unit", "root"], ["scale"], name="scale"),
        helper.make_node("Transpose", ["k"], ["kt"], name="kt", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["raw"], name="scores"),
        helper.make_node("Mul", ["raw", "scale"], ["scaled"], name="scaled"),
        # a causal mask over the sequence length
        helper.make_node("Shape", ["seq"], ["seq_shape"], name="seq_shape"),
        helper.make_node("Gather", ["seq_shape", "one"], ["length"], name="length"),
        helper.make_node("Concat", ["length", "length"], ["square"], name="square", axis=0),
        helper.make_node("ConstantOfShape", ["square"], ["full"], name="full",
                         value=numpy_helper.from_array(np.array([1], np.float32))),
        helper.make_node("Trilu", ["full"], ["lower"], name="trilu", upper=0),
        _const("unit_f", 1.0, np.float32),
        helper.make_node("Equal", ["lower", "unit_f"], ["visible"], name="visible"),
        _const("open", 0.0, np.float32),
        _const("shut", -10000.0, np.float32),
        helper.make_node("Where", ["visible", "open", "shut"], ["mask"], name="mask"),
        helper.make_node("Add", ["scaled", "mask"], ["masked"], name="masked"),
        helper.make_node("Softmax", ["masked"], ["p"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"], name="context"),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", F, [1, 6, 8])],
        [helper.make_tensor_value_info("y", F, [1, 7, 8])],
        [_weight("cls_token", [1, 1, 8], 1), _weight("w_qkv_t", [24, 8], 2)],
    )


def unnamed_dims() -> onnx.ModelProto:
    """
    PP-OCR's classifier's input as Paddle exports it: x[-1, 3, ?, ?], a stored -1 and
    two dims that share the symbol '?' -> Conv(8x3x3x3, pads 1) -> Relu -> y.
    """
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.uniform(-1, 1, (8, 3, 3, 3)).astype(np.float32), "w")
    model = _model(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"], name="relu"),
        ],
        [helper.make_tensor_value_info("x", F, [-1, 3, "?", "?"])],
        [helper.make_tensor_value_info("y", F, [-1, 8, "?", "?"])],
        [w],
    )
    return model


def bad_constant() -> onnx.ModelProto:
    """
    A constant the import must fold (CumSum has no dialect op) over a Reshape that cannot
    be evaluated: 6 elements to [4, 2].
    """
    return _model(
        [
            _const("six", np.arange(6)),
            _const("target", [4, 2]),
            helper.make_node("Reshape", ["six", "target"], ["r"], name="bad_reshape"),
            _const("axis", 0),
            helper.make_node("CumSum", ["r", "axis"], ["e"], name="cumsum"),
            helper.make_node("Cast", ["e"], ["ef"], name="cast", to=F),
            helper.make_node("Add", ["x", "ef"], ["y"], name="add"),
        ],
        [helper.make_tensor_value_info("x", F, [4, 2])],
        [helper.make_tensor_value_info("y", F, [4, 2])],
    )


BUILDERS = {
    "channel_split": channel_split,
    "attention": attention,
    "unnamed_dims": unnamed_dims,
    "bad_constant": bad_constant,
}
