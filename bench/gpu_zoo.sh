#!/bin/bash
# bench/zoo.py on the lent NVIDIA GPU: the models are exported there with its torch (random
# weights), compiled by the default pipeline, run through NVIDIA's OpenCL and checked against
# onnxruntime. The package is installed without its dependencies (no network there) so that
# mobile-run finds the xdsl.universe entry point.
set -euo pipefail
source bench/gpu_env.sh
python3 -m pip install -q --no-deps --no-build-isolation -e .
out=${OUT:-bench/results}
python3 bench/zoo.py --device gpu --out-dir "$out" --cache-dir /tmp/zoo "$@"
