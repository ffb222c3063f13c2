"""
A saved `bench/tmmodel.py` run's choices timed again, in a later run on a device of the
same profile: what a configuration chosen then reads now (the noise floor).

Every configuration that the run re-timed (exhaustive search's best, the scan's fastest
few, TMModel's and CDMPP's choices, the ablation's picks) is built again and re-timed as
the run did it (interleaved, the least of ten rounds after a warm-up). Each pick is then
scored over the best of them as measured now, beside the run's own ratio:

- `exhaustive`: the run's measured best. What it reads now is what measuring every
  configuration earns in a later run: a compiler tunes once and runs later, maybe on
  another unit of the same device;
- `search`: the scan's fastest (exhaustive search's own choice);
- `tmmodel` and `cdmpp`: the models' choices (and `cdmpp_beside`, a second predictor's,
  where the run scored one).

A pick over exhaustive search's, both timed now (`..._over_exhaustive_now_geomean`),
compares two choices where neither was made: in the run itself, exhaustive search is
judged by the very times it chose by, which favours it. `--passes` times every kernel
that many times, each building it again, and the summary gives the mean and range over
them. The run-to-run spread is the median, over the re-timed configurations, of how far
a configuration's time moved from then to now (`|log now/then|`), alone and over its
kernel's best: the issue's noise floor.

    python3 bench/tmmodel_recheck.py bench/results/tmmodel-pocl.json
    bash bench/gpu_tmmodel_recheck.sh      # the H200's run, on the lent machine

Results: `bench/results/tmmodel-<profile>-recheck.json` (or `--out`) and a PNG chart
beside it.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import tempfile
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
from tmmodel import (  # noqa: E402
    NODE_NAME,
    RETIME_ROUNDS,
    InputError,
    load_runs,
    saved_config,
)

from mobile_opt.backends.opencl.devices import DeviceError, choose_device  # noqa: E402
from mobile_opt.checking.tile_search import LAUNCH_BOUND, LEARNED, Case, geomean  # noqa: E402
from mobile_opt.frontend.onnx_import import import_onnx  # noqa: E402
from mobile_opt.models.device_profile import profile_for_device  # noqa: E402
from mobile_opt.tools.cli import noting, progress_bar  # noqa: E402
from mobile_opt.tools.tuning import retime  # noqa: E402

PICKS = ("exhaustive", "search", "tmmodel", *LEARNED)
TARGET = 1.05
"""The issue's tuning target, over exhaustive search's best."""


def picks_of(row: dict, then_ms: dict[str, float]) -> dict[str, str]:
    """Each pick's configuration in a saved row (those the run re-timed)."""
    scan = {c["config"]: c["ms"] for c in row["configs"] if c["config"] in then_ms}
    picks = {"exhaustive": min(then_ms, key=then_ms.__getitem__),
             "search": min(scan, key=scan.__getitem__),
             "tmmodel": row["model_choice"],
             **{name: row.get(f"{name}_choice") for name in LEARNED}}
    return {k: v for k, v in picks.items() if v in then_ms}


def recheck(row: dict, device, folder: Path, note) -> dict:
    """A saved row's re-timed configurations timed again on `device`; each pick over the
    best, then and now."""
    saved = [c for c in row["configs"] if c.get("retimed_ms") is not None]
    module = import_onnx(str(Case.of_spec(row["family"], row["case"]).save(folder)))
    again = retime(module, NODE_NAME, [saved_config(c) for c in saved], device,
                   RETIME_ROUNDS, progress=note)
    # a configuration the device cannot launch now has no time to compare
    now_ms = {c["config"]: m.seconds * 1e3 for c, m in zip(saved, again)
              if math.isfinite(m.seconds)}
    then_ms = {c["config"]: c["retimed_ms"] for c in saved if c["config"] in now_ms}
    picks = picks_of(row, then_ms)
    best_then, best_now = min(then_ms.values()), min(now_ms.values())
    return {"family": row["family"], "kernel": row["kernel"],
            "exhaustive_ms": best_then, "picks": picks,
            "then_over_best": {k: then_ms[c] / best_then for k, c in picks.items()},
            "now_over_best": {k: now_ms[c] / best_now for k, c in picks.items()},
            "configs": [{"config": c, "then_ms": then_ms[c], "now_ms": now_ms[c]}
                        for c in then_ms]}


def geomeans(rows: list[dict]) -> dict:
    """Each pick's geometric mean over the best, then and now, and over exhaustive
    search's pick now; over all rows and over those of at least LAUNCH_BOUND."""
    def picks(kept: list[dict]) -> dict:
        shown = [p for p in PICKS if kept and all(p in r["picks"] for r in kept)]
        return {"kernels": len(kept)} | {
            f"{pick}_{when}_geomean": geomean([r[f"{when}_over_best"][pick] for r in kept])
            for pick in shown for when in ("then", "now")} | {
            # the pick against exhaustive search's, both judged where neither was chosen
            f"{pick}_over_exhaustive_now_geomean": geomean(
                [r["now_over_best"][pick] / r["now_over_best"]["exhaustive"] for r in kept])
            for pick in shown if pick != "exhaustive"}

    return {"all": picks(rows), "launch_bound_or_more": picks(
        [r for r in rows if r["exhaustive_ms"] * 1e-3 >= LAUNCH_BOUND])}


def moved(rows: list[dict], over_best: bool = False) -> list[float]:
    """How far each configuration's time moved from then to now (log), alone or over its
    kernel's best."""
    logs = []
    for r in rows:
        # how far the kernel's best itself moved, once a row
        shift = math.log(min(c["now_ms"] for c in r["configs"]) / r["exhaustive_ms"])
        logs += [math.log(c["now_ms"] / c["then_ms"]) - (shift if over_best else 0.0)
                 for c in r["configs"]]
    return logs


def summary(passes: list[dict]) -> dict:
    """The passes joined: each geometric mean's mean over them (and the range of the
    `now` ones), the run-to-run spread over all of them, and how one pass's best reads in
    the next (how far the re-timing itself repeats)."""
    joined: dict = {"passes": len(passes)}
    for part in ("all", "launch_bound_or_more"):
        first = passes[0]["summary"][part]
        joined[part] = {"kernels": first["kernels"]}
        for key in (k for k in first if k.endswith("_geomean")):
            values = [p["summary"][part][key] for p in passes]
            joined[part][key] = float(np.mean(values))
            if "_now_" in key:
                joined[part][f"{key}_range"] = [min(values), max(values)]
    rows = [r for p in passes for r in p["rows"]]
    joined["run_to_run_spread"] = float(np.median(np.abs(moved(rows))))
    joined["run_to_run_spread_over_best"] = float(np.median(np.abs(moved(rows, True))))
    joined["configurations"] = sum(len(r["configs"]) for r in passes[0]["rows"])
    repeats = []
    for before, after in zip(passes, passes[1:]):
        for a, b in zip(before["rows"], after["rows"]):
            then, now = ({c["config"]: c["now_ms"] for c in r["configs"]} for r in (a, b))
            repeats.append(now[min(then, key=then.__getitem__)] / min(now.values()))
    if repeats:
        joined["best_in_next_pass_geomean"] = geomean(repeats)
    return joined


def write_chart(result: dict, title: str, path: Path) -> None:
    """Each pick's geometric mean over the best, then and now (the passes' mean and
    range), for all rows and for the rows of LAUNCH_BOUND or more."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.2, 3.8), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    panels = figure.subplots(1, 2, sharey=True)
    for axes, (part, name) in zip(panels, (("all", "all kernels"), (
            "launch_bound_or_more", f"kernels of {LAUNCH_BOUND * 1e6:.0f} µs or more"))):
        numbers = result["summary"][part]
        shown = [p for p in PICKS if f"{p}_now_geomean" in numbers]
        x = np.arange(len(shown))
        axes.bar(x - 0.2, [numbers[f"{p}_then_geomean"] - 1 for p in shown], 0.4, bottom=1,
                 label="in the run")
        now = np.array([numbers[f"{p}_now_geomean"] for p in shown])
        spans = np.array([numbers[f"{p}_now_geomean_range"] for p in shown]).T
        axes.bar(x + 0.2, now - 1, 0.4, bottom=1, yerr=np.abs(spans - now), capsize=3,
                 label=f"timed again (mean, range of {result['summary']['passes']})")
        axes.axhline(TARGET, linestyle=":", color="0.3", label=f"target {TARGET}")
        axes.set_xticks(x, shown)
        axes.set_title(f"{name} ({numbers['kernels']})", fontsize="medium")
        axes.grid(True, axis="y", color="0.9")
    panels[0].set_ylabel("latency / the best as timed then or now, geomean")
    panels[1].legend(fontsize="small")
    figure.suptitle(title)
    figure.savefig(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", help="a bench/tmmodel.py run (its JSON)")
    parser.add_argument("--device", default="pocl")
    parser.add_argument("--profile", help="the device's profile (default: its shipped one)")
    parser.add_argument("--passes", type=int, default=3,
                        help="times over every kernel, each building it again")
    parser.add_argument("--out", help="JSON path (default "
                                      "bench/results/tmmodel-<profile>-recheck.json)")
    args = parser.parse_args()
    if args.passes < 1:
        parser.error(f"--passes: not a positive count: {args.passes}")
    try:
        return run(args)
    except InputError as e:
        print(f"bench/tmmodel_recheck.py: error: {e}", file=sys.stderr)
        return 1


def run(args: argparse.Namespace) -> int:
    (saved,) = load_runs(args.results)
    if saved.get("rescored"):
        raise InputError(f"{args.results}: a rescored run, whose times are another run's")
    try:
        device = choose_device(args.device)
    except DeviceError as e:
        raise InputError(e) from None
    profile = Path(args.profile or profile_for_device(device.name, device.platform)
                   or "(none)").stem
    if profile != saved["profile"]:
        raise InputError(f"{args.results}: measured on a device of profile "
                         f"{saved['profile']}, not {device.describe()}")
    # a row whose choices the run did not re-time (an older run's) has nothing to compare
    kept = [r for r in saved["rows"] if r.get("retimed")]
    if not kept:
        raise InputError(f"{args.results}: no row of it was re-timed")
    bar = progress_bar(args.passes * len(kept), f"recheck on {device.name}", "kernel")
    passes = []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.passes):
            rows = []
            for row in kept:
                bar.set_postfix_str(row["kernel"])
                rows.append(recheck(row, device, Path(folder), noting(bar)))
                bar.update()
            passes.append({"summary": geomeans(rows), "rows": rows})
    bar.close()
    result = {"device": device.describe(), "profile": profile, "host": platform.node(),
              "then": args.results, "then_host": saved["host"], "then_device": saved["device"],
              "not_retimed_then": len(saved["rows"]) - len(kept),
              "summary": summary(passes), "passes": passes}
    out = Path(args.out or BENCH_DIR / "results" / f"tmmodel-{profile}-recheck.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    write_chart(result, f"{args.results} timed again on {device.name}",
                out.with_suffix(".png"))
    print(f"{'kernel':40s} " + " ".join(f"{p:>18s}" for p in PICKS) + "   (then -> now)")
    for r in passes[0]["rows"]:  # the first pass; the JSON holds them all
        print(f"{r['kernel'][:40]:40s} " + " ".join(
            f"{r['then_over_best'][p]:8.3f} {r['now_over_best'][p]:8.3f}"
            if p in r["picks"] else f"{'':18s}" for p in PICKS))
    print(json.dumps(result["summary"], indent=1))
    print(f"wrote {out} and {out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
