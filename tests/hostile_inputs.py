"""
Hostile inputs for every console tool, as a table (`CASES`), and what running one
means (`run_case`, `judge`). `tests/test_hostile.py` runs the table under pytest;
`python3 tests/hostile_report.py` runs it outside pytest and prints, per category,
how many inputs were tried and how many were handled cleanly.

The contract every row checks (the README's user-facing error contract):

- the exit status is the row's (1 for bad input, 2 for a usage error; a row may also
  accept 0 where a clean run is a right answer too, e.g. a self-healing cache);
- stderr holds exactly one line `TOOL: error: ...` naming what the row names (the
  file, the node, the option), with no control characters and no traceback; lines
  starting `remark:` may come besides it;
- on failure nothing is left in the output folder, the working folder or $TMPDIR
  (all private to the row, as are $HOME and $XDG_CACHE_HOME, where libraries may keep
  caches), and the input folder is as it was; FIFOs, sockets,
  symlinks (and their targets), devices the row names stay untouched;
- no run takes more than TIMEOUT seconds or more than MEMORY_LIMIT of address space.

Categories: malformed (ONNX files that are not valid models), sizes (declared or
computed tensors over any sane limit), attributes (ONNX attribute values out of
range), mlir (bad `.mlir` text), options (bad flags and option values), outputs
(output paths that are not plain files in existing folders), weight-cache (a
corrupted derived-weight folder), external-data (ONNX external data that is missing,
short, or points outside the model's folder), device (device selection).

Every input is generated into a temporary folder; none is big on disk.
"""

from __future__ import annotations

import os
import resource
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 120
"""Seconds a row may run; more is a hang."""
MEMORY_LIMIT = 3 << 30
"""Address space a non-device row may take: a tool that allocates what a hostile
input declares fails here rather than swapping the machine."""

MODULES = {
    "mobile-opt": "mobile_opt",
    "mobile-translate": "mobile_translate",
    "mobile-run": "mobile_run",
    "mobile-probe": "mobile_probe",
    "mobile-tune": "mobile_tune",
    "mobile-learn": "mobile_learn",
}

BIG = 1 << 31
HUGE = 1 << 62


# ---------------------------------------------------------------- model builders


def save(model: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(model.SerializeToString())
    return path


def make_model(nodes, inputs, outputs, initializers=(), opset: int = 17,
               ir_version: int = 8) -> onnx.ModelProto:
    graph = h.make_graph(list(nodes), "g", list(inputs), list(outputs), list(initializers))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model


def vi(name: str, shape, dtype=T.FLOAT) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, dtype, shape)


def const(name: str, values, dtype=np.float32) -> onnx.TensorProto:
    return nh.from_array(np.asarray(values, dtype=dtype), name)


def conv_relu(**conv_attrs) -> onnx.ModelProto:
    """x[1,2,4,4] -> Conv(w[3,2,3,3]) -> Relu -> y: the first seed model."""
    attrs = {"pads": [1, 1, 1, 1], **conv_attrs}
    # with other attributes the output's size is the importer's to find
    out = ["n", "c", "h", "w"] if conv_attrs else [1, 3, 4, 4]
    return make_model(
        [h.make_node("Conv", ["x", "w"], ["c"], name="conv0", **attrs),
         h.make_node("Relu", ["c"], ["y"], name="relu0")],
        [vi("x", [1, 2, 4, 4])], [vi("y", out)],
        [const("w", np.linspace(-1, 1, 54).reshape(3, 2, 3, 3))],
    )


def matmul_add() -> onnx.ModelProto:
    """x[2,4] @ w[4,3] + b[3] -> y: the second seed model."""
    return make_model(
        [h.make_node("MatMul", ["x", "w"], ["m"], name="matmul0"),
         h.make_node("Add", ["m", "b"], ["y"], name="add0")],
        [vi("x", [2, 4])], [vi("y", [2, 3])],
        [const("w", np.linspace(-1, 1, 12).reshape(4, 3)), const("b", [0.5, -0.5, 0.25])],
    )


def gather_slice_reshape() -> onnx.ModelProto:
    """x[4,6] -> Gather(axis 0, [2, 0]) -> Slice(cols 1..5 step 2) -> Reshape([-1]): the third."""
    return make_model(
        [h.make_node("Gather", ["x", "idx"], ["g"], name="gather0", axis=0),
         h.make_node("Slice", ["g", "starts", "ends", "axes", "steps"], ["s"], name="slice0"),
         h.make_node("Reshape", ["s", "shape"], ["y"], name="reshape0")],
        [vi("x", [4, 6])], [vi("y", [4])],
        [const("idx", [2, 0], np.int64), const("starts", [1], np.int64),
         const("ends", [5], np.int64), const("axes", [1], np.int64),
         const("steps", [2], np.int64), const("shape", [-1], np.int64)],
    )


SEED_MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "conv_relu": conv_relu,
    "matmul_add": matmul_add,
    "gather_slice_reshape": gather_slice_reshape,
}


def one_node(op: str, inputs, in_vis, out_shape, initializers=(), name: str = "n0",
             out_dtype=T.FLOAT, opset: int = 17, **attrs) -> onnx.ModelProto:
    """A model of one node `name` (op) whose output is `y`."""
    return make_model([h.make_node(op, list(inputs), ["y"], name=name, **attrs)],
                      in_vis, [vi("y", out_shape, out_dtype)], initializers, opset=opset)


def folded_weight_model() -> onnx.ModelProto:
    """y = x + (a + b) over 64 floats: the import folds a + b into a derived weight."""
    return make_model(
        [h.make_node("Add", ["a", "b"], ["ab"], name="fold0"),
         h.make_node("Add", ["x", "ab"], ["y"], name="add0")],
        [vi("x", [64])], [vi("y", [64])],
        [const("a", np.linspace(-1, 1, 64)), const("b", np.linspace(2, 3, 64))],
    )


def external_data_model(folder: Path, location: str = "w.bin") -> Path:
    """matmul_add with `w` in an external file `location` (relative to `folder`)."""
    model = matmul_add()
    for t in model.graph.initializer:
        if t.name == "w":
            raw = nh.to_array(t).tobytes()
            t.ClearField("float_data")
            t.ClearField("raw_data")
            t.data_location = T.EXTERNAL
            for k, v in (("location", location), ("offset", "0"), ("length", str(len(raw)))):
                entry = t.external_data.add()
                entry.key, entry.value = k, v
            target = Path(location) if os.path.isabs(location) else folder / location
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(raw)
    return save(model, folder / "ext.onnx")


# ---------------------------------------------------------------- the table


@dataclass
class Ctx:
    """What a row's builder sees and leaves: the folders, and what must stay untouched."""

    root: Path
    guarded: list[Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    before: list[list[str]] = field(default_factory=list)  # runs that prepare the row
    after: Callable[[Path], None] | None = None  # corrupts what `before` made

    @property
    def inp(self) -> Path:
        return self.root / "in"

    @property
    def out(self) -> Path:
        return self.root / "out"

    @property
    def cwd(self) -> Path:
        return self.root / "cwd"

    @property
    def weights(self) -> Path:
        return self.root / "weights"

    def model(self, model: onnx.ModelProto, name: str = "model.onnx") -> str:
        return str(save(model, self.inp / name))

    def text(self, text: str | bytes, name: str) -> str:
        path = self.inp / name
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        return str(path)


@dataclass(frozen=True)
class Case:
    id: str
    category: str
    tool: str
    build: Callable[[Ctx], list[str]]
    """Makes the inputs under ctx.inp and returns argv (without the tool)."""
    exits: tuple[int, ...] = (1,)
    expect: tuple[str, ...] = ()
    """Substrings the error line must hold (after `tool: error:`); `a|b`: either."""
    device: bool = False
    """Queries OpenCL (no address-space limit; few of these)."""


CASES: list[Case] = []


def case(id: str, category: str, tool: str, exits=(1,), expect=(), device=False):
    def register(build: Callable[[Ctx], list[str]]):
        CASES.append(Case(id, category, tool, build, tuple(exits), tuple(expect), device))
        return build

    return register


def translate(c: Ctx, model: onnx.ModelProto, name: str = "model.onnx") -> list[str]:
    return ["--import-onnx", c.model(model, name), "-o", str(c.out / "out.mlir")]


def reference(c: Ctx, model: onnx.ModelProto, *extra: str, name="model.onnx") -> list[str]:
    return ["--reference", c.model(model, name), *extra]


# --- malformed models

case("not-protobuf", "malformed", "mobile-translate", expect=["bad.onnx"])(
    lambda c: ["--import-onnx", c.text("hello, I am not a model\n", "bad.onnx"),
               "-o", str(c.out / "out.mlir")])
case("truncated-protobuf", "malformed", "mobile-translate", expect=["bad.onnx"])(
    lambda c: ["--import-onnx",
               c.text(conv_relu().SerializeToString()[:150], "bad.onnx"),
               "-o", str(c.out / "out.mlir")])
case("empty-file", "malformed", "mobile-opt", expect=["bad.onnx"])(
    lambda c: [c.text(b"", "bad.onnx"), "-o", str(c.out / "out.mlir")])
case("not-protobuf-run", "malformed", "mobile-run", expect=["bad.onnx"])(
    lambda c: ["--reference", c.text(bytes(range(256)) * 4, "bad.onnx")])
case("not-protobuf-opt", "malformed", "mobile-opt", expect=["bad.onnx"])(
    lambda c: [c.text(b"\x08\x07\x12\xff\xff\xff\xff\x0f", "bad.onnx"),
               "-o", str(c.out / "out.mlir")])
# no nodes, the input passed through: running it is a right answer too
case("zero-node-graph", "malformed", "mobile-run", exits=(0, 1), expect=["model.onnx"])(
    lambda c: reference(c, make_model([], [vi("x", [2])], [vi("x", [2])])))
case("zero-node-dangling-output", "malformed", "mobile-translate", expect=["model.onnx"])(
    lambda c: translate(c, make_model([], [vi("x", [2])], [vi("y", [2])])))
case("unknown-op", "malformed", "mobile-translate", expect=["model.onnx", "FooBar"])(
    lambda c: translate(c, one_node("FooBar", ["x"], [vi("x", [2])], [2])))
case("unknown-domain", "malformed", "mobile-translate", expect=["model.onnx", "com.evil"])(
    lambda c: translate(c, _with_domain()))
case("opset-3", "malformed", "mobile-translate", expect=["model.onnx", "opset 3"])(
    lambda c: translate(c, one_node("Relu", ["x"], [vi("x", [2])], [2], opset=3)))
case("opset-99", "malformed", "mobile-translate", expect=["model.onnx", "opset 99"])(
    lambda c: translate(c, one_node("Relu", ["x"], [vi("x", [2])], [2], opset=99)))
case("opset-99-run", "malformed", "mobile-run", expect=["model.onnx", "opset 99"])(
    lambda c: reference(c, one_node("Relu", ["x"], [vi("x", [2])], [2], opset=99)))
case("duplicate-output-names", "malformed", "mobile-translate", expect=["model.onnx"])(
    lambda c: translate(c, make_model(
        [h.make_node("Relu", ["x"], ["y"], name="n0"),
         h.make_node("Neg", ["x"], ["y"], name="n1")],
        [vi("x", [2])], [vi("y", [2])])))
case("graph-cycle", "malformed", "mobile-translate", expect=["model.onnx"])(
    lambda c: translate(c, make_model(
        [h.make_node("Add", ["x", "b"], ["a"], name="n0"),
         h.make_node("Relu", ["a"], ["b"], name="n1"),
         h.make_node("Neg", ["a"], ["y"], name="n2")],
        [vi("x", [2])], [vi("y", [2])])))
case("dangling-input", "malformed", "mobile-translate", expect=["model.onnx"])(
    lambda c: translate(c, one_node("Add", ["x", "nowhere"], [vi("x", [2])], [2])))
case("initializer-wrong-dtype", "malformed", "mobile-run", expect=["model.onnx"])(
    lambda c: reference(c, one_node("Add", ["x", "b"], [vi("x", [2])], [2],
                                    [const("b", [1, 2], np.int64)])))
case("initializer-short-raw-data", "malformed", "mobile-run", expect=["model.onnx"])(
    lambda c: reference(c, one_node("Add", ["x", "b"], [vi("x", [64])], [64],
                                    [_short_tensor("b", [64], 10)])))
case("initializer-too-many-values", "malformed", "mobile-translate", expect=["model.onnx"])(
    lambda c: translate(c, one_node("Add", ["x", "b"], [vi("x", [4])], [4],
                                    [_too_many_values()])))
case("op-type-control-char", "malformed", "mobile-translate", expect=["model.onnx"])(
    lambda c: c.text(one_node("Relu", ["x"], [vi("x", [2])], [2]).SerializeToString()
                     .replace(b"Relu", b"R\x01lu"), "model.onnx") and
    ["--import-onnx", str(c.inp / "model.onnx"), "-o", str(c.out / "out.mlir")])
case("op-type-not-utf8", "malformed", "mobile-translate", expect=["model.onnx", "UTF-8"])(
    lambda c: c.text(one_node("Relu", ["x"], [vi("x", [2])], [2]).SerializeToString()
                     .replace(b"Relu", b"R\xfflu"), "model.onnx") and
    ["--import-onnx", str(c.inp / "model.onnx"), "-o", str(c.out / "out.mlir")])
case("node-name-newline", "malformed", "mobile-translate", expect=["model.onnx", "FooBar"])(
    lambda c: translate(c, one_node("FooBar", ["x"], [vi("x", [2])], [2],
                                    name="evil\nmobile-opt: error: forged line")))
case("node-name-control-chars", "malformed", "mobile-translate",
     expect=["model.onnx", "FooBar"])(
    lambda c: translate(c, one_node("FooBar", ["x"], [vi("x", [2])], [2],
                                    name="\x1b[2J\x1b[31mred\r\x07\x00bell")))
case("node-name-very-long", "malformed", "mobile-translate", expect=["model.onnx", "FooBar"])(
    lambda c: translate(c, one_node("FooBar", ["x"], [vi("x", [2])], [2], name="n" * 200_000)))
case("node-name-newline-run", "malformed", "mobile-run", expect=["model.onnx"])(
    lambda c: reference(c, one_node("Gather", ["x", "i"], [vi("x", [4, 3])], [1, 3],
                                    [const("i", [99], np.int64)], name="a\nb\rc", axis=0)))
case("input-negative-dim", "malformed", "mobile-run", expect=["model.onnx"])(
    lambda c: reference(c, one_node("Relu", ["x"], [vi("x", [1, -5, 4])], [1, -5, 4])))
case("initializer-negative-dim", "malformed", "mobile-translate", expect=["model.onnx"])(
    lambda c: translate(c, one_node("Add", ["x", "b"], [vi("x", [2])], [2],
                                    [_negative_dims_tensor()])))
case("mobile-opt-unknown-op", "malformed", "mobile-opt", expect=["model.onnx", "FooBar"])(
    lambda c: [c.model(one_node("FooBar", ["x"], [vi("x", [2])], [2])),
               "-o", str(c.out / "out.mlir")])
case("no-such-model", "malformed", "mobile-run", expect=["nosuch.onnx"])(
    lambda c: ["--reference", str(c.inp / "nosuch.onnx")])
case("model-is-directory", "malformed", "mobile-translate", expect=["dir.onnx"])(
    lambda c: (c.inp.joinpath("dir.onnx").mkdir(),
               ["--import-onnx", str(c.inp / "dir.onnx")])[1])


def _with_domain() -> onnx.ModelProto:
    model = make_model([h.make_node("Relu", ["x"], ["y"], name="n0", domain="com.evil")],
                       [vi("x", [2])], [vi("y", [2])])
    model.opset_import.append(h.make_opsetid("com.evil", 1))
    return model


def _short_tensor(name: str, dims, nbytes: int) -> onnx.TensorProto:
    t = onnx.TensorProto(name=name, data_type=T.FLOAT, dims=dims)
    t.raw_data = b"\x00" * nbytes
    return t


def _too_many_values() -> onnx.TensorProto:
    t = onnx.TensorProto(name="b", data_type=T.FLOAT, dims=[4])
    t.float_data.extend([1.0] * 9)
    return t


def _negative_dims_tensor() -> onnx.TensorProto:
    t = onnx.TensorProto(name="b", data_type=T.FLOAT, dims=[-3, 2])
    t.raw_data = b"\x00" * 8
    return t


# --- sizes over any limit

case("declared-input-4e9", "sizes", "mobile-run", expect=["model.onnx"])(
    lambda c: reference(c, one_node("Relu", ["x"], [vi("x", [1, 1000, 1000, 1000])],
                                    [1, 1000, 1000, 1000])))
case("declared-input-2^62", "sizes", "mobile-run", expect=["model.onnx"])(
    lambda c: reference(c, one_node("Relu", ["x"], [vi("x", [HUGE, 2])], [HUGE, 2])))
case("declared-input-2^62-translate", "sizes", "mobile-translate", expect=["model.onnx"])(
    lambda c: translate(c, one_node("Relu", ["x"], [vi("x", [HUGE, HUGE])], [HUGE, HUGE])))
case("tile-2^31", "sizes", "mobile-translate", expect=["model.onnx", "'n0'"])(
    lambda c: translate(c, one_node("Tile", ["c", "r"], [], [4 * BIG],
                                    [const("c", [1, 2, 3, 4]), const("r", [BIG], np.int64)])))
case("tile-2^31-run", "sizes", "mobile-run", expect=["model.onnx", "'n0'"])(
    lambda c: reference(c, make_model(
        [h.make_node("Tile", ["x", "r"], ["y"], name="n0")],
        [vi("x", [4])], [vi("y", [4 * BIG])], [const("r", [BIG], np.int64)])))
case("constantofshape-huge", "sizes", "mobile-translate", expect=["model.onnx", "'n0'"])(
    lambda c: translate(c, one_node("ConstantOfShape", ["s"], [], [1 << 20, 1 << 20],
                                    [const("s", [1 << 20, 1 << 20], np.int64)])))
case("range-huge", "sizes", "mobile-translate", expect=["model.onnx", "'n0'"])(
    lambda c: translate(c, one_node("Range", ["a", "b", "d"], [], [10 ** 12],
                                    [const("a", 0.0), const("b", 1e12), const("d", 1.0)])))
case("expand-huge", "sizes", "mobile-translate", expect=["model.onnx", "'n0'"])(
    lambda c: translate(c, one_node("Expand", ["c", "s"], [], [1 << 40],
                                    [const("c", [1.0]), const("s", [1 << 40], np.int64)])))
case("reshape-to-2^62", "sizes", "mobile-run", expect=["model.onnx"])(
    lambda c: reference(c, make_model(
        [h.make_node("Expand", ["x", "s"], ["y"], name="n0")],
        [vi("x", [1])], [vi("y", [HUGE, 4])], [const("s", [HUGE, 4], np.int64)])))
case("conv-pads-output-huge", "sizes", "mobile-run", expect=["model.onnx", "'conv0'"])(
    lambda c: reference(c, conv_relu(pads=[1 << 20] * 4)))
case("mlir-dense-splat-6.4e11", "sizes", "mobile-run", expect=["splat.mlir"])(
    lambda c: ["--reference", c.text(_mlir_splat(800000), "splat.mlir")])
case("mlir-dense-splat-opt", "sizes", "mobile-opt", expect=["splat.mlir"])(
    lambda c: [c.text(_mlir_splat(800000), "splat.mlir"), "-p", "onnx-fold-constants",
               "-o", str(c.out / "out.mlir")])
case("mlir-dims-2^62", "sizes", "mobile-run", expect=["big.mlir"])(
    lambda c: ["--reference", c.text(_mlir_relu(f"{HUGE}x{HUGE}"), "big.mlir")])


def _mlir_splat(n: int) -> str:
    t = f"tensor<{n}x{n}xf32>"
    return (f"builtin.module {{\n  func.func @main_graph() -> ({t} {{onnx.name = \"y\"}}) {{\n"
            f"    %c = onnx.Constant {{value = dense<1.000000e+00> : {t}}} : {t}\n"
            f"    %y = onnx.Relu %c : ({t}) -> {t}\n"
            f"    func.return %y : {t}\n  }}\n}}\n")


def _mlir_relu(shape: str, body: str | None = None) -> str:
    t = f"tensor<{shape}xf32>"
    body = body or f"    %y = onnx.Relu %x : ({t}) -> {t}\n"
    return (f"builtin.module {{\n  func.func @main_graph(%x: {t} {{onnx.name = \"x\"}}) -> "
            f"({t} {{onnx.name = \"y\"}}) {{\n{body}    func.return %y : {t}\n  }}\n}}\n")


# --- attribute values out of range

def _pool(**attrs) -> onnx.ModelProto:
    return one_node("MaxPool", ["x"], [vi("x", [1, 1, 4, 4])], [1, 1, 4, 4], name="pool0",
                    **attrs)


case("maxpool-kernel-0", "attributes", "mobile-run", expect=["model.onnx", "'pool0'"])(
    lambda c: reference(c, _pool(kernel_shape=[0, 0])))
case("maxpool-kernel-0-translate", "attributes", "mobile-translate",
     expect=["model.onnx", "'pool0'"])(
    lambda c: translate(c, _pool(kernel_shape=[0, 0])))
case("maxpool-kernel-negative", "attributes", "mobile-run", expect=["model.onnx", "'pool0'"])(
    lambda c: reference(c, _pool(kernel_shape=[-2, -2])))
case("maxpool-stride-0", "attributes", "mobile-run", expect=["model.onnx", "'pool0'"])(
    lambda c: reference(c, _pool(kernel_shape=[2, 2], strides=[0, 0])))
case("conv-stride-0", "attributes", "mobile-run", expect=["model.onnx", "'conv0'"])(
    lambda c: reference(c, conv_relu(strides=[0, 0])))
case("conv-stride-0-opt", "attributes", "mobile-opt", expect=["model.onnx", "'conv0'"])(
    lambda c: [c.model(conv_relu(strides=[0, 0])), "-p", "onnx-fold-constants,onnx-fuse",
               "-o", str(c.out / "out.mlir")])
case("conv-dilation-0", "attributes", "mobile-run", expect=["model.onnx", "'conv0'"])(
    lambda c: reference(c, conv_relu(dilations=[0, 0])))
case("conv-pads-2^40", "attributes", "mobile-translate", expect=["model.onnx", "'conv0'"])(
    lambda c: translate(c, conv_relu(pads=[1 << 40] * 4)))
case("conv-pads-negative", "attributes", "mobile-run", expect=["model.onnx", "'conv0'"])(
    lambda c: reference(c, conv_relu(pads=[-9, -9, -9, -9])))
case("pad-pads-2^40", "attributes", "mobile-run", expect=["model.onnx", "'n0'"])(
    lambda c: reference(c, one_node("Pad", ["x", "p"], [vi("x", [2, 2])], [2, 2],
                                    [const("p", [0, 1 << 40, 0, 1 << 40], np.int64)])))
case("slice-step-0", "attributes", "mobile-run", expect=["model.onnx", "'slice0'"])(
    lambda c: reference(c, _slice(steps=[0])))
case("slice-step-0-translate", "attributes", "mobile-translate",
     expect=["model.onnx", "'slice0'"])(
    lambda c: translate(c, _slice(steps=[0])))
case("range-delta-0", "attributes", "mobile-translate", expect=["model.onnx", "'n0'"])(
    lambda c: translate(c, one_node("Range", ["a", "b", "d"], [], [10],
                                    [const("a", 0.0), const("b", 10.0), const("d", 0.0)])))
case("range-delta-0-runtime", "attributes", "mobile-run", expect=["model.onnx", "'n0'"])(
    lambda c: reference(c, make_model(
        [h.make_node("Range", ["a", "b", "d"], ["y"], name="n0")],
        [vi("a", [], T.INT64)], [vi("y", [3], T.INT64)],
        [const("b", 3, np.int64), const("d", 0, np.int64)])))
case("gather-index-99", "attributes", "mobile-run", expect=["model.onnx", "'n0'"])(
    lambda c: reference(c, one_node("Gather", ["x", "i"], [vi("x", [4, 3])], [1, 3],
                                    [const("i", [99], np.int64)], axis=0)))
case("gather-index-99-translate", "attributes", "mobile-translate",
     expect=["model.onnx", "'n0'"])(
    lambda c: translate(c, one_node("Gather", ["x", "i"], [vi("x", [4, 3])], [1, 3],
                                    [const("i", [99], np.int64)], axis=0)))
case("gather-index-folded", "attributes", "mobile-translate", expect=["model.onnx", "'n0'"])(
    lambda c: translate(c, one_node("Gather", ["c", "i"], [], [1],
                                    [const("c", [1.0, 2.0, 3.0, 4.0]),
                                     const("i", [-99], np.int64)], axis=0)))
case("gather-axis-out-of-range", "attributes", "mobile-run", expect=["model.onnx", "'n0'"])(
    lambda c: reference(c, one_node("Gather", ["x", "i"], [vi("x", [4, 3])], [1, 3],
                                    [const("i", [1], np.int64)], axis=7)))
case("softmax-axis-out-of-range", "attributes", "mobile-run", expect=["model.onnx", "'n0'"])(
    lambda c: reference(c, one_node("Softmax", ["x"], [vi("x", [2, 3])], [2, 3], axis=9)))
case("concat-axis-out-of-range", "attributes", "mobile-translate",
     expect=["model.onnx", "'n0'"])(
    lambda c: translate(c, one_node("Concat", ["x", "x"], [vi("x", [2, 3])], [4, 3], axis=-5)))
case("transpose-perm-repeated", "attributes", "mobile-run", expect=["model.onnx", "'n0'"])(
    lambda c: reference(c, one_node("Transpose", ["x"], [vi("x", [2, 3, 4])], [2, 2, 3],
                                    perm=[0, 0, 1])))
case("transpose-perm-out-of-range", "attributes", "mobile-translate",
     expect=["model.onnx", "'n0'"])(
    lambda c: translate(c, one_node("Transpose", ["x"], [vi("x", [2, 3])], [3, 2],
                                    perm=[1, 5])))
case("reshape-two-minus-one", "attributes", "mobile-run", expect=["model.onnx", "'n0'"])(
    lambda c: reference(c, one_node("Reshape", ["x", "s"], [vi("x", [2, 6])], [4, 3],
                                    [const("s", [-1, -1], np.int64)])))
case("reshape-wrong-count", "attributes", "mobile-translate", expect=["model.onnx", "'n0'"])(
    lambda c: translate(c, one_node("Reshape", ["x", "s"], [vi("x", [2, 6])], [5, 3],
                                    [const("s", [5, 3], np.int64)])))


def _slice(steps) -> onnx.ModelProto:
    return one_node("Slice", ["x", "st", "en", "ax", "sp"], [vi("x", [4, 6])], [4, 3],
                    [const("st", [0], np.int64), const("en", [6], np.int64),
                     const("ax", [1], np.int64), const("sp", steps, np.int64)], name="slice0")


# --- .mlir inputs

case("mlir-binary-bytes", "mlir", "mobile-opt", expect=["bin.mlir"])(
    lambda c: [c.text(bytes(range(256)) * 8, "bin.mlir"), "-o", str(c.out / "out.mlir")])
case("mlir-binary-bytes-run", "mlir", "mobile-run", expect=["bin.mlir"])(
    lambda c: ["--reference", c.text(b"\xff\xfe\x00\x01" * 100, "bin.mlir")])
# deep nesting: a clean parse or a clean error are both right
case("mlir-200-nested-modules", "mlir", "mobile-opt", exits=(0, 1), expect=["deep.mlir"])(
    lambda c: [c.text("builtin.module {\n" * 200 + "}\n" * 200, "deep.mlir"),
               "-o", str(c.out / "out.mlir")])
case("mlir-5000-nested-modules", "mlir", "mobile-opt", exits=(0, 1), expect=["deep.mlir"])(
    lambda c: [c.text("builtin.module {\n" * 5000 + "}\n" * 5000, "deep.mlir"),
               "-o", str(c.out / "out.mlir")])
case("mlir-5000-nested-run", "mlir", "mobile-run", expect=["deep.mlir"])(
    lambda c: ["--reference", c.text("builtin.module {\n" * 5000 + "}\n" * 5000, "deep.mlir")])
case("mlir-use-before-def", "mlir", "mobile-opt", expect=["ssa.mlir"])(
    lambda c: [c.text(_mlir_relu("4", "    %y = onnx.Relu %z : (tensor<4xf32>) -> tensor<4xf32>\n"
                                     "    %z = onnx.Neg %x : (tensor<4xf32>) -> tensor<4xf32>\n"),
                      "ssa.mlir"), "-o", str(c.out / "out.mlir")])
case("mlir-use-before-def-run", "mlir", "mobile-run", expect=["ssa.mlir"])(
    lambda c: ["--reference",
               c.text(_mlir_relu("4", "    %y = onnx.Relu %z : (tensor<4xf32>) -> tensor<4xf32>\n"
                                      "    %z = onnx.Neg %x : (tensor<4xf32>) -> tensor<4xf32>\n"),
                      "ssa.mlir")])
case("mlir-self-use", "mlir", "mobile-run", expect=["ssa.mlir"])(
    lambda c: ["--reference",
               c.text(_mlir_relu("4", "    %y = onnx.Add %x, %y : (tensor<4xf32>, tensor<4xf32>)"
                                      " -> tensor<4xf32>\n"), "ssa.mlir")])
case("mlir-undefined-value", "mlir", "mobile-opt", expect=["ssa.mlir"])(
    lambda c: [c.text(_mlir_relu("4", "    %y = onnx.Relu %nowhere : (tensor<4xf32>) -> "
                                      "tensor<4xf32>\n"), "ssa.mlir")])
case("mlir-unknown-op", "mlir", "mobile-opt", expect=["op.mlir"])(
    lambda c: [c.text(_mlir_relu("4", "    %y = \"evil.op\"(%x) : (tensor<4xf32>) -> "
                                      "tensor<4xf32>\n"), "op.mlir")])
case("mlir-unknown-op-run", "mlir", "mobile-run", expect=["op.mlir"])(
    lambda c: ["--reference", c.text(_mlir_relu("4", "    %y = onnx.Frobnicate %x : "
                                                     "(tensor<4xf32>) -> tensor<4xf32>\n"),
                                     "op.mlir")])
case("mlir-bad-type", "mlir", "mobile-opt", expect=["type.mlir"])(
    lambda c: [c.text(_mlir_relu("axb"), "type.mlir")])
case("mlir-mismatched-types", "mlir", "mobile-run", expect=["type.mlir"])(
    lambda c: ["--reference", c.text(_mlir_relu("4", "    %y = onnx.Relu %x : (tensor<4xf32>) "
                                                     "-> tensor<7xi8>\n"), "type.mlir")])
case("mlir-negative-dim", "mlir", "mobile-run", expect=["type.mlir"])(
    lambda c: ["--reference", c.text(_mlir_relu("-3"), "type.mlir")])
case("mlir-truncated", "mlir", "mobile-opt", expect=["cut.mlir"])(
    lambda c: [c.text(_mlir_relu("4")[:70], "cut.mlir"), "-o", str(c.out / "out.mlir")])


# --- inputs that are not regular files: a FIFO would block a reader, /dev/zero never ends


def _input_fifo(c: Ctx, name: str) -> str:
    path = c.inp / name
    os.mkfifo(path)
    c.guarded.append(path)
    return str(path)


def _input_zero(c: Ctx, name: str) -> str:
    link = c.inp / name
    link.symlink_to("/dev/zero")  # only ever read
    return str(link)


def _weight_from(store: str) -> str:
    return ("func.func @main_graph(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            f"  %w = onnx.Weight {{store = \"{store}\", key = \"w\"}} : tensor<4xf32>\n"
            "  %y = onnx.Add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
            "  func.return %y : tensor<4xf32>\n}\n")


case("input-fifo-onnx", "inputs", "mobile-opt", expect=["in.onnx", "FIFO"])(
    lambda c: [_input_fifo(c, "in.onnx")])
case("input-fifo-translate", "inputs", "mobile-translate", expect=["in.onnx", "FIFO"])(
    lambda c: ["--import-onnx", _input_fifo(c, "in.onnx")])
case("input-fifo-mlir-run", "inputs", "mobile-run", expect=["in.mlir", "FIFO"])(
    lambda c: ["--reference", _input_fifo(c, "in.mlir")])
case("input-fifo-asm", "inputs", "mobile-translate", expect=["in.s", "FIFO"])(
    lambda c: ["--import-hexagon-asm", _input_fifo(c, "in.s")])
case("input-dev-zero-onnx", "inputs", "mobile-translate", expect=["zero.onnx", "device"])(
    lambda c: ["--import-onnx", _input_zero(c, "zero.onnx")])
case("input-dev-zero-mlir", "inputs", "mobile-opt", expect=["zero.mlir", "device"])(
    lambda c: [_input_zero(c, "zero.mlir")])
case("input-directory", "inputs", "mobile-run", expect=["dir.onnx", "directory"])(
    lambda c: ["--reference", str((c.inp / "dir.onnx").mkdir() or c.inp / "dir.onnx")])
case("input-npy-fifo", "inputs", "mobile-run", expect=["x.npy", "FIFO"])(
    lambda c: ["--reference", c.model(one_node("Relu", ["x"], [vi("x", [2])], [2])),
               "--input", f"x={_input_fifo(c, 'x.npy')}"])
case("input-weight-store-fifo", "inputs", "mobile-run", expect=["store.onnx"])(
    lambda c: ["--reference", c.text(_weight_from(_input_fifo(c, "store.onnx")), "w.mlir")])


# --- options

for _tool, _argv in (("mobile-opt", []), ("mobile-translate", ["--import-onnx", "M"]),
                     ("mobile-run", ["--reference", "M"]), ("mobile-probe", ["-o", "O"]),
                     ("mobile-tune", ["M", "-o", "O"]),
                     ("mobile-learn", ["train", "M", "-o", "O"])):
    def _unknown(c: Ctx, argv=_argv) -> list[str]:
        model = c.model(matmul_add())
        return [model if a == "M" else str(c.out / "o.json") if a == "O" else a
                for a in argv] + ["--no-such-flag"]

    case(f"unknown-flag-{_tool}", "options", _tool, exits=(2,), expect=["--no-such-flag"])(
        _unknown)

case("mobile-learn-no-command", "options", "mobile-learn", exits=(2,))(lambda c: [])
case("mobile-learn-missing-out", "options", "mobile-learn", exits=(2,), expect=["-o"])(
    lambda c: ["train", str(c.inp / "nothing.json")])
case("mobile-run-no-model", "options", "mobile-run", exits=(2,))(lambda c: ["--reference"])
case("mobile-translate-no-source", "options", "mobile-translate", exits=(2,))(lambda c: [])
case("mobile-run-repeat-not-int", "options", "mobile-run", exits=(2,), expect=["--repeat"])(
    lambda c: [c.model(matmul_add()), "--repeat", "many"])


def _dynamic() -> onnx.ModelProto:
    return one_node("Relu", ["x"], [vi("x", ["batch", 1000])], ["batch", 1000])


case("dim-batch-99999999999", "options", "mobile-run", exits=(1, 2), expect=["batch"])(
    lambda c: reference(c, _dynamic(), "--dim", "batch=99999999999"))
case("dim-batch-2^63", "options", "mobile-translate", exits=(1, 2), expect=["batch"])(
    lambda c: translate(c, _dynamic()) + ["--dim", f"batch={1 << 63}"])
case("dim-x-minus-1", "options", "mobile-run", exits=(1, 2), expect=["--dim"])(
    lambda c: reference(c, _dynamic(), "--dim", "x=-1"))
case("dim-not-a-number", "options", "mobile-opt", exits=(1, 2), expect=["--dim"])(
    lambda c: [c.model(_dynamic()), "--dim", "batch=lots", "-o", str(c.out / "out.mlir")])
case("memory-budget-overflow", "options", "mobile-run", exits=(1, 2),
     expect=["--memory-budget"])(
    lambda c: [c.model(matmul_add()), "--memory-budget", "99999999999999999999GB"])
case("memory-budget-inf", "options", "mobile-run", exits=(1, 2), expect=["--memory-budget"])(
    lambda c: [c.model(matmul_add()), "--memory-budget", "1e400MB"])
# a negative seed is either taken (it is just a number) or refused in one line
case("seed-minus-1", "options", "mobile-run", exits=(0, 1, 2), expect=["--seed"])(
    lambda c: reference(c, matmul_add(), "--seed", "-1"))
case("seed-2^70", "options", "mobile-run", exits=(0, 1, 2), expect=["--seed"])(
    lambda c: reference(c, matmul_add(), "--seed", str(1 << 70)))
case("tune-samples-0", "options", "mobile-tune", exits=(1, 2), expect=["--samples"])(
    lambda c: [c.model(matmul_add()), "--samples", "0", "-o", str(c.out / "t.json")])
case("inline-limit-negative", "options", "mobile-translate", exits=(0, 1, 2),
     expect=["--inline-limit"])(
    lambda c: translate(c, matmul_add()) + ["--inline-limit", "-5"])
case("input-npy-not-npy", "options", "mobile-run", expect=["x"])(
    lambda c: reference(c, matmul_add(), "--input", f"x={c.text(b'garbage', 'x.npy')}"))
case("input-npy-wrong-shape", "options", "mobile-run", expect=["x"])(
    lambda c: reference(c, matmul_add(), "--input", f"x={_npy(c, np.ones((7, 7)), 'x.npy')}"))
case("input-npy-object", "options", "mobile-run", expect=["x"])(
    lambda c: reference(c, matmul_add(), "--input",
                        f"x={_npy(c, np.array([{'a': 1}], dtype=object), 'x.npy', True)}"))


def _npy(c: Ctx, array: np.ndarray, name: str, pickle: bool = False) -> str:
    path = c.inp / name
    np.save(path, array, allow_pickle=pickle)
    return str(path)


# --- outputs that are not plain files in existing folders


def _fifo(c: Ctx) -> str:
    path = c.out / "fifo.mlir"
    os.mkfifo(path)
    c.guarded.append(path)
    return str(path)


def _symlink(c: Ctx) -> str:
    target = c.inp / "precious.txt"
    target.write_text("keep me\n")
    link = c.out / "link.mlir"
    link.symlink_to(target)
    c.guarded += [link, target]
    return str(link)


def _socket(c: Ctx) -> str:
    path = c.out / "sock.mlir"
    # a bound socket's path is limited to ~107 bytes: bind from inside the folder
    here = os.getcwd()
    os.chdir(c.out)
    try:
        s = socket.socket(socket.AF_UNIX)
        s.bind("sock.mlir")
        s.close()
    finally:
        os.chdir(here)
    c.guarded.append(path)
    return str(path)


def _device(c: Ctx) -> str:
    path = c.out / "null.mlir"
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError as e:  # not root: no device node can be made here
        raise Unavailable(f"cannot make a device node: {e.strerror}") from None
    c.guarded.append(path)
    return str(path)


def _directory(c: Ctx) -> str:
    path = c.out / "adir.mlir"
    path.mkdir()
    (path / "inside.txt").write_text("keep\n")
    c.guarded.append(path)
    return str(path)


class Unavailable(Exception):
    """The host cannot make this row's input (e.g. a device node without root)."""


LOWERING = "onnx-fold-constants,select-layouts{target=gpu},onnx-to-texture,texture-to-ocl"
"""A pipeline whose module `--weight-store` can pack."""

OUTPUT_KINDS: dict[str, tuple[Callable[[Ctx], str], str]] = {
    "directory": (_directory, "adir.mlir"),
    "fifo": (_fifo, "fifo.mlir"),
    "symlink": (_symlink, "link.mlir"),
    "socket": (_socket, "sock.mlir"),
    "device": (_device, "null.mlir"),
    "missing-folder": (lambda c: str(c.out / "missing" / "out.mlir"), "missing"),
}

for _kind, (_make, _name) in OUTPUT_KINDS.items():
    case(f"translate-o-{_kind}", "outputs", "mobile-translate", expect=[_name])(
        lambda c, make=_make: ["--import-onnx", c.model(matmul_add()), "-o", make(c)])
    case(f"opt-o-{_kind}", "outputs", "mobile-opt", expect=[_name])(
        lambda c, make=_make: [c.model(matmul_add()), "-o", make(c)])
for _kind in ("fifo", "symlink", "directory"):
    _make, _name = OUTPUT_KINDS[_kind]
    case(f"opt-weight-store-{_kind}", "outputs", "mobile-opt", expect=[_name])(
        lambda c, make=_make: [c.model(matmul_add()), "-p", LOWERING,
                               "--weight-store", make(c), "-o", str(c.out / "out.mlir")])


def _save_dir_file(c: Ctx) -> list[str]:
    path = c.out / "plain"
    path.write_text("a file, not a folder\n")
    c.guarded.append(path)
    return reference(c, matmul_add(), "--save-dir", str(path))


def _save_dir_symlink(c: Ctx) -> list[str]:
    # a folder reached through a link (e.g. to a bigger disk) may be written into
    real = c.out / "elsewhere"
    real.mkdir()
    link = c.out / "link"
    link.symlink_to(real)
    return reference(c, matmul_add(), "--save-dir", str(link))


def _save_dir_output_fifo(c: Ctx) -> list[str]:
    folder = c.out / "save"
    folder.mkdir()
    os.mkfifo(folder / "y.npy")
    c.guarded.append(folder / "y.npy")
    return reference(c, matmul_add(), "--save-dir", str(folder))


case("save-dir-is-file", "outputs", "mobile-run", expect=["plain"])(_save_dir_file)
case("save-dir-symlink", "outputs", "mobile-run", exits=(0, 1), expect=["link"])(
    _save_dir_symlink)
case("save-dir-output-is-fifo", "outputs", "mobile-run", expect=["y.npy"])(_save_dir_output_fifo)
# a failing model leaves no --save-dir behind
case("save-dir-after-failure", "outputs", "mobile-run", expect=["model.onnx"])(
    lambda c: reference(c, one_node("Gather", ["x", "i"], [vi("x", [4, 3])], [1, 3],
                                    [const("i", [99], np.int64)], axis=0),
                        "--save-dir", str(c.out / "saved")))
case("tune-o-missing-folder", "outputs", "mobile-tune", expect=["missing"])(
    lambda c: [c.model(matmul_add()), "-o", str(c.out / "missing" / "t.json")])


# --- the derived-weight cache

def _corrupt_weights(how: str) -> Callable[[Path], None]:
    def corrupt(folder: Path) -> None:
        files = sorted(folder.glob("*.npy"))
        assert files, "the preparing run derived no weight"
        for f in files:
            data = bytearray(f.read_bytes())
            if how == "truncate":
                f.write_bytes(bytes(data[: len(data) // 2]))
            elif how == "bitflip":
                data[-3] ^= 0x40  # an exponent bit of the last float
                f.write_bytes(bytes(data))
            else:
                f.write_bytes(b"")

    return corrupt


def _cache_case(how: str, mlir: bool = False) -> Callable[[Ctx], list[str]]:
    def build(c: Ctx) -> list[str]:
        model = c.model(folded_weight_model())
        folded = str(c.inp / "folded.mlir")
        c.before.append(["mobile-opt", model, "-p", "onnx-fold-constants", "-o", folded])
        c.after = _corrupt_weights(how)
        if mlir:  # IR that names the cached file: nothing to re-derive it from
            return ["--reference", folded]
        return ["--reference", "-p", "onnx-fold-constants", model]

    return build


# a corrupt cached weight is re-derived (a right run) or refused in one line: never used
for _how in ("truncate", "bitflip", "empty"):
    case(f"weight-cache-{_how}", "weight-cache", "mobile-run", exits=(0, 1),
         expect=[".npy"])(_cache_case(_how))
    case(f"weight-cache-{_how}-mlir", "weight-cache", "mobile-run", exits=(1,),
         expect=[".npy"])(_cache_case(_how, mlir=True))


def _weight_dir_is_file(c: Ctx) -> list[str]:
    path = c.inp / "weights-file"
    path.write_text("not a folder\n")
    c.guarded.append(path)
    c.env["MOBILE_OPT_WEIGHT_DIR"] = str(path)
    return reference(c, folded_weight_model())


case("weight-dir-is-file", "weight-cache", "mobile-run", exits=(0, 1),
     expect=["weights-file"])(_weight_dir_is_file)
case("weight-dir-is-file-translate", "weight-cache", "mobile-translate", exits=(0, 1),
     expect=["weights-file"])(
    lambda c: (_weight_dir_is_file(c), translate(c, folded_weight_model()))[1])


def _weight_dir_unwritable(c: Ctx) -> list[str]:
    # a path under a regular file: no folder can ever be made there
    blocker = c.inp / "blocker"
    blocker.write_text("x\n")
    c.env["MOBILE_OPT_WEIGHT_DIR"] = str(blocker / "weights")
    return reference(c, folded_weight_model())


case("weight-dir-under-file", "weight-cache", "mobile-run", exits=(0, 1),
     expect=["blocker"])(_weight_dir_unwritable)


def _mlir_weight_ref(c: Ctx, store: str, key: str = "w") -> list[str]:
    t = "tensor<4xf32>"
    body = (f"    %w = onnx.Weight {{store = \"{store}\", key = \"{key}\"}} : {t}\n"
            f"    %y = onnx.Add %x, %w : ({t}, {t}) -> {t}\n")
    return ["--reference", c.text(_mlir_relu("4", body), "ref.mlir")]


case("mlir-weight-store-missing", "weight-cache", "mobile-run", expect=["ref.mlir|gone.onnx"])(
    lambda c: _mlir_weight_ref(c, str(c.inp / "gone.onnx")))
case("mlir-weight-store-garbage", "weight-cache", "mobile-run", expect=["garbage.npy"])(
    lambda c: _mlir_weight_ref(c, c.text(b"\x93NUMPY garbage", "garbage.npy")))
case("mlir-weight-store-wrong-shape", "weight-cache", "mobile-run",
     expect=["ref.mlir|w7.npy"])(
    lambda c: _mlir_weight_ref(c, _npy(c, np.ones(7, np.float32), "w7.npy")))


# --- external data

def _ext_missing(c: Ctx) -> list[str]:
    path = external_data_model(c.inp)
    (c.inp / "w.bin").unlink()
    return ["--reference", str(path)]


def _ext_short(c: Ctx) -> list[str]:
    path = external_data_model(c.inp)
    data = (c.inp / "w.bin").read_bytes()
    (c.inp / "w.bin").write_bytes(data[:10])
    return ["--reference", str(path)]


def _ext_traversal(c: Ctx) -> list[str]:
    model_dir = c.inp / "model"
    model_dir.mkdir()
    path = external_data_model(model_dir, "../secret.bin")
    c.guarded.append(c.inp / "secret.bin")
    return ["--reference", str(path)]


def _ext_absolute(c: Ctx) -> list[str]:
    secret = c.root / "secret" / "w.bin"
    path = external_data_model(c.inp, str(secret))
    c.guarded.append(secret)
    return ["--reference", str(path)]


def _ext_other_cwd(c: Ctx) -> list[str]:
    # a right model, run from an unrelated folder: its data resolve next to the model
    return ["--reference", str(external_data_model(c.inp))]


case("external-data-missing", "external-data", "mobile-run", expect=["w.bin"])(_ext_missing)
case("external-data-missing-translate", "external-data", "mobile-translate",
     expect=["w.bin"])(
    lambda c: (_ext_missing(c), ["--import-onnx", str(c.inp / "ext.onnx")])[1])
case("external-data-short", "external-data", "mobile-run", expect=["w.bin"])(_ext_short)
case("external-data-traversal", "external-data", "mobile-run", expect=["secret.bin"])(
    _ext_traversal)
case("external-data-absolute", "external-data", "mobile-run", expect=["w.bin"])(_ext_absolute)
case("external-data-other-cwd", "external-data", "mobile-run", exits=(0,))(_ext_other_cwd)
case("external-data-other-cwd-opt", "external-data", "mobile-opt", exits=(0,))(
    lambda c: [str(external_data_model(c.inp)), "-p", "onnx-fold-constants,onnx-fuse",
               "-o", str(c.out / "out.mlir")])


# --- device choice (few: these query OpenCL)

case("run-device-nosuch", "device", "mobile-run", expect=["nosuch"], device=True)(
    lambda c: [c.model(matmul_add()), "--device", "nosuch"])
case("tune-device-nosuch", "device", "mobile-tune", expect=["nosuch"], device=True)(
    lambda c: [c.model(matmul_add()), "--device", "nosuch", "-o", str(c.out / "t.json")])
case("probe-device-nosuch", "device", "mobile-probe", expect=["nosuch"], device=True)(
    lambda c: ["--device", "nosuch", "--quick", "-o", str(c.out / "p.json")])
case("tune-profile-malformed", "device", "mobile-tune", expect=["profile.json"], device=True)(
    lambda c: [c.model(matmul_add()), "--profile", c.text("{not json", "profile.json"),
               "-o", str(c.out / "t.json")])
case("run-opencl-gather-index-99", "device", "mobile-run", expect=["model.onnx", "'n0'"],
     device=True)(
    lambda c: [c.model(one_node("Gather", ["x", "i"], [vi("x", [4, 3])], [1, 3],
                                [const("i", [99], np.int64)], axis=0))])


# ---------------------------------------------------------------- running a row


def tool_command(tool: str, argv: list[str]) -> list[str]:
    return [sys.executable, "-m", f"mobile_opt.tools.{MODULES[tool]}", *argv]


def folders(root: Path) -> dict[str, Path]:
    names = ("in", "out", "cwd", "tmp", "home", "cache", "weights")
    result = {n: root / n for n in names}
    for path in result.values():
        path.mkdir(parents=True, exist_ok=True)
    return result


def environment(root: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MOBILE_OPT", "PYTHON")) and k not in ("TMPDIR", "HOME")}
    env.update(
        PYTHONPATH=str(REPO),
        PYTHONDONTWRITEBYTECODE="1",
        MOBILE_OPT_WEIGHT_DIR=str(root / "weights"),
        HOME=str(root / "home"),
        XDG_CACHE_HOME=str(root / "cache"),
        TMPDIR=str(root / "tmp"),
        COLUMNS="100",
    )
    env.update(extra)
    return env


LIBRARY_FILES = {".ses"}
"""What libraries leave in $TMPDIR on any run, not the tools' output (onnxruntime's
session stamp)."""


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry under `folder`: its kind, inode, size and mtime (links not followed)."""
    entries = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            if name in LIBRARY_FILES and Path(dirpath) == folder:
                continue
            path = Path(dirpath) / name
            s = path.lstat()
            entries[str(path.relative_to(folder))] = (
                stat.S_IFMT(s.st_mode), s.st_ino, s.st_size, s.st_mtime_ns)
    return entries


def identity(path: Path) -> tuple | None:
    """What must not change about a guarded path: kind, inode, size, mtime, content."""
    try:
        s = path.lstat()
    except FileNotFoundError:
        return None
    content = None
    if stat.S_ISREG(s.st_mode):
        content = path.read_bytes()
    elif stat.S_ISLNK(s.st_mode):
        content = os.readlink(path)
    return (stat.S_IFMT(s.st_mode), s.st_ino, s.st_size, s.st_mtime_ns, content)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _spawn(tool: str, argv: list[str], cwd: Path, env: dict[str, str], device: bool):
    return subprocess.run(
        tool_command(tool, argv), cwd=cwd, env=env, capture_output=True, timeout=TIMEOUT,
        stdin=subprocess.DEVNULL, preexec_fn=None if device else _limit_memory)


@dataclass
class Outcome:
    exit: int | None
    stderr: str
    problems: list[str]
    seconds: float = 0.0

    @property
    def clean(self) -> bool:
        return not self.problems

    @property
    def first_line(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        if any(line.startswith("Traceback") for line in lines):
            return "Traceback: " + (lines[-1] if lines else "")
        return lines[0] if lines else f"(no stderr, exit {self.exit})"


def run_case(c: Case, root: Path) -> Outcome:
    """Build the row's inputs under `root`, run the tool, judge what it did."""
    paths = folders(root)
    ctx = Ctx(root)
    argv = c.build(ctx)
    env = environment(root, ctx.env)
    for tool, *before in ctx.before:
        done = _spawn(tool, before, paths["cwd"], env, False)
        assert done.returncode == 0, f"preparing run failed: {done.stderr.decode()[-500:]}"
    if ctx.after is not None:
        ctx.after(Path(env["MOBILE_OPT_WEIGHT_DIR"]))
    # $HOME and $XDG_CACHE_HOME are private but not judged: libraries keep caches there
    watched = ("in", "out", "cwd", "tmp")
    before = {n: snapshot(paths[n]) for n in watched}
    guarded = {p: identity(p) for p in ctx.guarded}
    start = time.perf_counter()
    try:
        done = _spawn(c.tool, argv, paths["cwd"], env, c.device)
    except subprocess.TimeoutExpired as e:
        stderr = (e.stderr or b"").decode(errors="replace")
        return Outcome(None, stderr, [f"hang: still running after {TIMEOUT} s"], TIMEOUT)
    seconds = time.perf_counter() - start
    stderr = done.stderr.decode(errors="replace")
    problems = judge(c, done.returncode, stderr)
    for name in watched:
        if name in ("out", "tmp") and done.returncode == 0:
            continue  # a clean run may write its output (onnxruntime leaves a file in $TMPDIR)
        after = snapshot(paths[name])
        if name == "in" and after != before[name]:
            changed = sorted(set(after.items()) ^ set(before[name].items()))
            problems.append(f"input folder changed: {changed[:3]}")
        elif name != "in" and set(after) - set(before[name]):
            problems.append(f"left behind in {name}/: {sorted(set(after) - set(before[name]))[:5]}")
    for path, was in guarded.items():
        if identity(path) != was:
            problems.append(f"{path.relative_to(root)} was touched")
    return Outcome(done.returncode, stderr, problems, seconds)


def judge(c: Case, status: int, stderr: str) -> list[str]:
    """What is wrong with the exit status and stderr of a run of row `c`."""
    problems = []
    if status not in c.exits:
        what = f"killed by signal {-status}" if status < 0 else f"exit {status}"
        problems.append(f"{what}, expected {' or '.join(map(str, c.exits))}")
    if "Traceback (most recent call last)" in stderr:
        problems.append("traceback")
    lines = [line for line in stderr.split("\n") if line.strip()]
    errors = [line for line in lines if not line.startswith("remark:")]
    if status == 0:
        return problems  # a clean run may warn; it needs no error line
    if len(errors) != 1:
        problems.append(f"{len(errors)} stderr lines besides remarks, expected 1")
    if not errors:
        return problems
    line = errors[0]
    if not line.startswith(f"{c.tool}: error: "):
        problems.append(f"stderr does not start '{c.tool}: error: '")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in line.replace("\t", " ")):
        problems.append("control characters in the error line")
    missing = [s for s in c.expect if not any(alt in line for alt in s.split("|"))]
    if missing:
        problems.append(f"error line lacks {missing}")
    return problems


def fresh_root(base: Path, name: str) -> Path:
    root = base / name
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    return root

