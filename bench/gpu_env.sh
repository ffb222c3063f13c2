#!/bin/bash
# Set-up shared by the scripts that run on the lent NVIDIA machine: its python3 has torch,
# onnx and onnxruntime; pyopencl, xdsl and their pure-Python dependencies come as wheels
# carried in .gpu_wheels/, and the OpenCL ICD loader may need to be shown the driver.
python3 -m pip install -q --no-index --no-deps .gpu_wheels/*.whl
# the plots and progress bars of the benchmarks, where the machine lacks them
python3 -c "import matplotlib, tqdm" 2>/dev/null ||
    python3 -m pip install -q --no-index --find-links .gpu_wheels/plot matplotlib tqdm
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
    mkdir -p /tmp/opencl-vendors
    echo libnvidia-opencl.so.1 > /tmp/opencl-vendors/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/opencl-vendors
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
