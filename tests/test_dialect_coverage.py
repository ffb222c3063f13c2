"""
The `onnx` dialect's filecheck tests cover every op, and say the truth.

* Every op in `ONNX_OPS` appears in a round-trip test and is the op under test of
  at least one case of a `*-invalid.mlir` file under tests/filecheck/dialects/onnx/,
  so a new op cannot land without both.
* Every invalid case checks a diagnostic, and the files carry the RUN lines that
  make lit run them.
* The result types written in the round-trip files are the ones onnxruntime
  computes for the same node, so the tests do not merely repeat the verifier.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from mobile_opt.dialects.onnx import ONNX_OPS

DIALECT_TESTS = Path(__file__).resolve().parent / "filecheck" / "dialects" / "onnx"
ROUND_TRIP_FILES = sorted(p for p in DIALECT_TESTS.glob("*.mlir")
                          if not p.stem.endswith("-invalid"))
INVALID_FILES = sorted(DIALECT_TESTS.glob("*-invalid.mlir"))

# `onnx.Conv` in custom or generic ("onnx.Conv") form, not `onnx.ConvTranspose`
OP_USE = re.compile(r'(?<![\w.])"?onnx\.([A-Za-z][A-Za-z0-9]*)\b')
SPLIT = "// -----"


def _code(text: str) -> str:
    """The IR of a test file: everything but `//` comments (RUN and CHECK lines)."""
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def _ops_used(text: str) -> set[str]:
    return set(OP_USE.findall(_code(text)))


def _cases(path: Path) -> list[str]:
    return path.read_text().split(SPLIT)


def _op_under_test(case: str) -> str | None:
    """The op a `// -----` case is about: by convention the last onnx op in it."""
    ops = OP_USE.findall(_code(case))
    return ops[-1] if ops else None


def test_the_test_files_exist():
    families = {"constants", "elementwise", "nn", "tensor", "quant", "fused"}
    assert {p.stem for p in ROUND_TRIP_FILES} == families
    assert {p.stem for p in INVALID_FILES} == {f"{f}-invalid" for f in families}


@pytest.mark.parametrize("op", sorted(ONNX_OPS))
def test_every_op_has_a_round_trip_test(op: str):
    assert any(op in _ops_used(p.read_text()) for p in ROUND_TRIP_FILES), (
        f"onnx.{op} appears in no round-trip test under {DIALECT_TESTS}"
    )


@pytest.mark.parametrize("op", sorted(ONNX_OPS))
def test_every_op_has_an_invalid_test(op: str):
    subjects = {_op_under_test(case) for p in INVALID_FILES for case in _cases(p)}
    assert op in subjects, f"no case of a *-invalid.mlir file under {DIALECT_TESTS} tests onnx.{op}"


def test_no_unknown_ops_in_tests():
    """A typo'd op name would be a parse error anyway; this names the file."""
    for path in [*ROUND_TRIP_FILES, *INVALID_FILES]:
        unknown = _ops_used(path.read_text()) - set(ONNX_OPS)
        assert not unknown, f"{path.name}: unknown ops {sorted(unknown)}"


@pytest.mark.parametrize("path", ROUND_TRIP_FILES, ids=lambda p: p.name)
def test_round_trip_files_run_both_formats(path: Path):
    runs = [line for line in path.read_text().splitlines() if line.startswith("// RUN:")]
    assert "// RUN: mobile-opt %s | mobile-opt | filecheck %s" in runs
    assert "// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s" in runs
    assert SPLIT not in path.read_text()


@pytest.mark.parametrize("path", INVALID_FILES, ids=lambda p: p.name)
def test_every_invalid_case_checks_a_diagnostic(path: Path):
    text = path.read_text()
    assert "// RUN: mobile-opt %s --split-input-file --verify-diagnostics | filecheck %s" in text
    for i, case in enumerate(_cases(path)):
        assert re.search(r"//\s*CHECK(-NEXT)?:", case), f"{path.name}: case #{i} checks nothing"
        assert _op_under_test(case), f"{path.name}: case #{i} has no onnx op"


# --- round-trip result types against onnxruntime -------------------------------

NOT_ONNX = {"None", "Constant", "Weight"}  # no ONNX node of their own
FUSED_BASE = {"FusedConv": "Conv", "FusedGemm": "Gemm", "FusedMatMul": "MatMul"}


def _parse(path: Path):
    from xdsl.context import Context
    from xdsl.dialects import builtin, func, test
    from xdsl.parser import Parser

    from mobile_opt.dialects.onnx import ONNX

    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, test.Test, ONNX):
        ctx.load_dialect(dialect)
    # parse only: the point is to compare the written types, not the verifier's
    return Parser(ctx, path.read_text(), str(path)).parse_module()


def _attribute(value):
    from onnx import numpy_helper
    from xdsl.dialects.builtin import (
        DenseArrayBase,
        DenseIntOrFPElementsAttr,
        FloatAttr,
        IntegerAttr,
        StringAttr,
    )

    from mobile_opt.dialects.onnx.constants import array_from_dense
    from mobile_opt.dialects.onnx.types import onnx_from_element_type

    if isinstance(value, IntegerAttr | FloatAttr):
        return value.value.data
    if isinstance(value, StringAttr):
        return value.data
    if isinstance(value, DenseArrayBase):
        return list(value.get_values())
    if isinstance(value, DenseIntOrFPElementsAttr):
        return numpy_helper.from_array(np.array(array_from_dense(value)))
    return onnx_from_element_type(value)  # Cast's `to`


def _onnxruntime_types(op) -> list[tuple[np.dtype, tuple[int, ...]]] | None:
    """Run `op` alone in onnxruntime; None if it has dynamic types."""
    import onnx
    import onnxruntime as ort
    from onnx import helper, numpy_helper
    from xdsl.dialects.builtin import NoneType

    from mobile_opt.dialects.onnx.types import dtype_of, onnx_from_element_type

    if any(d < 0 for v in (*op.operands, *op.results) if not isinstance(v.type, NoneType)
           for d in v.type.get_shape()):
        return None
    op_type = FUSED_BASE.get(op.onnx_type, op.onnx_type)
    names, inputs, feeds, initializers = [], [], {}, []
    for i, value in enumerate(op.operands):
        if isinstance(value.type, NoneType):
            names.append("")
            continue
        name = f"in{i}"
        names.append(name)
        owner = value.owner
        if getattr(owner, "name", None) == "onnx.Constant":
            initializers.append(numpy_helper.from_array(np.array(owner.array()), name))
            continue
        shape = value.type.get_shape()
        dtype = dtype_of(value.type.element_type)
        if dtype.kind == "f":
            feeds[name] = np.full(shape, 0.75, dtype)
        else:  # valid indices, non-zero divisors
            feeds[name] = np.full(shape, 0 if op_type == "Gather" else 1, dtype)
        inputs.append(
            helper.make_tensor_value_info(name, onnx_from_element_type(value.type.element_type), shape)
        )
    properties = type(op).get_irdl_definition().properties
    attributes = {
        key: _attribute(value)
        for key, value in op.properties.items()
        if key not in ("activation", "activation_params") and properties[key].default_value != value
    }
    outputs = [f"out{i}" for i in range(len(op.results))]
    if op.onnx_type == "FusedMatMul" and names[-1]:
        nodes = [helper.make_node("MatMul", names[:2], ["product"]),
                 helper.make_node("Add", ["product", names[2]], outputs)]
    else:
        while names and not names[-1]:
            names.pop()  # trailing omitted inputs are left out, as exporters do
        nodes = [helper.make_node(op_type, names, outputs, **attributes)]
    graph = helper.make_graph(
        nodes, "g", inputs, [onnx.ValueInfoProto(name=o) for o in outputs], initializer=initializers
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return [(r.dtype, tuple(r.shape)) for r in session.run(None, feeds)]


@pytest.mark.parametrize("path", ROUND_TRIP_FILES, ids=lambda p: p.name)
def test_round_trip_types_match_onnxruntime(path: Path):
    pytest.importorskip("onnxruntime")
    from mobile_opt.dialects.onnx import OnnxOp
    from mobile_opt.dialects.onnx.types import dtype_of

    checked, wrong = 0, []
    for op in _parse(path).walk():
        if not isinstance(op, OnnxOp) or op.onnx_type in NOT_ONNX:
            continue
        got = _onnxruntime_types(op)
        if got is None:
            continue
        checked += 1
        declared = [(dtype_of(r.type.element_type), tuple(r.type.get_shape())) for r in op.results]
        if got != declared:
            wrong.append(f"%{op.results[0].name_hint} = {op.name}: written {declared}, onnxruntime {got}")
    assert not wrong, "\n".join(wrong)
    assert checked
