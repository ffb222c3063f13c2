"""
A model of one ONNX node over random constant weights: what a measured search or a
probe times a kernel of some shape with, without a network around it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NODE_NAME = "node"
"""The node's name, by which the timings of its kernels are found."""


def single_node_model(op: str, shapes: Sequence[Sequence[int]],
                      attrs: Sequence[tuple[str, object]] = (),
                      name: str = "single") -> onnx.ModelProto:
    """
    Node `op` with attributes `attrs`: its first operand is the graph input `X`, the
    others (of `shapes[1:]`) constants of random values; its result `Y`, shapes inferred.
    """
    rng = np.random.default_rng(0)
    names = ["X"] + [f"W{i}" for i in range(1, len(shapes))]
    weights = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
               for n, s in zip(names[1:], shapes[1:])]
    node = helper.make_node(op, names, ["Y"], name=NODE_NAME, **dict(attrs))
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(shapes[0]))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return onnx.shape_inference.infer_shapes(model)


def save_single_node(path: Path, op: str, shapes: Sequence[Sequence[int]],
                     attrs: Sequence[tuple[str, object]] = ()) -> Path:
    onnx.save(single_node_model(op, shapes, attrs, path.stem), path)
    return path
