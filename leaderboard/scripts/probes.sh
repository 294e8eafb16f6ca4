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
# Collision holes: the first N_HOLES=400 videos of eval (80 per square), nearest-neighbour over
# the first 4000 rows of train-set1 and of train-set2, physics-oracle analysed against each
# set, ground-truth against set 1 (the readers' check).
# Composition: the first N_COMP=200 videos of eval-spatial and of eval-temporal,
# nearest-neighbour over the first 4000 rows of train, physics-oracle and ground-truth.
# Ambiguity (section 5.5): for each task (ambiguity at 256 px, ambiguity-128) and scene kind
# (gap, edge), the first N_AMB=200 videos of eval-KIND, nearest-neighbour over the first 4000
# rows of train-KIND, ground-truth, copy-last and physics-oracle (npz submissions: 256 px).
# PROBES="holes composition" runs only those probes (default: all six).
# Deterministic: a re-run gives the same results bytes.
set -euo pipefail
WORK=${1:-/tmp/phybench-probes}
PROBES=${PROBES:-priority flip gaps holes composition ambiguity}
want() { case " $PROBES " in *" $1 "*) return 0;; *) return 1;; esac; }
OUT=leaderboard/results/probes
N=200
TRAIN=4000
TASKS="priority-colour-shape priority-size-shape priority-velocity-shape priority-velocity-size priority-colour-size priority-colour-velocity priority-colour-ring"
mkdir -p "$WORK" "$OUT"
want priority || TASKS=""
for t in $TASKS; do
  [ -f "$WORK/$t/manifest.json" ] || phybench generate "$t" --split conflict-eval --limit $N --out "$WORK/$t" >/dev/null
  [ -f "$WORK/$t-train/manifest.json" ] || phybench generate "$t" --split train --limit $TRAIN --out "$WORK/$t-train" >/dev/null
  for b in ground-truth physics-oracle; do
    sub="$WORK/sub/$b-$t"
    [ -d "$sub" ] || phybench baseline "$b" --data "$WORK/$t" --out "$sub" --format npy --quiet
    phybench analyze priority "$sub" --data "$WORK/$t" --out "$OUT/$t-$b.json" --json >/dev/null
  done
  sub="$WORK/sub/nearest-neighbour-$t"
  [ -d "$sub" ] || phybench baseline nearest-neighbour --data "$WORK/$t" --train-data "$WORK/$t-train" --out "$sub" --format npy --quiet
  phybench analyze priority "$sub" --data "$WORK/$t" --out "$OUT/$t-nearest-neighbour.json" --json >/dev/null
done
N_FLIP=400
t=flip-memorisation
if want flip; then
[ -f "$WORK/$t/manifest.json" ] || phybench generate $t --split eval --limit $N_FLIP --out "$WORK/$t" >/dev/null
for b in ground-truth physics-oracle; do
  sub="$WORK/sub/$b-$t"
  [ -d "$sub" ] || phybench baseline "$b" --data "$WORK/$t" --out "$sub" --format npy --quiet
  phybench analyze flip "$sub" --data "$WORK/$t" --out "$OUT/$t-$b.json" --json >/dev/null
done
for s in set1 set2; do
  [ -f "$WORK/$t-train-$s/manifest.json" ] || phybench generate $t --split train-$s --limit $TRAIN --out "$WORK/$t-train-$s" >/dev/null
  sub="$WORK/sub/nearest-neighbour-$s-$t"
  [ -d "$sub" ] || phybench baseline nearest-neighbour --data "$WORK/$t" --train-data "$WORK/$t-train-$s" \
    --name "nearest-neighbour-$s" --out "$sub" --format npy --quiet
  phybench analyze flip "$sub" --data "$WORK/$t" --out "$OUT/$t-nearest-neighbour-$s.json" --json >/dev/null
done
fi
N_GAPS=400
g=interpolation-gaps
if want gaps; then
[ -f "$WORK/$g/manifest.json" ] || phybench generate $g --split eval --limit $N_GAPS --out "$WORK/$g" >/dev/null
for b in ground-truth physics-oracle; do
  [ -d "$WORK/sub/$b-$g" ] || phybench baseline "$b" --data "$WORK/$g" --out "$WORK/sub/$b-$g" --format npy --quiet
done
phybench analyze gaps "$WORK/sub/ground-truth-$g" --data "$WORK/$g" --train-split train-gap1 \
  --out "$OUT/$g-ground-truth-gap1.json" --json >/dev/null
for k in 1 2 3 4 5; do
  phybench analyze gaps "$WORK/sub/physics-oracle-$g" --data "$WORK/$g" --train-split train-gap$k \
    --out "$OUT/$g-physics-oracle-gap$k.json" --json >/dev/null
  [ -f "$WORK/$g-train-gap$k/manifest.json" ] || phybench generate $g --split train-gap$k --limit $TRAIN --out "$WORK/$g-train-gap$k" >/dev/null
  sub="$WORK/sub/nearest-neighbour-gap$k-$g"
  [ -d "$sub" ] || phybench baseline nearest-neighbour --data "$WORK/$g" --train-data "$WORK/$g-train-gap$k" \
    --name "nearest-neighbour-gap$k" --out "$sub" --format npy --quiet
  phybench analyze gaps "$sub" --data "$WORK/$g" --out "$OUT/$g-nearest-neighbour-gap$k.json" --json >/dev/null
done
fi
N_HOLES=400
h=collision-holes
if want holes; then
[ -f "$WORK/$h/manifest.json" ] || phybench generate $h --split eval --limit $N_HOLES --out "$WORK/$h" >/dev/null
for b in ground-truth physics-oracle; do
  [ -d "$WORK/sub/$b-$h" ] || phybench baseline "$b" --data "$WORK/$h" --out "$WORK/sub/$b-$h" --format npy --quiet
done
phybench analyze holes "$WORK/sub/ground-truth-$h" --data "$WORK/$h" --train-split train-set1 \
  --out "$OUT/$h-ground-truth-set1.json" --json >/dev/null
for k in 1 2; do
  phybench analyze holes "$WORK/sub/physics-oracle-$h" --data "$WORK/$h" --train-split train-set$k \
    --out "$OUT/$h-physics-oracle-set$k.json" --json >/dev/null
  [ -f "$WORK/$h-train-set$k/manifest.json" ] || phybench generate $h --split train-set$k --limit $TRAIN --out "$WORK/$h-train-set$k" >/dev/null
  sub="$WORK/sub/nearest-neighbour-set$k-$h"
  [ -d "$sub" ] || phybench baseline nearest-neighbour --data "$WORK/$h" --train-data "$WORK/$h-train-set$k" \
    --name "nearest-neighbour-set$k" --out "$sub" --format npy --quiet
  phybench analyze holes "$sub" --data "$WORK/$h" --out "$OUT/$h-nearest-neighbour-set$k.json" --json >/dev/null
done
fi
N_COMP=200
c=composition
if want composition; then
[ -f "$WORK/$c-train/manifest.json" ] || phybench generate $c --split train --limit $TRAIN --out "$WORK/$c-train" >/dev/null
for s in eval-spatial eval-temporal; do
  [ -f "$WORK/$c-$s/manifest.json" ] || phybench generate $c --split $s --limit $N_COMP --out "$WORK/$c-$s" >/dev/null
  for b in ground-truth physics-oracle; do
    sub="$WORK/sub/$b-$c-$s"
    [ -d "$sub" ] || phybench baseline "$b" --data "$WORK/$c-$s" --out "$sub" --format npy --quiet
    phybench analyze composition "$sub" --data "$WORK/$c-$s" --out "$OUT/$c-$b-$s.json" --json >/dev/null
  done
  sub="$WORK/sub/nearest-neighbour-$c-$s"
  [ -d "$sub" ] || phybench baseline nearest-neighbour --data "$WORK/$c-$s" --train-data "$WORK/$c-train" --out "$sub" --format npy --quiet
  phybench analyze composition "$sub" --data "$WORK/$c-$s" --out "$OUT/$c-nearest-neighbour-$s.json" --json >/dev/null
done
fi
N_AMB=200
if want ambiguity; then
for a in ambiguity ambiguity-128; do
  for k in gap edge; do
    d="$WORK/$a-eval-$k"
    [ -f "$d/manifest.json" ] || phybench generate $a --split eval-$k --limit $N_AMB --out "$d" >/dev/null
    [ -f "$WORK/$a-train-$k/manifest.json" ] || phybench generate $a --split train-$k --limit $TRAIN --out "$WORK/$a-train-$k" >/dev/null
    for b in ground-truth copy-last physics-oracle nearest-neighbour; do
      sub="$WORK/sub/$b-$a-$k"
      train=""; [ $b = nearest-neighbour ] && train="--train-data $WORK/$a-train-$k"
      [ -d "$sub" ] || phybench baseline "$b" --data "$d" $train --out "$sub" --format npz --quiet
      phybench analyze ambiguity "$sub" --data "$d" --out "$OUT/$a-$b-eval-$k.json" --json >/dev/null
    done
  done
done
fi
if want priority; then
  for b in ground-truth physics-oracle nearest-neighbour; do
    phybench analyze priority "$OUT"/priority-*-$b.json
  done
fi
if want flip; then phybench analyze flip "$OUT"/$t-*.json; fi
if want gaps; then phybench analyze gaps "$OUT"/$g-*.json; fi
if want holes; then phybench analyze holes "$OUT"/$h-*.json; fi
if want composition; then phybench analyze composition "$OUT"/$c-*.json; fi
if want ambiguity; then phybench analyze ambiguity "$OUT"/ambiguity-*.json; fi
