#!/bin/bash
# bench/tmmodel_recheck.py on the lent NVIDIA GPU: the saved H200 run's choices timed again
# (RESULTS, default bench/results/tmmodel-nvidia-h200.json); further arguments go to the
# bench (--passes).
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
results=${RESULTS:-bench/results/tmmodel-nvidia-h200.json}
python3 bench/tmmodel_recheck.py "$results" --device gpu --profile nvidia-h200 \
    --out "$out/tmmodel-nvidia-h200-recheck.json" "$@"
