#!/usr/bin/env bash
# The lossy floor (issue 24 item 4): the ground truth of each fundamental task's lite id-eval
# split through H.264 (crf 18 and 28, libx264, one thread) and scored, so a model packed from
# mp4 knows how much of its velocity error the codec alone explains.
# Usage: bash benchmarks/lossy_floor.sh SPLITS_DIR WORK_DIR
#   SPLITS_DIR holds <task>-id-eval split folders (e.g. the quickstart's lite data/ folder).
set -euo pipefail
python "$(dirname "$0")/_machine.py"  # the CPU line every benchmark prints first
SPLITS=$1
WORK=$2
mkdir -p "$WORK"
for task in uniform parabola collision; do
  split="$SPLITS/$task-id-eval"
  [ -d "$WORK/$task" ] || phybench degrade --data "$split" --kinds h264-18,h264-28 --out "$WORK/$task" --quiet
  for kind in h264-18 h264-28; do
    phybench score "$WORK/$task/$kind" --data "$split" --metrics velocity_error --out "$WORK/$task-$kind.json" --quiet >/dev/null
  done
done
python - "$WORK" <<'PY'
import json, sys
from pathlib import Path
work = Path(sys.argv[1])
print("| task | H.264 crf 18 | H.264 crf 28 |")
print("|---|---:|---:|")
for task in ("uniform", "parabola", "collision"):
    cells = []
    for kind in ("h264-18", "h264-28"):
        o = json.loads((work / f"{task}-{kind}.json").read_text())["summary"]["overall"]
        e, r = o["velocity_error"], o.get("velocity_error_ranked", {})
        cells.append(f"{e['mean']:.4g} [{e['ci95'][0]:.3g}, {e['ci95'][1]:.3g}] (ranked {r.get('mean', float('nan')):.4g})")
    print(f"| {task} | {cells[0]} | {cells[1]} |")
PY
