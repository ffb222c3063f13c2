#!/bin/bash
# bench/tmmodel.py on the lent NVIDIA GPU: PROFILE (default: the shipped nvidia-h100
# profile) models it; further arguments go to the bench (--families, --cases, --out).
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
python3 bench/tmmodel.py --device gpu --profile "${PROFILE:-nvidia-h100}" \
    --out "$out/tmmodel-nvidia-h100.json" "$@"
