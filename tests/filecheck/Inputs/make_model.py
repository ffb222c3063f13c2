"""
Writes a tiny ONNX model (or a broken file) for the driver and frontend tests.

    python make_model.py KIND OUTPUT

Every model is built with onnx.helper, so the tests need no binary fixtures.
"""

from __future__ import annotations

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers=(), opset=21, ir_version=None) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_model"
    )
    # an IR version that goes with the opset (opset 21 needs IR 10, opset 23 IR 11)
    model.ir_version = ir_version or (10 if opset >= 21 else 7)
    return model


def _arange(name: str, shape, dtype=np.float32) -> onnx.TensorProto:
    values = np.arange(np.prod(shape), dtype=dtype).reshape(shape) / 100
    return numpy_helper.from_array(values, name)


def conv(batch="1") -> onnx.ModelProto:
    """x[1,3,8,8] -> Conv(w: 8x3x3x3 = 216 elements, b: 8) -> Relu -> y[1,8,8,8]."""
    dim = int(batch) if batch.isdigit() else batch
    return _model(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"], name="relu1"),
        ],
        [helper.make_tensor_value_info("x", F, [dim, 3, 8, 8])],
        [helper.make_tensor_value_info("y", F, [dim, 8, 8, 8])],
        [_arange("w", [8, 3, 3, 3]), _arange("b", [8])],
    )


def sizes() -> onnx.ModelProto:
    """Initializers of 16 and of 17 elements: the inline limit is 16."""
    return _model(
        [
            helper.make_node("Add", ["x", "sixteen"], ["s"], name="add16"),
            helper.make_node("Concat", ["s", "seventeen"], ["y"], name="cat", axis=0),
        ],
        [helper.make_tensor_value_info("x", F, [16])],
        [helper.make_tensor_value_info("y", F, [33])],
        [_arange("sixteen", [16]), _arange("seventeen", [17])],
    )


def opset9() -> onnx.ModelProto:
    """Opset-9 semantics: Unsqueeze's axes attribute, Softmax over flattened dims 1.."""
    return _model(
        [
            helper.make_node("Unsqueeze", ["x"], ["u"], name="unsq", axes=[0]),
            helper.make_node("Softmax", ["u"], ["y"], name="softmax", axis=1),
        ],
        [helper.make_tensor_value_info("x", F, [3, 4])],
        [helper.make_tensor_value_info("y", F, [1, 3, 4])],
        opset=9,
    )


def fold() -> onnx.ModelProto:
    """x + (a * b) with constant a and b: onnx-fold-constants folds the Mul."""
    return _model(
        [
            helper.make_node("Mul", ["a", "b"], ["ab"], name="mul_consts"),
            helper.make_node("Add", ["x", "ab"], ["y"], name="add_x"),
        ],
        [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("y", F, [4])],
        [
            numpy_helper.from_array(np.array([1, 2, 3, 4], np.float32), "a"),
            numpy_helper.from_array(np.array([2, 2, 2, 2], np.float32), "b"),
        ],
    )


def topk() -> onnx.ModelProto:
    return _model(
        [
            helper.make_node("Relu", ["x"], ["r"], name="relu0"),
            helper.make_node("TopK", ["r", "k"], ["values", "indices"], name="topk_0", axis=-1),
        ],
        [helper.make_tensor_value_info("x", F, [1, 10])],
        [
            helper.make_tensor_value_info("values", F, [1, 3]),
            helper.make_tensor_value_info("indices", TensorProto.INT64, [1, 3]),
        ],
        [numpy_helper.from_array(np.array([3], np.int64), "k")],
    )


def nms() -> onnx.ModelProto:
    """A detection head's NonMaxSuppression node, left unnamed: its output names it."""
    return _model(
        [helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["selected"])],
        [
            helper.make_tensor_value_info("boxes", F, [1, 6, 4]),
            helper.make_tensor_value_info("scores", F, [1, 1, 6]),
        ],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, [None, 3])],
    )


def resize_linear() -> onnx.ModelProto:
    """A valid ONNX node that the dialect rejects: only nearest resizing is supported."""
    return _model(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="up2x", mode="linear")],
        [helper.make_tensor_value_info("x", F, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("y", F, [1, 3, 8, 8])],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")],
    )


def domain() -> onnx.ModelProto:
    model = _model(
        [helper.make_node("FusedConv", ["x", "w"], ["y"], name="ms_conv", domain="com.microsoft")],
        [helper.make_tensor_value_info("x", F, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", F, [1, 8, 6, 6])],
        [_arange("w", [8, 3, 3, 3])],
    )
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model


def relu_opset(version: int) -> onnx.ModelProto:
    return _model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, [2, 3])],
        opset=version,
        ir_version=11 if version > 21 else None,
    )


def dynamic() -> onnx.ModelProto:
    return conv("N")


def unnamed_dim() -> onnx.ModelProto:
    model = conv("N")
    model.graph.input[0].type.tensor_type.shape.dim[0].Clear()  # neither value nor name
    return model


def unnamed_inner_dim() -> onnx.ModelProto:
    model = conv()
    model.graph.input[0].type.tensor_type.shape.dim[2].Clear()  # the height
    return model


def huge_tile() -> onnx.ModelProto:
    """A Tile of one float 2^31 times: 8 GiB from a model of about 100 bytes."""
    return _model(
        [helper.make_node("Tile", ["c", "r"], ["y"], name="tile")],
        [],
        [helper.make_tensor_value_info("y", F, [None])],
        [numpy_helper.from_array(np.ones(1, np.float32), "c"),
         numpy_helper.from_array(np.array([2**31], np.int64), "r")],
    )


def dims62() -> onnx.ModelProto:
    """An input of 2^62 x 2^62 floats: an element count past int64."""
    return _model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [helper.make_tensor_value_info("x", F, [2**62, 2**62])],
        [helper.make_tensor_value_info("y", F, [None, None])],
    )


def _quantized_builders() -> dict:
    """The DSP path's quantized models (checking/quant_models.py)."""
    from mobile_opt.checking import quant_models as q

    return {
        "qdq_conv": lambda: q.conv_model(3, 6, 6, 8, seed=1),
        "qdq_conv_stride2": lambda: q.conv_model(4, 9, 9, 4, stride=2, seed=2),
        "qdq_conv_per_channel": lambda: q.conv_model(3, 6, 6, 8, per_channel=True),
        "qlinear_matmul": lambda: q.matmul_model(8, 16, 8),
        "qdq_add": lambda: q.add_model([1, 4, 4, 4]),
        "qdq_maxpool": lambda: q.pool_model("max", 5, 9, 11, stride=2, seed=3),
        "qdq_avgpool": lambda: q.pool_model("average", 5, 9, 11, stride=2, seed=7,
                                            count_include_pad=1),
        "qdq_avgpool_exclude_pad": lambda: q.pool_model("average", 5, 9, 11, seed=7),
        "qdq_gap": lambda: q.pool_model("global", 9, 7, 7, seed=8),
        "qdq_residual_dyadic": lambda: q.residual_block(8, 4),
        "qdq_residual_table": lambda: q.residual_block(8, 4, add_scales=(0.03, 0.03, 0.1)),
        "qdq_mixed_layouts": lambda: q.mixed_layout_model("qdq"),
        "qlinear_mixed_layouts": lambda: q.mixed_layout_model("qlinear"),
        "ms_qlinear_add": lambda: q.contrib_model("QLinearAdd"),
        "ms_qlinear_gap": lambda: q.contrib_model("QLinearGlobalAveragePool", signed=True),
        "ms_qgemm": lambda: q.contrib_model("QGemm", (3, 40)),
        "ms_channels_last": lambda: q.contrib_model("QLinearGlobalAveragePool", channels_last=1),
    }


def _folding_builders() -> dict:
    """Models whose constant subgraphs the import folds (tests/folding_models.py)."""
    import os

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    import folding_models

    return folding_models.BUILDERS


def write(kind: str, path: str) -> None:
    if kind == "truncated":
        data = conv().SerializeToString()
        data = data[: len(data) // 2]  # cut inside the weight initializer
    elif kind == "garbage":
        data = b"this is not an ONNX model, just some text\n"
    else:
        builders = {
            "conv": conv,
            "sizes": sizes,
            "opset9": opset9,
            "fold": fold,
            "topk": topk,
            "nms": nms,
            "domain": domain,
            "resize_linear": resize_linear,
            "opset7": lambda: relu_opset(7),
            "opset23": lambda: relu_opset(23),
            "dynamic": dynamic,
            "unnamed_dim": unnamed_dim,
            "unnamed_inner_dim": unnamed_inner_dim,
            "huge_tile": huge_tile,
            "dims62": dims62,
        }
        builders.update(_folding_builders())
        model = builders[kind]() if kind in builders else _quantized_builders()[kind]()
        # every model is valid ONNX; the importer's limits are tested
        onnx.checker.check_model(model)
        data = model.SerializeToString()
    with open(path, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    write(sys.argv[1], sys.argv[2])
