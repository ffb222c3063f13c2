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

import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from ace import MODELS, arguments, compiled, save_rows, side_by_side  # noqa: E402
from e2e import pick_device  # noqa: E402

from mobile_opt.checking import light_model, worst_relative_error  # noqa: E402
from mobile_opt.models.device_profile import profile_for_device  # noqa: E402


def main() -> int:
    args = arguments(__doc__)
    device = pick_device(args.device, "bench/tiling.py")
    profile = profile_for_device(device.name, device.platform)
    if profile is None:
        print(f"bench/tiling.py: error: no shipped profile for {device.name}", file=sys.stderr)
        return 1
    rows = []
    for name in MODELS:
        fixed, feeds = compiled(light_model(name), device, ace=True)
        tiled, _ = compiled(light_model(name), device, ace=True, tile=True)  # that profile
        error = worst_relative_error(tiled.run(feeds).outputs, fixed.run(feeds).outputs)
        fixed_s, tiled_s = side_by_side([fixed, tiled], feeds, args.rounds)
        rows.append({"model": name, "fixed_ms": fixed_s * 1e3, "tmmodel_ms": tiled_s * 1e3,
                     "speedup": fixed_s / tiled_s, "relative_difference": error})
        print(f"{name:22s} fixed {fixed_s * 1e3:9.3f} ms  TMModel {tiled_s * 1e3:9.3f} ms  "
              f"speedup {fixed_s / tiled_s:.3f}  outputs differ by {error:.1e}", flush=True)
    save_rows("tiling", device, args, rows, profile=profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
