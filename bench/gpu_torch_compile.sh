#!/bin/bash
# Our GPU path beside torch.compile on the lent NVIDIA machine: `e2e` (whole models: eager and
# torch.compile's three modes, host to host and on the GPU, with each model's launches for the
# roofline) or `kernels` (single MatMul and Conv shapes, with the kernel max-autotune picks).
# The compiles run first, COMPILE_JOBS at once, their autotuning timed alone on the GPU; the
# timings then run one at a time. Further arguments go to the script (e.g. --models ...).
# Where one call cannot hold both, export TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR to
# folders under /tmp and run `e2e --ahead-out F` in one call, `e2e --ahead-in F` in the
# next, while the machine is still warm.
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
jobs=${COMPILE_JOBS:-6}
what=${1:?e2e or kernels}
shift
case $what in
e2e)
    python3 bench/e2e.py --device gpu --torch-compile --isolate --compile-jobs "$jobs" \
        --repeat "${REPEAT:-20}" --roofline "$out/roofline" --out "$out/e2e-gpu.json" "$@" ;;
kernels)
    python3 bench/kernels.py --device gpu --torch-compile --compile-jobs "$jobs" --no-ort \
        --sets ${SETS:-issue resnet50 transformer} --out "$out/kernels-gpu.json" "$@" ;;
*)
    echo "gpu_torch_compile: e2e or kernels, not $what" >&2
    exit 2 ;;
esac
