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

from e2e import import_repo_package, light_model_path, pick_device  # noqa: E402

import_repo_package()

from xdsl.context import Context  # noqa: E402
from xdsl.transforms.common_subexpression_elimination import (  # noqa: E402
    CommonSubexpressionElimination,
)

from mobile_opt.backends.opencl.executor import CompiledModel  # noqa: E402
from mobile_opt.tools.tuning import random_feeds  # noqa: E402
from mobile_opt.frontend.onnx_import import import_onnx  # noqa: E402
from mobile_opt.transforms.ace import AddressCalculationEliminationPass  # noqa: E402
from mobile_opt.transforms.onnx_to_texture import OnnxToTexturePass  # noqa: E402
from mobile_opt.transforms.select_layouts import SelectLayoutsPass  # noqa: E402
from mobile_opt.transforms.texture_tile import TextureTilePass  # noqa: E402
from mobile_opt.transforms.texture_to_ocl import TextureToOclPass  # noqa: E402
from mobile_opt.universe import PASSES  # noqa: E402

MODELS = ("light_resnet50", "light_squeezenet", "light_shufflenet", "light_inception_v1")
GRAPH_PASSES = ("onnx-fold-constants", "onnx-fold-batchnorm", "onnx-canonicalize", "onnx-fuse")


def compiled(path: Path, device, ace: bool,
             tile_profile: str | None = None) -> tuple[CompiledModel, dict]:
    """
    The model through the GPU path, with or without `ace`; with `texture-tile` (TMModel,
    that profile) before the lowering, or the lowering's fixed kernel defaults.
    """
    module = import_onnx(str(path))
    ctx = Context()
    for name in GRAPH_PASSES:
        PASSES[name]()().apply(ctx, module)
    if tile_profile is not None:
        TextureTilePass(device=tile_profile).apply(ctx, module)
    SelectLayoutsPass(target="gpu").apply(ctx, module)
    OnnxToTexturePass(max_image_width=device.max_image_width,
                      max_image_height=device.max_image_height, remarks=False).apply(ctx, module)
    TextureToOclPass().apply(ctx, module)
    if ace:
        AddressCalculationEliminationPass().apply(ctx, module)
    CommonSubexpressionElimination().apply(ctx, module)
    return CompiledModel(module, device), random_feeds(module)


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
        plain, feeds = compiled(light_model_path(name), device, ace=False)
        hoisted, _ = compiled(light_model_path(name), device, ace=True)
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
