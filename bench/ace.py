"""
`ace` (Romou's address-calculation elimination) measured: the GPU path's kernels of a
few shipped CNNs built with and without it, run side by side on one device (alternating,
the least of several runs each), kernel time from profiling events. `bench/tiling.py`
compares two builds of the same models the same way, with the pieces here.

    python3 bench/ace.py --device pocl
    bench/gpu_ace.sh                     # on the lent NVIDIA GPU

Results: `bench/results/ace-<device>.json`.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from e2e import import_repo_package, pick_device  # noqa: E402

import_repo_package()

from mobile_opt import pipelines  # noqa: E402
from mobile_opt.backends.opencl.executor import CompiledModel  # noqa: E402
from mobile_opt.checking import light_model, make_inputs  # noqa: E402
from mobile_opt.frontend.onnx_import import import_onnx  # noqa: E402
from mobile_opt.reference.interpreter import find_function  # noqa: E402

MODELS = ("light_resnet50", "light_squeezenet", "light_shufflenet", "light_inception_v1")


def compiled(path: Path, device, ace: bool, tile: bool = False) -> tuple[CompiledModel, dict]:
    """
    The model through the GPU pipeline, with or without `ace`; with `texture-tile`
    (TMModel, the device's shipped profile) before the lowering, or the lowering's fixed
    kernel defaults. Tensors stay in images (TMModel's kernels, one-pixel and blocked) on a
    device that prefers buffers too, so that both benches compare what they name.
    """
    module = import_onnx(str(path))
    feeds = make_inputs(find_function(module, "main_graph"), {}, seed=0)
    lowering = "onnx-to-texture{buffers=false}"
    passes, _ = pipelines.gpu_pipeline(f"{pipelines.GRAPH_PASSES},{lowering}", device, ace=ace,
                                       tile=tile)
    pipelines.apply(module, passes)
    return CompiledModel(module, device), feeds


def kernel_seconds(model: CompiledModel, feeds: dict) -> float:
    return sum(t.seconds for t in model.run(feeds).kernel_times)


def side_by_side(models: list[CompiledModel], feeds: dict, rounds: int) -> list[float]:
    """Each model's least kernel time over `rounds`, alternating, so drift hits all alike."""
    times: list[list[float]] = [[] for _ in models]
    for _ in range(rounds):
        for model, seen in zip(models, times):
            seen.append(kernel_seconds(model, feeds))
    return [min(seen) for seen in times]


def arguments(doc: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="pocl")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out")
    return parser.parse_args()


def save_rows(bench: str, device, args: argparse.Namespace, rows: list[dict],
              **extra) -> None:
    """The rows as `bench/results/<bench>-<device>.json` (or `--out`), naming the device."""
    tag = "pocl" if "Portable" in device.platform else device.name.lower().replace(" ", "-")
    out = Path(args.out) if args.out else BENCH_DIR / "results" / f"{bench}-{tag}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"device": device.describe(), "host": platform.node(), **extra,
                               "rounds": args.rounds, "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")


def main() -> int:
    args = arguments(__doc__)
    device = pick_device(args.device, "bench/ace.py")
    rows = []
    for name in MODELS:
        plain, feeds = compiled(light_model(name), device, ace=False)
        hoisted, _ = compiled(light_model(name), device, ace=True)
        kernel_seconds(plain, feeds), kernel_seconds(hoisted, feeds)  # warm-up
        without, with_ace = side_by_side([plain, hoisted], feeds, args.rounds)
        rows.append({"model": name, "without_ms": without * 1e3, "with_ms": with_ace * 1e3,
                     "speedup": without / with_ace})
        print(f"{name:22s} without {without * 1e3:9.3f} ms  with {with_ace * 1e3:9.3f} ms"
              f"  speedup {without / with_ace:.3f}", flush=True)
    save_rows("ace", device, args, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
