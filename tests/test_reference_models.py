"""
Whole models from the onnx wheel's backend test data through import and the
reference interpreter.

* `light/*.onnx`: nine ImageNet CNNs (weights built by ConstantOfShape). Input is
  ONNX's runner's `arange(n).reshape(shape) / n`; the result must match both the
  shipped `light_<name>_output_0.pb` and ONNX Runtime on the same input. The
  `real/*/data.json` entries name these same files with their own rtol/atol,
  which the `real` cases use.
* `simple/*/model.onnx` with their `test_data_set_*`: supported models must
  reproduce every data set; the ones in `REJECTED` use ops outside the dialect
  and must fail to import with one line naming the node and the op.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import numpy_helper

from mobile_opt.reference.interpreter import run_reference
from mobile_opt.frontend.onnx_import import OnnxImportError, import_onnx

DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
LIGHT = sorted((DATA / "light").glob("*.onnx"))
REAL = sorted((DATA / "real").glob("*/data.json"))
SIMPLE = sorted(p.parent for p in (DATA / "simple").glob("*/model.onnx"))

REJECTED = {
    "test_gradient_of_add": "Gradient",
    "test_gradient_of_add_and_mul": "Gradient",
    "test_sequence_model1": "SequenceInsert",  # SequenceEmpty reads nothing: a constant
    "test_sequence_model2": "SequenceConstruct",
    "test_sequence_model3": "SequenceConstruct",
    "test_sequence_model4": "SequenceConstruct",
    "test_sequence_model5": "SequenceConstruct",
    "test_sequence_model6": "SplitToSequence",
    "test_sequence_model7": "SplitToSequence",
    "test_sequence_model8": "SplitToSequence",
    "test_strnorm_model_monday_casesensintive_lower": "StringNormalizer",
    "test_strnorm_model_monday_casesensintive_nochangecase": "StringNormalizer",
    "test_strnorm_model_monday_casesensintive_upper": "StringNormalizer",
    "test_strnorm_model_monday_empty_output": "StringNormalizer",
    "test_strnorm_model_monday_insensintive_upper_twodim": "StringNormalizer",
    "test_strnorm_model_nostopwords_nochangecase": "StringNormalizer",
}
"""
`simple/` models the importer must reject, with the first unsupported op that reads
run-time data (the import judges what it cannot fold first).
"""


def runner_input(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """ONNX's backend-test runner's input for a light model: `arange(n).reshape(shape) / n`."""
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        shape = tuple(
            d.dim_value if d.HasField("dim_value") else 1 for d in value.type.tensor_type.shape.dim
        )
        n = int(np.prod(shape))
        feeds[value.name] = (np.arange(n).reshape(shape) / n).astype(np.float32)
    return feeds


@cache
def light_results(path: Path) -> tuple[dict[str, np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Reference outputs, shipped outputs and ONNX Runtime outputs of one light model (run once)."""
    model = onnx.load(path)
    feeds = runner_input(model)
    got = run_reference(import_onnx(path), feeds)
    shipped = [
        numpy_helper.to_array(onnx.load_tensor(path.with_name(f"{path.stem}_output_{i}.pb")))
        for i in range(len(model.graph.output))
    ]
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    runtime = session.run(None, feeds)
    return got, shipped, runtime


def check_light(path: Path, rtol: float, atol: float) -> None:
    got, shipped, runtime = light_results(path)
    assert len(got) == len(shipped) == len(runtime)
    for value, want, ort in zip(got.values(), shipped, runtime):
        assert value.dtype == want.dtype and value.shape == want.shape
        np.testing.assert_allclose(value, want, rtol=rtol, atol=atol, err_msg="vs shipped output")
        np.testing.assert_allclose(value, ort, rtol=rtol, atol=atol, err_msg="vs onnxruntime")


@pytest.mark.parametrize("path", LIGHT, ids=[p.stem for p in LIGHT])
def test_light_model(path: Path):
    check_light(path, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("data", REAL, ids=[p.parent.name for p in REAL])
def test_real_model(data: Path):
    spec = json.loads(data.read_text())
    path = DATA.parent.parent.parent.parent / spec["url"]  # the url is relative to site-packages
    assert path in LIGHT, f"{data} points at {spec['url']}, not a light model"
    check_light(path, rtol=spec["rtol"], atol=spec["atol"])


def test_real_covers_every_light_model():
    urls = {json.loads(p.read_text())["url"].rsplit("/", 1)[-1] for p in REAL}
    assert urls == {p.name for p in LIGHT}


def data_sets(folder: Path) -> list[tuple[list[np.ndarray], list[np.ndarray]]]:
    def load(files) -> list[np.ndarray]:
        return [
            numpy_helper.to_array(onnx.load_tensor(f))
            for f in sorted(files, key=lambda f: int(f.stem.split("_")[1]))
        ]

    return [
        (load(d.glob("input_*.pb")), load(d.glob("output_*.pb")))
        for d in sorted(folder.glob("test_data_set_*"))
    ]


@pytest.mark.parametrize("folder", SIMPLE, ids=[p.name for p in SIMPLE])
def test_simple_model(folder: Path):
    path = folder / "model.onnx"
    if folder.name in REJECTED:
        with pytest.raises(OnnxImportError) as info:
            import_onnx(path)
        message = str(info.value)
        assert "\n" not in message
        assert message.startswith(str(path))
        assert "node '" in message and f"({REJECTED[folder.name]})" in message
        return
    module = import_onnx(path)
    sets = data_sets(folder)
    assert sets
    for inputs, expected in sets:
        got = run_reference(module, inputs)
        assert len(got) == len(expected)
        for value, want in zip(got.values(), expected):
            assert value.dtype == want.dtype and value.shape == want.shape
            np.testing.assert_allclose(value, want, rtol=1e-3, atol=1e-4)


def test_rejected_list_names_existing_models():
    assert set(REJECTED) <= {p.name for p in SIMPLE}
