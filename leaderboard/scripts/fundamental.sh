#!/usr/bin/env bash
# Reference results of the three fundamental tasks on the official protocols
# (leaderboard/results/fundamental/{lite,full}/): ground-truth, copy-last,
# linear-extrapolation, physics-oracle and nearest-neighbour (over all of train-30k),
# velocity error (with its companions), SSIM and PSNR at 128 px.
# Usage: bash leaderboard/scripts/fundamental.sh [WORK_DIR] [PROTOCOLS]   (from the repo root)
# Deterministic: a re-run gives the same results bytes.  Splits and submissions are reused
# from WORK_DIR when present; delete WORK_DIR/<protocol>/results to re-score only.
# Then every file is verified (`phybench leaderboard verify`: re-scored from its kept submission,
# a record written beside it), as the public board requires; VERIFY=0 skips that (a preview).
set -euo pipefail
WORK=${1:-/tmp/phybench-fundamental}
PROTOCOLS=${2:-"lite full"}
METRICS=${METRICS:-velocity_error,ssim,psnr}
VERIFY=${VERIFY:-1}
for protocol in $PROTOCOLS; do
  out=leaderboard/results/fundamental/$protocol
  phybench quickstart --protocol "$protocol" --out "$WORK/$protocol" --metrics "$METRICS" --workers 2
  mkdir -p "$out"
  rm -f "$out"/*.json
  cp "$WORK/$protocol"/results/*.json "$out"/
  if [ "$VERIFY" != 0 ]; then
    phybench leaderboard verify "$out" --submissions "$WORK/$protocol/submissions" --splits "$WORK/$protocol/data" \
      --workers 2 --by "${VERIFIED_BY:-phybench maintainers}"
  fi
done
echo "results in leaderboard/results/fundamental/"
