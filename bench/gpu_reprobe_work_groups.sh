#!/bin/bash
# Re-run only the work-group sweep on the lent NVIDIA GPU and put it into the shipped
# profile (tools/profiles/nvidia-h100.json, copied to $OUT): the sweep changed after the
# full probe, whose other sections stay as they were measured.
set -euo pipefail
out=${OUT:-/tmp/probe}
OUT="$out" bash bench/gpu_probe.sh --only work-groups
python3 - "$out/nvidia.json" tools/profiles/nvidia-h100.json <<'PY'
import json, sys
fresh, shipped = (json.load(open(p)) for p in sys.argv[1:])
shipped["tmmodel"]["work_groups"] = fresh["tmmodel"]["work_groups"]
shipped["identity"]["reprobed"] = {"work-groups": fresh["identity"]["date"]}
open(sys.argv[2], "w").write(json.dumps(shipped, indent=1) + "\n")
PY
cp tools/profiles/nvidia-h100.json "$out/"
