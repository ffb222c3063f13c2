"""
Small models with the op patterns of the real-model set (`bench/zoo.py`: torchvision,
transformer, PP-OCR and quantized models that others exported), committed under
`tests/models/zoo/` so that no test needs torch; `python3 bench/zoo.py
--write-test-models tests/models/zoo` writes them again. Each runs through `mobile-run`
as a user runs it: the float ones on PoCL against onnxruntime, the quantized ones with
`--target hexagon` in qemu-hexagon. Beside the tool's verdict, each float run's saved
outputs are compared here with onnxruntime, relative to the output's range, and the
expected output must be large enough for that comparison to mean something.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from harness import run_mobile_run

from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.reference.qlinear import run_qlinear

ZOO = Path(__file__).resolve().parent / "models" / "zoo"

TOL = 1e-3
"""max |ours - onnxruntime| / max |onnxruntime| a float model must stay within."""

SANE = 0.1
"""The same bound on the DSP path, where onnxruntime may round differently (its float
fallbacks for int8 activations): beyond it the output is wrong, not rounded."""

GPU_MODELS = {
    # name: ({input: shape fed}, extra mobile-run options, id range of int64 inputs)
    "shufflenet_tiny": ({"input": (1, 3, 32, 32)}, [], 0),
    "vit_tiny_tv": ({"input": (1, 3, 32, 32)}, [], 0),
    "mha_tiny": ({"input": (1, 8, 32)}, [], 0),
    "encoder_tiny": ({"input": (1, 16)}, [], 50),
    "encoder_tiny_dynamo": ({"input": (1, 16)}, [], 50),
    "mobilenet_v3_tiny": ({"input": (1, 3, 32, 32)}, [], 0),
    "efficientnet_tiny": ({"input": (1, 3, 32, 32)}, [], 0),
    "densenet_tiny": ({"input": (1, 3, 32, 32)}, [], 0),
    "googlenet_tiny": ({"input": (1, 3, 32, 32)}, [], 0),
    # batch -1 and H, W sharing '?', as PaddleOCR writes its cls model: sized by axis
    "cls_tiny": ({"x": (1, 3, 16, 64)}, ["--dim", "x:0=1", "--dim", "x:2=16", "--dim", "x:3=64"],
                 0),
}

DSP_MODELS = [
    f"{net}_{form}"
    for net in ("resnet_tiny", "mobilenet_v2_tiny")
    for form in ("qdq_u8", "qdq_s8", "qop")
]
"""onnxruntime's `quantize_static` of a small ResNet and MobileNetV2 (per-tensor int8
weights): QDQ with uint8 and with int8 activations, and QOperator form."""


# what each file must hold ------------------------------------------------------------------


def _load(name: str) -> onnx.ModelProto:
    return onnx.load(str(ZOO / f"{name}.onnx"))


def _ops(model: onnx.ModelProto) -> set[str]:
    return {(f"{n.domain}." if n.domain else "") + n.op_type for n in model.graph.node}


def _has_chain(model: onnx.ModelProto, chain: list[str]) -> bool:
    """Whether some path along data edges passes nodes of these op types in this order."""
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def follows(node: onnx.NodeProto, rest: list[str]) -> bool:
        if not rest:
            return True
        return any(
            nxt.op_type == rest[0] and follows(nxt, rest[1:])
            for out in node.output for nxt in consumers.get(out, [])
        )

    return any(n.op_type == chain[0] and follows(n, chain[1:]) for n in model.graph.node)


def _input_dims(model: onnx.ModelProto) -> list:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param
            for d in model.graph.input[0].type.tensor_type.shape.dim]


def _runtime_gather(model: onnx.ModelProto) -> bool:
    inputs = {i.name for i in model.graph.input}
    return any(n.op_type == "Gather" and n.input[1] in inputs for n in model.graph.node)


PATTERNS = {
    "shufflenet_tiny": lambda m: _has_chain(m, ["Shape", "Gather", "Add", "Div", "Mul", "Slice"]),
    "vit_tiny_tv": lambda m: {"Equal", "Where", "Mod", "ConstantOfShape", "Expand"} <= _ops(m),
    "mha_tiny": lambda m: {"Mod", "Shape", "MatMul", "Softmax"} <= _ops(m),
    "encoder_tiny": lambda m: _runtime_gather(m) and "Mod" in _ops(m),
    "encoder_tiny_dynamo": _runtime_gather,
    "mobilenet_v3_tiny": lambda m: {"HardSwish", "HardSigmoid"} <= _ops(m)
    and _has_chain(m, ["GlobalAveragePool", "Conv", "Relu", "Conv", "HardSigmoid", "Mul"]),
    "efficientnet_tiny": lambda m: _has_chain(m, ["GlobalAveragePool", "Conv", "Sigmoid", "Mul",
                                                  "Conv", "Sigmoid", "Mul"]),
    "densenet_tiny": lambda m: {"Concat", "BatchNormalization", "AveragePool"} <= _ops(m),
    "googlenet_tiny": lambda m: any(
        n.op_type == "MaxPool" and any(a.name == "ceil_mode" and a.i for a in n.attribute)
        for n in m.graph.node) and sum(n.op_type == "Concat" for n in m.graph.node) == 3,
    "cls_tiny": lambda m: _input_dims(m) == [-1, 3, "?", "?"]
    and _has_chain(m, ["Shape", "Gather", "Unsqueeze", "Concat", "Reshape"]),
}


def _zero_point_type(model: onnx.ModelProto) -> int:
    (node,) = [n for n in model.graph.node if n.op_type == "QuantizeLinear"][:1]
    (zero,) = [t for t in model.graph.initializer if t.name == node.input[2]]
    return zero.data_type


@pytest.mark.parametrize("name", [*GPU_MODELS, *DSP_MODELS])
def test_committed_model_holds_its_pattern(name: str):
    """Each file is small and holds the op pattern it stands for in the real set."""
    path = ZOO / f"{name}.onnx"
    assert path.stat().st_size < 300_000
    model = _load(name)
    onnx.checker.check_model(model)
    if name in PATTERNS:
        assert PATTERNS[name](model), sorted(_ops(model))
    elif name.endswith("_qop"):
        assert {"QLinearConv", "com.microsoft.QLinearAdd", "com.microsoft.QLinearGlobalAveragePool",
                "com.microsoft.QGemm"} <= _ops(model)
    else:
        assert {"QuantizeLinear", "DequantizeLinear", "Conv", "Add"} <= _ops(model)
        signed = name.endswith("_s8")
        want = onnx.TensorProto.INT8 if signed else onnx.TensorProto.UINT8
        assert _zero_point_type(model) == want


# through mobile-run ---------------------------------------------------------------------------


def _feeds(path: Path, shapes: dict[str, tuple[int, ...]], ids: int, folder: Path):
    """Seeded inputs (floats in [-1, 1), ids below `ids`) and their `--input` options."""
    rng = np.random.default_rng(0)
    feeds, options = {}, []
    for value in onnx.load(str(path)).graph.input:
        dtype = onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        shape = shapes.get(value.name) or [d.dim_value for d in
                                           value.type.tensor_type.shape.dim]
        if dtype.kind in "iu":
            feeds[value.name] = rng.integers(0, ids, shape).astype(dtype)
        else:
            feeds[value.name] = rng.uniform(-1, 1, shape).astype(dtype)
        np.save(folder / f"{value.name}.npy", feeds[value.name])
        options += ["--input", f"{value.name}={folder / value.name}.npy"]
    return feeds, options


def _relative_error(path: Path, feeds, saved: Path) -> tuple[float, float]:
    """(max |ours - ort| / max |ort| over the outputs, max |ort|) of the outputs in `saved`."""
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    worst, scale = 0.0, 0.0
    for name, want in zip(names, session.run(None, feeds)):
        got = np.load(saved / f"{name}.npy")
        assert got.shape == want.shape, name
        peak = float(np.abs(want).max())
        worst = max(worst, float(np.abs(got.astype(np.float64) - want).max()) / peak)
        scale = max(scale, peak)
    return worst, scale


@pytest.mark.parametrize("name", list(GPU_MODELS))
def test_float_model_on_pocl(name: str, pocl_device, tmp_path: Path, capsys):
    shapes, options, ids = GPU_MODELS[name]
    path = ZOO / f"{name}.onnx"
    feeds, given = _feeds(path, shapes, ids, tmp_path)
    status, out, err = run_mobile_run(
        [str(path), "--device", "pocl", "--save-dir", str(tmp_path / "out"), *given, *options],
        capsys,
    )
    assert status == 0, out + err
    assert "PASS" in out and "FAIL" not in out, out
    error, scale = _relative_error(path, feeds, tmp_path / "out")
    assert scale > 1e-2, f"max |onnxruntime| {scale:.1e}: too small to check anything"
    assert error <= TOL


@pytest.mark.usefixtures("hexagon_toolchain")
@pytest.mark.parametrize("name", DSP_MODELS)
def test_quantized_model_in_qemu(name: str, tmp_path: Path, capsys):
    path = ZOO / f"{name}.onnx"
    feeds, given = _feeds(path, {}, 0, tmp_path)
    status, out, err = run_mobile_run(
        [str(path), "--target", "hexagon", "--save-dir", str(tmp_path / "out"), *given], capsys
    )
    assert status == 0, out + err
    assert "PASS" in out and "FAIL" not in out, out
    expected = run_qlinear(import_onnx(str(path)), feeds)  # the exact integer reference
    for output, want in expected.items():
        assert np.array_equal(np.load(tmp_path / "out" / f"{output}.npy"), want), output
    error, scale = _relative_error(path, feeds, tmp_path / "out")
    assert scale > 1e-2
    # onnxruntime's quantized kernels are inexact on x86 without VNNI (uint8 x int8 pairs
    # summed in 16 bits, saturating): there it may stray further, and mobile-run says so
    assert error <= SANE or "onnxruntime is the inexact side" in out, out
