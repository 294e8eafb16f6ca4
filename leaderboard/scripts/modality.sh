#!/usr/bin/env bash
# The modality miniature (paper appendix A.6.1, Fig. 13) on CPU: a tiny DiT trained three times
# on uniform motion with one budget (frames; frames + numeric state; frames + text), each sampled
# with sampler seeds 0, 1 and 2 (training seed 0) on the first 64 samples of the ID and OOD splits
# through `phybench run`, scored with the velocity error and the paper's convention of it
# (velocity_error_paper, velocity_error_paper_y) (leaderboard/results/modality/: seed k's file
# `<task>-<split>-<model>.seed<k>.json`, seed 0's the plain name; docs/baselines.md, "Modality miniature").
# Usage: bash leaderboard/scripts/modality.sh [WORK_DIR]   (from the repo root; needs the `dit` extra)
# Deterministic on one machine: a finished run or results file in WORK_DIR is reused, so a killed
# run resumes; delete WORK_DIR to start over.  The submissions stay in WORK_DIR/sampled/ and the
# splits in WORK_DIR/data/, which is what `phybench leaderboard verify` re-scores (printed at the end).
set -euo pipefail
WORK=${1:-/tmp/phybench-modality}
METRICS=${METRICS:-velocity_error,velocity_error_paper,velocity_error_paper_y}
SEEDS=${SEEDS:-0,1,2}
nice -n 10 phybench study modality --task uniform --train-size 1000 --steps 1000 --batch-size 16 \
  --eval-samples 64 --sample-steps 20 --seed 0 --sample-seeds "$SEEDS" --metrics "$METRICS" --out "$WORK"
out=leaderboard/results/modality
mkdir -p "$out"
rm -f "$out"/*.json
cp "$WORK"/results/*.json "$out"/
echo "results in $out/ (phybench leaderboard build leaderboard/results --out SITE)"
echo "verify: phybench leaderboard verify $out --submissions $WORK/sampled --splits $WORK/data --signing-key KEY"
