#!/bin/bash
# Probe the lent NVIDIA GPU with mobile-probe: its profile and plots land in $OUT (the
# repository is imported in place, as the mobile_opt package, not installed). Every probe
# runs, the load capacity (FlashMem §4.2) among them; extra arguments go to mobile-probe
# (`--only load-capacity`: that one alone; bench/gpu_reprobe.sh puts it into the shipped
# profile).
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-/tmp/probe}
mkdir -p "$out" /tmp/mobile-opt-path
ln -sfn "$PWD" /tmp/mobile-opt-path/mobile_opt
PYTHONPATH=/tmp/mobile-opt-path python3 -m mobile_opt.tools.mobile_probe --device gpu \
    -o "$out/nvidia.json" --plots "$out/plots" "$@"
