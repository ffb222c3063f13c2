"""
How a cost model's choice of kernel configuration compares with the measured search
over the same space: the picks of each search (TMModel's, the ablation's, the
exhaustive best before and after pruning) and their scores. `bench/tmmodel.py` scores
its measurements with it; the tests check it on made-up times.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mobile_opt.dialects.texture.tiling import GemmPlan, TileConfig
from mobile_opt.frontend.single_node import save_single_node
from mobile_opt.models import texture_kernels
from mobile_opt.models.cdmpp import Ensemble, Predictor
from mobile_opt.models.device_profile import texture_constants
from mobile_opt.transforms.cdmpp_cost import CdmppCost
from mobile_opt.transforms.prune_configs import HardwareLimits, prune_reason, surviving


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

    def spec(self) -> dict:
        """The node as JSON holds it (`of_spec` reads it back)."""
        return {"op": self.op, "inputs": [list(s) for s in self.inputs],
                "attrs": {k: list(v) if isinstance(v, tuple) else v for k, v in self.attrs}}

    @classmethod
    def of_spec(cls, family: str, spec: dict) -> Case:
        return cls(family, spec["op"], tuple(tuple(s) for s in spec["inputs"]),
                   tuple((k, tuple(v) if isinstance(v, list) else v)
                         for k, v in spec["attrs"].items()))


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
    model = texture_kernels.TMModel(constants).choose(kernel, kept)
    model_seconds = time.perf_counter() - start

    def best_with_tile(tile: tuple[int, int], plan: GemmPlan | None = None) -> TileConfig:
        """Fig. 9's Base and TMM-T: the tile, B as it comes, the best measured G (a
        blocked plan's tile is its block's, whose group is fixed)."""
        pool = [c for c in kept if c.tile == tile and c.layout is None and c.plan == plan]
        return min(pool or kept, key=lambda c: latency[c])

    return Picks(pruned, kept, model, model_seconds, predicted,
                 best_all=min(space, key=lambda c: latency[c]),
                 best_kept=min(kept, key=lambda c: latency[c]),
                 base=best_with_tile(next(iter(kernel.thread_tiles()))),
                 tile_only=best_with_tile(model.tile, model.plan))


def ranked_first(node, kernel, profile: dict, profile_name: str,
                 predictor: Predictor | Ensemble, space: list[TileConfig], count: int
                 ) -> list[TileConfig]:
    """The `count` configurations of `space` that `predictor` and TMModel each rank fastest
    among those `texture-tile` chooses from (the pruned ones), the predictor's first:
    where a choice among hundreds goes wrong, and a uniform sample seldom looks."""
    limits = HardwareLimits.of(profile)
    kept = surviving(limits, kernel, space)
    learned = CdmppCost(predictor, profile, profile_name, node, True,
                        limits.max_image).costs(kept)
    constants = texture_constants(profile)
    analytic = [texture_kernels.predicted_cost(constants, kernel, c) for c in kept]
    ranked = [kept[i] for costs in (learned, analytic)
              for i in np.argsort(costs, kind="stable")[:count]]
    return list(dict.fromkeys(ranked))


LEARNED = ("cdmpp", "cdmpp_beside")
"""The names a learned model's choice is scored under: CDMPP's predictor, and another
scored beside it in the same run (`bench/tmmodel.py --beside`)."""

SCORED = ("model", *LEARNED, "search")
"""The picks a summary scores over the exhaustive best: TMModel's, the learned models',
and exhaustive search's own (the scan's best)."""


@dataclass(frozen=True)
class LearnedPick:
    """A learned cost model's choice over the pruned space, and what choosing took."""

    name: str
    config: TileConfig
    seconds: float


def score(case: Case, kernel, profile: dict,
          measured: dict[TileConfig, tuple[float, float]],
          retimed: dict[TileConfig, float] | None = None,
          learned: tuple[LearnedPick, ...] = ()) -> dict:
    """
    The model's choice and the measured searches' over one kernel's space, from each
    configuration's (latency, what measuring it took) in the scan. Where the re-timing
    covers the model's choice (`retimed`), the exhaustive best is the least re-timed
    configuration and every latency reported is a re-timed one: the scan's least time
    favours a configuration measured in a quiet moment. Each `learned` model's choice is
    scored beside TMModel's (`<name>_...` fields).
    """
    space = list(measured)
    scan = {c: measured[c][0] for c in space}
    picks = choose(kernel, profile, scan)
    retimed = retimed or {}
    scored = (picks.model, picks.base, picks.tile_only) + tuple(p.config for p in learned)
    use_retimed = all(c in retimed for c in scored)
    latency = {**scan, **retimed} if use_retimed else scan
    best = least_retimed(space, retimed) if use_retimed else picks.best_kept
    row = {
        "family": case.family, "kernel": kernel.describe_shape(),
        "case": case.spec(),
        "space": len(space), "pruned_space": len(picks.kept),
        "best_survives": picks.best_all in picks.kept,
        "pruned_best_over_best": scan[picks.best_kept] / scan[picks.best_all],
        "model_choice": picks.model.describe(), "exhaustive_choice": best.describe(),
        "top1": latency[picks.model] == latency[best],  # a tie is the best too
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
                     "block": [c.plan.block.bm, c.plan.block.bn, c.plan.block.bk,
                               c.plan.block.tm, c.plan.block.tn] if c.plan else None,
                     "split": c.plan.split if c.plan else None,
                     "ms": scan[c] * 1e3 if math.isfinite(scan[c]) else None,
                     "retimed_ms": retimed[c] * 1e3 if c in retimed else None,
                     "measuring_seconds": measured[c][1],
                     "pruned": picks.pruned[c],
                     "predicted": picks.predicted.get(c)
                     if math.isfinite(picks.predicted.get(c, 0.0)) else None} for c in space],
    }
    row["search_over_exhaustive"] = search_over_exhaustive(row)
    for pick in learned:
        row |= {f"{pick.name}_choice": pick.config.describe(),
                f"{pick.name}_top1": latency[pick.config] == latency[best],
                f"{pick.name}_over_exhaustive": latency[pick.config] / latency[best],
                f"scan_{pick.name}_over_exhaustive": scan[pick.config] / scan[picks.best_kept],
                f"{pick.name}_tuning_seconds": pick.seconds}
        row["latency_ms"][pick.name] = latency[pick.config] * 1e3
    return row


def least_retimed(space: list[TileConfig], retimed: dict[TileConfig, float]) -> TileConfig:
    """The exhaustive best: the least re-timed configuration, a tie to the first of the
    space (a timer's ticks make ties), so that a rescoring finds the run's."""
    return min((c for c in space if c in retimed), key=retimed.__getitem__)


def search_over_exhaustive(row: dict) -> float:
    """Exhaustive search's own choice (the scan's least kept configuration) scored as the
    models' are, against the least re-timed latency: what a model that predicted the scan
    exactly would read. Two timings of one kernel differ, and the least of several
    re-timed ones gains most from that, so this is over 1 where the device is noisy:
    the floor of a model's ratio on this row."""
    if not row["retimed"]:
        return 1.0
    return search_choice(row)["retimed_ms"] / row["latency_ms"]["exhaustive"]


def search_choice(row: dict) -> dict:
    """Exhaustive search's own choice in a scored row: its least kept configuration."""
    kept = [c for c in row["configs"] if c["ms"] is not None and c["pruned"] is None]
    return min(kept, key=lambda c: c["ms"])


def geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


LAUNCH_BOUND = 10e-6
"""The issue's noise floor of the H100 (seconds): kernels shorter are launch-bound."""


def held_out(chosen: dict[str, TileConfig], builds: list[dict[TileConfig, float]]) -> dict:
    """
    Each search's choice (`chosen`, by name; `exhaustive`: the least re-timed) over the
    exhaustive best, from re-timings after the choosing, each of its own build (`builds`:
    one configuration's time in each): a configuration's time is the median of its builds'.
    The re-timing that names the exhaustive best cannot value it too: the least of several
    times gains most from a lucky moment, so that against it even exhaustive search's own
    choice reads over 1 (`search_over_exhaustive`). Timed apart, no pick is favoured; one
    build's time of a kernel moves by a few per cent from the next one's (the same
    configuration, built again), which the median of several damps. A pick that no longer
    launches reads infinite; where the best does not, the row has no held-out fields (and
    so the run no held-out summary: `held_out_summary`).
    """
    timed = {c: float(np.median([b[c] for b in builds])) for c in set(chosen.values())}
    best = timed[chosen["exhaustive"]]
    if not math.isfinite(best):
        return {}
    return {"held_out_choices": {name: c.describe() for name, c in chosen.items()},
            "held_out_ms": {name: timed[c] * 1e3 for name, c in chosen.items()},
            "held_out_build_ms": {name: [b[c] * 1e3 for b in builds]
                                  for name, c in chosen.items()}} | {
        f"held_out_{name}_over_exhaustive": timed[c] / best
        for name, c in chosen.items() if name != "exhaustive"}


def kept_held_out(saved: dict, row: dict) -> dict:
    """The held-out fields of a saved row that `row` scores again, for the picks that are
    still the configurations then timed; none where the exhaustive best is another (not
    one of the least re-timed)."""
    then = saved.get("held_out_choices")
    # the best then timed held out must still be a least re-timed one (a tie may differ)
    retimed = {c["config"]: c["retimed_ms"] for c in row["configs"]}
    if not then or retimed.get(then["exhaustive"]) != row["latency_ms"]["exhaustive"]:
        return {}
    now = {"exhaustive": then["exhaustive"], "search": search_choice(row)["config"],
           "model": row["model_choice"],
           **{name: row[f"{name}_choice"] for name in LEARNED if f"{name}_choice" in row}}
    same = [name for name, config in then.items() if now.get(name) == config]
    builds = saved.get("held_out_build_ms", {})
    return {"held_out_choices": {name: then[name] for name in same},
            "held_out_ms": {name: saved["held_out_ms"][name] for name in same}} | (
        {"held_out_build_ms": {name: builds[name] for name in same}} if builds else {}) | {
        f"held_out_{name}_over_exhaustive": saved[f"held_out_{name}_over_exhaustive"]
        for name in same if name != "exhaustive"}


def kept_tuning(saved: dict, row: dict) -> dict:
    """The tuning times of a saved row's model picks that `row` makes alike: choosing was
    timed on the run's own host, beside the device; a rescoring's host is another."""
    return {f"{name}_tuning_seconds": saved[f"{name}_tuning_seconds"]
            for name in ("model", *LEARNED)
            if f"{name}_tuning_seconds" in saved and f"{name}_tuning_seconds" in row
            and saved.get(f"{name}_choice") == row.get(f"{name}_choice")}


def held_out_summary(rows: list[dict]) -> dict:
    """The geometric mean of each pick's held-out ratio (`held_out`), where every row has
    one (a rescored row keeps only those of its picks then timed: `kept_held_out`), and
    its `INTERVAL` over the rows (`interval`)."""
    ratios = {name: [r[f"held_out_{name}_over_exhaustive"] for r in rows] for name in SCORED
              if rows and all(f"held_out_{name}_over_exhaustive" in r for r in rows)}
    return {f"held_out_{name}_over_exhaustive_{what}": value
            for name, values in ratios.items()
            for what, value in (("geomean", geomean(values)), ("interval", interval(values)))}


INTERVAL = 0.9
"""The share of a bootstrap's geometric means that `interval` spans."""


def interval(values: list[float], draws: int = 2000) -> list[float]:
    """Where the geometric mean of `values` would lie had other kernels of their kind been
    drawn: the central `INTERVAL` of the geometric means of `draws` resamplings of them
    (with replacement; a fixed seed, so that a rescoring gives the same)."""
    logs = np.log(values)
    means = np.random.default_rng(0).choice(logs, (draws, len(logs))).mean(axis=1)
    tail = (1 - INTERVAL) / 2 * 100
    return [float(np.exp(np.percentile(means, q))) for q in (tail, 100 - tail)]


def picks_above(rows: list[dict], floor: float | None) -> dict:
    """The picks over the scored rows whose exhaustive best takes at least `floor`
    seconds (None: every row)."""
    kept = [r for r in rows if floor is None or r["latency_ms"]["exhaustive"] * 1e-3 >= floor]
    return {"kernels": len(kept)} | {
        f"{name}_over_exhaustive_geomean": geomean([r[f"{name}_over_exhaustive"] for r in kept])
        for name in SCORED
        if kept and all(f"{name}_over_exhaustive" in r for r in kept)} | held_out_summary(kept)


def above_floor(rows: list[dict], floor: float | None) -> dict:
    """The picks over the scored rows whose exhaustive best is above a noise floor
    (seconds; None: none): the issue's kernels under it are flagged in their rows
    (`under_noise_floor`) and left out here."""
    for r in rows:
        r["under_noise_floor"] = floor is not None and r["latency_ms"]["exhaustive"] * 1e-3 < floor
    return {"noise_floor_s": floor} | picks_above(rows, floor)
