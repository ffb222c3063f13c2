#!/bin/bash
# Re-run some probes on the lent NVIDIA GPU into a copy of the shipped profile
# (mobile-probe --update), e.g. `bench/gpu_reprobe.sh work-groups`,
# `bench/gpu_reprobe.sh load-capacity` for the load capacity alone (FlashMem §4.2, a few
# minutes) or `bench/gpu_reprobe.sh peak-flops` for the peak fp32 FLOP/s alone (the
# roofline's compute roof, seconds): the updated profile lands in $OUT/nvidia.json and
# the probes' plots in $OUT/plots, the other readings as they were measured. The shipped
# profile is of the H100: on another GPU the update stops with one line (probe it whole,
# bench/gpu_probe.sh).
set -euo pipefail
out=${OUT:-/tmp/probe}
mkdir -p "$out"
cp models/profiles/nvidia-h100.json "$out/nvidia.json"
OUT="$out" bash bench/gpu_probe.sh --only "$1" --update
