"""
`texture-tile`'s configurations of the convolution and row kernels: each thread tile,
with the driver's work group and with a chosen one, computes what ONNX Runtime
computes (on PoCL); the model sees the kernels `onnx-to-texture` emits, each of its
family; and the one-node models they are timed in.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

pytest.importorskip("pyopencl")
ort = pytest.importorskip("onnxruntime")

from xdsl.context import Context  # noqa: E402

from mobile_opt.backends.opencl.devices import choose_device  # noqa: E402
from mobile_opt import pipelines  # noqa: E402
from mobile_opt.backends.opencl.executor import CompiledModel  # noqa: E402
from mobile_opt.tools.tuning import node_name, random_feeds  # noqa: E402
from mobile_opt.checking import relative_error  # noqa: E402
from mobile_opt.checking.tile_search import Case, choose, score  # noqa: E402
from mobile_opt.dialects import ocl  # noqa: E402
from mobile_opt.dialects.texture.tiling import TileConfig  # noqa: E402
from mobile_opt.frontend.onnx_import import import_onnx  # noqa: E402
from mobile_opt.frontend.single_node import (  # noqa: E402
    NODE_NAME,
    save_single_node,
    single_node_model,
)
from mobile_opt.models import texture_kernels  # noqa: E402
from mobile_opt.models.texture_kernels import (  # noqa: E402
    FAMILIES,
    ConvKernel,
    MatMulKernel,
    RowKernel,
)
from mobile_opt.transforms.onnx_to_texture import OnnxToTexturePass  # noqa: E402
from mobile_opt.transforms.select_layouts import SelectLayoutsPass  # noqa: E402
from mobile_opt.transforms.prune_configs import kernel_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def conv(family, op, x, w, stride=1, pad=1, group=1, out_pad=None):
    attrs = {"strides": (stride,) * 2, "pads": (pad,) * 4, "group": group}
    if out_pad is not None:
        attrs["output_padding"] = (out_pad,) * 2
    bias = w[1] * group if op == "ConvTranspose" else w[0]
    return Case(family, op, (x, w, (bias,)), tuple(attrs.items()))


CASES = {
    # ragged: 10 output columns in tiles of 4 and 8
    "conv": conv("conv", "Conv", (1, 8, 10, 10), (12, 8, 3, 3)),
    "conv-s2": conv("conv-s2", "Conv", (1, 4, 11, 11), (8, 4, 5, 5), stride=2, pad=2),
    "depthwise": conv("depthwise", "Conv", (1, 8, 9, 9), (8, 1, 3, 3), stride=2, group=8),
    "deconv": conv("deconv", "ConvTranspose", (1, 6, 5, 5), (6, 4, 3, 3), stride=2,
                   out_pad=1),
    "grouped": conv("grouped", "Conv", (1, 6, 7, 7), (6, 3, 3, 3), group=2),
    "softmax": Case("softmax", "Softmax", ((6, 40),), (("axis", -1),)),
    "logsoftmax": Case("logsoftmax", "LogSoftmax", ((2, 3, 20),), (("axis", -1),)),
    "layernorm": Case("layernorm", "LayerNormalization", ((5, 36), (36,), (36,)),
                      (("axis", -1),)),
}


def _node(module):
    return next(o for o in module.walk() if node_name(o) == "node")


def _run(path, config: TileConfig, feeds, kernel):
    """The node run under `config`, after checking that its launch realises it."""
    module = import_onnx(str(path))
    config.apply(_node(module))
    # the GPU pipeline with its recorded configuration kept, stopped after the lowering
    device = choose_device("pocl")
    passes, lowering = pipelines.gpu_pipeline("onnx-to-texture{buffers=false}", device,
                                              tile=False)
    at = passes.index(lowering)
    pipelines.apply(module, passes[: at + 1])
    (launch,) = [op for op in module.walk() if isinstance(op, ocl.LaunchOp)]
    assert tuple(launch.global_size.get_values()) == kernel.global_size(config)
    local = launch.local_size.get_values() if launch.local_size else None
    assert local == config.group
    pipelines.apply(module, passes[at + 1 :])
    return next(iter(CompiledModel(module, device).run(feeds).outputs.values()))


def _picked(kernel, space: list[TileConfig]) -> list[TileConfig]:
    """Each thread tile with the driver's group, and with its squarest explicit group above 1x1."""
    picked = []
    for tile in kernel.thread_tiles():
        picked.append(TileConfig(tile))
        groups = [c for c in space if c.tile == tile and c.group and min(c.group) > 1]
        if groups:
            picked.append(min(groups, key=lambda c: abs(math.log2(c.group[0] / c.group[1]))))
    return picked


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_tile_computes_what_onnxruntime_does(pocl_device, tmp_path, name):
    case = CASES[name]
    path = case.save(tmp_path)
    module = import_onnx(str(path))
    kernel = kernel_of(_node(module))
    assert kernel is not None
    space = list(texture_kernels.candidates(kernel, 256))
    feeds = random_feeds(module, seed=3)
    want = ort.InferenceSession(str(path)).run(None, feeds)[0]
    picked = _picked(kernel, space)
    assert len({c.tile for c in picked}) == len(list(kernel.thread_tiles()))
    for config in picked:
        gx, gy = kernel.global_size(config)
        if config.group:
            assert gx % config.group[0] == 0 and gy % config.group[1] == 0
        got = _run(path, config, feeds, kernel)
        assert relative_error(got.reshape(want.shape), want) < 1e-4, config.describe()


def test_kernels_the_model_sees():
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        kernels = {n: kernel_of(_node(import_onnx(str(c.save(Path(folder))))))
                   for n, c in CASES.items()}
    conv_kernel = kernels["conv"]
    assert isinstance(conv_kernel, ConvKernel) and conv_kernel.geometry.kind == "blocked"
    assert [t for t in conv_kernel.thread_tiles()] == [(1, 1), (2, 1), (4, 1), (8, 1)]
    assert conv_kernel.global_size(TileConfig((4, 1))) == (3 * 3, 10)  # 3 tiles x 3 blocks
    assert kernels["depthwise"].geometry.kind == "depthwise"
    assert kernels["deconv"].geometry.transposed
    assert list(kernels["grouped"].thread_tiles()) == [(1, 1)]
    assert kernels["softmax"] == RowKernel("Softmax", 6, 40)
    assert [t for t, _ in kernels["softmax"].thread_tiles()] == [1, 2, 4, 8, 10]
    assert kernels["layernorm"].global_size(TileConfig((4, 1))) == (3, 5)
    # wider tiles read fewer weight pixels per output, and hold more registers
    narrow, wide = (conv_kernel.model_inputs(TileConfig((t, 1))) for t in (1, 8))
    assert wide.inputs[1].accesses == narrow.inputs[1].accesses
    assert wide.inputs[0].accesses == 8 * narrow.inputs[0].accesses
    assert wide.footprint > narrow.footprint
    # a row's statistics are read once per work-item: more per item, fewer items
    one, whole = (kernels["softmax"].model_inputs(TileConfig((t, 1))) for t in (1, 10))
    assert one.inputs[0].accesses == 2 * 10 + 1 and whole.inputs[0].accesses == 2 * 10 + 10


def _conv_attrs(stride: int, group: int = 1, out_pad: int | None = None) -> tuple:
    attrs = {"strides": (stride,) * 2, "pads": (1,) * 4, "group": group}
    if out_pad is not None:
        attrs["output_padding"] = (out_pad,) * 2
    return tuple(attrs.items())


@pytest.mark.parametrize("op, shapes, attrs, kind, family", [
    ("MatMul", ((8, 12), (12, 16)), (), MatMulKernel, "matmul"),
    ("Conv", ((1, 8, 10, 10), (8, 8, 3, 3), (8,)), _conv_attrs(1), ConvKernel, "conv"),
    ("Conv", ((1, 8, 10, 10), (8, 8, 3, 3), (8,)), _conv_attrs(2), ConvKernel, "conv-s2"),
    ("Conv", ((1, 8, 9, 9), (8, 1, 3, 3), (8,)), _conv_attrs(1, 8), ConvKernel, "depthwise"),
    ("Conv", ((1, 8, 9, 9), (8, 1, 3, 3), (8,)), _conv_attrs(2, 8), ConvKernel, "depthwise"),
    ("ConvTranspose", ((1, 8, 5, 5), (8, 4, 3, 3), (4,)), _conv_attrs(2, out_pad=1),
     ConvKernel, "conv-transpose-s2"),
    ("ConvTranspose", ((1, 8, 5, 5), (8, 4, 3, 3), (4,)), _conv_attrs(1), ConvKernel, "conv"),
    ("Softmax", ((6, 40),), (("axis", -1),), RowKernel, "softmax"),
    ("LogSoftmax", ((6, 40),), (("axis", -1),), RowKernel, "softmax"),
    ("LayerNormalization", ((5, 36), (36,), (36,)), (("axis", -1),), RowKernel, "layernorm"),
])
def test_kernel_families(tmp_path, op, shapes, attrs, kind, family):
    """Each kernel names its family; stride and depth decide a convolution's."""
    path = save_single_node(tmp_path / "node.onnx", op, shapes, attrs)
    kernel = kernel_of(next(o for o in import_onnx(str(path)).walk()
                            if node_name(o) == NODE_NAME))
    assert isinstance(kernel, kind) and kernel.family == family and family in FAMILIES


def test_single_node_model(tmp_path):
    shapes = ((1, 4, 11, 11), (8, 4, 5, 5), (8,))
    attrs = (("strides", (2, 2)), ("pads", (2, 2, 2, 2)))
    model = single_node_model("Conv", shapes, attrs, name="conv")
    onnx.checker.check_model(model, full_check=True)
    (node,) = model.graph.node
    assert node.name == NODE_NAME and node.op_type == "Conv"
    assert [i.name for i in model.graph.input] == ["X"] and model.graph.name == "conv"
    assert [tuple(w.dims) for w in model.graph.initializer] == list(shapes[1:])
    (output,) = model.graph.output
    dims = [d.dim_value for d in output.type.tensor_type.shape.dim]
    assert dims == [1, 8, (11 + 2 * 2 - 5) // 2 + 1, (11 + 2 * 2 - 5) // 2 + 1]
    path = save_single_node(tmp_path / "named.onnx", "Conv", shapes, attrs)
    saved = onnx.load(str(path))
    assert saved.graph.name == "named"
    assert saved.graph.initializer == model.graph.initializer  # the same seeded weights


def test_tile_on_a_row_op_it_cannot_take_is_one_line(tmp_path):
    from xdsl.utils.exceptions import DiagnosticException

    case = Case("softmax", "Softmax", ((4, 6, 8),), (("axis", 1),))
    module = import_onnx(str(case.save(tmp_path)))
    assert kernel_of(_node(module)) is None  # texture-tile leaves it alone
    TileConfig((2, 1)).apply(_node(module))
    with pytest.raises(DiagnosticException,
                       match="texture.tile needs a reduction over the last axis"):
        SelectLayoutsPass(target="gpu").apply(Context(), module)
        OnnxToTexturePass(remarks=False).apply(Context(), module)


def _bench(script: str, *args: str) -> subprocess.CompletedProcess:
    """`bench/SCRIPT.py ARGS` run as a program, as a user runs it."""
    return subprocess.run([sys.executable, str(REPO / "bench" / f"{script}.py"), *args],
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("args, message", [
    (["--rescore", "/nonexistent/run.json"], "No such file or directory"),
    (["--profile", "nonesuch", "--families", "softmax"], "nonesuch: no such device profile"),
    (["--device", "nonesuch"], "no OpenCL device matches 'nonesuch'"),
    (["--rescore", str(REPO / "bench" / "results" / "tmmodel-pocl.json"), "--predictor",
      "/nonexistent/p.npz"], "/nonexistent/p.npz: no such file"),
])
def test_bench_bad_input_is_one_line(args, message):
    done = _bench("tmmodel", *args)
    assert done.returncode == 1
    err = done.stderr
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_bench_scores_the_retimed_latencies():
    from mobile_opt.models.device_profile import load_profile
    from mobile_opt.models.texture_kernels import MatMulKernel

    kernel, profile = MatMulKernel(64, 64, 64), load_profile("nvidia-h100")
    case = Case("matmul", "MatMul", ((64, 64), (64, 64)))
    space = list(texture_kernels.candidates(kernel, 1024))
    # the scan's times: distinct, one unpruned configuration a lucky 1 ms
    scan = {c: (2.0 + i / len(space), 0.1) for i, c in enumerate(space)}
    picks = choose(kernel, profile, {c: t for c, (t, _) in scan.items()})
    lucky = next(c for c in picks.kept if c.tile not in (picks.base.tile, picks.model.tile))
    scan[lucky] = (1.0, 0.1)
    plain = score(case, kernel, profile, scan)
    assert not plain["retimed"] and plain["exhaustive_choice"] == lucky.describe()
    assert plain["model_over_exhaustive"] == pytest.approx(scan[picks.model][0])
    # timed again, the lucky one is no faster than the model's choice
    again = {picks.model: 1.5, picks.base: 1.6, picks.tile_only: 1.5, lucky: 1.8}
    row = score(case, kernel, profile, scan, again)
    assert row["retimed"] and row["top1"] and row["model_over_exhaustive"] == 1.0
    assert row["scan_model_over_exhaustive"] == plain["model_over_exhaustive"]
    # exhaustive search's own choice, scored the same way: the lucky one, 1.8 against 1.5
    assert plain["search_over_exhaustive"] == 1.0
    assert row["search_over_exhaustive"] == pytest.approx(1.2)
    assert row["latency_ms"]["base"] == pytest.approx(again[picks.base] * 1e3)
    # a re-timing that misses the model's choice (another model) falls back to the scan
    del again[picks.model]
    assert not score(case, kernel, profile, scan, again)["retimed"]


def test_gpu_pipeline_with_and_without_texture_tile(pocl_device, tmp_path):
    """bench/tiling.py's two builds: the lowering's fixed defaults, and TMModel's tiles (of
    the image kernels; PoCL's default, buffers, takes no tiles: asserted too)."""
    path = Case("matmul", "MatMul", ((64, 128), (128, 64))).save(tmp_path)
    device = choose_device("pocl")
    built = {}
    for tile in (False, True):
        module = import_onnx(str(path))
        feeds = random_feeds(module)
        passes, _ = pipelines.gpu_pipeline(
            f"{pipelines.GRAPH_PASSES},onnx-to-texture{{buffers=false}}", device, tile=tile)
        pipelines.apply(module, passes)
        built[tile] = CompiledModel(module, device)
    fixed, tiled = built[False], built[True]
    passes, _ = pipelines.gpu_pipeline(pipelines.GRAPH_PASSES, device)
    assert not any(p.name == "texture-tile" for p in passes)
    assert fixed.source != tiled.source  # TMModel chose other than the fixed defaults
    want, got = fixed.run(feeds).outputs, tiled.run(feeds).outputs
    assert all(relative_error(got[k], v) < 1e-5 for k, v in want.items())


@pytest.mark.parametrize("bench", ["ace", "tiling"])
def test_side_by_side_benches_name_a_missing_device_in_one_line(bench):
    done = _bench(bench, "--device", "nonesuch")
    assert done.returncode == 1
    message = done.stderr
    assert message.startswith(f"bench/{bench}.py: no OpenCL device matches 'nonesuch'")
    assert message.count("\n") == 1


def test_bench_scores_a_learned_pick_beside_tmmodel():
    """A learned model's choice is scored like TMModel's: on the re-timed latencies where
    the re-timing covers it, on the scan's otherwise, with its own tuning time; a second
    one beside it under its own name."""
    from mobile_opt.checking.tile_search import LearnedPick
    from mobile_opt.models.device_profile import load_profile
    from mobile_opt.models.texture_kernels import MatMulKernel

    kernel, profile = MatMulKernel(64, 64, 64), load_profile("nvidia-h100")
    case = Case("matmul", "MatMul", ((64, 64), (64, 64)))
    space = list(texture_kernels.candidates(kernel, 1024))
    scan = {c: (2.0 + i / len(space), 0.1) for i, c in enumerate(space)}
    picks = choose(kernel, profile, {c: t for c, (t, _) in scan.items()})
    other, another = [c for c in picks.kept
                      if c not in (picks.model, picks.base, picks.tile_only)][:2]
    learned = (LearnedPick("cdmpp", other, 0.25), LearnedPick("cdmpp_beside", another, 0.5))
    again = {picks.model: 1.5, picks.base: 1.6, picks.tile_only: 1.5, other: 1.2, another: 1.8}
    row = score(case, kernel, profile, scan, again, learned)
    assert row["retimed"] and row["cdmpp_top1"] and not row["top1"]
    assert row["cdmpp_over_exhaustive"] == 1.0 and row["model_over_exhaustive"] == 1.25
    assert row["cdmpp_tuning_seconds"] == 0.25 and row["latency_ms"]["cdmpp"] == 1200.0
    assert not row["cdmpp_beside_top1"] and row["cdmpp_beside_choice"] == another.describe()
    assert row["cdmpp_beside_over_exhaustive"] == pytest.approx(1.8 / 1.2)
    assert row["cdmpp_beside_tuning_seconds"] == 0.5
    del again[other]
    row = score(case, kernel, profile, scan, again, learned[:1])
    assert not row["retimed"]
    assert row["cdmpp_over_exhaustive"] == pytest.approx(scan[other][0] / min(
        scan[c][0] for c in picks.kept))


def test_bench_rescores_a_predictor_beside_the_shipped_one(tmp_path):
    """bench/tmmodel.py --beside: a second predictor's choices scored in the same run as
    the shipped one's, under `cdmpp_beside_...`. The shipped one beside itself chooses
    alike; another predictor is scored apart."""
    import json

    from mobile_opt.models.cdmpp import shipped_path

    run = _saved_run(tmp_path, ("MatMul 256x128x64", "Softmax 256x64"))
    out = tmp_path / "again.json"
    for beside in (shipped_path("pocl"), shipped_path("nvidia-h200")):
        done = _bench("tmmodel", "--rescore", str(run), "--beside", str(beside),
                      "--out", str(out))
        assert done.returncode == 0, done.stderr
        saved = json.loads(out.read_text())
        summary = saved["summary"]["all"]
        for row in saved["rows"]:
            ratio = row["latency_ms"]["cdmpp_beside"] / row["latency_ms"]["exhaustive"]
            assert row["cdmpp_beside_over_exhaustive"] == pytest.approx(ratio)
        choices = [(r["cdmpp_choice"], r["cdmpp_beside_choice"]) for r in saved["rows"]]
        if beside == shipped_path("pocl"):
            assert all(a == b for a, b in choices)
            assert summary["cdmpp_beside_over_exhaustive_geomean"] == pytest.approx(
                summary["cdmpp_over_exhaustive_geomean"])
        else:
            assert any(a != b for a, b in choices)
        assert "cdmpp_beside_over_exhaustive_geomean" in saved["summary"]["above_noise_floor"]
    done = _bench("tmmodel", "--rescore", str(run), "--no-cdmpp", "--beside",
                  str(shipped_path("pocl")))
    assert done.returncode == 2 and "error: --beside: CDMPP is left out" in done.stderr


def test_held_out_scores_each_choice_over_the_best_timed_again():
    """Each search's choice over the exhaustive best, from the held-out times (not the
    re-timing that named the best); a rescored row keeps those of the picks unchanged."""
    from mobile_opt.checking.tile_search import held_out, kept_held_out

    best, scan_best, model = TileConfig((1, 1), (8, 8)), TileConfig((2, 1)), TileConfig((4, 1))
    chosen = {"exhaustive": best, "search": scan_best, "model": model, "cdmpp": best}
    # timed again in three builds, the scan's best is faster than the re-timing's; a
    # build's slow spell (the third's 9 ms) is left out by the median
    fields = held_out(chosen, [{best: 2e-3, scan_best: 1.5e-3, model: 3e-3},
                               {best: 2.1e-3, scan_best: 1.4e-3, model: 3.2e-3},
                               {best: 1.9e-3, scan_best: 1.6e-3, model: 9e-3}])
    assert fields["held_out_build_ms"]["model"] == pytest.approx([3.0, 3.2, 9.0])
    assert fields["held_out_search_over_exhaustive"] == pytest.approx(0.75)
    assert fields["held_out_model_over_exhaustive"] == pytest.approx(1.6)
    assert fields["held_out_cdmpp_over_exhaustive"] == 1.0
    assert fields["held_out_ms"] == pytest.approx({"exhaustive": 2.0, "search": 1.5,
                                                   "model": 3.2, "cdmpp": 2.0})
    # a pick that no longer launches reads infinite; a best that does not, no ratios
    broken = held_out(chosen, [{best: 2e-3, scan_best: math.inf, model: 3e-3}] * 3)
    assert broken["held_out_search_over_exhaustive"] == math.inf
    assert held_out(chosen, [{best: math.inf, scan_best: 1e-3, model: 3e-3}] * 3) == {}
    saved = {"exhaustive_choice": best.describe(), "model_choice": model.describe(),
             "cdmpp_choice": best.describe(), "latency_ms": {"exhaustive": 1.5},
             "configs": [{"config": c.describe(), "ms": ms, "pruned": None, "retimed_ms": again}
                         for c, ms, again in ((best, 1.1, 1.5), (scan_best, 1.0, 1.6),
                                              (model, 1.2, 1.7))]} | fields
    assert kept_held_out(saved, saved) == fields
    # another predictor chooses otherwise: its held-out time is not the one then taken
    again = saved | {"cdmpp_choice": model.describe()}
    kept = kept_held_out(saved, again)
    assert "held_out_cdmpp_over_exhaustive" not in kept and "cdmpp" not in kept["held_out_ms"]
    assert kept["held_out_model_over_exhaustive"] == pytest.approx(1.6)
    # another best of the same re-timed time (a tie, broken otherwise): kept
    tie = saved | {"exhaustive_choice": scan_best.describe(), "configs": [
        c | {"retimed_ms": 1.5} for c in saved["configs"]]}
    assert kept_held_out(saved, tie)["held_out_ms"] == fields["held_out_ms"]
    # a faster best (another profile's pruning): nothing is kept
    assert kept_held_out(saved, saved | {"latency_ms": {"exhaustive": 1.4}}) == {}
    assert kept_held_out({}, saved) == {}


def test_rescoring_keeps_the_tuning_times_of_choices_made_alike():
    """A rescored row keeps the run's tuning time of a pick that chooses as the run did
    (timed beside the device), and takes its own for one that chooses otherwise."""
    from mobile_opt.checking.tile_search import kept_tuning

    saved = {"model_choice": "T=1x1 G=8x8", "model_tuning_seconds": 0.5,
             "cdmpp_choice": "T=2x1 G=8x8", "cdmpp_tuning_seconds": 3.0}
    again = {"model_choice": "T=1x1 G=8x8", "model_tuning_seconds": 0.9,
             "cdmpp_choice": "T=4x1 G=8x8", "cdmpp_tuning_seconds": 7.0}
    assert kept_tuning(saved, again) == {"model_tuning_seconds": 0.5}
    assert kept_tuning(saved, {}) == {} and kept_tuning({}, again) == {}


def test_held_out_interval_spans_the_geomean_of_resampled_kernels():
    """The bootstrap interval of a geometric mean: a point where all kernels agree, and
    about the geomean, wider with fewer kernels of the same spread, where they do not."""
    from mobile_opt.checking.tile_search import geomean, interval

    assert interval([1.1] * 5) == pytest.approx([1.1, 1.1])
    spread = [0.9, 1.0, 1.05, 1.2, 1.3, 1.0]
    low, high = interval(spread)
    assert low < geomean(spread) < high
    wide, narrow = interval(spread[:3]), interval(spread * 4)
    assert wide[1] - wide[0] > 0 and narrow[1] - narrow[0] < high - low
    assert interval(spread) == [low, high]  # a fixed seed: a rescoring gives the same


def test_bench_times_the_choices_again_held_out(pocl_device, tmp_path):
    """bench/tmmodel.py on PoCL: after the re-timing, each search's choice is built and
    timed once more, and scored over the re-timing's best as then timed; summarised over
    all kernels and those of 10 µs or more, and kept by a rescoring that chooses alike."""
    import json

    out = tmp_path / "run.json"
    done = _bench("tmmodel", "--families", "softmax", "--cases", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    run = json.loads(out.read_text())
    (row,) = run["rows"]
    choices, ms = row["held_out_choices"], row["held_out_ms"]
    assert choices["exhaustive"] == row["exhaustive_choice"]
    assert choices["model"] == row["model_choice"] and choices["cdmpp"] == row["cdmpp_choice"]
    retimed = {c["config"]: c["retimed_ms"] for c in row["configs"] if c["retimed_ms"]}
    assert choices["exhaustive"] == min(retimed, key=retimed.__getitem__)
    for name in ("search", "model", "cdmpp"):
        assert row[f"held_out_{name}_over_exhaustive"] == pytest.approx(
            ms[name] / ms["exhaustive"])
        assert run["summary"]["all"][f"held_out_{name}_over_exhaustive_geomean"] == (
            pytest.approx(row[f"held_out_{name}_over_exhaustive"]))
        # each choice timed in three builds, its time their median
        builds = row["held_out_build_ms"][name]
        assert len(builds) == 3 and ms[name] == pytest.approx(sorted(builds)[1])
    bound = run["summary"]["launch_bound_or_more"]
    assert bound["floor_s"] == 1e-5
    assert bound["kernels"] == int(row["latency_ms"]["exhaustive"] >= 1e-2)
    again = tmp_path / "again.json"
    done = _bench("tmmodel", "--rescore", str(out), "--no-cdmpp", "--out", str(again))
    assert done.returncode == 0, done.stderr
    (rescored,) = json.loads(again.read_text())["rows"]
    assert rescored["held_out_model_over_exhaustive"] == row["held_out_model_over_exhaustive"]
    assert rescored["held_out_build_ms"]["model"] == row["held_out_build_ms"]["model"]
    # choosing as the run did, so the run's tuning time (its own host's) stays
    assert rescored["model_tuning_seconds"] == row["model_tuning_seconds"]
    assert "held_out_cdmpp_over_exhaustive" not in rescored


def _saved_run(tmp_path, kernels: tuple[str, ...], **change) -> Path:
    """PoCL's saved bench/tmmodel.py run cut to `kernels` (and its fields `change`d)."""
    import json

    run = json.loads((REPO / "bench" / "results" / "tmmodel-pocl.json").read_text())
    run["rows"] = [r for r in run["rows"] if r["kernel"] in kernels]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run | change))
    return path


def test_recheck_times_a_saved_runs_choices_again(pocl_device, tmp_path):
    """bench/tmmodel_recheck.py builds and re-times every configuration a saved run
    re-timed, in each pass, and scores each pick over the best, then (the run's own
    ratio) and now; the summary joins the passes."""
    import json
    import statistics

    saved = _saved_run(tmp_path, ("MatMul 16x16x16", "Softmax 256x64",
                                  "LayerNormalization 64x64"))
    run = json.loads(saved.read_text())
    run["rows"][-1]["retimed"] = False  # an older run's row: left out
    saved.write_text(json.dumps(run))
    out = tmp_path / "recheck.json"
    done = _bench("tmmodel_recheck", str(saved), "--passes", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["not_retimed_then"] == 1
    then = {r["kernel"]: r for r in run["rows"][:-1]}
    moved, cdmpp, against = [], [], []
    for one in result["passes"]:
        assert [r["kernel"] for r in one["rows"]] == list(then)
        for row in one["rows"]:
            earlier = then[row["kernel"]]
            retimed = {c["config"]: c["retimed_ms"] for c in earlier["configs"] if c["retimed_ms"]}
            assert {c["config"]: c["then_ms"] for c in row["configs"]} == retimed
            now = {c["config"]: c["now_ms"] for c in row["configs"]}
            assert all(math.isfinite(t) and t > 0 for t in now.values())
            picks = row["picks"]
            assert picks["exhaustive"] == min(retimed, key=retimed.get)
            assert (picks["tmmodel"], picks["cdmpp"]) == (earlier["model_choice"],
                                                          earlier["cdmpp_choice"])
            assert row["then_over_best"]["cdmpp"] == pytest.approx(earlier["cdmpp_over_exhaustive"])
            for pick, config in picks.items():
                assert row["now_over_best"][pick] == pytest.approx(now[config] / min(now.values()))
            moved += [abs(math.log(now[c] / retimed[c])) for c in now]
        cdmpp.append(statistics.geometric_mean(r["now_over_best"]["cdmpp"] for r in one["rows"]))
        against.append(statistics.geometric_mean(
            r["now_over_best"]["cdmpp"] / r["now_over_best"]["exhaustive"] for r in one["rows"]))
    summary = result["summary"]
    assert summary["passes"] == 2 and summary["configurations"] * 2 == len(moved)
    assert summary["run_to_run_spread"] == pytest.approx(statistics.median(moved))
    assert summary["all"]["exhaustive_then_geomean"] == 1.0
    assert summary["all"]["cdmpp_now_geomean"] == pytest.approx(statistics.mean(cdmpp))
    assert summary["all"]["cdmpp_now_geomean_range"] == pytest.approx(sorted(cdmpp))
    assert summary["all"]["cdmpp_over_exhaustive_now_geomean"] == pytest.approx(
        statistics.mean(against))
    assert summary["best_in_next_pass_geomean"] >= 1.0
    assert out.with_suffix(".png").is_file()


@pytest.mark.parametrize("change, message", [
    ({"profile": "nvidia-h200"}, "measured on a device of profile nvidia-h200, not "),
    ({"rescored": True}, "a rescored run, whose times are another run's"),
    ({"rows": []}, "no row of it was re-timed"),
])
def test_recheck_of_another_devices_run_is_one_line(pocl_device, tmp_path, change, message):
    saved = _saved_run(tmp_path, ("MatMul 16x16x16",), **change)
    out = tmp_path / "recheck.json"
    done = _bench("tmmodel_recheck", str(saved), "--out", str(out))
    assert done.returncode == 1 and not out.exists()
    assert done.stderr.count("\n") == 1 and message in done.stderr
    assert done.stderr.startswith("bench/tmmodel_recheck.py: error: ")


@pytest.mark.parametrize("text, message", [
    (None, "No such file or directory"),
    ("{", "Expecting property name"),
    ("[]", "not a bench/tmmodel.py run"),
    ('{"rows": []}', "not a bench/tmmodel.py run"),
])
def test_recheck_of_no_run_is_one_line(tmp_path, text, message):
    path = tmp_path / "run.json"
    if text is not None:
        path.write_text(text)
    done = _bench("tmmodel_recheck", str(path), "--device", "nonesuch")
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("text", ["[]", '{"rows": []}', '{"device": "d", "host": "h", '
                                  '"profile": "pocl", "rows": 3}'])
def test_rescore_of_no_run_is_one_line(tmp_path, text):
    """`--rescore` of a file that is no saved run: one line naming it, no output."""
    path, out = tmp_path / "run.json", tmp_path / "again.json"
    path.write_text(text)
    done = _bench("tmmodel", "--rescore", str(path), "--out", str(out))
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and not out.exists()
    assert f"{path}: not a bench/tmmodel.py run" in done.stderr
    assert "Traceback" not in done.stderr
