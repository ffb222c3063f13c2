#!/bin/bash
# bench/tmmodel.py on the lent NVIDIA GPU: PROFILE (default: the shipped nvidia-h200
# profile) models it, and its shipped CDMPP predictor is scored beside TMModel; further
# arguments go to the bench (--families, --cases, --out).
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
profile=${PROFILE:-nvidia-h200}
python3 bench/tmmodel.py --device gpu --profile "$profile" --out "$out/tmmodel-$profile.json" "$@"
