"""
TMModel against measured exhaustive search, on the configurations `texture-tile`
chooses from (thread tile T, with it the access pattern; work-group size G, with it
the warp shape).

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
- (e) the space before and after `prune-configs`, and whether the best survives.

    python3 bench/tmmodel.py --device pocl          # about 6 minutes on two cores
    python3 bench/tmmodel.py --device gpu --cases 4  # bench/gpu_tmmodel.sh on the GPU

Results: `bench/results/tmmodel-<device>.json` (summaries overall and per family) and a
PNG chart beside it.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
from e2e import import_repo_package  # noqa: E402

import_repo_package()

from mobile_opt.backends.opencl.devices import DeviceError, choose_device  # noqa: E402
from mobile_opt.models.device_profile import (  # noqa: E402
    ProfileError,
    load_profile,
    profile_for_device,
    texture_constants,
)
from mobile_opt.tools.tuning import measure, node_name, retime  # noqa: E402
from mobile_opt.dialects.texture import Layout  # noqa: E402
from mobile_opt.dialects.texture.tiling import TileConfig  # noqa: E402
from mobile_opt.frontend.onnx_import import import_onnx  # noqa: E402
from mobile_opt.frontend.single_node import NODE_NAME, save_single_node  # noqa: E402
from mobile_opt.models import texture_kernels  # noqa: E402
from mobile_opt.tools.png_chart import Chart, write_png  # noqa: E402
from mobile_opt.tools.progress import ProgressBar  # noqa: E402
from mobile_opt.transforms.prune_configs import (  # noqa: E402
    HardwareLimits,
    kernel_of,
    prune_reason,
)


FAMILIES = ("matmul", "conv", "conv-s2", "depthwise", "deconv", "softmax", "layernorm")
"""TMModel's kernel set (Table 3): products, convolutions (stride 1 and 2, depthwise,
transposed), and the row normalisations."""


@dataclass(frozen=True)
class Case:
    """One sampled kernel: its family and the ONNX node that computes it."""

    family: str
    op: str
    inputs: tuple[tuple[int, ...], ...]
    """Shapes of the graph input and of the constant operands, in node order."""
    attrs: tuple[tuple[str, object], ...] = ()

    def save(self, folder: Path) -> Path:
        path = folder / f"{self.family}_{len(list(folder.iterdir()))}.onnx"
        return save_single_node(path, self.op, self.inputs, self.attrs)


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


def geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


RETIMED_FASTEST = 5
"""Fastest configurations of the scan timed again beside the model's choice."""
RETIME_ROUNDS = 10


def run_case(case: Case, device, profile: dict, folder: Path, bar: ProgressBar) -> dict:
    """
    Every configuration of the case's kernel measured (the scan); then the model's choice,
    the ablation's picks and the scan's fastest few timed again, interleaved; scored.
    """
    limits = HardwareLimits.of(profile)
    module = import_onnx(str(case.save(folder)))
    kernel = kernel_of(next(o for o in module.walk() if node_name(o) == NODE_NAME))
    assert kernel is not None, case
    space = list(texture_kernels.candidates(kernel, limits.max_group))
    measured = {m.config: (m.seconds, m.cost_seconds)
                for m in measure(module, NODE_NAME, space, device, progress=bar.note)}
    picked = choose(kernel, profile, {c: m[0] for c, m in measured.items()})
    fastest = sorted(picked.kept, key=lambda c: measured[c][0])[:RETIMED_FASTEST]
    again = list(dict.fromkeys([picked.model, picked.base, picked.tile_only, *fastest]))
    again = [c for c in again if math.isfinite(measured[c][0])]
    retimed = {m.config: m.seconds for m in retime(module, NODE_NAME, again, device,
                                                   RETIME_ROUNDS, progress=bar.note)}
    return score(case, kernel, profile, measured, retimed)


@dataclass(frozen=True)
class Picks:
    """The configurations each search picks from one kernel's measured space."""

    pruned: dict[TileConfig, str | None]
    """Every configuration of the space: the criterion that prunes it, or None."""
    kept: list[TileConfig]
    """The space after pruning."""
    model: TileConfig
    model_seconds: float
    """What evaluating the model over `kept` took."""
    predicted: dict[TileConfig, float]
    best_all: TileConfig
    best_kept: TileConfig
    base: TileConfig
    """T = 1 with its best measured G."""
    tile_only: TileConfig
    """The model's T with its best measured G."""


def choose(kernel, profile: dict, latency: dict[TileConfig, float]) -> Picks:
    constants = texture_constants(profile)
    limits = HardwareLimits.of(profile)
    space = list(latency)
    pruned = {c: prune_reason(limits, kernel.model_inputs(c), c) for c in space}
    kept = [c for c in space if pruned[c] is None]
    start = time.perf_counter()
    predicted = {c: texture_kernels.predicted_cost(constants, kernel, c) for c in kept}
    model = texture_kernels.model_choice(constants, kernel, kept)
    model_seconds = time.perf_counter() - start

    def best_with_tile(tile: tuple[int, int]) -> TileConfig:
        """Fig. 9's Base and TMM-T: the tile, B as it comes, the best measured G."""
        pool = [c for c in kept if c.tile == tile and c.layout is None] or kept
        return min(pool, key=lambda c: latency[c])

    return Picks(pruned, kept, model, model_seconds, predicted,
                 best_all=min(space, key=lambda c: latency[c]),
                 best_kept=min(kept, key=lambda c: latency[c]),
                 base=best_with_tile(next(iter(kernel.thread_tiles()))),
                 tile_only=best_with_tile(model.tile))


def score(case: Case, kernel, profile: dict,
          measured: dict[TileConfig, tuple[float, float]],
          retimed: dict[TileConfig, float] | None = None) -> dict:
    """
    The model's choice and the measured searches' over one kernel's space, from each
    configuration's (latency, what measuring it took) in the scan. Where the re-timing
    covers the model's choice (`retimed`), the exhaustive best is the least re-timed
    configuration and every latency reported is a re-timed one: the scan's least time
    favours a configuration measured in a quiet moment.
    """
    space = list(measured)
    scan = {c: measured[c][0] for c in space}
    picks = choose(kernel, profile, scan)
    retimed = retimed or {}
    use_retimed = all(c in retimed for c in (picks.model, picks.base, picks.tile_only))
    latency = {**scan, **retimed} if use_retimed else scan
    best = min(retimed, key=retimed.get) if use_retimed else picks.best_kept
    return {
        "family": case.family, "kernel": kernel.describe_shape(),
        "case": {"op": case.op, "inputs": case.inputs, "attrs": dict(case.attrs)},
        "space": len(space), "pruned_space": len(picks.kept),
        "best_survives": picks.best_all in picks.kept,
        "pruned_best_over_best": scan[picks.best_kept] / scan[picks.best_all],
        "model_choice": picks.model.describe(), "exhaustive_choice": best.describe(),
        "top1": picks.model == best,
        "model_over_exhaustive": latency[picks.model] / latency[best],
        "scan_model_over_exhaustive": scan[picks.model] / scan[picks.best_kept],
        "retimed": use_retimed,
        "model_tuning_seconds": picks.model_seconds,
        "exhaustive_tuning_seconds": sum(measured[c][1] for c in picks.kept),
        "latency_ms": {"base": latency[picks.base] * 1e3,
                       "tmm_t": latency[picks.tile_only] * 1e3,
                       "tmm": latency[picks.model] * 1e3, "exhaustive": latency[best] * 1e3},
        "configs": [{"config": c.describe(), "tile": c.tile, "group": c.group,
                     "layout": c.layout.value if c.layout else None,
                     "ms": scan[c] * 1e3 if math.isfinite(scan[c]) else None,
                     "retimed_ms": retimed[c] * 1e3 if c in retimed else None,
                     "measuring_seconds": measured[c][1],
                     "pruned": picks.pruned[c],
                     "predicted": picks.predicted.get(c)
                     if math.isfinite(picks.predicted.get(c, 0.0)) else None} for c in space],
    }


def rescore(row: dict, profile: dict, folder: Path) -> dict:
    """A row of an earlier run scored again (another profile or model), its times kept."""
    spec = row["case"]
    case = Case(row["family"], spec["op"], tuple(tuple(s) for s in spec["inputs"]),
                tuple((k, tuple(v) if isinstance(v, list) else v)
                      for k, v in spec["attrs"].items()))
    kernel = kernel_of(next(o for o in import_onnx(str(case.save(folder))).walk()
                            if node_name(o) == NODE_NAME))
    configs = {TileConfig(tuple(c["tile"]), tuple(c["group"]) if c["group"] else None,
                          Layout(c["layout"]) if c.get("layout") else None): c
               for c in row["configs"]}
    measured = {config: (c["ms"] * 1e-3 if c["ms"] is not None else math.inf,
                         c["measuring_seconds"]) for config, c in configs.items()}
    retimed = {config: c["retimed_ms"] * 1e-3 for config, c in configs.items()
               if c.get("retimed_ms") is not None}
    return score(case, kernel, profile, measured, retimed)


def summary(rows: list[dict]) -> dict:
    ratios = [r["model_over_exhaustive"] for r in rows]
    return {
        "kernels": len(rows),
        "model_over_exhaustive_geomean": geomean(ratios),
        "model_over_exhaustive_worst": max(ratios),
        "scan_model_over_exhaustive_geomean": geomean(
            [r["scan_model_over_exhaustive"] for r in rows]),
        "retimed_fraction": sum(r["retimed"] for r in rows) / len(rows),
        "tuning_time_ratio": sum(r["model_tuning_seconds"] for r in rows)
        / sum(r["exhaustive_tuning_seconds"] for r in rows),
        "top1_accuracy": sum(r["top1"] for r in rows) / len(rows),
        "ablation_speedup_over_base_geomean": {
            k: geomean([r["latency_ms"]["base"] / r["latency_ms"][k] for r in rows])
            for k in ("base", "tmm_t", "tmm", "exhaustive")},
        "pruned_fraction_mean": 1 - sum(r["pruned_space"] for r in rows)
        / sum(r["space"] for r in rows),
        "best_survives_fraction": sum(r["best_survives"] for r in rows) / len(rows),
        "pruned_best_over_best_geomean": geomean([r["pruned_best_over_best"] for r in rows]),
    }


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


def save(rows: list[dict], families: list[str], out: Path, device_text: str,
         device_name: str, profile_name: str, chart: bool = True,
         host: str | None = None, rescored: bool = False) -> dict:
    """The rows and their summaries (overall, by family) as JSON; a chart beside them."""
    result = {"all": summary(rows)}
    for family in families:
        mine = [r for r in rows if r["family"] == family]
        if mine:
            result[family] = summary(mine)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"device": device_text, "profile": Path(profile_name).stem,
                               "host": host or platform.node(), "rescored": rescored,
                               "summary": result, "rows": rows},
                              indent=1) + "\n")
    if chart:
        write_png(Chart(f"TMModel on {device_name}", "kernel (by family)",
                        "latency / exhaustive best",
                        {k: [(i, r["latency_ms"][k] / r["latency_ms"]["exhaustive"])
                             for i, r in enumerate(rows)] for k in ("base", "tmm_t", "tmm")}),
                  out.with_suffix(".png"))
    return result


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
    args = parser.parse_args()
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown or not families:
        parser.error(f"--families: unknown {', '.join(unknown) or '(none given)'}")
    try:
        return run(args, families)
    except InputError as e:
        print(f"bench/tmmodel.py: error: {e}", file=sys.stderr)
        return 1


class InputError(Exception):
    """A --rescore file, --profile or --device that cannot be read or found."""


def load_profile_or_fail(name: str) -> dict:
    try:
        return load_profile(name)
    except ProfileError as e:
        raise InputError(e) from None


def load_runs(paths: str) -> list[dict]:
    try:
        return [json.loads(Path(p).read_text()) for p in paths.split(",")]
    except (OSError, ValueError) as e:
        raise InputError(e) from None


def run(args: argparse.Namespace, families: list[str]) -> int:
    with tempfile.TemporaryDirectory() as folder:
        if args.rescore:
            runs = load_runs(args.rescore)
            device_text, device_name = runs[0]["device"], runs[0]["device"].split(" [")[0]
            host = runs[0]["host"]
            profile_name = args.profile or runs[0]["profile"]
            profile = load_profile_or_fail(profile_name)
            rows = [rescore(r, profile, Path(folder)) for run in runs for r in run["rows"]
                    if r["family"] in families]
        else:
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
            per_family = args.cases or (2 if cpu else 4)
            rng = np.random.default_rng(args.seed)
            cases = [c for f in families
                     for c in sample_cases(f, per_family * (3 if f == "matmul" else 1), cpu, rng)]
            bar = ProgressBar(len(cases), f"tmmodel on {device.name}")
            rows = []
            partial = Path(args.out or BENCH_DIR / "results" / "tmmodel-partial.json")
            for case in cases:
                bar.start_step(f"{case.family} {case.inputs[0]}")
                rows.append(run_case(case, device, profile, Path(folder), bar))
                # what is measured survives a run cut short
                save(rows, families, partial.with_suffix(".partial.json"), device_text,
                     device_name, profile_name, chart=False)
            bar.finish()
            partial.with_suffix(".partial.json").unlink(missing_ok=True)
    out = Path(args.out) if args.out else BENCH_DIR / "results" / (
        f"tmmodel-{'pocl' if profile_name == 'pocl' else Path(profile_name).stem}.json")
    result = save(rows, families, out, device_text, device_name, profile_name, host=host,
                  rescored=bool(args.rescore))
    print(table(rows))
    print(json.dumps(result, indent=1))
    print(f"wrote {out} and {out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
