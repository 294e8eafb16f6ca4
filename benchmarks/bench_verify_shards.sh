#!/usr/bin/env bash
# `leaderboard verify` with LPIPS and FVD: one process vs `accelerate launch` with 2 processes,
# CPU, one torch thread per process (the same as the one-process run, so the bytes are the same).
#   bash benchmarks/bench_verify_shards.sh [WORK_DIR]     (default /tmp/bench-verify-shards)
# A 16-video uniform id-eval split and a copy-last submission, scored at --batch-size 4 (so
# the 4 I3D batches split 2 + 2); the FVD reference cache is warm for both verifies.
set -euo pipefail
python "$(dirname "$0")/_machine.py"  # the CPU line every benchmark prints first
W=${1:-/tmp/bench-verify-shards}
export OMP_NUM_THREADS=1 PHYBENCH_FVD_CACHE_DIR=$W/fvd-cache
python - "$W" <<'PY'
import sys
from pathlib import Path

import numpy as np

from phybench.data.generate import generate
from phybench.data.split import SplitReader, make_plan
from phybench.submission import submission_meta, write_submission
from phybench.tasks import get_task

W = Path(sys.argv[1])
split = W / "data" / "uniform-id-eval"
if not (split / "manifest.json").exists():
    generate(make_plan(get_task("uniform"), "id-eval", None, 16, None), split, progress=False)
sub = W / "subs" / "copy-last"
if not (sub / "submission.json").exists():
    r = SplitReader(split)
    write_submission(sub, submission_meta(r.manifest, "copy-last"),
                     ((row["sample_id"], np.repeat(r.video(row)[2:3], 32, axis=0)) for row in r.rows()))
PY
S=$W/subs/copy-last D=$W/data/uniform-id-eval R=$W/results/u16-copy-last.json
now() { python -c 'import time; print(time.time())'; }
t0=$(now); phybench score "$S" --data "$D" --metrics velocity_error,ssim,psnr,lpips,fvd --batch-size 4 --out "$R" --quiet >/dev/null
t1=$(now); python -c "print(f'score, 1 process (cold FVD cache): {$t1 - $t0:.1f} s')"
ARGS=("$R" --submissions "$W/subs" --splits "$W/data" --batch-size 4 --by bench --date 2026-11-25)
t0=$(now); phybench leaderboard verify "${ARGS[@]}"
t1=$(now); python -c "print(f'verify, 1 process: {$t1 - $t0:.1f} s')"; cp "${R%.json}.verified.json" "$W/one.json"
t0=$(now); accelerate launch --multi_gpu --num_processes 2 --num_machines 1 --mixed_precision no --dynamo_backend no \
    --num_cpu_threads_per_process 1 -m phybench.cli leaderboard verify "${ARGS[@]}"
t1=$(now); python -c "print(f'verify, accelerate launch, 2 processes: {$t1 - $t0:.1f} s')"
cmp "$W/one.json" "${R%.json}.verified.json" && echo "records: same bytes"
