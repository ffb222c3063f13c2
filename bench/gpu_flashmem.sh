#!/bin/bash
# bench/flashmem.py on the lent NVIDIA GPU: models streamed under a budget beside preload-all
# (gpt2_base and vit_b16 exported by bench/models.py with the machine's torch). One process
# per model, each within a few minutes of the machine's per-command limit, then merged into
# $OUT/flashmem-gpu.json and its plot. MODELS picks some (several calls, merged at home
# with --merge).
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
runs=()
for model in ${MODELS:-resnet50 gpt2_base vit_b16}; do
    timeout "${TIMEOUT:-200}" python3 bench/flashmem.py --device gpu --models-dir /tmp/zoo-large --workers 8 \
        --models "$model" --out "$out/flashmem-$model.json" "$@"
    runs+=("$out/flashmem-$model.json")
done
python3 bench/flashmem.py --merge "${runs[@]}" --out "$out/flashmem-gpu.json"
