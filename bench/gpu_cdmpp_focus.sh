#!/bin/bash
# bench/cdmpp_data.py --focus on the lent H200: new random tasks of TMModel's families (seed
# 23; none of the dataset's or the benchmark's), each of up to 64 configurations that start
# with the 16 the shipped predictor and TMModel each rank fastest; about 7 device minutes.
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/data}
python3 bench/cdmpp_data.py --device gpu --models '' --random 12 --seed 23 --configs 64 \
    --focus 16 --minutes 7 --out "$out/cdmpp-nvidia-h200-focus.npz" "$@"
