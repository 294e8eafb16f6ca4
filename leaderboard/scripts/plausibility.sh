#!/usr/bin/env bash
# The likelihood-preference tables of docs/judge.md (phybench plausibility).
# Usage: bash leaderboard/scripts/plausibility.sh CAL_DIR DIT_RUN [OUT_DIR]   (from the repo root)
#   CAL_DIR: the folder of the judge's calibration (docs/judge.md): its *-eval
#            splits and cal/<task>-<split>/ planted pairs, made by `phybench calibrate-judge`
#   DIT_RUN: a trained DiT run on uniform (e.g. a cell of the scaling study, runs/dit-S-30000)
# Writes OUT_DIR/<scorer>-<task>-<split>.json (deterministic) and prints the tables.
set -euo pipefail
CAL=$1
RUN=$2
OUT=${3:-/tmp/phybench-plausibility}
mkdir -p "$OUT"
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
