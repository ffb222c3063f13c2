"""
The `stream` dialect's Python side: the plan helpers a planner and a lowering use
(a storage's bytes and T(w), a weight's plan from its x_{w,l}, the chunks each layer
moves), the op builders and their verifiers, `streamed_from`, and that its filecheck
tests cover every op and attribute, as `test_dialect_coverage.py` does for `onnx`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import builtin, func, test
from xdsl.dialects.builtin import ModuleOp, TensorType, f16, f32, i32
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from mobile_opt.dialects.onnx import AddOp, TransposeOp, WeightOp
from mobile_opt.dialects.stream import (
    STREAM,
    ChunkRangeAttr,
    Decision,
    LoadOp,
    PlanAttr,
    SolverStatus,
    StagingType,
    TransformOp,
    WaitOp,
    WeightPlanAttr,
    chunks_of,
    layer_chunks,
    module_plan,
    storage_bytes,
    streamed_from,
)
from mobile_opt.dialects.texture import TEXTURE, AllocOp, Image2DType, Layout, PixelBufferType

TESTS = Path(__file__).resolve().parent / "filecheck" / "dialects" / "stream"
ROUND_TRIP = TESTS / "stream.mlir"
INVALID = TESTS / "stream-invalid.mlir"


def _parse_attribute(text: str):
    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(TEXTURE)
    ctx.load_dialect(STREAM)
    return Parser(ctx, text).parse_attribute()


def test_storage_bytes_count_rgba_pixels():
    assert storage_bytes(Image2DType(72, 4)) == 4608  # 72*4 pixels of four f32
    assert storage_bytes(Image2DType(4, 1, f16)) == 32
    assert storage_bytes(PixelBufferType(2, 4)) == 128


def test_chunks_of_rounds_up():
    assert chunks_of(4608, 1024) == 5
    assert chunks_of(1024, 1024) == 1
    assert chunks_of(1025, 1024) == 2
    assert chunks_of(32, 1024) == 1


def test_chunk_range_bytes_of_a_short_last_chunk():
    storage = Image2DType(72, 4)  # a [16, 8, 3, 3] conv weight in oihw4o
    assert ChunkRangeAttr(storage, 1024, 0, 2).bytes == 2048
    assert ChunkRangeAttr(storage, 1024, 2, 3).bytes == 2560
    assert ChunkRangeAttr(storage, 1024, 4, 1).bytes == 512
    assert ChunkRangeAttr(storage, 1024, 2, 3).total == 5
    with pytest.raises(VerifyException, match="lie beyond the 5 chunks"):
        ChunkRangeAttr(storage, 1024, 4, 2)


def test_chunks_are_cut_between_channels_of_the_storage():
    half = Image2DType(4, 1, f16)
    assert ChunkRangeAttr(half, 6, 0, 1).bytes == 6  # f16 channels are 2 bytes
    with pytest.raises(VerifyException, match="cuts the 2-byte channels"):
        ChunkRangeAttr(half, 3, 0, 1)
    with pytest.raises(VerifyException, match="cuts the 4-byte channels"):
        ChunkRangeAttr(Image2DType(4, 1), 6, 0, 1)


def test_chunk_range_round_trips():
    chunks = ChunkRangeAttr(PixelBufferType(2, 4), 64, 1, 1)
    text = "#stream.chunks<!texture.buffer2d<2x4xf32>, size = 64, first = 1, count = 1>"
    assert str(chunks) == text
    assert _parse_attribute(text) == chunks


def test_streamed_plan_from_per_layer_chunks_and_back():
    x = {1: 0, 2: 4, 3: 0, 5: 2}  # x_{w,l}, zeros included as a solver gives them
    plan = WeightPlanAttr.streamed(x, use=6)
    assert plan.decision.data is Decision.STREAM
    assert plan.chunks.data == 6
    assert plan.load.data == 2  # by default: the first layer that moves a chunk
    assert plan.moves == {2: 4, 5: 2}
    assert WeightPlanAttr.streamed(x, use=6, load=1).load.data == 1
    text = "#stream.weight_plan<stream, chunks = 6, load = 2, use = 6, moves = [2: 4, 5: 2]>"
    assert str(plan) == text
    assert _parse_attribute(text) == plan


def test_preloaded_plan():
    plan = WeightPlanAttr.preloaded(4, use=1)
    assert plan.decision.data is Decision.PRELOAD
    assert (plan.load.data, plan.moves) == (0, {0: 4})
    assert str(plan) == "#stream.weight_plan<preload, chunks = 4, load = 0, use = 1, moves = [0: 4]>"


def test_streamed_plan_builder_checks_the_constraints():
    with pytest.raises(VerifyException, match="not before their first reader at layer 3"):
        WeightPlanAttr.streamed({1: 2, 3: 1}, use=3)
    with pytest.raises(VerifyException, match="before its load at layer 2"):
        WeightPlanAttr.streamed({1: 2}, use=3, load=2)
    with pytest.raises(VerifyException, match="a weight has chunks, not 0"):
        WeightPlanAttr.streamed({1: 0}, use=3)


def test_moves_arrays_of_different_lengths_are_rejected():
    """Not reachable from the textual form, which writes moves as pairs."""
    good = WeightPlanAttr.streamed({1: 2, 2: 2}, use=3)
    with pytest.raises(VerifyException, match="2 layers but 1 chunk counts"):
        WeightPlanAttr.new([good.decision, good.chunks, good.load, good.use, good.layers,
                            builtin.DenseArrayBase.from_list(builtin.i64, [4])])


def test_layer_chunks_sums_every_weight():
    plans = [
        WeightPlanAttr.preloaded(3, use=1),
        WeightPlanAttr.streamed({1: 2, 2: 3}, use=3),
        WeightPlanAttr.streamed({2: 1, 4: 1}, use=5),
    ]
    assert layer_chunks(plans) == {0: 3, 1: 2, 2: 4, 4: 1}
    assert layer_chunks([]) == {}


def test_builders_make_a_host_function_that_verifies():
    weight = WeightOp("/models/net.onnx", "b", TensorType(f32, [16]))
    image = Image2DType(4, 1)  # 64 bytes: two 32-byte chunks
    chunks = [ChunkRangeAttr(image, 32, 0, 1), ChunkRangeAttr(image, 32, 1, 1)]
    block = Block()
    alloc = AllocOp(Layout.ROWS4, (16,), image)
    block.add_ops([weight, alloc])
    loads, tokens = [], []
    for chunk in chunks:
        load = LoadOp(weight.output, chunk, Layout.ROWS4)
        assert load.staging.type.bytes.data == 32
        transform = TransformOp(load.staging, alloc.result, chunk)
        block.add_ops([load, transform])
        loads.append(load)
        tokens.append(transform.token)
    block.add_ops([WaitOp(*tokens), func.ReturnOp()])
    host = func.FuncOp("host", ((), ()), Region(block))
    module = ModuleOp([host])
    module.attributes["stream.plan"] = PlanAttr(32, 64, 1, SolverStatus.FEASIBLE)
    module.verify()
    assert module_plan(alloc) == PlanAttr(32, 64, 1, SolverStatus.FEASIBLE)
    found = streamed_from(alloc.result)  # one of its loads (which one: xdsl's use order)
    assert any(found is load for load in loads) and found.weight is weight.output
    assert streamed_from(weight.output) is None  # loaded, but no transform fills it
    module.attributes["stream.plan"] = PlanAttr(64, 64, 1, SolverStatus.FEASIBLE)
    with pytest.raises(VerifyException, match="chunk size 32 differs from the 64"):
        module.verify()


def test_streamed_from_needs_a_load_behind_the_transform():
    chunk = ChunkRangeAttr(Image2DType(4, 1), 64, 0, 1)
    alloc = AllocOp(Layout.ROWS4, (16,), Image2DType(4, 1))
    assert streamed_from(alloc.result) is None  # no transform fills it
    staged = test.TestOp(result_types=[StagingType(64)])
    TransformOp(staged.results[0], alloc.result, chunk)
    assert streamed_from(alloc.result) is None  # filled, but not from a stream.load


def test_load_of_a_host_op_over_constants_verifies_and_over_an_input_does_not():
    weight = WeightOp("/models/net.onnx", "w", TensorType(f32, [4, 16]))
    transposed = TransposeOp.build(operands=[weight.output],
                                   result_types=[TensorType(f32, [16, 4])])
    chunk = ChunkRangeAttr(Image2DType(1, 16), 256, 0, 1)
    load = LoadOp(transposed.results[0], chunk, Layout.ROWS4)
    ModuleOp([weight, transposed, load]).verify()

    block = Block(arg_types=[TensorType(f32, [16, 4])])
    weight = WeightOp("/models/net.onnx", "w", TensorType(f32, [16, 4]))
    total = AddOp.build(operands=[weight.output, block.args[0]],
                        result_types=[TensorType(f32, [16, 4])])
    load = LoadOp(total.results[0], chunk, Layout.ROWS4)
    block.add_ops([weight, total, load, func.ReturnOp()])
    host = func.FuncOp("host", ([TensorType(f32, [16, 4])], []), Region(block))
    with pytest.raises(VerifyException, match="streams a constant"):
        ModuleOp([host]).verify()


def test_load_checks_the_weight_against_the_chunks_storage():
    weight = WeightOp("/models/net.onnx", "w", TensorType(f32, [16]))
    load = LoadOp(weight.output, ChunkRangeAttr(Image2DType(2, 1), 32, 0, 1), Layout.ROWS4)
    with pytest.raises(VerifyException, match=r"a \[16\] weight in rows4 takes 4x1 pixels, not 2x1"):
        ModuleOp([weight, load]).verify()


def test_load_of_an_integer_weight_needs_f32_pixels():
    weight = WeightOp("/models/net.onnx", "ids", TensorType(i32, [4]))
    load = LoadOp(weight.output, ChunkRangeAttr(Image2DType(1, 1, f16), 8, 0, 1), Layout.ROWS4)
    with pytest.raises(VerifyException, match="integer tensors live in f32 pixels"):
        ModuleOp([weight, load]).verify()


def test_transform_writes_into_the_chunks_storage_only():
    weight = WeightOp("/models/net.onnx", "w", TensorType(f32, [16]))
    chunk = ChunkRangeAttr(Image2DType(4, 1), 64, 0, 1)
    load = LoadOp(weight.output, chunk, Layout.ROWS4)
    alloc = AllocOp(Layout.ROWS4, (16,), PixelBufferType(4, 1))
    transform = TransformOp(load.staging, alloc.result, chunk)
    block = Block([weight, load, alloc, transform, WaitOp(transform.token)])
    with pytest.raises(VerifyException, match="moves chunks of !texture.image2d<4x1xf32> "
                                              "into !texture.buffer2d<4x1xf32>"):
        ModuleOp(Region(block)).verify()


# --- the filecheck tests cover the dialect ------------------------------------------

SPLIT = "// -----"


def _code(text: str) -> str:
    """Everything but `//` comments (RUN and CHECK lines)."""
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def test_the_loaded_dialect_is_the_one_the_universe_publishes():
    from mobile_opt.universe import DIALECTS

    assert DIALECTS["stream"]() is STREAM
    ctx = Context()
    for dialect in (builtin.Builtin, TEXTURE, STREAM):
        ctx.load_dialect(dialect)
    assert ctx.get_optional_op("stream.wait") is WaitOp


@pytest.mark.parametrize("op", [op.name for op in STREAM.operations])
def test_every_op_is_round_tripped_and_has_an_invalid_case(op: str):
    assert re.search(rf'(?<![\w.]){re.escape(op)}\b', _code(ROUND_TRIP.read_text()))
    subjects = [re.findall(r'(?<![\w.])"?(stream\.\w+)\b', _code(case))
                for case in INVALID.read_text().split(SPLIT)]
    assert any(op in found for found in subjects), f"no case of {INVALID.name} uses {op}"


@pytest.mark.parametrize("attr", [a.name for a in STREAM.attributes])
def test_every_attribute_is_round_tripped_and_has_an_invalid_case(attr: str):
    use = re.compile(rf"[#!]{re.escape(attr)}<|!{re.escape(attr)}\b")
    assert use.search(_code(ROUND_TRIP.read_text())), f"{attr} is not in {ROUND_TRIP.name}"
    if attr != "stream.token":  # nothing about a token can be wrong but its use
        assert use.search(_code(INVALID.read_text())), f"{attr} is not in {INVALID.name}"


def test_every_invalid_case_checks_a_diagnostic():
    text = INVALID.read_text()
    assert ("// RUN: mobile-opt %s --split-input-file --verify-diagnostics "
            "--parsing-diagnostics | filecheck %s") in text
    for i, case in enumerate(text.split(SPLIT)):
        assert re.search(r"//\s*CHECK(-NEXT)?:", case), f"{INVALID.name}: case #{i} checks nothing"


def test_round_trip_runs_both_formats():
    runs = [line for line in ROUND_TRIP.read_text().splitlines() if line.startswith("// RUN:")]
    assert "// RUN: mobile-opt %s | mobile-opt | filecheck %s" in runs
    assert "// RUN: mobile-opt %s --print-op-generic | mobile-opt | filecheck %s" in runs
