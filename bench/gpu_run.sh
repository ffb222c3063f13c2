#!/bin/bash
# Run bench/e2e.py on the lent NVIDIA machine (see README "Benchmarks"). Its python3
# has torch, onnx and onnxruntime; the rest comes from wheels carried in .gpu_wheels/.
set -euo pipefail
python3 -m pip install -q --no-index --no-deps .gpu_wheels/*.whl
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
    mkdir -p /tmp/opencl-vendors
    echo libnvidia-opencl.so.1 > /tmp/opencl-vendors/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/opencl-vendors
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
out=${OUT:-bench/results}
python3 bench/e2e.py --device gpu --torch-cuda --repeat "${REPEAT:-20}" --out "$out/e2e-gpu.json" "$@"
