#!/bin/bash
# Set-up shared by the scripts that run on the lent NVIDIA machine: its python3 has torch,
# onnx and onnxruntime; pyopencl, xdsl and their pure-Python dependencies come as wheels
# carried in .gpu_wheels/ (with onnx2torch's, for bench/e2e.py's PyTorch times of the ONNX-only
# models), and the OpenCL ICD loader may need to be shown the driver.
python3 -m pip install -q --no-index --no-deps .gpu_wheels/*.whl
# the benchmarks' progress bars where the machine lacks them (and their plots, if their wheels
# are carried in .gpu_wheels/plot; otherwise the JSON comes back and is drawn at home)
for module in tqdm matplotlib; do
    python3 -c "import $module" 2>/dev/null ||
        python3 -m pip install -q --no-index --find-links .gpu_wheels/plot "$module" 2>/dev/null ||
        echo "gpu_env: no $module here" >&2
done
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
    mkdir -p /tmp/opencl-vendors
    echo libnvidia-opencl.so.1 > /tmp/opencl-vendors/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/opencl-vendors
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
