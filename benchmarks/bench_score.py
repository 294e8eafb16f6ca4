"""`phybench score` CPU cost per clip, stage by stage, with this machine's limits beside it.

    python benchmarks/bench_score.py                         # 64 clips per family
    python benchmarks/bench_score.py --n 200 --families uniform,collision,combinatorial
    python benchmarks/bench_score.py --families "" --torch 32   # LPIPS + FVD, 1 process vs --workers 2

For each task its first evaluation split is generated at its own resolution (uniform and collision
id-eval at 128 px, combinatorial in-template-eval at 256 px) and the submission is its ground truth blurred
(Gaussian, sigma 0.7 px, generated frames only), so that every metric takes the full path a
real model's output does (nothing is identical to the ground truth).  Scored with the cheap
metrics (`velocity_error,ssim,psnr` and the companions every run adds, the judge included):

- whole `score()`, one process: CPU-ms per clip (`time.process_time`, the cores are shared);
- `--workers 2`: the parent's and the workers' CPU together (`RUSAGE_CHILDREN`), as a ratio
  to one worker's: what a second worker costs;
- a cProfile of the one-process run split into stages (cumulative time of the stage's entry
  function, scaled to the unprofiled total; stages may nest a little, "rest" is the remainder);
- SSIM's worst case (every pixel differs, whole frames filtered) against two floors: memory, the
  bytes an unfused separable float32 filter moves at least (the two uint8 inputs read, the four
  moment maps written and read once per pass) at this machine's measured memcpy rate; compute,
  the fused filter's float32 operations (16 a tap pass, 6 for the moments, 21 for the formula) at half the measured FMA peak (it
  may not fuse a multiply and an add: the bits must not depend on the CPU).

The limits (fp32 matmul and oneDNN conv GFLOP/s, memcpy GB/s) are measured in the same run
(`benchmarks/limits.py`).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.ndimage import gaussian_filter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import limits  # noqa: E402

from phybench.data.generate import generate  # noqa: E402
from phybench.data.split import SplitReader, make_plan  # noqa: E402
from phybench.scoring.perceptual.image_metrics import ssim_frames  # noqa: E402
from phybench.scoring.run.score import score  # noqa: E402
from phybench.submission import submission_meta, write_submission  # noqa: E402
from phybench.tasks import get_task  # noqa: E402

METRICS = "velocity_error,ssim,psnr"
# stage -> (module file suffix, function names): cumulative CPU of these entry points
STAGES = {
    "decode submission": ("submission/format.py", ("_decode_file",)),
    "ground truth (decode + re-hash)": ("data/split.py", ("video", "row_digest")),
    "parse + velocity": ("scoring/physics/parse.py", ("parse_video",)),
    "judge: segmentation": ("scoring/judge/abnormal.py", ("segment_pair",)),
    "judge: rules": ("scoring/judge/abnormal.py", ("judge_segmented",)),
    "bodies": ("scoring/learned/bodies.py", ("body_tracks",)),
    "SSIM": ("scoring/perceptual/image_metrics.py", ("ssim_frames",)),
    "PSNR": ("scoring/perceptual/image_metrics.py", ("psnr_frames",)),
}


def _blurred(video: np.ndarray, start: int) -> np.ndarray:
    out = video.copy()
    out[start:] = np.clip(gaussian_filter(video[start:].astype(np.float32), (0, 0.7, 0.7, 0)).round(), 0, 255)
    return out


def _prepare(task: str, n: int, root: Path) -> tuple[Path, Path]:
    split = get_task(task).eval_splits[0]  # the in-distribution evaluation split, as the family lists it
    split_dir = root / f"{task}-{split}"
    generate(make_plan(get_task(task), split, None, n, None), split_dir, progress=False)
    reader = SplitReader(split_dir)
    cf = int(reader.manifest["condition_frames"])
    videos = ((row["sample_id"], _blurred(reader.video(row), cf)) for row in reader.rows())
    sub = root / f"{task}-blurred"
    write_submission(sub, submission_meta(reader.manifest, "blurred-ground-truth"), videos, fmt="npz")
    return split_dir, sub


def _cpu_with_children() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _stages(prof: cProfile.Profile) -> dict[str, float]:
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    out = {name: 0.0 for name in STAGES}
    for (path, _, func), (_, _, _, cum, _) in stats.items():
        for stage, (suffix, funcs) in STAGES.items():
            if path.replace(os.sep, "/").endswith(suffix) and func in funcs:
                out[stage] += cum
    return out


def bench_family(task: str, n: int, root: Path) -> None:
    split_dir, sub = _prepare(task, n, root)
    score(sub, split_dir, METRICS, progress=False)  # warm-up: imports, caches
    t0 = time.process_time()
    score(sub, split_dir, METRICS, progress=False)
    one = time.process_time() - t0
    c0 = _cpu_with_children()
    score(sub, split_dir, METRICS, progress=False, workers=2)
    two = _cpu_with_children() - c0
    prof = cProfile.Profile(time.process_time)  # CPU time: the cores are shared, wall time is not ours
    t0 = time.process_time()
    prof.enable()
    score(sub, split_dir, METRICS, progress=False)
    prof.disable()
    profiled = time.process_time() - t0
    stages = _stages(prof)
    res = SplitReader(split_dir).manifest["resolution"]
    print(f"\n{task} ({n} clips, {res} px, blurred ground truth): {1000 * one / n:.1f} CPU-ms per clip on one process; "
          f"--workers 2: {1000 * two / n:.1f} CPU-ms per clip ({two / one:.2f}x one worker's CPU)")
    for stage, cum in stages.items():
        print(f"  {stage:<34} {1000 * cum / profiled * one / n:7.1f} CPU-ms  ({cum / profiled:5.1%})")
    rest = 1 - sum(stages.values()) / profiled
    print(f"  {'rest (validation, hashing, law, I/O)':<34} {1000 * rest * one / n:7.1f} CPU-ms  ({rest:5.1%})")


def bench_ssim_floor(lim: limits.Limits, res: int) -> None:
    rng = np.random.default_rng(0)
    t = 29  # generated frames of a clip
    a = rng.integers(0, 256, (t, res, res, 3), dtype=np.uint8)
    b = rng.integers(0, 256, a.shape, dtype=np.uint8)
    cpu = limits._best_cpu_seconds(lambda: ssim_frames(a, b), repeats=3)
    px = a.size
    floor_bytes = px * (2 + 4 * 4 * 2 * 2)  # inputs; 4 float32 maps written + read, 2 passes (float64 before issue 52)
    floor = floor_bytes / (lim.memcpy_gbs * 1e9)
    flops = t * 3 * ((res - 10) * res * 4 * 16 + (res - 10) ** 2 * (4 * 16 + 21) + res * res * 6)  # moments once
    compute = flops / (lim.fp32_gflops / 2 * 1e9)
    print(f"SSIM worst case, {res} px, {t} frames differing everywhere: {1000 * cpu:.1f} CPU-ms per clip; "
          f"memory floor {1000 * floor:.1f} ms ({cpu / floor:.1f}x), compute floor {1000 * compute:.1f} ms "
          f"({flops / 1e6:.0f} MFLOP at {lim.fp32_gflops / 2:.0f} GFLOP/s: {cpu / compute:.1f}x)")


def bench_torch(n: int, root: Path) -> None:
    """A default run's expensive half: LPIPS and FVD (reference cache off) on `n` uniform clips,
    one process against --workers 2: CPU seconds of all processes, and wall seconds."""
    os.environ["PHYBENCH_FVD_CACHE"] = "0"
    (root / "torch").mkdir()
    split_dir, sub = _prepare("uniform", n, root / "torch")
    metrics = "velocity_error,ssim,psnr,lpips,fvd"
    rows = []
    for workers in (1, 2):
        c0, w0 = _cpu_with_children(), time.perf_counter()
        out = score(sub, split_dir, metrics, progress=False, workers=workers)
        rows.append((workers, _cpu_with_children() - c0, time.perf_counter() - w0, out.results["summary"]["overall"]))
    (_, cpu1, wall1, s1), (_, cpu2, wall2, s2) = rows
    same = s1 == s2
    print(f"\nuniform, {n} clips, {metrics} (FVD cache off): one process {cpu1 / n:.2f} CPU-s per clip, "
          f"{wall1:.1f} s wall; --workers 2 {cpu2 / n:.2f} CPU-s per clip ({cpu2 / cpu1:.2f}x), {wall2:.1f} s wall "
          f"({wall1 / wall2:.2f}x faster); summaries identical: {same}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--families", default="uniform,collision,combinatorial")
    ap.add_argument("--torch", type=int, default=0, metavar="N",
                    help="also score N uniform clips with LPIPS and FVD, one process against --workers 2")
    args = ap.parse_args()
    lim = limits.measure_in_child()  # this process stays free of torch, as `phybench score` is
    print(lim.line())
    for res in (128, 256):
        bench_ssim_floor(lim, res)
    with tempfile.TemporaryDirectory() as tmp:
        for task in filter(None, args.families.split(",")):
            bench_family(task, args.n, Path(tmp))
        if args.torch:
            bench_torch(args.torch, Path(tmp))


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()
