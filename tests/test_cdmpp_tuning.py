"""CDMPP as texture-tile's cost model, and the pieces of its training and fine-tuning that
need no torch: the within-task term, CMD and the KMeans task sampler (Algorithm 1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mobile_opt.checking.tile_search import Case, ranked_first
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.frontend.single_node import NODE_NAME
from mobile_opt.models import texture_kernels
from mobile_opt.models.cdmpp import MEMBERS, Ensemble, Predictor, ensemble_arrays, shipped_path
from mobile_opt.models.cdmpp_features import compact_ast
from mobile_opt.models.device_profile import load_profile, texture_constants
from mobile_opt.tools.mobile_learn import (
    InputError,
    cmd,
    kmeans_tasks,
    load_dataset,
    main,
    pick_over_best,
    random_tasks,
    splits_with_denser,
    with_denser,
    within_task_error,
)
from mobile_opt.tools.tuning import node_name
from mobile_opt.transforms.cdmpp_cost import CdmppCost, single_node_module
from mobile_opt.transforms.prune_configs import HardwareLimits, kernel_of, surviving
from mobile_opt.transforms.texture_tile import TextureTilePass

BENCH = Path(__file__).resolve().parents[1] / "bench"
DATASET = str(BENCH / "data" / "cdmpp-pocl.npz")
H200_DENSER = str(BENCH / "data" / "cdmpp-nvidia-h200-denser.npz")

CASES = [
    Case("conv", "Conv", ((1, 16, 20, 20), (32, 16, 3, 3), (32,)), (("pads", (1, 1, 1, 1)),)),
    Case("matmul", "MatMul", ((96, 128), (128, 64))),
    Case("softmax", "Softmax", ((64, 300),), (("axis", -1),)),
]


def _node(case: Case, folder: Path):
    module = import_onnx(str(case.save(folder)))
    return module, next(op for op in module.walk() if node_name(op) == NODE_NAME)


def _cost(node, profile: str = "pocl") -> CdmppCost:
    limits = HardwareLimits.of(load_profile(profile))
    return CdmppCost(Predictor.shipped(profile), load_profile(profile), profile, node, True,
                     limits.max_image)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.op)
def test_the_cost_model_sees_the_kernels_that_run(case, tmp_path, pocl_device):
    """The kernels the cost model lowers a configuration to are those mobile-tune builds and
    runs for it, to the last feature (with the group each is launched in)."""
    from mobile_opt.backends.opencl.devices import choose_device
    from mobile_opt.tools.tuning import time_kernels

    module, node = _node(case, tmp_path)
    limits = HardwareLimits.of(load_profile("pocl"))
    space = list(texture_kernels.candidates(kernel_of(node, limits.max_image),
                                            limits.max_group))
    configs = [space[i] for i in sorted(np.random.default_rng(1).choice(len(space), 5, False))]
    model = _cost(node)
    timed = list(time_kernels(module, NODE_NAME, configs, choose_device("pocl"), repeat=1))
    assert {t.config for t in timed} == set(configs)
    for timing in timed:
        theirs = compact_ast(timing.kernel, timing.global_size, timing.local_size, model._cores)
        mine = [k.launched(g, local, model._cores) for k, g, local in model.kernels(timing.config)]
        assert any(np.array_equal(a.leaves, theirs.leaves)
                   and np.array_equal(a.order, theirs.order) for a in mine), timing.config


def test_one_selection_per_layout_lowers_every_build_as_alone(tmp_path):
    """The cost model runs select-layouts once per streamed layout; every build of a
    product's space (layouts, blocked plans) still lowers to the features of the build with
    the whole pipeline of its own."""
    from dataclasses import replace

    from xdsl.context import Context

    from mobile_opt.transforms.cdmpp_cost import lowering_passes, node_kernels

    _, node = _node(CASES[1], tmp_path)
    limits = HardwareLimits.of(load_profile("pocl"))
    space = texture_kernels.candidates(kernel_of(node, limits.max_image), limits.max_group)
    builds = list(dict.fromkeys(replace(c, group=None) for c in space))
    assert len({(b.layout, b.plan is None) for b in builds}) > 2
    model = _cost(node)
    for build in builds:
        module = single_node_module(node)
        build.apply(next(op for op in module.walk() if op.name == node.name))
        for p in lowering_passes("pocl", limits.max_image, True):
            p.apply(Context(allow_unregistered=True), module)
        alone = [compact_ast(*k, model._cores) for k in node_kernels(module, model._label)]
        mine = [k.launched(g, local, model._cores) for k, g, local in model.kernels(build)]
        assert [a.leaves.tolist() for a in alone] == [a.leaves.tolist() for a in mine], build


def test_texture_tile_takes_the_least_predicted_latency(tmp_path):
    """cost-model=cdmpp records, for each op, the candidate the predictor rates fastest;
    the predictions differ across the space (the choice is no default)."""
    module, node = _node(CASES[1], tmp_path)
    limits = HardwareLimits.of(load_profile("pocl"))
    space = list(texture_kernels.candidates(kernel_of(node, limits.max_image),
                                            limits.max_group))
    costs = {c: _cost(node).cost(c) for c in space}
    assert len({round(v, 9) for v in costs.values()}) > len(space) // 4
    TextureTilePass(device="pocl", cost_model="cdmpp").apply(None, module)
    from mobile_opt.dialects.texture.tiling import TileConfig

    chosen = TileConfig.of(next(op for op in module.walk() if node_name(op) == NODE_NAME))
    assert chosen == min(costs, key=costs.get)


@pytest.mark.parametrize("weights", ["not a zip", "older"])
def test_texture_tile_unreadable_predictor_is_one_diagnostic(weights, tmp_path, monkeypatch):
    """A shipped weights file that is no npz, or one of another version's leaf fields: one
    diagnostic naming the file, not a traceback."""
    from xdsl.utils.exceptions import DiagnosticException

    from mobile_opt.models import cdmpp

    path = tmp_path / "cdmpp-pocl.npz"
    if weights == "older":
        arrays = dict(np.load(shipped_path("pocl")))
        arrays["embed.weight"] = arrays["embed.weight"][:, :-2]
        np.savez(path, **arrays)
    else:
        path.write_text(weights)
    monkeypatch.setattr(cdmpp, "WEIGHTS_DIR", tmp_path)
    module, _ = _node(CASES[1], tmp_path)
    with pytest.raises(DiagnosticException, match=f"predictor {path} is unreadable"):
        TextureTilePass(device="pocl", cost_model="cdmpp").apply(None, module)


def test_single_node_module_keeps_constants_and_inputs(tmp_path):
    module, node = _node(CASES[0], tmp_path)
    alone = single_node_module(node)
    alone.verify()
    ops = [op.name for op in alone.walk()]
    assert ops.count("onnx.Weight") == 2 and ops.count("onnx.Conv") == 1
    function = next(op for op in alone.walk() if op.name == "func.func")
    assert [a.type for a in function.body.block.args] == [node.operands[0].type]


def test_within_task_error_sees_the_order_not_the_scale():
    """A prediction off by one factor over the whole task costs nothing (tuning compares
    within it); one that swaps two configurations does."""
    actual = np.log([2.0, 3.0, 5.0])
    assert within_task_error(actual + 0.7, actual) == pytest.approx(0)
    swapped = within_task_error(np.log([3.0, 2.0, 5.0]), actual)
    assert swapped == pytest.approx(2 * np.log(1.5) ** 2 / 3)
    assert within_task_error(actual * 2, actual) > 0  # spread stretched


def test_cmd_is_zero_alike_and_grows_with_the_shift():
    rng = np.random.default_rng(0)
    a = np.tanh(rng.standard_normal((4000, 6)) * 0.3)
    assert cmd(a, a) == 0
    gaps = [cmd(a, np.clip(a + shift, -1, 1)) for shift in (0.05, 0.2, 0.5)]
    assert 0 < gaps[0] < gaps[1] < gaps[2]
    # the same mean, another spread: the higher moments tell them apart
    assert cmd(a, a * 0.5) > 0.01


def test_kmeans_takes_one_task_per_cluster_largest_first():
    """Three clusters of tasks' kernels, the largest first: the sampler takes the task at
    the heart of each (one task per cluster, never two of one), where random choice may
    take two of the same cluster."""
    rng = np.random.default_rng(0)
    centres = {0: (0.0, 0.0), 1: (5.0, 5.0), 2: (-5.0, 5.0)}
    latents, task = [], []
    for t in range(12):
        cluster = 0 if t < 6 else (1 if t < 9 else 2)
        spread = 0.1 if t in (2, 7, 10) else 1.0  # the tasks nearest their centre
        latents.append(np.asarray(centres[cluster]) + spread * rng.standard_normal((20, 2)))
        task += [t] * 20
    latents, task = np.concatenate(latents), np.asarray(task)
    chosen = kmeans_tasks(latents, task, 3, seed=0)
    assert chosen[0] == 2 and set(chosen[1:]) == {7, 10}
    drawn = random_tasks(task, 3, 1)
    assert len(set(drawn)) == 3 and set(drawn) <= set(range(12))


def test_kmeans_over_features_takes_distinct_tasks_of_the_dataset():
    """Algorithm 1 over the pooled features of PoCL's dataset, of kernels or of tasks: as
    many distinct tasks as asked, all of them the candidates', the same again for the same
    seed."""
    from mobile_opt.tools.mobile_learn import choose_tasks, features_of, load_dataset

    data = load_dataset(Path(DATASET))
    candidates = np.flatnonzero(np.char.startswith(data["source"], "random:"))[:3000]
    points = features_of(data, candidates)
    assert points.shape[0] == len(candidates) and np.isfinite(points).all()
    for sampler in ("kmeans", "kmeans-task"):
        chosen = choose_tasks(sampler, {}, data, candidates, 6, seed=0)
        assert len(set(chosen)) == 6 and set(chosen) <= set(data["task"][candidates].tolist())
        assert choose_tasks(sampler, {}, data, candidates, 6, seed=0, points=points) == chosen
    # a task is one point: tasks of many kernels do not take the clusters over
    by_task = choose_tasks("kmeans-task", {}, data, candidates, 6, seed=0)
    assert by_task != choose_tasks("kmeans", {}, data, candidates, 6, seed=0)


def test_mobile_learn_adapt_bad_input_is_one_line(tmp_path, capsys):
    """A missing model, more tasks than the dataset has, or an ensemble to fine-tune: one
    line naming the file, exit 1, before torch is needed."""
    out = str(tmp_path / "o.npz")
    ensemble = tmp_path / "ensemble.npz"
    pocl = dict(np.load(shipped_path("pocl")))
    np.savez(ensemble, **ensemble_arrays([pocl, pocl]))
    for argv, name, why in (
        ([str(tmp_path / "none.npz"), DATASET], "none.npz", "no such file"),
        ([str(shipped_path("pocl")), DATASET, "--tasks", "100000"], "cdmpp-pocl.npz",
         "--tasks must be"),
        ([str(ensemble), DATASET], "ensemble.npz", "an ensemble"),
    ):
        assert main(["adapt", *argv, "-o", out]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("mobile-learn: error: ")
        assert name in err[0] and why in err[0]
    assert not (tmp_path / "o.npz").exists()


def test_an_ensemble_predicts_its_members_geometric_mean(tmp_path):
    """An ensemble's weights file (two shipped predictors as members) loads as an
    `Ensemble`, which checks against torch as its members do and predicts the geometric
    mean of their latencies; one of no members is unreadable."""
    from mobile_opt.tools.mobile_learn import load_dataset

    arrays = [dict(np.load(shipped_path(p))) for p in ("pocl", "nvidia-h200")]
    path = tmp_path / "ensemble.npz"
    np.savez(path, **ensemble_arrays(arrays))
    ensemble = Predictor.load(path)
    assert isinstance(ensemble, Ensemble) and len(ensemble.members) == 2
    assert ensemble.check() < 1e-4
    data = load_dataset(Path(DATASET))
    asts, device = data["asts"][:40], data["device_features"]
    alone = [Predictor.of_arrays(a).seconds_of(asts, device) for a in arrays]
    assert not np.allclose(alone[0], alone[1])
    assert np.allclose(ensemble.seconds_of(asts, device), np.sqrt(alone[0] * alone[1]))
    with pytest.raises(ValueError, match="no predictors"):
        Predictor.of_arrays({MEMBERS: np.asarray(0)})


@pytest.mark.parametrize("args", [
    ["{tmp}/none.npz"], [DATASET, "--adapt-from", "{tmp}/bad.npz", DATASET],
    [DATASET, "--adapt-from", str(shipped_path("pocl")), DATASET, "--denser", "{tmp}/bad.npz"],
    [DATASET, "--adapt-from", str(shipped_path("pocl")), DATASET, "--denser", H200_DENSER]])
def test_bench_cdmpp_bad_input_is_one_line(args, tmp_path):
    """bench/cdmpp.py with a dataset or predictor it cannot read: one line, exit 1, and no
    results file (it reads its inputs before it trains, so torch is not needed here)."""
    (tmp_path / "bad.npz").write_text("not a zip")
    out = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, str(Path(DATASET).parents[2] / "bench" / "cdmpp.py"),
         *[a.format(tmp=tmp_path) for a in args], "--out", str(out)],
        capture_output=True, text=True)
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("bench/cdmpp.py: error: ")
    assert not out.exists()


def test_rows_under_the_noise_floor_are_flagged_and_left_out():
    """bench/tmmodel.py's summary above the device's noise floor: the rows whose exhaustive
    best is under it are flagged and left out (no floor: none)."""
    from mobile_opt.checking.tile_search import above_floor

    rows = [{"latency_ms": {"exhaustive": ms}, "model_over_exhaustive": model,
             "cdmpp_over_exhaustive": learned, "search_over_exhaustive": search}
            for ms, model, learned, search in ((0.001, 3.0, 2.0, 1.5), (1.0, 1.1, 1.2, 1.0),
                                               (2.0, 1.1, 1.2, 1.0))]
    summary = above_floor(rows, 1e-5)
    assert [r["under_noise_floor"] for r in rows] == [True, False, False]
    assert summary == {"noise_floor_s": 1e-5, "kernels": 2,
                       "model_over_exhaustive_geomean": pytest.approx(1.1),
                       "cdmpp_over_exhaustive_geomean": pytest.approx(1.2),
                       "search_over_exhaustive_geomean": pytest.approx(1.0)}
    assert above_floor(rows, None)["kernels"] == 3


@pytest.mark.parametrize("args, option", [(["--adapt-curve", "25,many"], "--adapt-curve"),
                                          (["--adapt-curve", "25,50"], "--adapt-curve"),
                                          (["--samplers", "kmeans,best"], "--samplers"),
                                          (["--random-only", "--adapt-only"], "--random-only"),
                                          (["--members", "0"], "--members")])
def test_bench_cdmpp_bad_options_are_usage_errors(args, option, tmp_path):
    """A curve's counts that are not numbers, a curve with no device to adapt from, a
    sampler that does not exist, or two parts each alone: a usage error naming the option
    (exit 2) before any dataset is read, and no results file."""
    out = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, str(Path(DATASET).parents[2] / "bench" / "cdmpp.py"), DATASET,
         *args, "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 2
    assert f"error: {option}:" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


def _denser(data: dict) -> dict:
    """Another run of tasks 13 and 6 of the dataset: rows 0 and 3 rechecked, three new
    configurations (two of task 13, one of task 6)."""
    specs = json.loads(str(data["tasks"]))
    rows = [*np.flatnonzero(data["task"] == 13)[:3], *np.flatnonzero(data["task"] == 6)[:2]]
    config = data["config"][rows].copy()
    config[[1, 2, 4]] = ["new a", "new b", "new c"]
    return {"tasks": np.asarray(json.dumps([specs[13], specs[6]])),
            "task": np.asarray([0, 0, 0, 1, 1]), "config": config,
            "device_features": data["device_features"],
            "asts": [data["asts"][i] for i in rows],
            **{k: data[k][rows] for k in ("latency", "spread", "source", "family")}}


def test_denser_kernels_join_their_tasks_less_the_rechecked():
    """Another run's configurations of a dataset's tasks (`bench/cdmpp_data.py --denser`)
    join it after its own kernels, on its task indices, marked `denser`; the configurations
    it has (that run's rechecks) are left out, and the new kernels of a task the benchmark
    holds out are held out too; a task it lacks joins its task list. Another device: one
    line."""
    data = load_dataset(Path(DATASET))
    data["benchmark"] = data["task"] == 6
    denser = _denser(data)
    more = with_denser(data, denser, Path("d.npz"))
    n = len(data["latency"])
    assert len(more["latency"]) == len(more["asts"]) == n + 3
    assert more["denser"].tolist() == [False] * n + [True] * 3
    assert more["task"][n:].tolist() == [13, 13, 6]
    assert more["config"][n:].tolist() == ["new a", "new b", "new c"]
    assert more["asts"][n] is denser["asts"][1]
    assert more["benchmark"][n:].tolist() == [False, False, True]
    # a task the dataset lacks (`bench/cdmpp_data.py --focus`) joins its list, all of
    # its kernels new
    specs = json.loads(str(data["tasks"]))
    lacking = denser | {"tasks": np.asarray(json.dumps([specs[13], {"op": "Relu"}]))}
    more = with_denser(data, lacking, Path("d.npz"))
    assert more["task"][n:].tolist() == [13, 13, len(specs), len(specs)]
    assert json.loads(str(more["tasks"])) == specs + [{"op": "Relu"}]
    assert more["benchmark"][n:].tolist() == [False] * 4
    with pytest.raises(InputError, match="d.npz: measured on another device"):
        with_denser(data, denser | {"device_features": data["device_features"] + 1},
                    Path("d.npz"))


def test_denser_kernels_only_train_and_leave_the_split_as_it_was():
    """A split with another run's kernels (`bench/cdmpp.py --denser`) has the same
    validation and test kernels as without them; its training kernels gain the new steady
    ones, less those the benchmark or the split holds out."""
    data = load_dataset(Path(DATASET))
    data["benchmark"] = data["task"] == 6
    denser = _denser(data)
    denser["spread"] = np.asarray([0.01, 0.01, 0.5, 0.01, 0.01])  # "new b" unsteady
    more = with_denser(data, denser, Path("d.npz"))
    n = len(data["latency"])
    for hold_out, added in (([], [n]), ([str(data["source"][data["task"] == 13][0])], [])):
        same, parts = splits_with_denser(data, None, hold_out, 0)
        merged, with_more = splits_with_denser(data, more, hold_out, 0)
        assert same is data and merged is more
        for part in ("valid", "test"):
            assert with_more[part].tolist() == parts[part].tolist()
        assert with_more["train"].tolist() == parts["train"].tolist() + added


def test_cdmpp_data_denser_times_configurations_a_task_lacks(tmp_path, pocl_device):
    """bench/cdmpp_data.py --denser: a listed task of the dataset gets configurations it
    lacks, up to --configs with its own, and --recheck of its own again. Bad input is one
    line, exit 1, and no file."""
    listed, out = tmp_path / "tasks.json", tmp_path / "more.npz"
    listed.write_text("[13]")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(BENCH / "cdmpp_data.py"), "--device", "pocl",
                               "--denser", DATASET, "--task-list", str(listed), *args],
                              capture_output=True, text=True)

    done = run("--configs", "36", "--recheck", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    base, more = np.load(DATASET), np.load(out)
    known = set(base["config"][base["task"] == 13].tolist())
    configs = set(more["config"].tolist())
    assert len(configs - known) == 36 - len(known) and len(configs & known) == 2
    assert json.loads(str(more["tasks"])) == [json.loads(str(base["tasks"]))[13]]
    (tmp_path / "bad.json").write_text("[13, 100000]")
    for args, says in ((["--out", DATASET], "name another --out"),
                       (["--task-list", str(tmp_path / "bad.json")], "not a list of task"),
                       (["--task-list", str(tmp_path / "none.json")], "not a readable task"),
                       (["--denser", H200_DENSER], "measured on a device of another profile")):
        done = run(*args if "--out" in args else [*args, "--out", str(tmp_path / "no.npz")])
        assert done.returncode == 1 and says in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "no.npz").exists()


def test_cdmpp_data_families_draws_random_tasks_of_those_alone(tmp_path, pocl_device):
    """bench/cdmpp_data.py --families: the random tasks come from those families alone; an
    unknown family is a usage error naming the option, and no file."""
    out = tmp_path / "some.npz"

    def run(families: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(BENCH / "cdmpp_data.py"), "--device", "pocl",
                               "--models", "", "--families", families, "--random", "2",
                               "--configs", "2", "--out", str(out)],
                              capture_output=True, text=True)

    done = run("softmax,relu")
    assert done.returncode == 2 and "error: --families: unknown relu" in done.stderr
    assert not out.exists()
    done = run("softmax")
    assert done.returncode == 0, done.stderr
    data = np.load(out)
    assert set(data["source"].tolist()) == {"random:softmax"} and len(data["latency"]) > 0


def test_ranked_first_holds_each_models_choice_first(tmp_path):
    """`ranked_first`: the predictor's and TMModel's fastest `count` of the pruned space,
    the predictor's first; so each model's own choice is among them."""
    profile = load_profile("pocl")
    limits = HardwareLimits.of(profile)
    _, node = _node(CASES[1], tmp_path)
    kernel = kernel_of(node, limits.max_image)
    space = list(texture_kernels.candidates(kernel, limits.max_group))
    kept = surviving(limits, kernel, space)
    top = ranked_first(node, kernel, profile, "pocl", Predictor.shipped("pocl"), space, 3)
    assert 3 <= len(top) <= 6 and len(set(top)) == len(top) and set(top) <= set(kept)
    assert top[0] == _cost(node).choose(kept)
    analytic = lambda c: texture_kernels.predicted_cost(  # noqa: E731
        texture_constants(profile), kernel, c)
    assert min(map(analytic, top)) == min(map(analytic, kept))


def test_cdmpp_data_focus_starts_new_tasks_with_the_models_top(tmp_path, pocl_device):
    """bench/cdmpp_data.py --focus N: each new task's configurations hold the N that the
    shipped predictor and TMModel each rank fastest (`ranked_first`), random ones after up
    to --configs; no task that the device's dataset has. Bad options are usage errors, and
    no file."""
    out = tmp_path / "focus.npz"

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(BENCH / "cdmpp_data.py"), "--device", "pocl",
                               "--models", "", "--families", "softmax", *args,
                               "--out", str(out)], capture_output=True, text=True)

    for args, says in ((["--focus", "-1"], "--focus: not a count"),
                       (["--focus", "2", "--top-up"], "--focus: samples new tasks only")):
        done = run(*args)
        assert done.returncode == 2 and says in done.stderr and not out.exists()
    done = run("--random", "3", "--focus", "2", "--configs", "8")
    assert done.returncode == 0, done.stderr
    data, profile = np.load(out), load_profile("pocl")
    specs = json.loads(str(data["tasks"]))
    known = [{k: v for k, v in t.items() if k != "source"}
             for t in json.loads(str(np.load(DATASET)["tasks"]))]
    assert specs and not [s for s in specs if {k: v for k, v in s.items() if k != "source"}
                          in known]
    for index, spec in enumerate(specs):
        _, node = _node(Case.of_spec("softmax", spec), tmp_path)
        kernel = kernel_of(node, HardwareLimits.of(profile).max_image)
        space = list(texture_kernels.candidates(kernel, HardwareLimits.of(profile).max_group))
        top = {c.describe() for c in ranked_first(node, kernel, profile, "pocl",
                                                  Predictor.shipped("pocl"), space, 2)}
        timed = data["config"][data["task"] == index].tolist()
        assert top <= set(timed) and len(timed) == min(8, len(space))


def test_pick_over_best_sums_a_configurations_kernels():
    """Tuning by prediction within each task: a configuration's kernels summed, the one
    predicted fastest over the fastest, in the geometric mean over tasks; a task of one
    configuration compares nothing."""
    data = {"task": np.asarray([0, 0, 0, 1, 1, 2]),
            "config": np.asarray(["a", "a", "b", "a", "b", "a"]),
            "latency": np.asarray([1.0, 1.0, 3.0, 2.0, 1.0, 5.0])}
    # task 0: a (1 + 1) against b (3), b predicted faster: 3 / 2; task 1: a predicted, 2 / 1
    predicted = np.asarray([1.0, 1.0, 1.5, 0.5, 1.0, 1.0])
    assert pick_over_best(data, np.arange(6), predicted) == pytest.approx(np.sqrt(1.5 * 2))
    assert pick_over_best(data, np.arange(6), data["latency"]) == pytest.approx(1.0)
