#!/bin/bash
# bench/cdmpp_data.py --denser on the lent H200: up to 64 configurations (with the 32 or so
# it has) of each task that the cross-device runs chose (seeds 0-9 of the ensemble run's
# KMeans over tasks in seed order, then random's; bench/data/cdmpp-nvidia-h200-chosen-tasks.json),
# and 4 of each task's known ones again. A call cut short by --minutes (passed on) is
# continued by the next from the file the last one brought back.
set -euo pipefail
source bench/gpu_env.sh
out=${OUT:-bench/data}
dense=cdmpp-nvidia-h200-denser.npz
if [ -f "bench/data/$dense" ] && [ "$out" != bench/data ]; then cp "bench/data/$dense" "$out/"; fi
python3 bench/cdmpp_data.py --device gpu --denser bench/data/cdmpp-nvidia-h200.npz \
    --task-list bench/data/cdmpp-nvidia-h200-chosen-tasks.json --configs 64 --recheck 4 \
    --out "$out/$dense" "$@"
