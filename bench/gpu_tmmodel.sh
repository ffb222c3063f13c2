#!/bin/bash
# bench/tmmodel.py on the lent NVIDIA GPU, with its shipped profile (tools/profiles/).
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
python3 bench/tmmodel.py --device gpu --out "$out/tmmodel-nvidia-h100.json" "$@"
