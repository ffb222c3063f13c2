"""
Attribute ranges of ONNX ops, through `mobile-opt model.onnx` in-process: each bad
value is one line naming the node, the op, the attribute and the value, exit status 1,
no traceback and no output file. Ranges that need no operand fire before ONNX's shape
inference runs; the others before the dialect's shape rules, so none reads as a
"dynamic or unknown shape".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from mobile_opt.frontend import onnx_import
from mobile_opt.frontend.errors import node_label
from mobile_opt.tools import mobile_opt

F = TensorProto.FLOAT
X = helper.make_tensor_value_info("x", F, [1, 2, 4, 4])


def _y(rank: int, elem=F) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info("y", elem, [f"d{i}" for i in range(rank)])


def _ints(name: str, values) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def _floats(name: str, values) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=np.float32), name)


@dataclass(frozen=True)
class Case:
    op: str
    inputs: list[str]
    attributes: dict
    message: str
    rank: int = 4  # of the output y
    initializers: list = field(default_factory=list)
    graph_inputs: list = field(default_factory=lambda: [X])
    # needs no operand: checked before ONNX's shape inference
    before_inference: bool = False
    out_elem: int = F


W = _floats("w", np.ones((2, 2, 1, 1)))

CASES = {
    # pooling
    "maxpool-kernel-0": Case(
        "MaxPool", ["x"], {"kernel_shape": [0, 2]}, "kernel_shape[0] = 0, must be >= 1", before_inference=True
    ),
    "maxpool-pads-2^40": Case(
        "MaxPool", ["x"], {"kernel_shape": [2, 2], "pads": [2**40, 0, 0, 0]},
        "pads[0] = 1099511627776, must be < 2147483648", before_inference=True,
    ),
    "maxpool-pads-negative": Case(
        "MaxPool", ["x"], {"kernel_shape": [2, 2], "pads": [0, -1, 0, 0]},
        "pads[1] = -1, must be >= 0", before_inference=True,
    ),
    "maxpool-pads-kernel-wide": Case(
        "MaxPool", ["x"], {"kernel_shape": [2, 2], "pads": [0, 0, 2, 0]},
        "pads[2] = 2, must be < 2, the extent of kernel_shape[0]", before_inference=True,
    ),
    "maxpool-auto-pad": Case(
        "MaxPool", ["x"], {"kernel_shape": [2, 2], "auto_pad": "SAME"},
        "auto_pad = 'SAME', must be one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", before_inference=True,
    ),
    "averagepool-stride-0": Case(
        "AveragePool", ["x"], {"kernel_shape": [2, 2], "strides": [1, 0]},
        "strides[1] = 0, must be >= 1", before_inference=True,
    ),
    "averagepool-dilation-0": Case(
        "AveragePool", ["x"], {"kernel_shape": [2, 2], "dilations": [0, 1]},
        "dilations[0] = 0, must be >= 1", before_inference=True,
    ),
    # convolutions
    "conv-stride-0": Case(
        "Conv", ["x", "w"], {"strides": [0, 1]}, "strides[0] = 0, must be >= 1",
        initializers=[W], before_inference=True,
    ),
    "conv-dilation-negative": Case(
        "Conv", ["x", "w"], {"dilations": [1, -2]}, "dilations[1] = -2, must be >= 1",
        initializers=[W], before_inference=True,
    ),
    "conv-group-0": Case(
        "Conv", ["x", "w"], {"group": 0}, "group = 0, must be >= 1", initializers=[W], before_inference=True
    ),
    "conv-group-divides": Case(
        "Conv", ["x", "w"], {"group": 3}, "group = 3, must divide the 2 input channels",
        initializers=[_floats("w", np.ones((3, 1, 1, 1)))],
    ),
    "convtranspose-output-padding": Case(
        "ConvTranspose", ["x", "w"], {"output_padding": [-1, 0]}, "output_padding[0] = -1, must be >= 0",
        initializers=[W], before_inference=True,
    ),
    "qlinearconv-kernel-0": Case(
        "QLinearConv", ["q", "s", "z", "qw", "s", "z", "s", "z"], {"kernel_shape": [0, 1]},
        "kernel_shape[0] = 0, must be >= 1",
        initializers=[
            _floats("s", 0.5),
            numpy_helper.from_array(np.array(0, np.uint8), "z"),
            numpy_helper.from_array(np.ones((2, 2, 1, 1), np.uint8), "qw"),
        ],
        graph_inputs=[helper.make_tensor_value_info("q", TensorProto.UINT8, [1, 2, 4, 4])],
        before_inference=True, out_elem=TensorProto.UINT8,
    ),
    # indexing
    "gather-index": Case(
        "Gather", ["x", "i"], {"axis": 2}, "indices[0] = 99, must be in [-4, 3] for axis 2 of size 4",
        initializers=[_ints("i", [99])],
    ),
    "gather-negative-index": Case(
        "Gather", ["x", "i"], {"axis": 1}, "indices[1] = -3, must be in [-2, 1] for axis 1 of size 2",
        initializers=[_ints("i", [0, -3])],
    ),
    "gather-axis": Case(
        "Gather", ["x", "i"], {"axis": 7}, "axis = 7, must be in [-4, 3] for rank 4",
        initializers=[_ints("i", [0])],
    ),
    "slice-step-0": Case(
        "Slice", ["x", "s", "e", "a", "st"], {}, "steps[0] = 0, must not be 0",
        initializers=[_ints("s", [0]), _ints("e", [2]), _ints("a", [2]), _ints("st", [0])],
    ),
    "slice-axis": Case(
        "Slice", ["x", "s", "e", "a"], {}, "axes[0] = 5, must be in [-4, 3] for rank 4",
        initializers=[_ints("s", [0]), _ints("e", [2]), _ints("a", [5])],
    ),
    # generators
    "range-delta-0": Case(
        "Range", ["s", "l", "d"], {}, "delta = 0, must not be 0", rank=1,
        initializers=[_ints("s", 0), _ints("l", 5), _ints("d", 0)], graph_inputs=[],
        out_elem=TensorProto.INT64,
    ),
    # shape ops
    "reshape-two-minus-ones": Case(
        "Reshape", ["x", "s"], {}, "shape = [-1, -1], must have at most one -1", rank=2,
        initializers=[_ints("s", [-1, -1])],
    ),
    "reshape-below-minus-one": Case(
        "Reshape", ["x", "s"], {}, "shape[0] = -2, must be >= -1", rank=2,
        initializers=[_ints("s", [-2, 16])],
    ),
    "transpose-perm": Case(
        "Transpose", ["x"], {"perm": [0, 0, 1, 2]}, "perm = [0, 0, 1, 2], must be a permutation of 0..3",
        before_inference=True,
    ),
    "transpose-perm-rank": Case(
        "Transpose", ["x"], {"perm": [1, 0]}, "perm = [1, 0], must have 4 values for rank 4"
    ),
    "squeeze-axis": Case(
        "Squeeze", ["x", "a"], {}, "axes[0] = 9, must be in [-4, 3] for rank 4", rank=3,
        initializers=[_ints("a", [9])],
    ),
    "unsqueeze-repeat": Case(
        "Unsqueeze", ["x", "a"], {}, "axes = [0, -6], must name each axis once", rank=6,
        initializers=[_ints("a", [0, -6])],
    ),
    "concat-axis": Case("Concat", ["x", "x"], {"axis": 9}, "axis = 9, must be in [-4, 3] for rank 4"),
    "split-sum": Case(
        "Split", ["x", "sp"], {"axis": 1}, "split = [1, 5], must sum to 2, the size of axis 1",
        initializers=[_ints("sp", [1, 5])],
    ),
    "flatten-axis": Case("Flatten", ["x"], {"axis": 5}, "axis = 5, must be in [-4, 4] for rank 4", rank=2),
    "softmax-axis": Case("Softmax", ["x"], {"axis": -5}, "axis = -5, must be in [-4, 3] for rank 4"),
    "reducemean-axes": Case(
        "ReduceMean", ["x", "a"], {}, "axes[1] = 4, must be in [-4, 3] for rank 4",
        initializers=[_ints("a", [1, 4])],
    ),
    "pad-mode": Case(
        "Pad", ["x", "p"], {"mode": "mirror"},
        "mode = 'mirror', must be one of constant, reflect, edge, wrap",
        initializers=[_ints("p", [0] * 8)], before_inference=True,
    ),
    "resize-scale-0": Case(
        "Resize", ["x", "", "sc"], {}, "scales[2] = 0, must be > 0",
        initializers=[_floats("sc", [1, 1, 0, 2])],
    ),
    "lrn-size-0": Case("LRN", ["x"], {"size": 0}, "size = 0, must be >= 1", before_inference=True),
}


def _model(case: Case, name: str) -> onnx.ModelProto:
    node = helper.make_node(case.op, case.inputs, ["y"], name=name, **case.attributes)
    graph = helper.make_graph(
        [node], "g", case.graph_inputs, [_y(case.rank, case.out_elem)], initializer=case.initializers
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


def _run(argv: list[str], capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        mobile_opt.main(argv)
    _, err = capsys.readouterr()
    return exit_info.value.code, err


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_of_range_attribute(name: str, tmp_path: Path, capsys, monkeypatch):
    case = CASES[name]
    monkeypatch.setenv("MOBILE_OPT_WEIGHT_DIR", str(tmp_path / "weights"))
    if case.before_inference:

        def no_inference(*args):
            raise AssertionError("ONNX shape inference ran before the attribute check")

        monkeypatch.setattr(onnx_import, "_infer_shapes", no_inference)
    path = tmp_path / "model.onnx"
    model = _model(case, "pool/1 'a'")  # a name as exporters write them, quotes too
    onnx.save(model, path)
    out = tmp_path / "out.mlir"
    status, err = _run([str(path), "-o", str(out)], capsys)
    label = node_label(model.graph.node[0])
    assert label.endswith(f" ({case.op})")
    assert (status, err) == (1, f"mobile-opt: error: {path}: {label}: {case.message}\n")
    assert not out.exists()


ACCEPTED = {
    # the edges of each range
    "maxpool-pads-below-kernel": Case("MaxPool", ["x"], {"kernel_shape": [3, 3], "pads": [2, 2, 2, 2]}, ""),
    "gather-last-index": Case("Gather", ["x", "i"], {"axis": 2}, "", initializers=[_ints("i", [3, -4])]),
    "slice-negative-step": Case(
        "Slice", ["x", "s", "e", "a", "st"], {}, "",
        initializers=[_ints("s", [3]), _ints("e", [0]), _ints("a", [-1]), _ints("st", [-1])],
    ),
    "reshape-one-minus-one": Case("Reshape", ["x", "s"], {}, "", rank=2, initializers=[_ints("s", [0, -1])]),
    "flatten-axis-rank": Case("Flatten", ["x"], {"axis": 4}, "", rank=2),
    "unsqueeze-last": Case("Unsqueeze", ["x", "a"], {}, "", rank=5, initializers=[_ints("a", [-1])]),
    "transpose-perm": Case("Transpose", ["x"], {"perm": [3, 2, 1, 0]}, ""),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_in_range_attribute(name: str, tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("MOBILE_OPT_WEIGHT_DIR", str(tmp_path / "weights"))
    path = tmp_path / "model.onnx"
    onnx.save(_model(ACCEPTED[name], "n"), path)
    out = tmp_path / "out.mlir"
    status, err = _run([str(path), "-o", str(out)], capsys)
    assert (status, err) == (0, "")
    assert f"onnx.{ACCEPTED[name].op}" in out.read_text()

