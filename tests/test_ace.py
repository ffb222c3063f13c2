"""
`ace` (Romou's address-calculation elimination): after it no loop or branch of a GPU
kernel recomputes integer arithmetic it does not depend on, and the kernels compute what
they computed before (run on PoCL).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from harness import lower_for_pocl
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects import scf

from mobile_opt.backends.opencl.devices import choose_device
from mobile_opt.backends.opencl.executor import CompiledModel
from mobile_opt.dialects import ocl
from mobile_opt.transforms.ace import (
    AddressCalculationEliminationPass,
    _defined_in,
    _is_address_arithmetic,
)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    """Convolutions (padded, strided, depthwise), pooling and a product: loops of many shapes."""
    rng = np.random.default_rng(3)

    def weight(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["c1", "w2"], ["c2"], name="strided", strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["c2", "w3"], ["c3"], name="depthwise", group=8,
                         pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c3"], ["p"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flat"),
        helper.make_node("MatMul", ["f", "w4"], ["y"], name="fc"),
    ]
    graph = helper.make_graph(
        nodes, "ace", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 17, 15])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [weight("w1", 8, 3, 3, 3), weight("w2", 8, 8, 3, 3), weight("w3", 8, 1, 3, 3),
         weight("w4", 8 * 4 * 4, 10)])
    path = tmp_path_factory.mktemp("ace") / "ace.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    return path


def invariant_arithmetic(module) -> list:
    """Integer arithmetic inside a loop or branch whose operands all come from outside it."""
    found = []
    for nest in module.walk():
        if isinstance(nest, scf.ForOp | scf.IfOp):
            for block in (b for region in nest.regions for b in region.blocks):
                for op in block.ops:
                    if _is_address_arithmetic(op) and not any(
                            _defined_in(v, nest) for v in op.operands):
                        found.append(op)
    return found


def test_ace_leaves_no_invariant_address_arithmetic(model):
    module = lower_for_pocl(model)
    before = invariant_arithmetic(module)
    assert before  # the lowering recomputes some, or the test shows nothing
    AddressCalculationEliminationPass().apply(Context(), module)
    module.verify()
    assert invariant_arithmetic(module) == []


def test_ace_keeps_the_results(model, pocl_device):
    x = np.random.default_rng(4).standard_normal((1, 3, 17, 15)).astype(np.float32)
    device = choose_device("pocl")
    plain = CompiledModel(lower_for_pocl(model), device).run([x]).outputs
    module = lower_for_pocl(model)
    AddressCalculationEliminationPass().apply(Context(), module)
    hoisted = CompiledModel(module, device).run([x]).outputs
    for name, value in plain.items():
        assert np.array_equal(hoisted[name], value), name
    assert any(isinstance(op, ocl.KernelOp) for op in module.walk())
