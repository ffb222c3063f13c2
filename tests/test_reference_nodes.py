"""
ONNX's node test cases (`onnx.backend.test.case.node`) through import and the
reference interpreter, against the outputs ONNX ships with them.

Which cases run is decided mechanically, never by hand:

* collected: every case whose nodes all name ops the importer supports;
* model opset above 21 (the newest the importer takes): the case is relabelled to
  opset 21 when, for every node, the operator versions at opset 21 and at the
  model's opset have the same inputs, outputs and attributes (later versions mostly
  only admit more element types; a case using such a type fails the opset-21
  checker and counts as an unsupported type); otherwise it is skipped with the ops
  that differ in the reason;
* the importer may reject a case with `OnnxImportError`; that must be one line,
  name the model file, and give one of the `DOCUMENTED_REJECTIONS` (unsupported
  element types, optional outputs such as training-mode statistics, shapes that
  depend on graph inputs, Resize modes other than nearest, ...); the case is then
  skipped with that message;
* everything else must reproduce every expected output: floats within
  rtol 1e-3 / atol 1e-4 (float16 1e-2 / 1e-3), int8/uint8 within 1 (rounding of
  requantisation), other integers and booleans exactly.
"""

from __future__ import annotations

import re
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx.backend.test.case import node as node_cases
from onnx.backend.test.case.test_case import TestCase

from mobile_opt.reference.interpreter import run_reference
from mobile_opt.frontend.onnx_import import (
    DIALECT_OPSET,
    SUPPORTED_ONNX_OPS,
    OnnxImportError,
    import_onnx,
)

DOCUMENTED_REJECTIONS = {
    "unsupported element type": (
        r"needs a static float/int tensor type|has unsupported type|cast to \w+ is not supported"
    ),
    "non-tensor input (optional, sequence)": r"is not a tensor",
    "optional output (training statistics, LayerNorm mean)": (
        r"optional output '.*' is not supported"
    ),
    "shape computed at run time": r"has a dynamic or unknown shape",
    "Resize mode other than nearest": r"onnx\.Resize: mode '\w+' is not supported",
    "training mode": r"training_mode is not supported",
    "opset older than 9": r"opset \d+ is not supported",
    "float Mod with fmod = 0 (opset 28's)": r"floating-point operands need fmod = 1",
}
"""Why the importer may reject a node test, each as a pattern its message must match."""


@cache
def all_cases() -> dict[str, TestCase]:
    with warnings.catch_warnings():  # some generators overflow on purpose
        warnings.simplefilter("ignore")
        return {case.name: case for case in node_cases.collect_testcases(None)}


def default_opset(model: onnx.ModelProto) -> int:
    versions = {o.domain: o.version for o in model.opset_import}
    return versions.get("", versions.get("ai.onnx", 1))


def selected_names() -> list[str]:
    """Cases whose every node is an op the importer supports."""
    supported = set(SUPPORTED_ONNX_OPS)
    return sorted(
        name
        for name, case in all_cases().items()
        if case.model is not None and {n.op_type for n in case.model.graph.node} <= supported
    )


def signature(schema: onnx.defs.OpSchema) -> tuple:
    """What a node can say to an operator version: its inputs, outputs and attributes."""

    def formal(p: onnx.defs.OpSchema.FormalParameter) -> tuple:
        return (p.name, p.option)

    return (
        tuple(formal(p) for p in schema.inputs),
        tuple(formal(p) for p in schema.outputs),
        tuple(
            sorted(
                (a.name, a.type, a.required, a.default_value.SerializeToString())
                for a in schema.attributes.values()
            )
        ),
    )


def changed_since_21(model: onnx.ModelProto) -> list[str]:
    """
    Ops whose operator version at the model's opset differs from opset 21's in more
    than the element types it admits. Most versions after 21 only add types
    (bfloat16, float8, int4, ...); a case that uses such a new type is rejected by
    the checker at opset 21 and counted as an unsupported element type.
    """
    opset = default_opset(model)
    return sorted(
        {
            n.op_type
            for n in model.graph.node
            if signature(onnx.defs.get_schema(n.op_type, opset))
            != signature(onnx.defs.get_schema(n.op_type, DIALECT_OPSET))
        }
    )


def at_opset_21(model: onnx.ModelProto) -> onnx.ModelProto:
    relabelled = onnx.ModelProto()
    relabelled.CopyFrom(model)
    for opset in relabelled.opset_import:
        if opset.domain in ("", "ai.onnx"):
            opset.version = DIALECT_OPSET
    return relabelled


def tolerances(dtype: np.dtype) -> tuple[float, float]:
    if dtype == np.float16:
        return 1e-2, 1e-3
    if dtype.kind == "f":
        return 1e-3, 1e-4
    if dtype in (np.int8, np.uint8):
        return 0, 1
    return 0, 0


def assert_matches(name: str, got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"{name}: shape {got.shape}, expected {want.shape}"
    rtol, atol = tolerances(want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
    else:
        difference = np.abs(got.astype(np.int64) - want.astype(np.int64))
        assert difference.max(initial=0) <= atol, f"{name}: off by {difference.max()}"


SELECTED = selected_names()


@pytest.mark.parametrize("name", SELECTED)
def test_node(name: str, tmp_path: Path):
    case = all_cases()[name]
    model = case.model
    if default_opset(model) > DIALECT_OPSET:
        changed = changed_since_21(model)
        if changed:
            pytest.skip(f"opset {default_opset(model)} changed {', '.join(changed)} since opset 21")
        model = at_opset_21(model)
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    try:
        module = import_onnx(path)
    except OnnxImportError as e:
        message = str(e)
        assert "\n" not in message and message.startswith(str(path)), message
        reasons = [
            why for why, pattern in DOCUMENTED_REJECTIONS.items() if re.search(pattern, message)
        ]
        assert reasons, f"undocumented import rejection: {message}"
        pytest.skip(f"import rejected ({reasons[0]}): {message.removeprefix(str(path) + ': ')}")
    outputs = [o.name for o in model.graph.output]
    for inputs, expected in case.data_sets:
        got = run_reference(module, [np.asarray(v) for v in inputs])
        assert list(got) == outputs
        for output, want in zip(outputs, expected, strict=True):
            assert_matches(output, got[output], np.asarray(want))


def test_sample_is_substantial():
    """The mechanical selection keeps a large sample; a shrinking importer or ONNX shows here."""
    assert len(SELECTED) >= 600
    same_version = [
        n
        for n in SELECTED
        if default_opset(all_cases()[n].model) <= DIALECT_OPSET
        or not changed_since_21(all_cases()[n].model)
    ]
    assert len(same_version) >= 350
