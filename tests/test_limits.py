"""
Size limits before allocation (`dialects/limits.py`): a tiny model that declares or
folds a huge tensor, or a size past int64, is one line naming the file, the input or
node, the size and the limit, exit status 1, no traceback, and nothing is allocated.
"""

from __future__ import annotations

import resource
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import onnx
import pytest
from harness import assert_one_line_error, run_mobile_run
from onnx import TensorProto, helper, numpy_helper

from mobile_opt.backends.opencl.host_pack import OpenCLRunError
from mobile_opt.backends.opencl.memory import check_slots
from mobile_opt.dialects import limits
from mobile_opt.dialects.limits import LimitError, set_max_tensor_bytes
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.models.storage import Slot
from mobile_opt.reference.interpreter import run_reference
from mobile_opt.tools import mobile_translate


@pytest.fixture(autouse=True)
def default_limit(monkeypatch):
    """Each test starts from the default limit and leaves it so."""
    monkeypatch.delenv(limits.MAX_TENSOR_ENV, raising=False)
    set_max_tensor_bytes(None)
    yield
    set_max_tensor_bytes(None)


def const(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def model(nodes, inputs=(), inits=(), out_rank=1, opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g", list(inputs),
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * out_rank)],
        list(inits),
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def x_input(shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)


def relu(shape) -> onnx.ModelProto:
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [x_input(shape)],
                 out_rank=len(shape))


ONE = const("one", np.ones(1, np.float32))
HUGE_SHAPE = const("shape", np.array([100000, 100000, 100], np.int64))
ABS = helper.make_node("Abs", ["r"], ["ra"], name="abs")
"""Abs of a constant: ONNX's shape inference does not propagate its value, so what
reads it is sized by folding alone."""

CASES = {
    # name: (model, mobile-run options, what the one line says)
    "huge declared input": (
        relu([1, 1000, 1000, 1000]), [],
        "input 'x': [1, 1000, 1000, 1000] (1000000000 elements) is 3.7 GiB, over the limit"),
    "dims of 2^62": (
        relu([2**62, 2**62]), [],
        "input 'x': shape [4611686018427387904, 4611686018427387904] holds "
        "21267647932558653966460912964485513216 elements, past the int64 range"),
    "Tile 2^31 repeats": (
        model([helper.make_node("Tile", ["one", "r"], ["y"], name="tile")],
              inits=[ONE, const("r", np.array([2**31], np.int64))]), [],
        "node 'tile' (Tile): output 'y': [2147483648] (2147483648 elements) is 8.0 GiB"),
    "Tile 2^31 repeats sized by folding": (
        model([ABS, helper.make_node("Tile", ["one", "ra"], ["y"], name="tile")],
              inits=[ONE, const("r", np.array([2**31], np.int64))]), [],
        "node 'tile' (Tile): cannot be computed at import (output 'y' (2147483648 elements) "
        "is 8.0 GiB, over the limit"),
    "ConstantOfShape huge": (
        model([helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill")],
              inits=[HUGE_SHAPE], out_rank=3), [],
        "node 'fill' (ConstantOfShape): output 'y': [100000, 100000, 100] "
        "(1000000000000 elements) is 3.6 TiB"),
    "ConstantOfShape huge, left to run": (
        model([helper.make_node("Abs", ["shape"], ["s"], name="abs"),
               helper.make_node("ConstantOfShape", ["s"], ["y"], name="fill")],
              inits=[HUGE_SHAPE], out_rank=3), [],
        "node 'fill' (ConstantOfShape): output 'y': [100000, 100000, 100] "
        "(1000000000000 elements) is 3.6 TiB"),
    "Expand huge": (
        model([helper.make_node("Expand", ["one", "shape"], ["y"], name="expand")],
              inits=[ONE, HUGE_SHAPE], out_rank=3), [],
        "node 'expand' (Expand): output 'y': [100000, 100000, 100] (1000000000000 elements)"),
    "Range huge": (
        model([helper.make_node("Range", ["a", "b", "d"], ["y"], name="range")],
              inits=[const("a", np.float32(0)), const("b", np.float32(1e12)),
                     const("d", np.float32(1))]), [],
        "node 'range' (Range): output 'y': [999999995904] (999999995904 elements) is 3.6 TiB"),
    "--dim batch=99999999999": (
        relu(["batch", 3]), ["--dim", "batch=99999999999"],
        "input 'x': [99999999999, 3] (299999999997 elements) is 1.1 TiB, over the limit"),
    "--random-weights of a huge ConstantOfShape": (
        model([helper.make_node("ConstantOfShape", ["shape"], ["w"], name="fill"),
               helper.make_node("Add", ["x", "w"], ["y"], name="add")],
              [x_input([1])], inits=[HUGE_SHAPE], out_rank=3), ["--random-weights"],
        "--random-weights: node 'fill' (ConstantOfShape): [100000, 100000, 100] "
        "(1000000000000 elements) is 3.6 TiB"),
    "a small --max-tensor-size refuses a fine model": (
        relu([1, 1000]), ["--max-tensor-size", "1KB"],
        "input 'x': [1, 1000] (1000 elements) is 3.9 KiB, over the limit of 1.0 KiB a tensor "
        "(--max-tensor-size)"),
}


@pytest.mark.parametrize("name", CASES)
def test_huge_sizes_are_one_line(name: str, tmp_path: Path, capsys):
    built, options, message = CASES[name]
    path = tmp_path / "m.onnx"
    onnx.save(built, path)
    assert path.stat().st_size < 200
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    status, _, err = run_mobile_run(["--reference", str(path), *options], capsys)
    assert_one_line_error(status, err, f"mobile-run: error: {path}: {message}")
    # refused from the sizes alone: nothing allocated, nothing evaluated
    assert time.monotonic() - started < 20
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 256 << 10  # KiB


USAGE = {
    "--dim past int64": (["--dim", "batch=99999999999999999999999"],
                         "--dim batch: N must be below 2^63, got 99999999999999999999999"),
    "--memory-budget past int64": (
        ["--memory-budget", "99999999999999999999GB"],
        "--memory-budget expects a size such as 200MB or 1.5GB, at most 1.0 PiB, "
        "not '99999999999999999999GB'"),
    "--memory-budget past what the planner holds": (
        ["--memory-budget", "1000000TB"],
        "--memory-budget expects a size such as 200MB or 1.5GB, at most 1.0 PiB, "
        "not '1000000TB'"),
    "--max-tensor-size past int64": (
        ["--max-tensor-size", "99999999999999999999GB"],
        "--max-tensor-size expects a size such as 200MB or 1.5GB, at most 8.0 EiB"),
    "--max-tensor-size not a size": (["--max-tensor-size", "lots"],
                                     "--max-tensor-size expects a size"),
}


@pytest.mark.parametrize("name", USAGE)
def test_sizes_past_int64_in_options_are_one_line(name: str, tmp_path: Path, capsys):
    options, message = USAGE[name]
    path = tmp_path / "m.onnx"
    onnx.save(relu(["batch", 3]), path)
    status, _, err = run_mobile_run([str(path), *options], capsys)
    assert_one_line_error(status, err, message, code=2)


def run_fine_model(tmp_path: Path, capsys, options: list[str]) -> tuple[int, str, str]:
    path = tmp_path / "m.onnx"
    onnx.save(relu([1, 1000]), path)
    return run_mobile_run(["--reference", str(path), *options], capsys)


@pytest.mark.parametrize(("env", "options", "refused"), [
    (None, [], False),
    ("1KB", [], True),
    ("1KB", ["--max-tensor-size", "1MB"], False),  # the option wins over the variable
    (None, ["--max-tensor-size", "3KB"], True),
    (None, ["--max-tensor-size", "4000"], True),  # 1000 floats drawn as 64-bit: 8000 bytes
    (None, ["--max-tensor-size", "8000"], False),
])
def test_the_option_and_variable_set_the_limit(env, options, refused, tmp_path, capsys,
                                                monkeypatch):
    if env is not None:
        monkeypatch.setenv(limits.MAX_TENSOR_ENV, env)
    status, out, err = run_fine_model(tmp_path, capsys, options)
    if refused:
        assert_one_line_error(status, err, "input 'x': [1, 1000] (1000 elements) is ")
        assert (limits.MAX_TENSOR_ENV if not options else "--max-tensor-size") in err
    else:
        assert status == 0, out + err


@pytest.mark.parametrize(("memory", "refused"), [(16 << 10, True), (1 << 20, False)])
def test_the_default_limit_is_a_share_of_memory(memory, refused, tmp_path, capsys,
                                                monkeypatch):
    monkeypatch.setattr(limits, "physical_memory", lambda: memory)
    assert limits.max_tensor_bytes() == memory // limits.TENSOR_SHARE
    status, out, err = run_fine_model(tmp_path, capsys, [])
    if refused:
        assert_one_line_error(status, err, "over the limit of 2.0 KiB a tensor (default")
    else:
        assert status == 0, out + err


def test_mobile_translate_refuses_in_one_line(tmp_path: Path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(relu([2**62, 2**62]), path)
    with pytest.raises(SystemExit) as exit_info:
        mobile_translate.main(["--import-onnx", str(path)])
    _, err = capsys.readouterr()
    assert exit_info.value.code == 1 and err.count("\n") == 1, err
    assert err.startswith(f"mobile-translate: error: {path}: input 'x': shape "), err


def test_the_reference_interpreter_sizes_results_before_running(tmp_path: Path):
    path = tmp_path / "m.onnx"
    onnx.save(model([helper.make_node("Relu", ["x"], ["a"], name="first"),
                     helper.make_node("Relu", ["a"], ["b"], name="second"),
                     helper.make_node("Relu", ["b"], ["c"], name="third"),
                     helper.make_node("Relu", ["c"], ["y"], name="fourth")],
                    [x_input([1, 1000])], out_rank=2), path)
    module = import_onnx(path)
    feeds = {"x": np.zeros((1, 1000), np.float32)}
    assert run_reference(module, feeds)["y"].shape == (1, 1000)
    set_max_tensor_bytes(4000)  # each tensor of 4000 bytes fits; a run holds four, not five
    with pytest.raises(LimitError, match="onnx.Relu 'fourth': result #0: 3.9 KiB more makes "
                                         "the reference run hold 19.5 KiB, over the limit of "
                                         "15.6 KiB a run"):
        run_reference(module, feeds)
    set_max_tensor_bytes(1000)
    with pytest.raises(LimitError, match="input #0 is 3.9 KiB, over the limit of 1000 bytes"):
        run_reference(module, feeds)
    onnx.save(model([helper.make_node("Concat", ["x", "x"], ["y"], name="twice", axis=1)],
                    [x_input([1, 1000])], out_rank=2), path)
    set_max_tensor_bytes(None)
    module = import_onnx(path)
    set_max_tensor_bytes(5000)
    with pytest.raises(LimitError, match=r"onnx.Concat 'twice': result #0: \[1, 2000\] "
                                         r"\(2000 elements\) is 7.8 KiB, over the limit"):
        run_reference(module, feeds)


DEVICE = SimpleNamespace(max_mem_alloc_size=1 << 20, image2d_max_width=16384,
                         image2d_max_height=16384)


@pytest.mark.parametrize(("slot", "message"), [
    (Slot(0, "buffer", 0, 0, "f32", 2 << 20, False, ["y"]),
     "slot 0 (y) is 2.0 MiB, over the largest allocation of the device, 1.0 MiB"),
    (Slot(0, "image", 20000, 1, "f32", 320000, False, ["y"]),
     "slot 0 (y): an image of 20000x1 pixels exceeds the device limit 16384x16384"),
    (Slot(0, "buffer", 0, 0, "f32", 4096, False, ["y"]),
     "slot 0 (y) is 4.0 KiB, over the limit of 1.0 KiB a tensor"),
])
def test_opencl_slots_are_checked_before_allocation(slot: Slot, message: str):
    set_max_tensor_bytes(1024)
    with pytest.raises(OpenCLRunError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_slots([slot], DEVICE)
    set_max_tensor_bytes(None)
    check_slots([Slot(0, "buffer", 0, 0, "f32", 4096, False, ["y"])], DEVICE)


def test_running_out_of_memory_anyway_is_one_line(capsys):
    from mobile_opt.tools.cli import run_tool

    def body():
        raise MemoryError()

    with pytest.raises(SystemExit) as exit_info:
        run_tool("mobile-run", body)
    _, err = capsys.readouterr()
    assert exit_info.value.code == 1
    assert err.startswith("mobile-run: error: out of memory: ") and err.count("\n") == 1, err


def i64(name: str, values) -> onnx.TensorProto:
    return const(name, np.array(values, np.int64))


def f32(name: str, values) -> onnx.TensorProto:
    return const(name, np.array(values, np.float32))


def node(op: str, inputs: list[str], **attrs) -> onnx.NodeProto:
    return helper.make_node(op, inputs, ["y"], name="n", **attrs)


def absolute(name: str) -> onnx.NodeProto:
    """`name` through Abs: shape inference does not propagate the value, folding must."""
    return helper.make_node("Abs", [f"{name}0"], [name], name=f"abs_{name}")


FOLDS = {
    # op: (nodes, initializers, the elements folding bounds the output to)
    "Tile": ([absolute("r"), node("Tile", ["x", "r"])],
             [f32("x", np.ones((2, 3))), i64("r0", [1000, 1000])], 2000 * 3000),
    "Expand": ([absolute("s"), node("Expand", ["x", "s"])],
               [f32("x", np.ones((3, 1))), i64("s0", [2000, 3, 2000])], 2000 * 3 * 2000),
    "ConstantOfShape": ([absolute("s"), node("ConstantOfShape", ["s"])],
                        [i64("s0", [3000, 3000])], 9_000_000),
    "Range": ([helper.make_node("Abs", ["l0"], ["l"], name="abs"), node("Range", ["a", "l", "d"])],
              [f32("a", 0), f32("l0", 1e7), f32("d", 2)], 5_000_000),
    "Resize by sizes": ([absolute("s"), node("Resize", ["x", "", "", "s"])],
                        [f32("x", np.ones((1, 1, 2, 2))), i64("s0", [1, 1, 3000, 3000])],
                        9_000_000),
    "Resize by scales": ([helper.make_node("Abs", ["c0"], ["c"], name="abs"),
                          node("Resize", ["x", "", "c"])],
                         [f32("x", np.ones((1, 1, 2, 2))), f32("c0", [1, 1, 1500, 1500])],
                         9_000_000),
    "Resize by scales of some axes": (
        [helper.make_node("Abs", ["c0"], ["c"], name="abs"),
         node("Resize", ["x", "", "c"], axes=[2, 3])],
        [f32("x", np.ones((1, 1, 2, 2))), f32("c0", [1500, 1500])], 9_000_000),
    "HannWindow": ([absolute("k"), node("HannWindow", ["k"])], [i64("k0", 3_000_000)],
                   3_000_000),
    "Pad": ([absolute("p"), node("Pad", ["x", "p"])],
            [f32("x", np.ones((2, 2))), i64("p0", [0, 1000, 3000, 1000])], 3002 * 2002),
    "OneHot": ([absolute("k"), node("OneHot", ["i", "k", "v"])],
               [i64("i", [1, 2, 3]), i64("k0", 3_000_000), f32("v", [0, 1])], 9_000_000),
    "a broadcast": ([helper.make_node("Abs", ["a0"], ["a"], name="abs"), node("Add", ["a", "b"])],
                    [f32("a0", np.ones((3000, 1))), f32("b", np.ones((1, 3000)))], 9_000_000),
}


def copied(built: onnx.ModelProto) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(built)
    return copy


@pytest.mark.parametrize("name", FOLDS)
def test_folding_sizes_outputs_before_evaluating(name: str, tmp_path: Path):
    from mobile_opt.frontend.errors import OnnxImportError
    from mobile_opt.frontend.folding import fold_constants

    nodes, inits, elements = FOLDS[name]
    graph = helper.make_graph(nodes, "g", [], [helper.make_empty_tensor_value_info("y")], inits)
    built = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    op = nodes[-1].op_type
    set_max_tensor_bytes(1 << 20)
    # the op the dialect lacks must fold: over the limit it is an error naming it
    with pytest.raises(OnnxImportError, match=rf"node 'n' \({op}\): cannot be computed at "
                                              rf"import \(output 'y' \({elements} elements\)"):
        fold_constants(copied(built), tmp_path / "m.onnx", lambda n: n.op_type != op)
    # an op it has is left to run
    kept = copied(built)
    fold_constants(kept, tmp_path / "m.onnx", lambda n: True)
    assert [n.op_type for n in kept.graph.node][-1] == op
    # under a limit that admits it, it folds
    set_max_tensor_bytes(elements * 8)
    admitted = copied(built)
    assert fold_constants(admitted, tmp_path / "m.onnx", lambda n: n.op_type != op) >= 1
    assert op not in [n.op_type for n in admitted.graph.node]


def test_folding_refuses_what_it_cannot_size(tmp_path: Path):
    from mobile_opt.frontend.errors import OnnxImportError
    from mobile_opt.frontend.folding import fold_constants

    theta = f32("theta", np.eye(2, 3)[None])
    graph = helper.make_graph([absolute("s"), node("AffineGrid", ["theta", "s"])], "g", [],
                              [helper.make_empty_tensor_value_info("y")],
                              [theta, i64("s0", [1, 1, 3, 3])])
    built = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(OnnxImportError, match=r"node 'n' \(AffineGrid\): cannot be computed at "
                                              r"import \(the size of output 'y' is not known"):
        fold_constants(built, tmp_path / "m.onnx", lambda n: n.op_type != "AffineGrid")
