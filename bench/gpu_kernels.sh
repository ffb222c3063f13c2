#!/bin/bash
# bench/kernels.py on the lent NVIDIA GPU against PyTorch (cuBLAS, cuDNN; TF32 off): the
# default pipeline (images), then every tensor in buffers (the wide conv kernel), the
# storage choice that `prefers_buffers` makes for PoCL, to see whether it would pay here.
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
sets=${SETS:-issue resnet50}
python3 bench/kernels.py --device gpu --torch-cuda --no-ort --sets $sets \
    --out "$out/kernels-gpu.json" "$@"
python3 bench/kernels.py --device gpu --torch-cuda --no-ort --sets $sets \
    --passes "onnx-fold-constants,onnx-fold-batchnorm,onnx-canonicalize,onnx-fuse,onnx-to-texture{buffers=true}" \
    --out "$out/kernels-gpu-buffers.json" "$@"
