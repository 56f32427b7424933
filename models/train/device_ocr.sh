#!/usr/bin/env bash
# Train the OCR from an OCR pack (`python -m train.pack --model ocr`) on a lent GPU machine, whose copy of the
# repository is limited to ~64 MiB per call: each call carries one shard in the ignored folder `.pack/`, and the
# shards gather in /root/pack on the machine while it stays warm. Two runs share the GPU, each with half of the
# CPU cores cutting its batches:
#   a: the shipped architecture, warm-started from models/ocr.onnx (same cost per crop in the core);
#   b: a wider network from scratch (`CHANNELS_B`, `HIDDEN_B`), to measure what capacity buys; or, with
#      `B=widen`, the shipped network warm-started from models/ocr.onnx with its GRU widened to `HIDDEN_B` units
#      (`ocr.widen_recurrent`: it starts from exactly the shipped logits).
#
#   bash models/train/device_ocr.sh smoke                 # gather .pack/*.npz, then ~100 steps of each run
#   SHARDS=2 MINUTES=8 bash models/train/device_ocr.sh train   # gather, check SHARDS are there, train both,
#                                                              # checkpoints in $OUT/{a,b}, logs $OUT/{a,b}.log
# Run from the repository root. Everything still trains on the CPU without this script (`--data DATA`).
set -euo pipefail
stage=${1:?smoke or train}
source models/train/device_gather.sh
common=(--pack /root/pack --titles --device cuda --synth-frac 0 --batch "${BATCH:-256}" --threads 2
        --workers "${WORKERS:-7}" --kind-weights shape=0.55,name=0.15,weight=0.15,title=0.15 --seed "${SEED:-22}")
run_a=(--warm-start ocr.onnx --lr "${LR_A:-5e-4}" --warmup 100)
case ${B:-scratch} in
scratch) run_b=(--channels "${CHANNELS_B:-24,48,96,128}" --hidden "${HIDDEN_B:-128}" --lr "${LR_B:-2e-3}"
               --warmup 500) ;;
widen) run_b=(--warm-start ocr.onnx --hidden "${HIDDEN_B:-128}" --lr "${LR_B:-5e-4}" --warmup 100) ;;
*) echo "unknown B=$B" >&2; exit 2 ;;
esac
case $stage in
smoke)
    rm -rf /root/smoke-a /root/smoke-b
    python3 -m train.ocr "${common[@]}" "${run_a[@]}" --out /root/smoke-a --steps 100 --eval-every 100 \
        --max-val 500 > /root/smoke-a.log 2>&1 &
    a=$!
    python3 -m train.ocr "${common[@]}" "${run_b[@]}" --out /root/smoke-b --steps 100 --eval-every 100 \
        --max-val 500 > /root/smoke-b.log 2>&1 &
    b=$!
    ra=0; rb=0; wait $a || ra=$?; wait $b || rb=$?
    tail -n 5 /root/smoke-a.log /root/smoke-b.log
    exit $((ra | rb))
    ;;
train)
    require_shards "${SHARDS:?}"
    loop=(--steps 1000000 --budget-minutes "${MINUTES:?}" --eval-every "${EVAL_EVERY:-500}")
    # Checkpoints go straight to $OUT, so that they come back even if the call runs past its limit.
    python3 -m train.ocr "${common[@]}" "${run_a[@]}" "${loop[@]}" --out "$OUT/a" > "$OUT/a.log" 2>&1 &
    a=$!
    python3 -m train.ocr "${common[@]}" "${run_b[@]}" "${loop[@]}" --out "$OUT/b" > "$OUT/b.log" 2>&1 &
    b=$!
    ra=0; rb=0; wait $a || ra=$?; wait $b || rb=$?
    tail -n 3 "$OUT/a.log" "$OUT/b.log"
    exit $((ra | rb))
    ;;
*) echo "unknown stage $stage" >&2; exit 2 ;;
esac
