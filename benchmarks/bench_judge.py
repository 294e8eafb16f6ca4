"""The abnormality judge's cost: videos per second per core, and its share of a scoring run.

    python benchmarks/bench_judge.py                 # 40 videos per family, one process
    python benchmarks/bench_judge.py --n 100 --share # + the judge's share of `score`

For each family and resolution, `judge(video, ground truth)` is timed with CPU time
(`time.process_time`, one thread) on ground-truth videos degraded by a Gaussian blur (sigma
1 px at 128 px: the blur estimate, the rim rules and the colour table all work, as on a model's
output) after one warm-up video (the per-palette colour table is built once per palette and
cached).  The targets (issue 23): at least 40 videos/s per core at 128 px and 10 at 256 px.

--share scores a ground-truth submission of a uniform lite-sized split (200 videos) with
`--metrics velocity_error,ssim,psnr` (the cheap metrics: the judge's largest possible share; a
default run adds LPIPS and FVD) and reports the CPU time spent in
`phybench.scoring.abnormal.judge` (target: at most 25% of a default run).
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from phybench.benign import degrade  # noqa: E402
from phybench.data.split import generate_sample, make_plan, row_scene  # noqa: E402
from phybench.scoring.abnormal import judge  # noqa: E402
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
    import phybench.scoring.abnormal as abnormal
    from phybench.cli import main
    from phybench.data.generate import generate
    from phybench.scoring.score import score

    spent = [0.0]
    inner = abnormal.judge

    def timed(*args, **kwargs):  # the judge's own CPU time inside the run, no profiler overhead
        t = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - t

    with tempfile.TemporaryDirectory() as tmp:
        split = os.path.join(tmp, "uniform-id-eval")
        generate(make_plan(get_task("uniform"), "id-eval", limit=n), split, progress=False)
        sub = os.path.join(tmp, "gt")
        assert main(["baseline", "ground-truth", "--data", split, "--out", sub, "--quiet"]) == 0
        abnormal.judge = timed
        try:
            t0 = time.process_time()
            score(sub, split, ("velocity_error", "ssim", "psnr"), progress=False)
            total = time.process_time() - t0
        finally:
            abnormal.judge = inner
        print(f"score --metrics velocity_error,ssim,psnr on {n} uniform videos: {total:.2f} CPU s; the judge "
              f"{spent[0]:.2f} s ({100 * spent[0] / total:.0f}%)")


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=40, help="videos per family and resolution")
    ap.add_argument("--share", action="store_true", help="also the judge's share of a 200-video score run")
    args = ap.parse_args()
    speed(args.n)
    if args.share:
        share(200)


if __name__ == "__main__":
    main_()
