#!/usr/bin/env bash
# Reference results of the combinatorial task (leaderboard/results/combinatorial/).
# Usage: bash leaderboard/scripts/combinatorial.sh [WORK_DIR]   (from the repo root)
#        RESCORE=abnormal bash leaderboard/scripts/combinatorial.sh [WORK_DIR]
#          remakes the (deterministic) submissions and recomputes only those per-video metrics
#          in the shipped files (`phybench rescore`: same submission hash, LPIPS/FVD kept)
# 64 samples per evaluation split at 256 px (templates interleaved, so every held-out
# template is in both), nearest-neighbour over 100 scenes per template of train-6t and
# of train-60t.  Deterministic: a re-run gives the same results bytes.
set -euo pipefail
WORK=${1:-/tmp/phybench-combinatorial}
OUT=leaderboard/results/combinatorial
N=64
METRICS=ssim,psnr,lpips,fvd
RESCORE=${RESCORE:-}
score() {  # score() SUB SPLIT RESULTS
  if [ -n "$RESCORE" ]; then phybench rescore "$3" --submission "$1" --data "$2" --metrics "$RESCORE" --quiet
  else phybench score "$1" --data "$2" --metrics $METRICS --out "$3" >/dev/null; fi
}
mkdir -p "$WORK" "$OUT"
for split in in-template-eval out-of-template-eval; do
  [ -f "$WORK/$split/manifest.json" ] || phybench generate combinatorial --split "$split" --limit $N --out "$WORK/$split"
done
[ -f "$WORK/train-6t/manifest.json" ] || phybench generate combinatorial --split train-6t --limit 600 --out "$WORK/train-6t"
[ -f "$WORK/train-60t/manifest.json" ] || phybench generate combinatorial --split train-60t --limit 6000 --out "$WORK/train-60t"
for split in in-template-eval out-of-template-eval; do
  for b in ground-truth copy-last physics-oracle; do
    sub="$WORK/sub/$b-$split"
    [ -d "$sub" ] || phybench baseline "$b" --data "$WORK/$split" --out "$sub" --format npy --quiet
    score "$sub" "$WORK/$split" "$OUT/$split-$b.json"
  done
  for t in 6t 60t; do
    sub="$WORK/sub/nn-$t-$split"
    [ -d "$sub" ] || phybench baseline nearest-neighbour --data "$WORK/$split" --train-data "$WORK/train-$t" \
      --name "nearest-neighbour-$t" --out "$sub" --format npy --quiet
    score "$sub" "$WORK/$split" "$OUT/$split-nearest-neighbour-$t.json"
  done
done
echo "results in $OUT"
