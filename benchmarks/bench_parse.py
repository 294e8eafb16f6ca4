"""Throughput and accuracy of `phybench.scoring.physics.parse.parse_video` on our own ground-truth videos.

    python benchmarks/bench_parse.py                    # 200 clips per task, 128 px
    python benchmarks/bench_parse.py --n 500 --split ood-eval --resolution 256

For each task it renders `--n` evaluation clips with the package itself (spread over the
split, so OOD levels all appear), then times `parse_video` on them in this one process:
best of `--repeats` passes after a warm-up, wall clock and CPU time (the CPU time is the
steadier figure on a shared machine).  It also prints the parser's accuracy against the
simulated centres over the frames where each ball is fully in view:

  pos     mean / max |parsed - true| position error, world units
  floor   mean over frames of |delta(parsed - true)| / frame_dt: the velocity-error floor
          the parser leaves (units/s); frames 0.1 s apart, as the paper's metric
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from phybench.scoring.physics.parse import parse_video
from phybench.data.split import generate_sample, make_plan
from phybench.tasks import get_task

FRAME_DT = 0.1  # s between frames


def clips(task: str, split: str, n: int, resolution: int) -> list[tuple[np.ndarray, dict]]:
    """`n` (video, row) pairs spread evenly over the split."""
    plan = make_plan(get_task(task), split, resolution=resolution)
    picks = np.linspace(0, plan.num_samples - 1, min(n, plan.num_samples)).astype(int)
    out = []
    for index in picks:
        row, video = generate_sample(plan, int(index))
        out.append((video, row))
    return out


def timing(data: list[tuple[np.ndarray, dict]], repeats: int) -> tuple[float, float]:
    """Best wall-clock and CPU seconds per clip over `repeats` passes."""
    colours = [[tuple(int(v) for v in c) for c in row["colours"]] for _, row in data]
    for (video, _), cols in zip(data[:20], colours):  # warm-up: imports, caches
        parse_video(video, cols)
    best_wall = best_cpu = float("inf")
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        for (video, _), cols in zip(data, colours):
            parse_video(video, cols)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall / len(data), best_cpu / len(data)


def accuracy(data: list[tuple[np.ndarray, dict]]) -> tuple[float, float, float]:
    """Mean and max position error and the velocity floor over fully-in-view frames."""
    errors, steps = [], []
    for video, row in data:
        parsed = parse_video(video, [tuple(int(v) for v in c) for c in row["colours"]])
        true = np.asarray(row["positions"], dtype=np.float64)  # (T, B, 2)
        radius = np.asarray(row["radii"], dtype=np.float64)[None, :, None]  # (1, B, 1)
        inside = np.all((true - radius >= 0) & (true + radius <= 10.0), axis=-1)  # (T, B)
        error = parsed.positions - true  # (T, B, 2)
        errors.append(np.linalg.norm(error, axis=-1)[inside])
        both = inside[1:] & inside[:-1]
        steps.append(np.linalg.norm(np.diff(error, axis=0), axis=-1)[both] / FRAME_DT)
    errors_all, steps_all = np.concatenate(errors), np.concatenate(steps)
    return float(errors_all.mean()), float(errors_all.max()), float(steps_all.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="clips per task")
    parser.add_argument("--split", default="id-eval", help="id-eval or ood-eval")
    parser.add_argument("--resolution", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3, help="timed passes; best is kept")
    parser.add_argument("--tasks", nargs="+", default=["uniform", "parabola", "collision"])
    args = parser.parse_args()

    print(f"parse_video, {args.split}, {args.resolution} px, {args.n} clips per task, one process")
    header = ("task", "clips/s", "ms/clip", "cpu ms", "pos mean", "pos max", "floor")
    print(f"{header[0]:<10} " + " ".join(f"{h:>9}" for h in header[1:]))
    for task in args.tasks:
        data = clips(task, args.split, args.n, args.resolution)
        wall, cpu = timing(data, args.repeats)
        mean, worst, floor = accuracy(data)
        print(
            f"{task:<10} {1 / wall:9.0f} {wall * 1e3:9.3f} {cpu * 1e3:9.3f} "
            f"{mean:9.2e} {worst:9.2e} {floor:9.2e}"
        )
    print("pos: world units; floor: mean |d(parsed - true)| / 0.1 s, world units / s")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()
