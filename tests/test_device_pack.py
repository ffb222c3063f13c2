"""
Inputs packed on the device (`backends/opencl/device_pack.py`): a discrete GPU's default,
forced here on PoCL over image storage. The gathered pixels must equal the host's pack
exactly, in every input layout, in f16 too, and the host's checks must still hold.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import lower_for_pocl
from onnx import TensorProto, helper, numpy_helper, save

from mobile_opt.backends.opencl.executor import CompiledModel
from mobile_opt.backends.opencl.host_pack import OpenCLRunError


def save_model(path: Path, nodes, inputs, outputs, initializers=()) -> Path:
    graph = helper.make_graph(nodes, path.stem, inputs, outputs, list(initializers))
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9),
         path)
    return path


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A conv on an image input of 3 channels (nc4hw4, one lane of padding), a product of a
    2-D input (rows4) and a lookup by integer indices."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    table = rng.standard_normal((11, 8)).astype(np.float32)
    return save_model(
        tmp_path / "mixed.onnx",
        [
            helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("MatMul", ["a", "b"], ["m"], name="matmul"),
            helper.make_node("Gather", ["table", "ids"], ["g"], name="lookup"),
        ],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 9, 13]),
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [6, 10]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [10, 7]),
            helper.make_tensor_value_info("ids", TensorProto.INT64, [4]),
        ],
        [
            helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 5, 9, 13]),
            helper.make_tensor_value_info("m", TensorProto.FLOAT, [6, 7]),
            helper.make_tensor_value_info("g", TensorProto.FLOAT, [4, 8]),
        ],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(table, "table")],
    )


def feeds() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((1, 3, 9, 13)).astype(np.float32),
            "a": rng.standard_normal((6, 10)).astype(np.float32),
            "b": rng.standard_normal((10, 7)).astype(np.float32),
            "ids": np.array([0, 10, 3, 3], np.int64)}


@pytest.mark.parametrize("fp16", [False, True])
def test_the_gather_packs_as_the_host_does(mixed: Path, pocl_device, fp16: bool):
    module = lower_for_pocl(mixed, fp16=fp16)
    on_host = CompiledModel(module, pocl_device, device_pack=False)
    on_device = CompiledModel(module, pocl_device, device_pack=True)
    assert not on_host._packers
    assert len(on_device._packers) == sum(r.kind == "image" for r in on_device.plan.inputs) >= 3
    expected = on_host.run(feeds()).outputs
    for _ in range(2):  # the pinned host copy is reused by the next run
        got = on_device.run(feeds()).outputs
        for name, value in expected.items():
            np.testing.assert_array_equal(got[name], value, err_msg=name)
    x = feeds()["x"]
    w = numpy_helper.to_array(next(i for i in _graph(mixed).initializer if i.name == "w"))
    reference = _conv_same(x, w)
    tolerance = 2e-2 if fp16 else 1e-4
    assert np.abs(got["c"] - reference).max() <= tolerance * np.abs(reference).max()


def test_the_gather_keeps_the_integer_check(mixed: Path, pocl_device):
    compiled = CompiledModel(lower_for_pocl(mixed), pocl_device, device_pack=True)
    inputs = feeds()
    inputs["ids"] = np.array([0, 2**25, 3, 3], np.int64)
    with pytest.raises(OpenCLRunError, match="input 'ids': integers beyond"):
        compiled.run(inputs)


def test_unloading_frees_the_gathers(mixed: Path, pocl_device):
    compiled = CompiledModel(lower_for_pocl(mixed), pocl_device, device_pack=True)
    assert compiled.memory.host_pinned > 0
    compiled.unload()
    assert compiled.memory.host_pinned == 0 and compiled.memory.resident == 0


def _graph(path: Path):
    import onnx

    return onnx.load(str(path)).graph


def _conv_same(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A 3x3 conv with padding 1 in float64 (numpy)."""
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    _, _, h, wd = x.shape
    out = np.zeros((1, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", padded[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return out
