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
# Interpolation gaps: the first N_GAPS=400 videos of eval, nearest-neighbour over the first
# 4000 rows of each of the five training sets, physics-oracle analysed against each set,
# ground-truth against set 1 (the readers' check).
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
N_GAPS=400
g=interpolation-gaps
[ -f "$WORK/$g/manifest.json" ] || phybench generate $g --split eval --limit $N_GAPS --out "$WORK/$g" >/dev/null
for b in ground-truth physics-oracle; do
  [ -d "$WORK/sub/$b-$g" ] || phybench baseline "$b" --data "$WORK/$g" --out "$WORK/sub/$b-$g" --quiet
done
phybench analyze gaps "$WORK/sub/ground-truth-$g" --data "$WORK/$g" --train-split train-gap1 \
  --out "$OUT/$g-ground-truth-gap1.json" --json >/dev/null
for k in 1 2 3 4 5; do
  phybench analyze gaps "$WORK/sub/physics-oracle-$g" --data "$WORK/$g" --train-split train-gap$k \
    --out "$OUT/$g-physics-oracle-gap$k.json" --json >/dev/null
  [ -f "$WORK/$g-train-gap$k/manifest.json" ] || phybench generate $g --split train-gap$k --limit $TRAIN --out "$WORK/$g-train-gap$k" >/dev/null
  sub="$WORK/sub/nearest-neighbour-gap$k-$g"
  [ -d "$sub" ] || phybench baseline nearest-neighbour --data "$WORK/$g" --train-data "$WORK/$g-train-gap$k" \
    --name "nearest-neighbour-gap$k" --out "$sub" --quiet
  phybench analyze gaps "$sub" --data "$WORK/$g" --out "$OUT/$g-nearest-neighbour-gap$k.json" --json >/dev/null
done
for b in ground-truth physics-oracle nearest-neighbour; do
  phybench analyze priority "$OUT"/priority-*-$b.json
done
phybench analyze flip "$OUT"/$t-*.json
phybench analyze gaps "$OUT"/$g-*.json
