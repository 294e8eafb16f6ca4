"""The abnormality judge's cost: videos per second per core, and its share of a scoring run.

    python benchmarks/bench_judge.py                 # 40 videos per family, one process
    python benchmarks/bench_judge.py --n 100 --share # + the judge's share of `score` per family

For each family and resolution, `judge(video, ground truth)` is timed with CPU time
(`time.process_time`, one thread) on ground-truth videos degraded by a Gaussian blur (sigma
1 px at 128 px: the blur estimate, the rim rules and the colour table all work, as on a model's
output) after one warm-up video (the per-palette colour table is built once per palette and
cached).  The targets (issue 23): at least 40 videos/s per core at 128 px and 10 at 256 px.

--share runs `benchmarks/bench_cost.py` (60 videos per family): a blurred ground-truth
submission scored with `--metrics velocity_error,ssim,psnr` (the cheap metrics: the judge's largest
possible share; a default run adds LPIPS and FVD) and the CPU time spent in the judge and the body
metrics (issue 34's target: together at most 40% of that run, per family).
"""
from __future__ import annotations

import argparse
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from phybench.benign import degrade  # noqa: E402
from phybench.data.split import generate_sample, make_plan, row_scene  # noqa: E402
from phybench.scoring.judge.abnormal import judge  # noqa: E402
from phybench.tasks import get_task  # noqa: E402

CASES = [("uniform", "id-eval", 128), ("parabola", "id-eval", 128), ("collision", "id-eval", 128),
         ("combinatorial", "in-template-eval", 128), ("uniform", "id-eval", 256), ("collision", "id-eval", 256),
         ("combinatorial", "in-template-eval", 256)]


def _items(task: str, split: str, res: int, n: int) -> list[tuple]:
    spec = get_task(task)
    plan = make_plan(spec, split, res, n, None)
    out = []
    for i in range(n):
        row, gt = generate_sample(plan, i)
        bodies = row_scene(row).bodies
        video = degrade("blur-1.0", gt, spec.condition_frames, str(i))
        out.append((video, gt, [b.colour for b in bodies], [not b.dynamic for b in bodies], spec.condition_frames))
    return out


def speed(n: int) -> None:
    print(f"{'family':<15}{'px':>5}{'videos':>8}{'CPU ms/video':>14}{'videos/s/core':>15}")
    for task, split, res in CASES:
        items = _items(task, split, res, n)
        judge(*items[0])  # warm-up: the palette's colour table
        t0 = time.process_time()
        for it in items:
            judge(*it)
        dt = (time.process_time() - t0) / len(items)
        print(f"{task:<15}{res:>5}{len(items):>8}{1000 * dt:>14.1f}{1 / dt:>15.1f}")


def share(n: int) -> None:
    """The judge's and the body metrics' share of a cheap score run, per family (`bench_cost.py`)."""
    from bench_cost import DEFAULT_TASKS, run

    run(n, DEFAULT_TASKS.split(","))


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=40, help="videos per family and resolution")
    ap.add_argument("--share", action="store_true", help="also the judge's and body metrics' share of a score run "
                    "per family (benchmarks/bench_cost.py, 60 videos each)")
    args = ap.parse_args()
    speed(args.n)
    if args.share:
        share(60)


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main_()
