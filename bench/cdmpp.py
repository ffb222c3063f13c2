"""
CDMPP against its gradient-boosting baseline on a dataset of
`bench/cdmpp_data.py`, on the same splits (`mobile_learn.splits`):
- a random 8:1:1 split by kernel;
- a cross-model split that holds out every kernel of some models (`--hold-out`), scored
  before fine-tuning and after it: `mobile_learn.fine_tune` on FINE_TUNE_TASKS of their
  tasks chosen by Algorithm 1 over tasks (`mobile_learn.SAMPLER`), scored on their other
  tasks (gradient boosting then trains on the same chosen kernels too);
- with `--adapt-from MODEL DATASET`, cross-device: a predictor trained on another device
  adapted to this one with ADAPT_TASKS tasks, chosen by each sampler (`mobile_learn.SAMPLERS`:
  Algorithm 1 over the kernels' features, the tasks' or the predictor's latents, and at
  random) over `--seeds` seeds, each with its CMD curve; `--jobs` runs that many
  fine-tunings at once; `--members 3` fine-tunes each seed's tasks three times and predicts
  by the ensemble (`models/cdmpp.Ensemble`), scoring the ensembles of its first 1, 2, ...
  members too. `--adapt-curve 25,50,100` adds MAPE against
  how many tasks are measured (`adaptation_curve`), the issue's 50 among them. `--denser`
  adds another run's configurations of the chosen tasks to their training kernels
  (`mobile_learn.with_denser`; `bench/cdmpp_data.py --denser`).

`--denser` also trains the random split on all of that run's kernels (its test kernels
stay the dataset's own, the same as without it).

The baseline is scikit-learn's histogram gradient boosting on the pooled compact ASTs
(`cdmpp_features.pooled`) and the device's features, fitted to log latency; CDMPP is
`mobile-learn`'s training. Both score the test set's MAPE, and how well each tunes within
a test task (`pick_over_best`). Kernels whose runs spread by more than `STEADY` of their
median are under the noise floor and left out; the floor itself (the median run-to-run
spread) is reported. So are `bench/tmmodel.py`'s own kernels, which score the shipped
predictor's choices (`benchmark_mask`).

    python3 bench/cdmpp.py bench/data/cdmpp-pocl.npz --model models/weights/cdmpp-pocl.npz
    python3 bench/cdmpp.py bench/data/cdmpp-nvidia-h200.npz \
        --adapt-from models/weights/cdmpp-pocl.npz bench/data/cdmpp-pocl.npz
    bash bench/gpu_cdmpp_adapt.sh          # the cross-device part on the lent machine
    python3 bench/cdmpp.py bench/data/cdmpp-nvidia-h200.npz --adapt-from ... \
        --adapt-only --samplers "" --adapt-curve 25,50,100 --jobs 2   # the curve alone

Needs the `learn` extra (scikit-learn, scipy, torch). Results: a table,
`bench/results/cdmpp-<device>.json` and the learning curves beside it (`.png`); with
`--model`, the random split's trained weights.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
from e2e import import_repo_package  # noqa: E402

import_repo_package()

from tmmodel import benchmark_specs  # noqa: E402

from mobile_opt.models.cdmpp import Ensemble  # noqa: E402
from mobile_opt.models.cdmpp_features import pooled  # noqa: E402
from mobile_opt.tools.mobile_learn import (  # noqa: E402
    FINE_TUNING,
    NEW_DEVICE_TUNING,
    SAMPLER,
    SAMPLERS,
    STEADY,
    InputError,
    Settings,
    choose_tasks,
    fine_tune,
    fit,
    load_dataset,
    mape_of,
    merged,
    missing_learn,
    noise_floor,
    pick_over_best,
    predict_of,
    read,
    sampler_points,
    splits_with_denser,
    tuned_parts,
    with_denser,
)

HOLD_OUT = "light_resnet50,mobilenetv2_small,gpt2_small"
"""The cross-model test set: ResNet-50, MobileNetV2 and a GPT-style decoder block."""


def mape(predicted: np.ndarray, actual: np.ndarray) -> float:
    return float(np.mean(np.abs(predicted - actual) / actual))


def gbdt_predict(data: dict, parts: dict[str, np.ndarray], seed: int) -> np.ndarray:
    """Gradient boosting's latencies of the test kernels, trained on the train ones."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    if "pooled" not in data:  # the features, once per dataset
        rows = data.get("device_rows")
        data["pooled"] = np.stack([
            np.concatenate([pooled(a.leaves), data["device_features"] if rows is None
                            else rows[i]]) for i, a in enumerate(data["asts"])])
    x, y = data["pooled"], data["latency"]
    model = HistGradientBoostingRegressor(max_iter=600, learning_rate=0.08, random_state=seed)
    model.fit(x[parts["train"]], np.log(y[parts["train"]]))
    return np.exp(model.predict(x[parts["test"]]))


def gbdt_mape(data: dict, parts: dict[str, np.ndarray], seed: int) -> float:
    return mape(gbdt_predict(data, parts, seed), data["latency"][parts["test"]])


FINE_TUNE_TASKS = 8
"""Tasks of the held-out models measured to fine-tune on (cross-model)."""
CROSS_MODEL_LR = 5e-4
"""A smaller step than a new device needs: on PoCL, 2e-3 took the held-out tasks' MAPE
from 12.1 to 14.2 %, 5e-4 to 12.5 % (α 0.1: 12.3 %)."""
ADAPT_TASKS = 50
"""Tasks of the new device measured to fine-tune on (cross-device; the issue's bound)."""
ADAPT_SEEDS = 10
CURVE_SEEDS = 3
"""Seeds of each point of the cross-device curve (`--adapt-curve`)."""
SPLITS = ("random", "cross_model", "cross_model_fine_tuned", "cross_device",
          "cross_device_curve")
"""The results' parts; a run that measures some keeps the others a results file holds."""


def benchmark_mask(data: dict, dataset: Path) -> np.ndarray:
    """The kernels of bench/tmmodel.py's own tasks, which no model here trains on (that
    benchmark scores the shipped predictor's choices)."""
    specs = benchmark_specs(dataset.stem.removeprefix("cdmpp-"), "CPU" in str(data["device"]))
    tasks = json.loads(str(data["tasks"]))
    held = [i for i, t in enumerate(tasks)
            if {k: v for k, v in t.items() if k != "source"} in specs]
    return np.isin(data["task"], held)


def cross_model(data: dict, parts: dict[str, np.ndarray], arrays: dict, hold_out: list[str],
                seed: int) -> dict:
    """The cross-model predictor fine-tuned on a few KMeans-chosen tasks of the held-out
    models (CMD towards the training kernels); MAPE on their other tasks, before and after,
    and gradient boosting given the same kernels."""
    candidates = np.flatnonzero(np.isin(data["source"], hold_out) & ~data["benchmark"])
    tasks = choose_tasks(SAMPLER, arrays, data, candidates, FINE_TUNE_TASKS, seed)
    tuned, result = fine_tune(arrays, data, candidates, tasks,
                              replace(FINE_TUNING, seed=seed, lr=CROSS_MODEL_LR),
                              parts["train"], "cdmpp cross-model fine-tune")
    sample = tuned_parts(data, candidates, tasks)
    return {"tasks": tasks, "kernels": result["kernels"],
            "cdmpp_test_mape_before": mape_of(arrays, data, sample["test"]),
            "cdmpp_test_mape": result["mape"]["test"],
            "gbdt_test_mape": gbdt_mape(data, {"train": np.concatenate(
                [parts["train"], sample["train"]]), "test": sample["test"]}, seed),
            "cmd": [c["cmd"] for c in result["curve"]]}


def new_device(data: dict, source: dict) -> tuple[dict, np.ndarray, np.ndarray]:
    """The two devices' kernels merged (`merged`), this device's candidates to measure (all
    but the benchmark's), and the source's steady kernels (the CMD's other domain)."""
    both, target = merged(source, data)
    return (both, target[~data["benchmark"]],
            np.flatnonzero(both["spread"][:target[0]] < STEADY))


def cross_device(data: dict, source: dict, arrays: dict, seeds: int, settings: Settings,
                 samplers: tuple[str, ...] = SAMPLERS, jobs: int = 1, members: int = 1) -> dict:
    """
    A predictor trained on another device (`arrays`, on `source`) adapted to this one:
    ADAPT_TASKS tasks chosen by each sampler, over `seeds` seeds, fine-tuned with CMD
    towards the source's kernels (`fine_tune`, with `settings`, replaying none of them:
    `NEW_DEVICE_TUNING`), `members` times from seeds seed·members + i, their latencies'
    geometric mean (`Ensemble`) predicting; MAPE on this device's other tasks, and gradient
    boosting trained on the chosen kernels and all the source's. `jobs` runs fine-tunings in
    that many processes at once. Kernels marked `denser` (`with_denser`) join the training
    kernels of the tasks chosen; the choice and the test sets are the dataset's own.
    """
    both, candidates, origin = new_device(data, source)
    extra = np.zeros(len(both["latency"]), bool)
    if "denser" in data:
        extra[len(extra) - len(data["denser"]):] = data["denser"]
    own = candidates[~extra[candidates]]
    # what each sampler clusters, shared by the seeds
    points = {s: sampler_points(s, arrays, both, own) for s in samplers}
    chosen = {(seed, s): choose_tasks(s, arrays, both, own, ADAPT_TASKS, seed, points[s])
              for seed in range(seeds) for s in samplers}
    measured = {key: candidates[~extra[candidates] | np.isin(both["task"][candidates], tasks)]
                for key, tasks in chosen.items()}
    samples = {key: tuned_parts(both, measured[key], tasks) for key, tasks in chosen.items()}
    work = [(seed, sampler, i) for seed in range(seeds) for sampler in samplers
            for i in range(members)]

    def adapt(seed: int, sampler: str, member: int) -> dict:
        tuned, result = fine_tune(arrays, both, measured[seed, sampler], chosen[seed, sampler],
                                  replace(settings, seed=seed * members + member), origin,
                                  f"cdmpp adapt {sampler} seed {seed}.{member}")
        sample = samples[seed, sampler]
        run = {"predicted": predict_of(tuned, both, sample["test"]),
               "kernels": result["kernels"], "cmd": [c["cmd"] for c in result["curve"]]}
        if member == 0:  # the baseline, once a seed, in the same process
            run["gbdt_test_mape"] = gbdt_mape(both, {"train": np.concatenate(
                [sample["train"], origin]), "test": sample["test"]}, seed)
        return run

    done = dict(zip(work, in_processes(adapt, work, jobs)))
    runs = {s: [] for s in samplers}
    for seed, sampler in chosen:
        tuned = [done[seed, sampler, i] for i in range(members)]
        test = samples[seed, sampler]["test"]
        predicted = Ensemble.combine([t["predicted"] for t in tuned])
        run = {"seed": seed, "tasks": chosen[seed, sampler], "kernels": tuned[0]["kernels"],
               "cdmpp_test_mape": mape(predicted, both["latency"][test]),
               "gbdt_test_mape": tuned[0]["gbdt_test_mape"], "cmd": tuned[0]["cmd"]}
        if members > 1:
            run["member_test_mape"] = [mape(t["predicted"], both["latency"][test])
                                       for t in tuned]
            # the ensembles of its first 1, 2, ... members: what each added member bought
            run["ensemble_test_mape"] = [
                mape(Ensemble.combine([t["predicted"] for t in tuned[:k]]),
                     both["latency"][test]) for k in range(1, members + 1)]
        runs[sampler].append(run)
        print(f"  {sampler:13s} seed {seed}: CDMPP {run['cdmpp_test_mape']:.3f}  "
              f"gradient boosting {run['gbdt_test_mape']:.3f}")
    return sampler_summary({"tasks": ADAPT_TASKS, "seeds": seeds, "members": members,
                            "denser_kernels": int(extra.sum()),
                            "epochs": settings.epochs, "cmd_weight": settings.cmd_weight,
                            "test_mape_before": mape_of(arrays, both, own[
                                both["spread"][own] < STEADY]), "runs": runs})


SAMPLER_RUN = ("from", "tasks", "seeds", "members", "epochs", "cmd_weight", "denser_kernels")
"""What cross-device runs of several samplers share, to be compared (`sampler_summary`)."""


def sampler_summary(row: dict, earlier: dict | None = None) -> dict:
    """A cross-device row with its summaries over its samplers' runs: mean and median test
    MAPE, and each sampler's wins over random seed by seed. The runs of other samplers in
    `earlier` (another process's row, the same in SAMPLER_RUN) join them first."""
    runs = dict(row["runs"])
    if earlier and all(earlier.get(k, {"members": 1, "denser_kernels": 0}.get(k)) == row[k]
                       for k in SAMPLER_RUN):
        runs = {s: r for s, r in earlier["runs"].items() if s not in runs} | runs
    mapes = {s: [r["cdmpp_test_mape"] for r in runs[s]] for s in runs}
    return {k: v for k, v in row.items() if k != "runs"} | {
        **{f"{s}_mean_test_mape": float(np.mean(m)) for s, m in mapes.items()},
        **{f"{s}_median_test_mape": float(np.median(m)) for s, m in mapes.items()},
        **{f"{s}_mean_test_mape_by_members": np.mean(
            [r["ensemble_test_mape"] for r in runs[s]], 0).tolist()
           for s in runs if all("ensemble_test_mape" in r for r in runs[s])},
        **{f"{s}_wins": sum(a < b for a, b in zip(m, mapes["random"]))
           for s, m in mapes.items() if s != "random" and "random" in mapes},
        "runs": runs}


def adaptation_curve(data: dict, source: dict, arrays: dict, counts: list[int], seeds: int,
                     settings: Settings, jobs: int = 1) -> dict:
    """
    Cross-device MAPE against how many tasks of the new device are measured: for each
    seed, `counts` tasks by Algorithm 1 over tasks (`SAMPLER`), each fine-tuned as
    `cross_device` does, and scored on one test set, the tasks that none of the seed's
    choices holds. Where the issue's bound of ADAPT_TASKS tasks sits on it.
    """
    both, candidates, origin = new_device(data, source)
    points = sampler_points(SAMPLER, arrays, both, candidates)
    chosen = {(seed, n): choose_tasks(SAMPLER, arrays, both, candidates, n, seed, points)
              for seed in range(seeds) for n in counts}
    # each seed's test set: the tasks none of its choices holds
    tests = {seed: tuned_parts(both, candidates, sorted(set().union(
        *(chosen[seed, n] for n in counts))))["test"] for seed in range(seeds)}
    work = list(chosen)

    def adapt(seed: int, n: int) -> dict:
        tuned, result = fine_tune(arrays, both, candidates, chosen[seed, n],
                                  replace(settings, seed=seed),
                                  origin, f"cdmpp curve {n} tasks seed {seed}")
        test = tests[seed]
        return {"seed": seed, "tasks": n, "kernels": result["kernels"]["train"],
                "test_kernels": len(test), "cdmpp_test_mape": mape_of(tuned, both, test)}

    runs = in_processes(adapt, work, jobs)
    for run in runs:
        print(f"  curve: {run['tasks']:4d} tasks seed {run['seed']}: "
              f"CDMPP {run['cdmpp_test_mape']:.3f}")
    return {"sampler": SAMPLER, "seeds": seeds, "epochs": settings.epochs,
            "mean_test_mape": {str(n): float(np.mean([r["cdmpp_test_mape"] for r in runs
                                                      if r["tasks"] == n])) for n in counts},
            "runs": runs}


def in_processes(function, work: list[tuple], jobs: int) -> list:
    """`function(*args)` for each of `work`, in order, in `jobs` forked processes when over
    one; the children inherit what `function` closes over, and the parent's one torch
    thread (`main`)."""
    if jobs <= 1:
        return [function(*args) for args in work]
    import multiprocessing

    global _FORKED
    _FORKED = function
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return pool.starmap(_call_forked, work, chunksize=1)


_FORKED = None
"""The function `in_processes` runs, as the forked children find it."""


def _call_forked(*args):
    return _FORKED(*args)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--hold-out", default=HOLD_OUT)
    parser.add_argument("--epochs", type=int, default=Settings.epochs)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", type=Path, help="save the random split's weights here")
    parser.add_argument("--task-weight", type=float, default=Settings.task_weight,
                        help="the within-task term's weight (`Settings.task_weight`)")
    parser.add_argument("--random-only", action="store_true",
                        help="train the random split alone (the results file keeps the "
                             "other splits that it holds)")
    parser.add_argument("--out")
    parser.add_argument("--adapt-from", nargs=2, metavar=("MODEL", "DATASET"),
                        help="cross-device: a predictor trained on another device's dataset, "
                             "adapted to this one")
    parser.add_argument("--denser", type=Path, metavar="DATASET",
                        help="more configurations of the dataset's tasks "
                             "(`bench/cdmpp_data.py --denser`), which only train: in the "
                             "random split all of them, across devices those of the tasks "
                             "a run chooses")
    parser.add_argument("--seeds", type=int, default=ADAPT_SEEDS,
                        help="cross-device: seeds of each sampler")
    parser.add_argument("--adapt-epochs", type=int, default=NEW_DEVICE_TUNING.epochs,
                        help="cross-device: epochs of each fine-tuning")
    parser.add_argument("--samplers", default=",".join(SAMPLERS),
                        help=f"cross-device: comma-separated, of {', '.join(SAMPLERS)}")
    parser.add_argument("--members", type=int, default=1,
                        help="cross-device: fine-tunings of each seed's tasks, from seeds "
                             "seed·members + i, whose latencies' geometric mean predicts")
    parser.add_argument("--cmd-weight", type=float, default=NEW_DEVICE_TUNING.cmd_weight,
                        help="cross-device: α of each fine-tuning")
    parser.add_argument("--adapt-curve", metavar="COUNTS",
                        help="cross-device: also MAPE against the tasks measured, at these "
                             "comma-separated counts (CURVE_SEEDS seeds each)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="cross-device: fine-tunings run at once, in processes")
    parser.add_argument("--adapt-only", action="store_true",
                        help="cross-device alone (the results file keeps the other splits "
                             "that it holds, so two processes can share the work)")
    args = parser.parse_args()
    samplers = tuple(s for s in args.samplers.split(",") if s)
    if unknown := [s for s in samplers if s not in SAMPLERS]:
        parser.error(f"--samplers: unknown {', '.join(unknown)}")
    try:
        counts = sorted({int(n) for n in (args.adapt_curve or "").split(",") if n})
    except ValueError:
        parser.error(f"--adapt-curve: not comma-separated counts: {args.adapt_curve}")
    if args.members < 1:
        parser.error(f"--members: not a positive count: {args.members}")
    if args.random_only and args.adapt_only:
        parser.error("--random-only: --adapt-only leaves the random split out")
    if counts and not args.adapt_from:
        parser.error("--adapt-curve: a curve across devices needs --adapt-from")
    try:
        data = read(args.dataset, "CDMPP dataset", load_dataset)
        adapt_from = args.adapt_from and (
            read(Path(args.adapt_from[0]), "CDMPP predictor",
                 lambda p: dict(np.load(p, allow_pickle=False))),
            read(Path(args.adapt_from[1]), "CDMPP dataset", load_dataset))
        data["benchmark"] = benchmark_mask(data, args.dataset)
        denser = args.denser and with_denser(
            data, read(args.denser, "CDMPP dataset", load_dataset), args.denser)
        if denser:  # its new tasks may be the benchmark's too
            denser["benchmark"] |= benchmark_mask(denser, args.dataset)
    except InputError as e:
        print(f"bench/cdmpp.py: error: {e}", file=sys.stderr)
        return 1
    if (missing := missing_learn()) is not None:
        return missing
    if args.jobs > 1:  # one thread, before any pool starts: the forked children inherit it
        import torch

        torch.set_num_threads(1)
    settings = replace(Settings(), epochs=args.epochs, seed=args.seed,
                       task_weight=args.task_weight)
    out = Path(args.out or BENCH_DIR / "results" /
               f"cdmpp-{args.dataset.stem.removeprefix('cdmpp-')}.json")
    rows, curves = {}, {}
    for name, hold_out in (() if args.adapt_only else (
            ("random", []), ("cross_model", args.hold_out.split(",")))[:1 if args.random_only
                                                                        else 2]):
        more = denser if name == "random" else None
        split, parts = splits_with_denser(data, more, hold_out, args.seed)
        arrays, trained = fit(split, parts, settings, f"cdmpp {name}")
        gbdt = gbdt_predict(split, parts, args.seed)
        rows[name] = {"held_out": hold_out, "kernels": trained["kernels"],
                      "gbdt_test_mape": mape(gbdt, split["latency"][parts["test"]]),
                      "cdmpp_test_mape": trained["mape"]["test"],
                      "cdmpp_pick_over_best": pick_over_best(
                          split, parts["test"], predict_of(arrays, split, parts["test"])),
                      "gbdt_pick_over_best": pick_over_best(split, parts["test"], gbdt),
                      "cdmpp_valid_mape": trained["mape"]["valid"],
                      "cdmpp_train_mape": trained["mape"]["train"],
                      "best_epoch": trained["best_epoch"], "task_weight": settings.task_weight,
                      "denser": more and str(args.denser)}
        curves[name] = trained["curve"]
        if name == "random" and args.model:
            np.savez_compressed(args.model, **arrays)
        if name == "cross_model":
            rows["cross_model_fine_tuned"] = cross_model(data, parts, arrays, hold_out,
                                                         args.seed)
    if adapt_from:
        model, source = adapt_from
        tuning = replace(NEW_DEVICE_TUNING, epochs=args.adapt_epochs,
                         cmd_weight=args.cmd_weight)
        if samplers:
            rows["cross_device"] = {
                "from": args.adapt_from[1], "denser": args.denser and str(args.denser),
                **cross_device(denser or data, source, model, args.seeds, tuning, samplers,
                               args.jobs, args.members)}
        if counts:
            rows["cross_device_curve"] = {"from": args.adapt_from[1], **adaptation_curve(
                data, source, model, counts, CURVE_SEEDS, tuning, args.jobs)}
    if out.is_file():  # what another process measured of the same dataset, kept
        earlier = json.loads(out.read_text())
        if earlier.get("dataset") == str(args.dataset):
            if "cross_device" in rows and "cross_device" in earlier:  # other samplers' runs
                rows["cross_device"] = sampler_summary(rows["cross_device"],
                                                       earlier["cross_device"])
            rows = {k: earlier[k] for k in SPLITS if k in earlier} | rows
            curves = curves or earlier.get("curves", {})
    device = str(data["device"])
    result = {"device": device, "dataset": str(args.dataset), "kernels": len(data["latency"]),
              "tasks": len(json.loads(str(data["tasks"]))),
              "noise_floor_s": noise_floor(data),
              "unsteady": int((data["spread"] >= STEADY).sum()),
              "benchmark_kernels_left_out": int(data["benchmark"].sum()),
              "settings": asdict(settings),
              **rows, "curves": curves}
    for name in SPLITS[:3]:
        if name not in rows:
            continue
        row = rows[name]
        print(f"{name:23s} test kernels {row['kernels']['test']:5d}  "
              f"CDMPP MAPE {row['cdmpp_test_mape']:.3f}  gradient boosting "
              f"{row['gbdt_test_mape']:.3f}"
              + (f"  pick/best CDMPP {row['cdmpp_pick_over_best']:.3f} gradient boosting "
                 f"{row['gbdt_pick_over_best']:.3f}" if "cdmpp_pick_over_best" in row else ""))
    if "cross_device" in rows:
        row = rows["cross_device"]
        print(f"cross-device from {row['from']}: before {row['test_mape_before']:.3f}; mean "
              + "  ".join(f"{s} {row[f'{s}_mean_test_mape']:.3f}" for s in row["runs"])
              + f"; better than random in {row['seeds']} seeds: "
              + ", ".join(f"{s} {row[f'{s}_wins']}" for s in row["runs"] if f"{s}_wins" in row))
    if "cross_device_curve" in rows:
        print("cross-device by tasks measured, mean test MAPE: " + "  ".join(
            f"{n} {m:.3f}" for n, m in rows["cross_device_curve"]["mean_test_mape"].items()))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    gaps = ({"cross-model": rows["cross_model_fine_tuned"]["cmd"]}
            if "cross_model_fine_tuned" in rows else {})
    if "cross_device" in rows:
        gaps |= {f"cross-device, {sampler} (mean of seeds)": list(np.mean(
            [r["cmd"] for r in rows["cross_device"]["runs"][sampler]], axis=0))
            for sampler in rows["cross_device"]["runs"]}
    plot(curves, gaps, out.with_suffix(".png"), device.split(" [")[0],
         rows.get("cross_device_curve"), rows.get("cross_device"))
    return 0


def plot(curves: dict[str, list[dict]], gaps: dict[str, list[float]], path: Path,
         device: str, tasks_curve: dict | None = None, cross: dict | None = None) -> None:
    """What was measured, a panel each: validation MAPE by epoch, one line a split; each
    fine-tuning's CMD between source and target latents by epoch; cross-device MAPE against
    the tasks measured (`adaptation_curve`); and an ensemble's cross-device MAPE beside its
    members', by seed, and its mean over seeds against how many members it has."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    members = cross is not None and cross.get("members", 1) > 1
    sizes = {s: cross[f"{s}_mean_test_mape_by_members"] for s in cross["runs"]
             if f"{s}_mean_test_mape_by_members" in cross} if members else {}
    panels = [bool(curves), bool(gaps), bool(tasks_curve), members, bool(sizes)]
    figure = Figure(figsize=(5.2 * max(sum(panels), 1), 3.6), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = iter(figure.subplots(1, max(sum(panels), 1), squeeze=False)[0])
    if curves:
        a = next(axes)
        for name, curve in curves.items():
            a.plot([c["epoch"] for c in curve], [c["valid_mape"] for c in curve], label=name)
        a.set_yscale("log")
        _finish(a, "epoch", "validation MAPE", f"CDMPP on {device}")
    if gaps:
        a = next(axes)
        for name, gap in gaps.items():
            a.plot(range(1, len(gap) + 1), gap, label=name)
        a.set_yscale("log")
        _finish(a, "fine-tuning epoch", "CMD, source to target latents", "fine-tuning")
    if tasks_curve:
        a = next(axes)
        runs = tasks_curve["runs"]
        a.scatter([r["tasks"] for r in runs], [r["cdmpp_test_mape"] for r in runs],
                  marker=".", color="0.6", label="a seed")
        counts = sorted(int(n) for n in tasks_curve["mean_test_mape"])
        a.plot(counts, [tasks_curve["mean_test_mape"][str(n)] for n in counts],
               marker="o", label="mean")
        a.axhline(0.15, linestyle=":", color="0.3", label="15 %")
        a.axvline(ADAPT_TASKS, linestyle="--", color="0.3", label=f"{ADAPT_TASKS} tasks")
        a.set_xscale("log", base=2)
        a.set_xticks(counts, [str(n) for n in counts])
        a.minorticks_off()
        _finish(a, "tasks measured on the new device", "test MAPE",
                "cross-device, by tasks measured")
    if members:
        a = next(axes)
        for sampler, runs in cross["runs"].items():
            seeds = [r["seed"] for r in runs]
            a.scatter([s for r in runs for s in [r["seed"]] * len(r["member_test_mape"])],
                      [m for r in runs for m in r["member_test_mape"]], marker=".",
                      color="0.6", label=f"{sampler}: a member")
            a.plot(seeds, [r["cdmpp_test_mape"] for r in runs], marker="o",
                   label=f"{sampler}: the ensemble of {cross['members']}")
        a.axhline(0.15, linestyle=":", color="0.3", label="15 %")
        _finish(a, "seed", "test MAPE", f"cross-device, {cross['tasks']} tasks")
    if sizes:
        a = next(axes)
        for sampler, by_size in sizes.items():
            a.plot(range(1, len(by_size) + 1), by_size, marker="o", label=sampler)
        a.axhline(0.15, linestyle=":", color="0.3", label="15 %")
        a.set_xticks(range(1, cross["members"] + 1))
        _finish(a, "fine-tunings in the ensemble", f"mean test MAPE, {cross['seeds']} seeds",
                "cross-device, by ensemble size")
    figure.savefig(path)


def _finish(axes, xlabel: str, ylabel: str, title: str) -> None:
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.grid(True, color="0.9")
    axes.legend(fontsize="small")


if __name__ == "__main__":
    sys.exit(main())
