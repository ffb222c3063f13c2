"""
TMModel against measured exhaustive search, on the configurations `texture-tile`
chooses from (thread tile T, with it the access pattern; work-group size G, with it
the warp shape).

For each MatMul shape, sampled from TMModel's Table 3 range (2^4..2^12 per dimension,
fewer and smaller on a CPU device to fit the time), every configuration of the space is
lowered, built and timed on the device (`backends/opencl/tuning.py`), and:

- (a) the latency of the model's choice over the exhaustive best (geometric mean, worst);
- (b) the model's tuning time (evaluating eq. 7 over the pruned space; probing is done
  once per device and reported separately) over exhaustive tuning's (measuring the pruned
  space);
- (c) top-1: how often the model picks the measured best;
- (d) the ablation: Base (T=1, the best measured G), TMM-T (the model's T, the best
  measured G for it), TMM (the model's T and G), Exhaustive;
- (e) the space before and after `prune-configs`, and whether the best survives.

    python3 bench/tmmodel.py --device pocl            # about ten minutes on two cores
    python3 bench/tmmodel.py --device gpu --shapes 12  # bench/gpu_tmmodel.sh on the GPU

Results: `bench/results/tmmodel-<device>.json` and a PNG chart beside it.
"""

from __future__ import annotations

import argparse
import json
import math
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

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from mobile_opt.backends.opencl.devices import choose_device  # noqa: E402
from mobile_opt.backends.opencl.probe.profile import (  # noqa: E402
    load_profile,
    profile_for_device,
    texture_constants,
)
from mobile_opt.backends.opencl.tuning import measure  # noqa: E402
from mobile_opt.frontend.onnx_import import import_onnx  # noqa: E402
from mobile_opt.models import texture_kernels  # noqa: E402
from mobile_opt.models.texture_kernels import MatMulShape  # noqa: E402
from mobile_opt.tools.png_chart import Chart, write_png  # noqa: E402
from mobile_opt.tools.progress import ProgressBar  # noqa: E402
from mobile_opt.transforms.prune_configs import HardwareLimits, prune_reason  # noqa: E402


def matmul_model(shape: MatMulShape, folder: Path) -> Path:
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.standard_normal((shape.k, shape.n)).astype(np.float32),
                                     "B")
    node = helper.make_node("MatMul", ["A", "B"], ["Y"], name="mm")
    graph = helper.make_graph(
        [node], "matmul", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [shape.m, shape.k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [shape.m, shape.n])], [weight])
    path = folder / f"matmul_{shape.m}_{shape.k}_{shape.n}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    return path


def sample_shapes(count: int, low: int, high: int, seed: int = 0) -> list[MatMulShape]:
    """Shapes with each dimension 2^low..2^high, spread over sizes (the space has 9^3)."""
    rng = np.random.default_rng(seed)
    largest = max(2 ** (3 * high - 3), 2 ** (3 * low))  # leave out the few biggest products
    eligible = sum(1 for a in range(low, high + 1) for b in range(low, high + 1)
                   for c in range(low, high + 1) if 2 ** (a + b + c) <= largest)
    count = min(count, eligible)  # more than there are would never end
    shapes: list[MatMulShape] = []
    while len(shapes) < count:
        m, k, n = (2 ** int(e) for e in rng.integers(low, high + 1, 3))
        if m * k * n <= largest and MatMulShape(m, k, n) not in shapes:
            shapes.append(MatMulShape(m, k, n))
    return sorted(shapes, key=lambda s: s.m * s.k * s.n)


def geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def run_shape(shape: MatMulShape, device, profile: dict, folder: Path, bar: ProgressBar) -> dict:
    constants = texture_constants(profile)
    limits = HardwareLimits.of(profile)
    space = list(texture_kernels.candidates(shape, limits.max_group))
    described = {c: texture_kernels.matmul_inputs(shape, c) for c in space}
    kept = [c for c in space if prune_reason(limits, described[c], c) is None]
    start = time.perf_counter()
    predicted = {c: texture_kernels.predicted_cost(constants, shape, c) for c in kept}
    model_choice = texture_kernels.model_choice(constants, shape, kept)
    model_seconds = time.perf_counter() - start
    module = import_onnx(str(matmul_model(shape, folder)))
    measured = {m.config: m for m in measure(module, "mm", space, device, progress=bar.note)}
    best_all = min(space, key=lambda c: measured[c].seconds)
    best_kept = min(kept, key=lambda c: measured[c].seconds)
    model_t = model_choice.rows

    def best_with_rows(rows: int):
        pool = [c for c in kept if c.rows == rows]
        return min(pool, key=lambda c: measured[c].seconds)

    base, tile_only = best_with_rows(1), best_with_rows(model_t)
    latency = {c: measured[c].seconds for c in space}
    return {
        "shape": [shape.m, shape.k, shape.n],
        "space": len(space), "pruned_space": len(kept),
        "best_survives": best_all in kept,
        "pruned_best_over_best": latency[best_kept] / latency[best_all],
        "model_choice": model_choice.describe(), "exhaustive_choice": best_kept.describe(),
        "top1": model_choice == best_kept,
        "model_over_exhaustive": latency[model_choice] / latency[best_kept],
        "model_tuning_seconds": model_seconds,
        "exhaustive_tuning_seconds": sum(measured[c].cost_seconds for c in kept),
        "latency_ms": {"base": latency[base] * 1e3, "tmm_t": latency[tile_only] * 1e3,
                       "tmm": latency[model_choice] * 1e3,
                       "exhaustive": latency[best_kept] * 1e3},
        "configs": [{"config": c.describe(),
                     "ms": latency[c] * 1e3 if math.isfinite(latency[c]) else None,
                     "pruned": prune_reason(limits, described[c], c),
                     "predicted": predicted.get(c) if math.isfinite(predicted.get(c, 0.0))
                     else None} for c in space],
    }


def summary(rows: list[dict]) -> dict:
    ratios = [r["model_over_exhaustive"] for r in rows]
    return {
        "shapes": len(rows),
        "model_over_exhaustive_geomean": geomean(ratios),
        "model_over_exhaustive_worst": max(ratios),
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
    head = ["M,K,N", "space", "pruned", "model", "exhaustive", "model/exh", "base ms", "tmm-t ms",
            "tmm ms", "exh ms"]
    lines = [head]
    for r in rows:
        ms = r["latency_ms"]
        lines.append([",".join(map(str, r["shape"])), str(r["space"]), str(r["pruned_space"]),
                      r["model_choice"], r["exhaustive_choice"],
                      f"{r['model_over_exhaustive']:.3f}", f"{ms['base']:.3f}",
                      f"{ms['tmm_t']:.3f}", f"{ms['tmm']:.3f}", f"{ms['exhaustive']:.3f}"])
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)) for line in lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="pocl")
    parser.add_argument("--profile", help="device profile (default: the shipped one of the device)")
    parser.add_argument("--shapes", type=int, default=None, help="how many MatMul shapes")
    parser.add_argument("--max-exponent", type=int, default=None, help="largest dimension 2^E")
    parser.add_argument("--out", help="JSON path (default bench/results/tmmodel-<device>.json)")
    args = parser.parse_args()
    device = choose_device(args.device)
    cpu = "CPU" in device.kind
    profile_name = args.profile or profile_for_device(device.name, device.platform)
    if profile_name is None:
        print(f"no shipped profile for {device.name}: run mobile-probe and pass --profile",
              file=sys.stderr)
        return 1
    profile = load_profile(profile_name)
    count = args.shapes or (8 if cpu else 16)
    high = args.max_exponent or (8 if cpu else 12)
    shapes = sample_shapes(count, 4, high)
    bar = ProgressBar(len(shapes), f"tmmodel on {device.name}")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for shape in shapes:
            bar.start_step(f"{shape.m}x{shape.k}x{shape.n}")
            rows.append(run_shape(shape, device, profile, Path(folder), bar))
    bar.finish()
    result = summary(rows)
    print(table(rows))
    print(json.dumps(result, indent=1))
    name = "pocl" if profile_name == "pocl" else profile_name
    out = Path(args.out) if args.out else BENCH_DIR / "results" / f"tmmodel-{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"device": device.describe(), "profile": profile_name,
                               "host": platform.node(), "summary": result, "rows": rows},
                              indent=1) + "\n")
    chart = Chart(f"TMModel on {device.name}", "shape (by size)", "latency / exhaustive best",
                  {k: [(i, r["latency_ms"][k] / r["latency_ms"]["exhaustive"])
                       for i, r in enumerate(rows)] for k in ("base", "tmm_t", "tmm")})
    write_png(chart, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
