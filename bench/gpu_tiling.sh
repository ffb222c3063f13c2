#!/bin/bash
# bench/tiling.py on the lent NVIDIA GPU.
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
python3 bench/tiling.py --device gpu --out "$out/tiling-nvidia-h100.json" "$@"
