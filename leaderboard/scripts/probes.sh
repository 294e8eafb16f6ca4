#!/usr/bin/env bash
# Reference results of the generalisation probes (leaderboard/results/probes/).
# Usage: bash leaderboard/scripts/probes.sh [WORK_DIR]   (from the repo root)
# Attribute priority: for each of the 7 tasks (6 pairs + the ring variant), the first
# N=200 videos of conflict-eval at 128 px and nearest-neighbour over the first 4000 rows
# of the training split (states only; rendered on retrieval).  Baselines: ground-truth
# (the readers' check: kept both on every video), physics-oracle, nearest-neighbour.
# Flip memorisation: the first N_FLIP=400 videos of eval, nearest-neighbour over the first
# 4000 rows of train-set1 and of train-set2 (Set-2 = 2000 Set-1 videos and their mirror
# images), physics-oracle and ground-truth.
# Deterministic: a re-run gives the same results bytes.
set -euo pipefail
WORK=${1:-/tmp/phybench-probes}
OUT=leaderboard/results/probes
N=200
TRAIN=4000
TASKS="priority-colour-shape priority-size-shape priority-velocity-shape priority-velocity-size priority-colour-size priority-colour-velocity priority-colour-ring"
mkdir -p "$WORK" "$OUT"
for t in $TASKS; do
  [ -f "$WORK/$t/manifest.json" ] || phybench generate "$t" --split conflict-eval --limit $N --out "$WORK/$t" >/dev/null
  [ -f "$WORK/$t-train/manifest.json" ] || phybench generate "$t" --split train --limit $TRAIN --out "$WORK/$t-train" >/dev/null
  for b in ground-truth physics-oracle; do
    sub="$WORK/sub/$b-$t"
    [ -d "$sub" ] || phybench baseline "$b" --data "$WORK/$t" --out "$sub" --quiet
    phybench analyze priority "$sub" --data "$WORK/$t" --out "$OUT/$t-$b.json" --json >/dev/null
  done
  sub="$WORK/sub/nearest-neighbour-$t"
  [ -d "$sub" ] || phybench baseline nearest-neighbour --data "$WORK/$t" --train-data "$WORK/$t-train" --out "$sub" --quiet
  phybench analyze priority "$sub" --data "$WORK/$t" --out "$OUT/$t-nearest-neighbour.json" --json >/dev/null
done
N_FLIP=400
t=flip-memorisation
[ -f "$WORK/$t/manifest.json" ] || phybench generate $t --split eval --limit $N_FLIP --out "$WORK/$t" >/dev/null
for b in ground-truth physics-oracle; do
  sub="$WORK/sub/$b-$t"
  [ -d "$sub" ] || phybench baseline "$b" --data "$WORK/$t" --out "$sub" --quiet
  phybench analyze flip "$sub" --data "$WORK/$t" --out "$OUT/$t-$b.json" --json >/dev/null
done
for s in set1 set2; do
  [ -f "$WORK/$t-train-$s/manifest.json" ] || phybench generate $t --split train-$s --limit $TRAIN --out "$WORK/$t-train-$s" >/dev/null
  sub="$WORK/sub/nearest-neighbour-$s-$t"
  [ -d "$sub" ] || phybench baseline nearest-neighbour --data "$WORK/$t" --train-data "$WORK/$t-train-$s" \
    --name "nearest-neighbour-$s" --out "$sub" --quiet
  phybench analyze flip "$sub" --data "$WORK/$t" --out "$OUT/$t-nearest-neighbour-$s.json" --json >/dev/null
done
for b in ground-truth physics-oracle nearest-neighbour; do
  phybench analyze priority "$OUT"/priority-*-$b.json
done
phybench analyze flip "$OUT"/$t-*.json
