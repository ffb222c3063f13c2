#!/bin/bash
# bench/select_layouts.py --target gpu on the lent NVIDIA GPU: local and gcd2 measured on the 12
# benchmark models; `exact` needs ortools (carry its wheel in .gpu_wheels/), the plot matplotlib.
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
python3 bench/select_layouts.py --target gpu --device gpu --repeat "${REPEAT:-10}" \
    --zoo-cache "${ZOO_CACHE:-/tmp/zoo/cache}" --out "$out/select-gpu.json" "$@"
