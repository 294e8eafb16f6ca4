"""Scoring throughput: velocity error from pixels, SSIM + PSNR, and torchmetrics' SSIM.

    python benchmarks/bench_score.py            # 300 clips per task, 32x128x128
    python benchmarks/bench_score.py --n 100 --workers 2

Velocity error = parse every frame of the generated video + differences + the mean over
scored pairs, from uint8 arrays in memory (reading the submission is measured separately
by `phybench score`).  The "generated" videos are the ground truth (clean) and copy-last
(the ball frozen) for a realistic mix; SSIM is also timed on videos with noise everywhere,
its worst case.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time

# One BLAS thread per process (set before numpy loads OpenBLAS): with 2 cores, spare
# OpenBLAS threads spin and slow the worker processes down 2-3x.  `phybench score
# --workers N` does the same for its workers.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from phybench.scoring.image_metrics import psnr_frames, ssim_frames  # noqa: E402
from phybench.scoring.parse import TILE, parse_video  # noqa: E402
from phybench.data.split import generate_sample, make_plan  # noqa: E402
from phybench.tasks import get_task  # noqa: E402
from phybench.scoring.velocity import video_errors  # noqa: E402

_DATA: list[tuple] = []  # (spec, row, gt, generated) shared with forked workers


def _make(task: str, n: int) -> list[tuple]:
    spec = get_task(task)
    plan = make_plan(spec, "id-eval", None, n, None)
    out = []
    for i in range(n):
        row, video = generate_sample(plan, i)
        gen = video if i % 2 == 0 else np.repeat(video[2:3], len(video), axis=0)
        out.append((spec, row, video, gen))
    return out


def _velocity(i: int) -> float:
    spec, row, _, gen = _DATA[i]
    colours = [tuple(int(c) for c in rgb) for rgb in row["colours"]]
    e = video_errors(
        parse_video(gen, colours, TILE),
        row["positions"],
        row["radii"],
        world_size=spec.world_size,
        frame_interval=spec.frame_interval,
        condition_frames=spec.condition_frames,
        contact_time=float(row["contact_time"]),
    )
    return e.velocity_error


def _image(i: int) -> float:
    spec, _, gt, gen = _DATA[i]
    c = spec.condition_frames
    return float(ssim_frames(gt[c:], gen[c:]).mean() + psnr_frames(gt[c:], gen[c:]).mean())


def _rate(fn, n: int, workers: int) -> float:
    t0 = time.perf_counter()
    if workers == 1:
        for i in range(n):
            fn(i)
    else:
        with mp.get_context("fork").Pool(workers) as pool:
            pool.map(fn, range(n), chunksize=max(1, n // (4 * workers)))
    return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=300, help="clips per task")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--torchmetrics", type=int, default=16, help="clips for the torchmetrics SSIM comparison (0: skip)")
    args = ap.parse_args()

    print(f"cores: {os.cpu_count()}, clips per task: {args.n}, 32x128x128, ground truth + copy-last\n")
    print(f"{'task':<10} {'metric':<16} {'1 process':>12} {f'{args.workers} processes':>14}")
    for task in ("uniform", "parabola", "collision"):
        _DATA[:] = _make(task, args.n)
        _velocity(0), _image(0)  # warm caches
        for name, fn in (("velocity error", _velocity), ("SSIM + PSNR", _image)):
            one = _rate(fn, args.n, 1)
            many = _rate(fn, args.n, args.workers) if args.workers > 1 else one
            print(f"{task:<10} {name:<16} {one:>9.0f}/s {many:>11.0f}/s")

    # Worst case for SSIM: the videos differ everywhere (no identical windows to skip).
    rng = np.random.default_rng(0)
    spec, row, gt, _ = _DATA[0]
    noisy = [(spec, row, g, np.clip(g.astype(np.int16) + rng.integers(-3, 4, g.shape), 0, 255).astype(np.uint8))
             for _, _, g, _ in _DATA[: max(8, args.n // 10)]]
    _DATA[:] = noisy
    n = len(noisy)
    print(f"{'(noise)':<10} {'SSIM + PSNR':<16} {_rate(_image, n, 1):>9.0f}/s "
          f"{_rate(_image, n, args.workers):>11.0f}/s   worst case: differs everywhere")

    if args.torchmetrics:
        import torch
        from torchmetrics.functional.image import structural_similarity_index_measure as tm_ssim

        torch.set_num_threads(os.cpu_count() or 1)
        clips = [g for _, _, g, _ in noisy[: args.torchmetrics]]
        t0 = time.perf_counter()
        for g in clips:
            x = torch.from_numpy(g).permute(0, 3, 1, 2).float() / 255
            tm_ssim(x, x.flip(0), data_range=1.0)
        rate = len(clips) / (time.perf_counter() - t0)
        print(f"{'(noise)':<10} {'torchmetrics SSIM':<16} {rate:>9.1f}/s   (all threads, for comparison)")


if __name__ == "__main__":
    main()
