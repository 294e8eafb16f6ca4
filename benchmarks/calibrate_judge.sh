#!/usr/bin/env bash
# The judge's calibration tables of docs/judge.md (issue 23), from nothing.
# Usage: bash benchmarks/calibrate_judge.sh [WORK_DIR] [WORKERS]   (from the repo root)
#   1. the lite protocol of every evaluation split of every task (native resolution);
#      50 rows of each fundamental split at 256 px and of each combinatorial split at 128 px
#   2. A: exact ground truth of every lite split; C: the reference authors' fixtures (exact and
#      benign); B: benign and planted kinds on 30 rows of each fundamental/combinatorial split
# Writes WORK_DIR/{A,B,C}.md and .json.  Deterministic: a re-run gives the same tables.
set -euo pipefail
python "$(dirname "$0")/_machine.py"  # the CPU line every benchmark prints first
WORK=${1:-/tmp/phybench-calibration}
WORKERS=${2:-2}
REPO=$PWD
mkdir -p "$WORK" && cd "$WORK"
for t in $(python -c "from phybench.tasks import TASKS; print(' '.join(TASKS))"); do
  for s in $(python -c "from phybench.tasks import get_task; print(' '.join(get_task('$t').eval_splits))"); do
    [ -f "lite/$t-$s/manifest.json" ] || phybench generate "$t" --split "$s" --protocol lite --out "lite/$t-$s" --quiet
  done
done
for t in uniform parabola collision; do for s in id-eval ood-eval; do
  [ -f "r256/$t-$s/manifest.json" ] || phybench generate $t --split $s --limit 50 --resolution 256 --out "r256/$t-$s" --quiet
done; done
for s in in-template-eval out-of-template-eval; do
  [ -f "r128/combinatorial-$s/manifest.json" ] || phybench generate combinatorial --split $s --limit 50 --resolution 128 \
    --out "r128/combinatorial-$s" --quiet
done
for f in uniform_128 parabola_128 collision_128 uniform_256; do
  [ -f "ref/$f/manifest.json" ] || phybench import phyworld "$REPO/tests/fixtures/phyworld/$f.hdf5" --task "${f%_*}" \
    --out "ref/$f" --quiet
done
phybench calibrate-judge --data lite/* --kinds none --benign none --workers "$WORKERS" --json A.json --quiet > A.md
phybench calibrate-judge --data ref/* --kinds none --workers "$WORKERS" --json C.json --quiet > C.md
phybench calibrate-judge --data lite/uniform-* lite/parabola-* lite/collision-id-eval lite/collision-ood-eval \
  lite/combinatorial-* r256/* r128/* --limit 30 --workers "$WORKERS" --json B.json --quiet > B.md
echo "tables in $WORK/{A,B,C}.md"
