"""
The streaming runtime (issue 21): chunk regions, the weight store, and streamed runs over
random budgets whose outputs must equal preload-all's while the counting allocator's peak
stays within the budget; `mobile-run --memory-budget` end to end and on bad input.
"""

from __future__ import annotations

import mmap
import random
import re
from pathlib import Path

import numpy as np
import pytest
from mobile_opt import pipelines
from mobile_opt.checking import make_inputs
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.reference.interpreter import find_function
from mobile_opt.transforms.flashmem_plan import FlashMemPlanPass, flashmem_problem
from mobile_opt.transforms.flashmem_stream import FlashMemStreamPass

from tests.harness import assert_one_line_error, run_mobile_run
from mobile_opt.tools.cli import MANIFEST

MODELS = Path(__file__).parent / "models"


@pytest.mark.parametrize("width", [1, 5, 64])
@pytest.mark.parametrize("chunk", [16, 48, 1024])
def test_chunk_regions_cover_each_pixel_once(width: int, chunk: int):
    from mobile_opt.backends.opencl.memory import chunk_regions

    height, pixel = 7, 16
    nbytes = width * height * pixel
    seen = np.zeros((height, width), int)
    for k in range(-(-nbytes // chunk)):
        offset_end = 0
        for offset, (x, y), (w, h) in chunk_regions(k, chunk, nbytes, width, pixel):
            assert offset == offset_end  # the regions follow each other in the chunk
            seen[y:y + h, x:x + w] += 1
            offset_end += w * h * pixel
        assert offset_end == min(chunk, nbytes - k * chunk)
    assert (seen == 1).all()


@pytest.fixture(scope="module")
def lowered(pocl_device):
    """vit_tiny lowered for PoCL, its inputs, and preload-all's outputs and peak."""
    from mobile_opt.backends.opencl.executor import CompiledModel

    module = import_onnx(MODELS / "vit_tiny.onnx")
    passes, _ = pipelines.gpu_pipeline(pipelines.GRAPH_PASSES, _device(pocl_device))
    pipelines.apply(module, passes)
    feeds = make_inputs(find_function(module, "main_graph"), {}, 0)
    model = CompiledModel(module, pocl_device)
    return module, feeds, model.run(feeds).outputs, model.memory.peak


def _device(cl_device):
    from mobile_opt.backends.opencl.devices import choose_device

    return choose_device("pocl")


def image(w: int, h: int):
    """A slot of an f32 image of w x h pixels."""
    from mobile_opt.models.storage import Slot

    return Slot(0, "image", w, h, "f32", w * h * 16, False)


def test_weight_pool_shares_objects_between_weights_apart_in_time():
    from mobile_opt.models.storage import weight_pool

    lives = [(image(64, 8), 1, 2), (image(64, 8), 2, 3), (image(64, 8), 3, 4),
             (image(32, 8), 4, 5), (image(8, 64), 5, 6), (image(64, 2), 1, 9)]
    pool, homes = weight_pool(lives)
    # overlapping lives never share; a weight fits in its object
    for i, (slot, load, last) in enumerate(lives):
        home = pool[homes[i]]
        assert home.width >= slot.width and home.height >= slot.height
        for j, (_, load2, last2) in enumerate(lives[:i]):
            if homes[j] == homes[i]:
                assert last2 < load or last < load2
    # 64x8 at 1-2 and 3-4 share, so does 32x8 at 4-5 with 2-3's; the tall 8x64 would
    # grow a 64x8 to 64x64 (more than its own bytes), so it gets its own
    assert homes[0] == homes[2] and homes[3] == homes[1]
    assert pool[homes[4]].width == 8 and pool[homes[4]].height == 64
    assert sum(p.nbytes for p in pool) < sum(s.nbytes for s, _, _ in lives)


def test_kept_objects_spare_the_allocations_made_per_run():
    from mobile_opt.models.storage import churn, kept_objects, weight_pool

    # 64x8 (8192 bytes) and 32x8 weights in turn: made per run within 8192 bytes, each
    # takes the room of the one before (a release and an allocation); one kept 64x8
    # object holds them all
    lives = [(image(64, 8), 1, 2), (image(32, 8), 3, 4), (image(64, 8), 5, 6),
             (image(32, 8), 7, 8)]
    assert churn(lives, 8192) == 8
    assert churn(lives, 8192 + 4096) == 0  # both shapes fit: spare objects serve
    assert churn(lives, 4096) is None
    pool, homes = weight_pool(lives)
    assert len(pool) == 1 and pool[0].nbytes == 8192
    assert kept_objects(lives, pool, homes, 8192) == {0}
    assert kept_objects(lives, pool, homes, 8192 + 4096) == set()  # nothing to spare


def test_the_store_holds_the_packed_weights_and_rejects_another_program(lowered, tmp_path):
    from mobile_opt.backends.opencl.plan import build_plan
    from mobile_opt.backends.opencl.weight_store import (
        WeightStore,
        WeightStoreError,
        weight_pixels,
        write_store,
    )

    module = lowered[0]
    plan = build_plan(module)
    write_store(tmp_path / "w.bin", plan, 4096)
    store = WeightStore(tmp_path / "w.bin")
    store.check(plan)
    for record, pixels in weight_pixels(plan):
        assert np.array_equal(store.pixels(record.value), pixels)
        joined = np.concatenate([store.chunk(record.value, k, 4096)
                                 for k in range(store.entries[record.value]["chunks"])])
        assert joined.tobytes() == pixels.tobytes()
    plan.weights[0].width += 1
    with pytest.raises(WeightStoreError, match="written for another program: weight '.*' has "
                       "width"):
        store.check(plan)
    (tmp_path / "bad.bin").write_bytes(b"not a store")
    with pytest.raises(WeightStoreError, match="not a mobile-opt weight store"):
        WeightStore(tmp_path / "bad.bin")


def test_streamed_runs_match_and_stay_within_random_budgets(lowered, pocl_device, tmp_path,
                                                           monkeypatch):
    """Budgets drawn between the least that works and preload-all's peak."""
    from mobile_opt.backends.opencl import memory
    from mobile_opt.backends.opencl.plan import build_plan
    from mobile_opt.backends.opencl.streaming import StreamingModel
    from mobile_opt.backends.opencl.weight_store import WeightStore, write_store
    from mobile_opt.models import flashmem
    from xdsl.dialects import func

    module, feeds, expected, preload_peak = lowered
    function = next(op for op in module.body.block.ops if isinstance(op, func.FuncOp))
    chunk = 16 * 1024
    problem, _, _ = flashmem_problem(function, 1 << 40, chunk)
    least = flashmem.least_budget(problem, 5, 2).least
    assert least < preload_peak
    rng = random.Random(21)
    streamed_any = kept_any = False
    for budget in [least] + [rng.randint(least, preload_peak) for _ in range(2)]:
        planned = module.clone()
        pipelines.apply(planned, [FlashMemPlanPass(budget_mb=budget / (1 << 20),
                                                   chunk_kb=chunk // 1024, time_limit_s=5,
                                                   workers=2), FlashMemStreamPass()])
        plan = build_plan(planned)
        write_store(tmp_path / "w.bin", plan, chunk)
        # the ring and a discrete GPU's pinned store, its first run's chunks through the
        # ring or straight from the map; memory objects kept across runs as by default, none
        # kept, kept where they spare allocations, and as by default under a run budget of
        # twice preload-all's peak (all kept: they fit); the pinned store registered host
        # memory with its weights at page boundaries, or a mapped buffer with them back to back
        for pinned, direct, keep, run_budget, registered in (
                (False, False, True, budget, True), (True, False, False, budget, False),
                (True, True, None, budget, True), (False, False, True, 2 * preload_peak, True)):
            monkeypatch.setattr(memory, "PINNED_REGISTERED", registered)
            monkeypatch.setattr(memory, "PINNED_ALIGN", mmap.PAGESIZE if registered else 1)
            model = StreamingModel(planned, pocl_device, WeightStore(tmp_path / "w.bin"),
                                   plan=plan, pinned=pinned, keep=keep, budget=run_budget,
                                   direct=direct)
            assert not model.copier.ring if direct else model.copier.ring

            def moved_at(use: bool) -> bool:
                """Whether each streamed weight is placed and written at its first reader
                (else at its load layer and first planned move)."""
                return all(
                    layer == (s.plan.use.data if use else min(s.plan.moves))
                    for layer, moves in model.by_layer.items() for s, _ in moves
                ) and all(layer == (s.plan.use.data if use else s.plan.load.data)
                          for layer, weights in model.loading.items() for s in weights)
            # from the map, the first run writes each weight just before its first reader
            # (the plan moves every chunk before that layer)
            assert moved_at(use=True) == direct or not model.streamed
            streamed_any |= bool(model.streamed)
            # one run, then loaded again (as mobile-run's FIFO does): the next run is cold
            model.run(feeds)
            model.unload()
            model.load()
            for run in range(3):
                outputs = model.run(feeds).outputs
                for name, want in expected.items():
                    np.testing.assert_allclose(outputs[name], want, rtol=0, atol=1e-6)
                # the pinned store and the kept objects come after the first run, not at load
                assert (model.memory.host_pinned > 0) == (pinned and run > 0
                                                          and bool(model.streamed))
                if model.copier.pinned is not None:  # each weight's copy from a page start
                    assert all(o % mmap.PAGESIZE == 0 for o in
                               model.copier.pinned.offsets.values()) or not registered
                if run == 0:
                    assert not model.pool
                elif direct:  # from the pinned store, at the plan's layers again
                    assert moved_at(use=False) and not model.loads_first
            kept_any |= bool(model.pool)
            if keep is False or not model.streamed:
                assert not model.pool
            elif keep and run_budget > preload_peak:
                assert len(model.pool) == len(set(model.home.values())) > 0
            assert model.memory.peak <= run_budget, (model.memory.peak, run_budget)
            assert (model.memory.host_pinned > 0) == (pinned and bool(model.streamed))
            model.unload()
            assert model.memory.resident == model.memory.host_pinned == 0
    assert streamed_any and kept_any


def test_mobile_run_memory_budget_runs_two_models(pocl_device, capsys, tmp_path):
    status, out, err = run_mobile_run(
        [str(MODELS / "vit_tiny.onnx"), str(MODELS / "gpt2_small.onnx"), "--memory-budget",
         "1.3MB", "--chunk-kb", "16", "--time-limit", "5", "--iterations", "2",
         "--save-dir", str(tmp_path)], capsys)
    assert status == 0, out + err
    assert out.count("PASS") == 6  # two rounds streamed and preload-all, two models
    assert "streamed peak over all runs" in out
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != MANIFEST) == [
        "0-vit_tiny.weights", "1-gpt2_small.weights"]


def test_an_infeasible_budget_is_one_line_and_writes_nothing(pocl_device, capsys, tmp_path):
    status, _, err = run_mobile_run(
        [str(MODELS / "vit_tiny.onnx"), "--memory-budget", "0.2MB", "--chunk-kb", "16",
         "--time-limit", "5", "--save-dir", str(tmp_path)], capsys)
    assert_one_line_error(status, err, "vit_tiny.onnx: flashmem-plan: budget 0.20 MB is below "
                          "what layer '/blocks/blocks.0/mlp/mlp.0/MatMul' needs alone")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(("size", "message"), [
    ("200", None), ("1.5GB", None), ("lots", "expects a size"), ("-1MB", "expects"),
    ("99999999999999999999GB", "at most 1.0 PiB"), ("1000000TB", "at most 1.0 PiB"),
])
def test_budget_sizes(size: str, message: str | None):
    from mobile_opt.dialects.limits import LimitError, parse_size
    from mobile_opt.tools.memory_budget import MOST_BUDGET

    if message is None:
        assert parse_size(size, "--memory-budget", MOST_BUDGET) == {"200": 200,
                                                                    "1.5GB": 3 << 29}[size]
    else:
        with pytest.raises(LimitError, match=message):
            parse_size(size, "--memory-budget", MOST_BUDGET)


def test_split_matmul_computes_the_same(tmp_path):
    """flashmem-split's column blocks and Concat give the MatMul's values, by the reference
    interpreter, against onnxruntime on the unsplit model."""
    import onnx
    from mobile_opt.checking import run_onnxruntime
    from mobile_opt.reference.interpreter import run_reference
    from mobile_opt.transforms.flashmem_split import FlashMemSplitPass
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.standard_normal((8, 50)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="head")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 50])], [weight])
    path = tmp_path / "head.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    module = import_onnx(path)
    pipelines.apply(module, [FlashMemSplitPass(max_weight_mb=400 / (1 << 20))])
    assert sum(op.name == "onnx.MatMul" for op in module.walk()) == 4  # 1600 B in 400 B parts
    feeds = {"x": rng.standard_normal((3, 8)).astype(np.float32)}
    got = run_reference(module, feeds)["y"]
    np.testing.assert_allclose(got, run_onnxruntime(path, feeds)["y"], rtol=1e-5, atol=1e-5)


def test_a_plan_without_its_stream_ops_is_refused(lowered, pocl_device, tmp_path):
    """A module that flashmem-plan planned to stream but no flashmem-stream lowered."""
    from mobile_opt.backends.opencl.executor import OpenCLRunError
    from mobile_opt.backends.opencl.plan import build_plan
    from mobile_opt.backends.opencl.streaming import StreamingModel
    from mobile_opt.backends.opencl.weight_store import WeightStore, write_store

    planned = lowered[0].clone()
    pipelines.apply(planned, [FlashMemPlanPass(budget_mb=0.7, chunk_kb=16, time_limit_s=5,
                                               workers=2)])
    plan = build_plan(planned)
    write_store(tmp_path / "w.bin", plan, 16 * 1024)
    with pytest.raises(OpenCLRunError, match="run flashmem-stream after flashmem-plan"):
        StreamingModel(planned, pocl_device, WeightStore(tmp_path / "w.bin"), plan=plan)


def test_mobile_opt_writes_the_weight_store_next_to_the_output(tmp_path, capsys):
    from mobile_opt.backends.opencl.plan import build_plan
    from mobile_opt.backends.opencl.weight_store import WeightStore
    from mobile_opt.tools import mobile_opt
    from xdsl.parser import Parser

    spec = ("select-layouts,onnx-to-texture,texture-to-ocl,"
            "flashmem-plan{budget-mb=0.7 chunk-kb=16 time-limit-s=5.0 workers=2},flashmem-stream")
    with pytest.raises(SystemExit) as done:
        mobile_opt.main([str(MODELS / "vit_tiny.onnx"), "-p", spec, "-o",
                         str(tmp_path / "m.mlir"), "--weight-store", str(tmp_path / "m.weights")])
    assert done.value.code == 0, capsys.readouterr().err
    module = Parser(pipelines.context(), (tmp_path / "m.mlir").read_text()).parse_module()
    store = WeightStore(tmp_path / "m.weights")
    plan = build_plan(module)
    store.check(plan)
    # the streamed weights are in the store, from the constants their stream.loads read
    assert plan.streams and all(s.value in store.entries for s in plan.streams)
    assert f"({len(plan.streams)} streamed)" in plan.summary()
    assert store.chunk_bytes == 16 * 1024
    # before the lowering there is nothing to pack: one line, no files
    with pytest.raises(SystemExit) as done:
        mobile_opt.main([str(MODELS / "vit_tiny.onnx"), "-o", str(tmp_path / "x.mlir"),
                         "--weight-store", str(tmp_path / "x.weights")])
    assert done.value.code == 1
    assert "--weight-store needs a lowered module" in capsys.readouterr().err
    assert not (tmp_path / "x.weights").exists() and not (tmp_path / "x.mlir").exists()


def test_mobile_run_memory_budget_on_lowered_ir(pocl_device, capsys, tmp_path):
    """A lowered `.mlir` module is planned as it is (no second lowering)."""
    from mobile_opt.tools import mobile_opt

    with pytest.raises(SystemExit) as done:
        mobile_opt.main([str(MODELS / "vit_tiny.onnx"), "-p",
                         "select-layouts,onnx-to-texture,texture-to-ocl", "-o",
                         str(tmp_path / "low.mlir")])
    assert done.value.code == 0
    capsys.readouterr()
    status, out, err = run_mobile_run(
        [str(tmp_path / "low.mlir"), "--memory-budget", "1MB", "--chunk-kb", "16",
         "--time-limit", "5", "--iterations", "1"], capsys)
    assert status == 0, err
    peak = re.search(r"streamed peak over all runs: ([\d.]+) MiB of the 1.0 MiB budget", out)
    assert peak and float(peak.group(1)) <= 1.0, out
