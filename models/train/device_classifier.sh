#!/usr/bin/env bash
# Train the operator classifier from a title pack (`python -m train.pack`) on a lent GPU machine, whose copy of the
# repository is limited to ~64 MiB per call: each call carries one shard in the ignored folder `.pack/`, and the
# shards gather in /root/pack on the machine while it stays warm.
#
#   bash models/train/device_classifier.sh smoke        # gather .pack/*.npz, then ~200 steps to check and time
#   SHARDS=2 MINUTES=8 bash models/train/device_classifier.sh train   # gather, check SHARDS are there, train
#                                                                     # into $OUT/ckpt, log $OUT/train.log
#   INIT=../.pack/init.pt LR=1e-3 ...                                 # continue from a carried checkpoint
# Run from the repository root. Everything still trains on the CPU without this script (`--data DATA`).
set -euo pipefail
stage=${1:?smoke or train}
source models/train/device_gather.sh
args=(--pack /root/pack --device cuda --workers "${WORKERS:-14}" --amp --batch "${BATCH:-512}"
      --widths "${WIDTHS:-32,64,128,192,320}" --hidden "${HIDDEN:-256}" --threads 4 --seed "${SEED:-21}")
case $stage in
smoke)
    rm -rf /root/smoke
    python3 -m train.classifier "${args[@]}" --out /root/smoke --steps 200 --eval-every 200 --warmup 50 \
        --max-val 1000 --no-calibrate
    ;;
train)
    require_shards "${SHARDS:?}"
    # Checkpoints go straight to $OUT, so that they come back even if the call runs past its limit.
    python3 -m train.classifier "${args[@]}" --out "$OUT/ckpt" --steps 100000 --budget-minutes "${MINUTES:?}" \
        --eval-every "${EVAL_EVERY:-1000}" --warmup "${WARMUP:-300}" --lr "${LR:-3e-3}" ${INIT:+--init "$INIT"} \
        2>&1 | tee "$OUT/train.log"
    ;;
*) echo "unknown stage $stage" >&2; exit 2 ;;
esac
