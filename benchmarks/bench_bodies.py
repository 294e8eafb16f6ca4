"""Time the per-body metrics (phybench.scoring.learned.bodies) on top of the judge's segmentation they share.

    python benchmarks/bench_bodies.py --data SPLIT_DIR --submission SUB_DIR [--n 20]

Prints seconds per video of: the shared segmentation (`abnormal.segment_pair`), the judge's rules on
it, and the body metrics and tracked law on it (what these metrics add to a score run).
"""
from __future__ import annotations

import argparse
import time

from phybench.data.split import SplitReader
from phybench.scoring.judge import abnormal
from phybench.scoring.learned import bodies, law
from phybench.scoring.inputs import Sample
from phybench.submission.format import open_submission


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--submission", required=True)
    ap.add_argument("--n", type=int, default=20)
    args = ap.parse_args()
    reader = SplitReader(args.data)
    rows = {r["sample_id"]: r for r in reader.rows()}
    ids = list(rows)[: args.n]
    t_prep = t_judge = t_bodies = 0.0
    with open_submission(args.submission, manifest=reader.manifest) as sub:
        for sample_id, video in sub.iter_videos(sub.storage_order(ids)):
            row = rows[sample_id]
            s = Sample(row=row, video=video, gt_video=reader.video(row), manifest=reader.manifest)
            t0 = time.perf_counter()
            abnormal.segmented_sample(s)
            t1 = time.perf_counter()
            abnormal.judge_sample(s)
            t2 = time.perf_counter()
            bodies.body_position_error(s), bodies.body_angle_error(s), law.law_error(s)
            t3 = time.perf_counter()
            t_prep, t_judge, t_bodies = t_prep + t1 - t0, t_judge + t2 - t1, t_bodies + t3 - t2
    n = len(ids)
    print(f"{n} videos at {reader.manifest['resolution']} px: segmentation {t_prep / n:.3f} s/video, "
          f"judge rules {t_judge / n:.3f}, body metrics + tracked law {t_bodies / n:.3f}")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()
