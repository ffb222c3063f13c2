"""
`texture-tile` on whole models: the GPU path's kernels of a few shipped CNNs built with
the configurations TMModel chooses (the default pipeline) and with the lowering's fixed
defaults, run side by side on one device (alternating, the least of several runs each),
kernel time from profiling events; the two builds' outputs are compared too.

    python3 bench/tiling.py --device pocl
    bench/gpu_tiling.sh                  # on the lent NVIDIA GPU

Results: `bench/results/tiling-<device>.json`.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from ace import MODELS, compiled, model_path  # noqa: E402

from mobile_opt.backends.opencl.devices import choose_device  # noqa: E402
from mobile_opt.backends.opencl.probe.profile import profile_for_device  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="pocl")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out")
    args = parser.parse_args()
    device = choose_device(args.device)
    profile = profile_for_device(device.name, device.platform)
    if profile is None:
        print(f"bench/tiling.py: error: no shipped profile for {device.name}", file=sys.stderr)
        return 1
    rows = []
    for name in MODELS:
        fixed, feeds = compiled(model_path(name), device, ace=True)
        tiled, _ = compiled(model_path(name), device, ace=True, tile_profile=profile)
        want, got = fixed.run(feeds), tiled.run(feeds)  # also the warm-up
        error = max(float(np.abs(got.outputs[k] - v).max() / max(np.abs(v).max(), 1e-6))
                    for k, v in want.outputs.items())
        times: dict[str, list[float]] = {"fixed": [], "tmmodel": []}
        for _ in range(args.rounds):  # alternate, so drift hits both alike
            for label, model in (("fixed", fixed), ("tmmodel", tiled)):
                times[label].append(sum(t.seconds for t in model.run(feeds).kernel_times))
        fixed_s, tiled_s = min(times["fixed"]), min(times["tmmodel"])
        rows.append({"model": name, "fixed_ms": fixed_s * 1e3, "tmmodel_ms": tiled_s * 1e3,
                     "speedup": fixed_s / tiled_s, "relative_difference": error})
        print(f"{name:22s} fixed {fixed_s * 1e3:9.3f} ms  TMModel {tiled_s * 1e3:9.3f} ms  "
              f"speedup {fixed_s / tiled_s:.3f}  outputs differ by {error:.1e}", flush=True)
    tag = "pocl" if "Portable" in device.platform else device.name.lower().replace(" ", "-")
    out = Path(args.out) if args.out else BENCH_DIR / "results" / f"tiling-{tag}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"device": device.describe(), "host": platform.node(),
                               "profile": profile, "rounds": args.rounds, "rows": rows},
                              indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
