#!/usr/bin/env bash
# The modality miniature (paper appendix A.6.1, Fig. 13) on CPU: a tiny DiT trained three times
# on uniform motion with one budget (frames; frames + numeric state; frames + text), sampled on
# the first 64 samples of the ID and OOD splits through `phybench run`, scored with the velocity
# error (leaderboard/results/modality/; docs/baselines.md, "Modality miniature").
# Usage: bash leaderboard/scripts/modality.sh [WORK_DIR]   (from the repo root; needs the `dit` extra)
# Deterministic on one machine: a finished run or results file in WORK_DIR is reused, so a killed
# run resumes; delete WORK_DIR to start over.
set -euo pipefail
WORK=${1:-/tmp/phybench-modality}
nice -n 10 phybench study modality --task uniform --train-size 1000 --steps 1000 --batch-size 16 \
  --eval-samples 64 --sample-steps 20 --seed 0 --out "$WORK"
out=leaderboard/results/modality
mkdir -p "$out"
rm -f "$out"/*.json
cp "$WORK"/results/*.json "$out"/
echo "results in $out/ (phybench leaderboard build leaderboard/results --out SITE)"
