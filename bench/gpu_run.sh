#!/bin/bash
# Run bench/e2e.py on the lent NVIDIA machine (see README "Benchmarks").
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
python3 bench/e2e.py --device gpu --torch-cuda --repeat "${REPEAT:-20}" --out "$out/e2e-gpu.json" "$@"
