#!/bin/bash
# Re-run some probes on the lent NVIDIA GPU into a copy of the shipped profile
# (mobile-probe --update), e.g. `bench/gpu_reprobe.sh work-groups`: the updated profile
# lands in $OUT/nvidia.json, the other readings as they were measured.
set -euo pipefail
out=${OUT:-/tmp/probe}
mkdir -p "$out"
cp tools/profiles/nvidia-h100.json "$out/nvidia.json"
OUT="$out" bash bench/gpu_probe.sh --only "$1" --update
