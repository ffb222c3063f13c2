#!/bin/bash
# bench/flashmem.py on the lent NVIDIA GPU: models streamed under a budget beside preload-all
# (gpt2_base and vit_b16 exported by bench/models.py with the machine's torch).
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
python3 bench/flashmem.py --device gpu --models-dir /tmp/zoo-large --workers 8 \
    --out "$out/flashmem-gpu.json" "$@"
