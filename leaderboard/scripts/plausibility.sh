#!/usr/bin/env bash
# The likelihood-preference tables of docs/judge.md (phybench plausibility).
# Usage: bash leaderboard/scripts/plausibility.sh CAL_DIR DIT_RUN [OUT_DIR]   (from the repo root)
#   CAL_DIR: a folder of *-eval splits (docs/judge.md); their planted pairs are made in
#            cal/<task>-<split>/ by `phybench violations` when missing
#   DIT_RUN: a trained DiT run on uniform (e.g. a cell of the scaling study, runs/dit-S-30000)
# Writes OUT_DIR/<scorer>-<task>-<split>.json (deterministic) and prints the tables.
set -euo pipefail
CAL=$1
RUN=$2
OUT=${3:-/tmp/phybench-plausibility}
mkdir -p "$OUT"
for split in "$CAL"/*-eval; do
  [ -d "$CAL/cal/$(basename "$split")" ] || phybench violations --data "$split" --out "$CAL/cal/$(basename "$split")" --quiet
done
for pairs in "$CAL"/cal/*-eval; do
  name=$(basename "$pairs")
  phybench plausibility --model phybench.plausibility:smoothness --data "$pairs" --split "$CAL/$name" \
    --out "$OUT/smoothness-$name.json" --quiet
done
for name in uniform-id-eval uniform-ood-eval; do
  phybench plausibility --model phybench_baselines.dit.plausibility:DenoisingLoss \
    --model-args "checkpoint=$RUN,seeds=2" --data "$CAL/cal/$name" --split "$CAL/$name" \
    --out "$OUT/dit-$name.json" --quiet
done
