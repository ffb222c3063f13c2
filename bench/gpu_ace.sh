#!/bin/bash
# bench/ace.py on the lent NVIDIA GPU.
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
python3 bench/ace.py --device gpu --out "$out/ace-nvidia-h100.json" "$@"
