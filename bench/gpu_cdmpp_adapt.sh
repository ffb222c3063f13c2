#!/bin/bash
# bench/cdmpp.py's cross-device part (PoCL's shipped predictor adapted to the H200's dataset)
# on the lent machine's 16 CPU cores: its python3 has torch and scikit-learn, so the ten
# seeds of KMeans over the features and of random choice run as 20 forked fine-tunings at
# once (about 6 minutes). Further arguments go to the bench (--seeds, --samplers,
# --cmd-weight, --adapt-epochs; --samplers kmeans,kmeans-latent,random adds the latents').
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/results}
# the results file's other parts (random and cross-model splits) are kept beside the new one
[ "$out" = bench/results ] || cp bench/results/cdmpp-nvidia-h200.json "$out/"
OMP_NUM_THREADS=1 python3 bench/cdmpp.py bench/data/cdmpp-nvidia-h200.npz \
    --adapt-from models/weights/cdmpp-pocl.npz bench/data/cdmpp-pocl.npz --adapt-only \
    --samplers kmeans-task,random --jobs 20 --out "$out/cdmpp-nvidia-h200.json" "$@"
