"""
TMModel against measured exhaustive search, on the configurations `texture-tile`
chooses from (thread tile T, with it the access pattern; work-group size G, with it
the warp shape; and for a product or ungrouped conv large enough, the blocked
product's plans). Tensors are in images on every device.

For each kernel of TMModel's set (MatMul; Conv with stride 1 and 2; depthwise Conv;
ConvTranspose with stride 1 or 2; Softmax; LayerNormalization), sampled from Table 3's
ranges (smaller on a CPU device to fit the time), every configuration of the space is
lowered, built and timed on the device (`tools/tuning.py`), and:

- (a) the latency of the model's choice over the exhaustive best (geometric mean, worst).
  The scan measures each configuration alone; the model's choice, the ablation's picks
  and the scan's five fastest are then timed again, interleaved over ten rounds, and the
  ratio comes from that re-timing (the scan's own ratio is kept beside it);
- (b) the model's tuning time (evaluating eq. 7 over the pruned space; probing is done
  once per device and reported separately) over exhaustive tuning's (measuring the pruned
  space);
- (c) top-1: how often the model picks the measured best;
- (d) the ablation: Base (T=1, the best measured G), TMM-T (the model's T, the best
  measured G for it), TMM (the model's T and G), Exhaustive;
- (e) the space before and after `prune-configs`, and whether the best survives;
- (f) the same (a)-(c) for CDMPP's choice (`texture-tile{cost-model=cdmpp}`, the predictor
  shipped for the profile, `cdmpp_...` fields), whose tuning time is lowering each
  candidate and predicting. No kernel of this benchmark trains that predictor
  (`benchmark_specs`). `--beside PREDICTOR` scores another predictor's choices in the same
  run, re-timed with the rest (`cdmpp_beside_...` fields): two predictors compared side by
  side.
- (g) exhaustive search's own choice (the scan's best) scored as the models' are, over
  the re-timing's best (`search_over_exhaustive`): what a model that predicted the scan
  exactly would read. How the run's choices read in a later run, exhaustive search's
  best among them, is `bench/tmmodel_recheck.py`'s.
- (h) held out (`held_out_..._over_exhaustive`): each search's choice (the re-timing's
  best, the scan's best, TMModel's, CDMPP's) built and timed again in the same run, after
  all the choosing, in `HELD_OUT_BUILDS` builds of its own (its time their median), and
  scored over the exhaustive best as timed then. The re-timing of (a) both names the best
  and values it, which favours it; this does not. Summaries are given over all kernels,
  above the dataset's noise floor, and over the kernels of 10 µs or more
  (`launch_bound_or_more`), each geomean with its 90 % bootstrap interval over the kernels.

    python3 bench/tmmodel.py --device pocl          # 6-13 minutes on two cores
    python3 bench/tmmodel.py --device gpu --cases 4  # bench/gpu_tmmodel.sh on the GPU

Results: `bench/results/tmmodel-<device>.json` (summaries overall and per family) and a
PNG chart beside it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
from e2e import import_repo_package  # noqa: E402

import_repo_package()

from mobile_opt.backends.opencl.devices import DeviceError, choose_device  # noqa: E402
from mobile_opt.checking.tile_search import (  # noqa: E402
    LAUNCH_BOUND,
    LEARNED,
    Case,
    LearnedPick,
    above_floor,
    choose,
    geomean,
    held_out,
    held_out_summary,
    kept_held_out,
    kept_tuning,
    least_retimed,
    picks_above,
    score,
)
from mobile_opt.models.device_profile import (  # noqa: E402
    ProfileError,
    load_profile,
    profile_for_device,
)
from mobile_opt.tools.tuning import measure, node_name, retime  # noqa: E402
from mobile_opt.dialects.texture import Layout  # noqa: E402
from mobile_opt.dialects.texture.tiling import GemmBlock, GemmPlan, TileConfig  # noqa: E402
from mobile_opt.frontend.onnx_import import import_onnx  # noqa: E402
from mobile_opt.frontend.single_node import NODE_NAME  # noqa: E402
from mobile_opt.models import texture_kernels  # noqa: E402
from mobile_opt.models.cdmpp import Ensemble, Predictor, shipped_path  # noqa: E402
from mobile_opt.tools.cli import noting, progress_bar  # noqa: E402
from mobile_opt.tools.mobile_learn import InputError as UnreadableFile  # noqa: E402
from mobile_opt.tools.mobile_learn import noise_floor, read  # noqa: E402
from mobile_opt.transforms.cdmpp_cost import CdmppCost  # noqa: E402
from mobile_opt.transforms.prune_configs import HardwareLimits, kernel_of  # noqa: E402


FAMILIES = ("matmul", "conv", "conv-s2", "depthwise", "deconv", "softmax", "layernorm")
"""TMModel's kernel set (Table 3): products, convolutions (stride 1 and 2, depthwise,
transposed), and the row normalisations."""


def sample_cases(family: str, count: int, cpu: bool, rng: np.random.Generator) -> list[Case]:
    """
    `count` kernels of a family from Table 3's ranges: products 2^4..2^12 per
    dimension; convolutions 2^4..2^9 channels and pixels a side with 3..7 kernels;
    normalisations 2^4..2^12 rows and row lengths. A CPU device gets the smaller end
    (and every family a cap on its work) to fit the time.
    """
    def power(low: int, high: int) -> int:
        return 2 ** int(rng.integers(low, high + 1))

    work_cap = 2**27 if cpu else 2**33
    cases: list[Case] = []
    for _ in range(1000 * count):
        if len(cases) == count:
            break
        if family == "matmul":
            high = 8 if cpu else 12
            m, k, n = power(4, high), power(4, high), power(4, high)
            case, work = Case(family, "MatMul", ((m, k), (k, n))), m * k * n
        elif family in ("conv", "conv-s2", "depthwise", "deconv"):
            c = power(4, 6 if cpu else 9)
            side = power(4, 5 if cpu else 7)
            kernel = int(rng.choice([3, 5, 7]))
            stride = {"conv": 1, "conv-s2": 2}.get(family, int(rng.integers(1, 3)))
            m, group = (c, c) if family == "depthwise" else (power(4, 6 if cpu else 9), 1)
            pad = kernel // 2
            attrs: dict = {"strides": (stride,) * 2, "pads": (pad,) * 4, "group": group}
            if family == "deconv":
                attrs["output_padding"] = (stride - 1,) * 2
                weight = (c, m, kernel, kernel)
            else:
                weight = (m, c // group, kernel, kernel)
            op = "ConvTranspose" if family == "deconv" else "Conv"
            case = Case(family, op, ((1, c, side, side), weight, (m,)), tuple(attrs.items()))
            upsampled = stride**2 if family == "deconv" else 1  # its output: stride² more pixels
            work = (c // group) * m * side * side * kernel * kernel * upsampled
        else:
            rows, length = power(4, 9 if cpu else 12), power(4, 10 if cpu else 12)
            if family == "softmax":
                case = Case(family, "Softmax", ((rows, length),), (("axis", -1),))
            else:
                case = Case(family, "LayerNormalization", ((rows, length), (length,), (length,)),
                            (("axis", -1),))
            work = rows * length * 64
        if work <= work_cap and case not in cases:
            cases.append(case)
    return cases


def families_of(parser: argparse.ArgumentParser, text: str) -> list[str]:
    """The comma-separated families of a --families option; one naming none of FAMILIES is
    a usage error."""
    families = [f for f in text.split(",") if f]
    if unknown := [f for f in families if f not in FAMILIES]:
        parser.error(f"--families: unknown {', '.join(unknown)}")
    return families


DEFAULT_CASES = {"cpu": 2, "gpu": 4}
"""Kernels per family of a run (MatMul gets three times as many), by the device's kind."""


def benchmark_cases(families: list[str], per_family: int, cpu: bool, seed: int) -> list[Case]:
    """
    The kernels a run measures. Each family draws from its own generator, so that its
    kernels do not depend on the other families run, and fewer cases are a prefix of more.
    """
    return [c for f in families
            for c in sample_cases(f, per_family * (3 if f == "matmul" else 1), cpu,
                                  np.random.default_rng([seed, FAMILIES.index(f)]))]


def benchmark_specs(profile_name: str, cpu: bool) -> list[dict]:
    """
    The nodes of this benchmark on a device (a default run's, and those of the results
    saved for its profile): what a learned cost model scored here must not train on.
    """
    cases = benchmark_cases(list(FAMILIES), DEFAULT_CASES["cpu" if cpu else "gpu"], cpu, 0)
    specs = [c.spec() for c in cases]
    saved = BENCH_DIR / "results" / f"tmmodel-{Path(profile_name).stem}.json"
    if saved.is_file():
        specs += [r["case"] for r in json.loads(saved.read_text())["rows"]]
    return specs


RETIMED_FASTEST = 5
"""Fastest configurations of the scan timed again beside the model's choice."""
RETIME_ROUNDS = 10
HELD_OUT_BUILDS = 3
"""Builds of each search's choice timed held out (`held_out`), each `RETIME_ROUNDS`."""


def learned_picks(predictors: dict[str, Predictor | Ensemble], node, profile: dict,
                  profile_name: str, kept: list[TileConfig]) -> tuple[LearnedPick, ...]:
    """Each predictor's choice among the pruned configurations, as
    `texture-tile{cost-model=cdmpp}` makes it, and what making it took (lowering each
    candidate and predicting)."""
    picks = []
    for name, predictor in predictors.items():
        start = time.perf_counter()
        model = CdmppCost(predictor, profile, profile_name, node, True,
                          HardwareLimits.of(profile).max_image)
        config = model.choose(kept)
        picks.append(LearnedPick(name, config, time.perf_counter() - start))
    return tuple(picks)


def run_case(case: Case, device, profile: dict, profile_name: str, folder: Path, note,
             predictors: dict[str, Predictor | Ensemble]) -> dict:
    """
    Every configuration of the case's kernel measured (the scan); then the models'
    choices, the ablation's picks and the scan's fastest few timed again, interleaved;
    scored; then each search's choice timed once more, built again (`held_out`).
    """
    limits = HardwareLimits.of(profile)
    module = import_onnx(str(case.save(folder)))
    node = next(o for o in module.walk() if node_name(o) == NODE_NAME)
    # tensors in images (`tools/tuning.build`), where products and convs may be blocked
    kernel = kernel_of(node, limits.max_image)
    assert kernel is not None, case
    space = list(texture_kernels.candidates(kernel, limits.max_group))
    measured = {m.config: (m.seconds, m.cost_seconds)
                for m in measure(module, NODE_NAME, space, device, progress=note)}
    picked = choose(kernel, profile, {c: m[0] for c, m in measured.items()})
    learned = learned_picks(predictors, node, profile, profile_name, picked.kept)
    fastest = sorted(picked.kept, key=lambda c: measured[c][0])[:RETIMED_FASTEST]
    again = list(dict.fromkeys([picked.model, picked.base, picked.tile_only,
                                *(p.config for p in learned), *fastest]))
    again = [c for c in again if math.isfinite(measured[c][0])]
    retimed = {m.config: m.seconds for m in retime(module, NODE_NAME, again, device,
                                                   RETIME_ROUNDS, progress=note)}
    row = score(case, kernel, profile, measured, retimed, learned)
    if row["retimed"]:
        chosen = {"exhaustive": least_retimed(space, retimed),
                  "search": picked.best_kept, "model": picked.model,
                  **{p.name: p.config for p in learned}}
        builds = [{m.config: m.seconds for m in retime(
            module, NODE_NAME, list(dict.fromkeys(chosen.values())), device, RETIME_ROUNDS,
            progress=note)} for _ in range(HELD_OUT_BUILDS)]
        row |= held_out(chosen, builds)
    return row


def rescore(row: dict, profile: dict, profile_name: str, folder: Path,
            predictors: dict[str, Predictor | Ensemble], same_models: bool) -> dict:
    """A row of an earlier run scored again (another profile or model), its times kept
    (a learned model's choice that the run did not re-time is scored on the scan's; the
    held-out times of the picks that are still those then timed; with `same_models`, the
    run's profile and shipped predictor, the tuning times of the picks it makes alike)."""
    case = Case.of_spec(row["family"], row["case"])
    node = next(o for o in import_onnx(str(case.save(folder))).walk()
                if node_name(o) == NODE_NAME)
    kernel = kernel_of(node, HardwareLimits.of(profile).max_image)
    configs = {saved_config(c): c for c in row["configs"]}
    measured = {config: (c["ms"] * 1e-3 if c["ms"] is not None else math.inf,
                         c["measuring_seconds"]) for config, c in configs.items()}
    retimed = {config: c["retimed_ms"] * 1e-3 for config, c in configs.items()
               if c.get("retimed_ms") is not None}
    kept = choose(kernel, profile, {c: m[0] for c, m in measured.items()}).kept
    learned = learned_picks(predictors, node, profile, profile_name, kept)
    scored = score(case, kernel, profile, measured, retimed, learned)
    return scored | kept_held_out(row, scored) | (kept_tuning(row, scored) if same_models else {})


def saved_config(saved: dict) -> TileConfig:
    """A configuration as `score` saved it."""
    if saved.get("block"):
        return TileConfig.blocked(GemmPlan(GemmBlock(*saved["block"]), saved["split"] or 1))
    return TileConfig(tuple(saved["tile"]), tuple(saved["group"]) if saved["group"] else None,
                      Layout(saved["layout"]) if saved.get("layout") else None)


def _pick_summary(rows: list[dict], name: str, prefix: str = "") -> dict:
    """One model's choices over the rows: their latency over the exhaustive best's, top-1,
    and the model's tuning time over exhaustive search's."""
    ratios = [r[f"{name}_over_exhaustive"] for r in rows]
    return {
        f"{name}_over_exhaustive_geomean": geomean(ratios),
        f"{name}_over_exhaustive_worst": max(ratios),
        f"scan_{name}_over_exhaustive_geomean": geomean(
            [r[f"scan_{name}_over_exhaustive"] for r in rows]),
        f"{prefix}top1_accuracy": sum(r[f"{prefix}top1"] for r in rows) / len(rows),
        f"{prefix}tuning_time_ratio": sum(r[f"{name}_tuning_seconds"] for r in rows)
        / sum(r["exhaustive_tuning_seconds"] for r in rows)}


def summary(rows: list[dict]) -> dict:
    learned = {k: v for name in LEARNED if all(f"{name}_choice" in r for r in rows)
               for k, v in _pick_summary(rows, name, f"{name}_").items()}
    return learned | {
        "kernels": len(rows), **_pick_summary(rows, "model"),
        "retimed_fraction": sum(r["retimed"] for r in rows) / len(rows),
        # exhaustive search's own choice scored as the models' are: their floor here
        "search_over_exhaustive_geomean": geomean([r["search_over_exhaustive"] for r in rows]),
        "search_over_exhaustive_worst": max(r["search_over_exhaustive"] for r in rows),
        "ablation_speedup_over_base_geomean": {
            k: geomean([r["latency_ms"]["base"] / r["latency_ms"][k] for r in rows])
            for k in ("base", "tmm_t", "tmm", "exhaustive")},
        "pruned_fraction_mean": 1 - sum(r["pruned_space"] for r in rows)
        / sum(r["space"] for r in rows),
        "best_survives_fraction": sum(r["best_survives"] for r in rows) / len(rows),
        "pruned_best_over_best_geomean": geomean([r["pruned_best_over_best"] for r in rows]),
    } | held_out_summary(rows)


def table(rows: list[dict]) -> str:
    head = ["kernel", "space", "pruned", "model", "exhaustive", "model/exh", "base ms",
            "tmm-t ms", "tmm ms", "exh ms"]
    lines = [head]
    for r in rows:
        ms = r["latency_ms"]
        lines.append([r["kernel"], str(r["space"]), str(r["pruned_space"]),
                      r["model_choice"], r["exhaustive_choice"],
                      f"{r['model_over_exhaustive']:.3f}", f"{ms['base']:.3f}",
                      f"{ms['tmm_t']:.3f}", f"{ms['tmm']:.3f}", f"{ms['exhaustive']:.3f}"])
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)) for line in lines)


def device_noise_floor(profile_name: str) -> float | None:
    """The noise floor (seconds) of the profile's CDMPP dataset, where there is one."""
    path = BENCH_DIR / "data" / f"cdmpp-{Path(profile_name).stem}.npz"
    if not path.is_file():
        return None
    try:
        return read(path, "CDMPP dataset", lambda p: noise_floor(np.load(p, allow_pickle=False)))
    except UnreadableFile as e:
        raise InputError(e) from None


def save(rows: list[dict], families: list[str], out: Path, device_text: str,
         device_name: str, profile_name: str, floor: float | None, chart: bool = True,
         host: str | None = None, rescored: bool = False) -> dict:
    """The rows and their summaries (overall, by family, and above the device's noise
    floor `floor`, seconds) as JSON; a chart beside them."""
    result = {"all": summary(rows), "above_noise_floor": above_floor(rows, floor),
              "launch_bound_or_more": {"floor_s": LAUNCH_BOUND}
              | picks_above(rows, LAUNCH_BOUND)}
    for family in families:
        mine = [r for r in rows if r["family"] == family]
        if mine:
            result[family] = summary(mine)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(run_json({"device": device_text, "profile": Path(profile_name).stem,
                             "host": host or platform.node(), "rescored": rescored,
                             "summary": result}, rows))
    if chart:
        write_chart(rows, f"TMModel and CDMPP on {device_name}", out.with_suffix(".png"))
    return result


def run_json(head: dict, rows: list[dict]) -> str:
    """A run as JSON: `head` indented, then its rows under "rows", one a line (a row holds
    every configuration of its kernel, so that indented, a run was most of the tree)."""
    lines = ",\n".join(json.dumps(r, separators=(",", ":")) for r in rows)
    return json.dumps(head, indent=1)[:-2] + f',\n "rows": [\n{lines}\n ]\n}}\n'


def write_chart(rows: list[dict], title: str, path: Path) -> None:
    """Each pick's latency over the exhaustive best's, per kernel (a line per pick)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.2, 4.4), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for pick in ("base", "tmm_t", "tmm", *LEARNED):
        if all(pick in r["latency_ms"] for r in rows):
            axes.plot([r["latency_ms"][pick] / r["latency_ms"]["exhaustive"] for r in rows],
                      marker=".", label=pick)
    axes.plot([r["search_over_exhaustive"] for r in rows], marker=".", linestyle=":",
              color="0.5", label="scan's best")
    if all("held_out_cdmpp_over_exhaustive" in r for r in rows):
        axes.plot([r["held_out_cdmpp_over_exhaustive"] for r in rows], marker="x",
                  linestyle="--", label="cdmpp, held out")
    axes.set_title(title)
    axes.set_xlabel("kernel (by family)")
    axes.set_ylabel("latency / exhaustive best")
    axes.set_yscale("log")  # Base's ratios run to 25, the models' to 2
    axes.grid(True, color="0.9")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    figure.savefig(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="pocl")
    parser.add_argument("--profile", help="device profile (default: the shipped one of the device)")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help=f"comma-separated, of {', '.join(FAMILIES)}")
    parser.add_argument("--cases", type=int, default=None,
                        help="kernels per family (MatMul gets three times as many)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rescore", metavar="RESULTS[,RESULTS...]",
                        help="score earlier runs' measurements again, together (the current "
                             "model and profile; the runs' device and times)")
    parser.add_argument("--out", help="JSON path (default bench/results/tmmodel-<device>.json)")
    parser.add_argument("--no-cdmpp", dest="cdmpp", action="store_false",
                        help="leave out the CDMPP predictor shipped for the profile")
    parser.add_argument("--predictor", type=Path,
                        help="score this CDMPP predictor (.npz) instead of the shipped one")
    parser.add_argument("--beside", type=Path, metavar="PREDICTOR",
                        help="also score this CDMPP predictor (.npz), its choices re-timed "
                             "in the same run (`cdmpp_beside_...` fields)")
    args = parser.parse_args()
    if args.predictor and not args.cdmpp:
        parser.error("--predictor: CDMPP is left out (--no-cdmpp)")
    if args.beside and not args.cdmpp:
        parser.error("--beside: CDMPP is left out (--no-cdmpp)")
    families = families_of(parser, args.families)
    if not families:
        parser.error("--families: unknown (none given)")
    try:
        return run(args, families)
    except InputError as e:
        print(f"bench/tmmodel.py: error: {e}", file=sys.stderr)
        return 1


class InputError(Exception):
    """A --rescore file, --profile, --device, shipped predictor or device dataset that
    cannot be read or found."""


def load_profile_or_fail(name: str) -> dict:
    try:
        return load_profile(name)
    except ProfileError as e:
        raise InputError(e) from None


def shipped_predictor(profile_name: str, wanted: bool, path: Path | None = None
                      ) -> Predictor | Ensemble | None:
    """The CDMPP predictor at `path`, or else the one shipped for the profile, if wanted
    and there is one."""
    if not wanted:
        return None
    if path is None:
        path = shipped_path(Path(profile_name).stem)
        if not path.is_file():
            return None
    try:
        return read(path, "CDMPP predictor", Predictor.load)
    except UnreadableFile as e:
        raise InputError(e) from None


def learned_predictors(profile_name: str, args: argparse.Namespace
                       ) -> dict[str, Predictor | Ensemble]:
    """The CDMPP predictors a run scores, by the name their fields take (`LEARNED`)."""
    predictor = shipped_predictor(profile_name, args.cdmpp, args.predictor)
    beside = args.beside and shipped_predictor(profile_name, True, args.beside)
    return {name: p for name, p in zip(LEARNED, (predictor, beside)) if p is not None}


RUN_HEAD = ("device", "host", "profile", "rows")
"""The fields of a saved run that `--rescore` and `bench/tmmodel_recheck.py` read besides
its rows' own."""


def load_runs(paths: str) -> list[dict]:
    runs = []
    for path in paths.split(","):
        try:
            run = json.loads(Path(path).read_text())
        except (OSError, ValueError) as e:
            raise InputError(e) from None
        if not isinstance(run, dict) or not isinstance(run.get("rows"), list) or any(
                key not in run for key in RUN_HEAD):
            raise InputError(f"{path}: not a bench/tmmodel.py run (it needs "
                             f"{', '.join(RUN_HEAD)}; rows a list)")
        runs.append(run)
    return runs


def run(args: argparse.Namespace, families: list[str]) -> int:
    with tempfile.TemporaryDirectory() as folder:
        if args.rescore:
            runs = load_runs(args.rescore)
            device_text, device_name = runs[0]["device"], runs[0]["device"].split(" [")[0]
            host = runs[0]["host"]
            profile_name = args.profile or runs[0]["profile"]
            profile = load_profile_or_fail(profile_name)
            predictors = learned_predictors(profile_name, args)
            floor = device_noise_floor(profile_name)
            rows = [rescore(r, profile, profile_name, Path(folder), predictors,
                            same_models=profile_name == run["profile"] and not (
                                args.predictor or args.beside))
                    for run in runs for r in run["rows"] if r["family"] in families]
        else:
            # exhaustive search's time is a first tune's, compiling every candidate: PoCL's
            # kernel cache would serve the builds of an earlier run (it is read when the
            # platform loads, so this comes before choosing the device)
            os.environ["POCL_CACHE_DIR"] = str(Path(folder) / "pocl-cache")
            try:
                device = choose_device(args.device)
            except DeviceError as e:
                raise InputError(e) from None
            device_text, device_name = device.describe(), device.name
            host = None
            profile_name = args.profile or profile_for_device(device.name, device.platform)
            if profile_name is None:
                print(f"no shipped profile for {device.name}: run mobile-probe and pass "
                      "--profile", file=sys.stderr)
                return 1
            profile = load_profile_or_fail(profile_name)
            cpu = "CPU" in device.kind
            per_family = args.cases or DEFAULT_CASES["cpu" if cpu else "gpu"]
            cases = benchmark_cases(families, per_family, cpu, args.seed)
            predictors = learned_predictors(profile_name, args)
            floor = device_noise_floor(profile_name)
            bar = progress_bar(len(cases), f"tmmodel on {device.name}", "kernel")
            rows = []
            partial = Path(args.out or BENCH_DIR / "results" / "tmmodel-partial.json")
            for case in cases:
                bar.set_postfix_str(f"{case.family} {case.inputs[0]}")
                rows.append(run_case(case, device, profile, profile_name, Path(folder),
                                     noting(bar), predictors))
                bar.update()
                # what is measured survives a run cut short
                save(rows, families, partial.with_suffix(".partial.json"), device_text,
                     device_name, profile_name, floor, chart=False)
            bar.close()
            partial.with_suffix(".partial.json").unlink(missing_ok=True)
    out = Path(args.out) if args.out else BENCH_DIR / "results" / (
        f"tmmodel-{'pocl' if profile_name == 'pocl' else Path(profile_name).stem}.json")
    result = save(rows, families, out, device_text, device_name, profile_name, floor,
                  host=host, rescored=bool(args.rescore))
    print(table(rows))
    print(json.dumps(result, indent=1))
    print(f"wrote {out} and {out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
