"""What the ranked column and law identification (issue 24) add to `phybench score`.

    python benchmarks/bench_physics_metrics.py --work /tmp/bench24            # default run included (LPIPS, FVD on CPU)
    python benchmarks/bench_physics_metrics.py --work /tmp/bench24 --no-default  # velocity-only run as the reference

Makes (or reuses) the 200-video `lite` uniform id-eval split and a linear-extrapolation
submission under WORK, then times:

- the added code itself, per video on the parsed videos (the parse is shared with the
  velocity error, so it is not counted): the lost share and tracked error
  (`velocity._lost_share_and_tracked_error`), the ranked value, the law fit of the model
  and of the ground truth, plus the summaries the two new metrics add (bootstrap
  intervals of `velocity_error_ranked` and `law_error`, the law's median / IQR) for the
  overall group and each level;
- a `score(..., ("velocity_error",))` run (every companion metric, no LPIPS / FVD);
- a default `score(...)` run (LPIPS, FVD on the CPU; the split's I3D features are computed
  too unless a previous run cached them), unless --no-default.

Times are wall and CPU (`time.process_time`, all threads of this process): on a shared
machine the CPU time is the fair one.  The added share is the added time over each run's.
A default run does everything a velocity-only run does and more, so the velocity-only
share bounds the default one from above.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np


def _prepare(work: Path) -> tuple[Path, Path]:
    """The lite uniform id-eval split and a linear-extrapolation submission, made with the CLI."""
    from phybench.cli import main as cli

    split, sub = work / "uniform-id-eval-lite", work / "linear-extrapolation"
    if not (split / "manifest.json").is_file():
        cli(["generate", "uniform", "--split", "id-eval", "--protocol", "lite", "--out", str(split), "--quiet"])
    if not sub.exists():
        cli(["baseline", "linear-extrapolation", "--data", str(split), "--out", str(sub), "--quiet"])
    return split, sub


def added_seconds(split: Path, sub: Path, repeats: int = 3) -> dict[str, float]:
    """Best of `repeats` CPU times of the added computations, on videos parsed beforehand."""
    from phybench.data.split import SplitReader
    from phybench.scoring.learned.law import law_details, law_error, summarise_law
    from phybench.scoring.inputs import Sample
    from phybench.scoring.metrics import ranked_error
    from phybench.scoring.run.results import level_details, summarise
    from phybench.scoring.run.sample import pixel_mapping
    from phybench.scoring.physics.parse import parse_video
    from phybench.submission.format import open_submission
    from phybench.scoring.physics.velocity import VideoErrors, _lost_share_and_tracked_error, scored_pairs, video_errors
    from phybench.data.split import row_scene
    from phybench.scoring.physics.parse import MISSING

    reader = SplitReader(split)
    m = reader.manifest
    rows = {r["sample_id"]: r for r in reader.rows()}
    cf, dt, L = int(m["condition_frames"]), float(m["frame_interval"]), float(m["world_size"])
    items = []
    with open_submission(sub, manifest=m) as s:
        for sid, video in s.iter_videos(list(rows)):
            row = rows[sid]
            colours = [tuple(int(c) for c in b.colour) for b in row_scene(row).bodies]
            parsed = parse_video(video, colours, pixel_mapping(m))
            errors = video_errors(parsed, row["positions"], row["radii"], world_size=L, frame_interval=dt,
                                  condition_frames=cf)
            items.append((row, parsed, errors))
    best = {"per_video": float("inf"), "summaries": float("inf")}
    for _ in range(repeats):
        t0 = time.process_time()
        details = []
        for row, parsed, errors in items:
            gt = np.asarray(row["positions"], dtype=np.float64)
            radii = np.asarray(row["radii"], dtype=np.float64)
            pairs = scored_pairs(gt, radii, world_size=L, frame_interval=dt, condition_frames=cf)
            missing = ((parsed.flags & MISSING) != 0) | ~np.isfinite(parsed.positions).all(axis=-1)
            _lost_share_and_tracked_error(VideoErrors(), parsed.positions, gt, missing, pairs, radii, L, dt, cf)
            sample = Sample(row, None, None, m, lambda e=errors: e, parsed)
            d = {"sample_id": row["sample_id"], "level": row["level"], "velocity_error_ranked": ranked_error(errors, m),
                 "law_error": law_error(sample)}
            d.update(law_details(sample))
            details.append(d)
        t1 = time.process_time()
        for group in [details, *level_details(details).values()]:
            summarise(group, ("velocity_error_ranked",))
            summarise(group, ("law_error",))  # its bootstrap interval and the law's median / IQR
            summarise_law(group)  # counted twice on purpose: an upper bound
        t2 = time.process_time()
        best["per_video"] = min(best["per_video"], t1 - t0)
        best["summaries"] = min(best["summaries"], t2 - t1)
    best["videos"] = len(items)
    return best


def run_seconds(split: Path, sub: Path, metrics: tuple[str, ...] | None) -> tuple[float, float]:
    """(wall, CPU) seconds of one `score` run."""
    from phybench.scoring.run.score import score

    w0, c0 = time.perf_counter(), time.process_time()
    score(sub, split, metrics, progress=False)
    return time.perf_counter() - w0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True, help="folder for the split and the submission (reused)")
    ap.add_argument("--no-default", action="store_true", help="skip the default (LPIPS, FVD) run")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    split, sub = _prepare(args.work)
    added = added_seconds(split, sub)
    total = added["per_video"] + added["summaries"]
    print(f"added (CPU, best of 3), {added['videos']} videos: per-video {added['per_video']:.3f} s "
          f"({1e3 * added['per_video'] / added['videos']:.2f} ms/video), summaries {added['summaries']:.3f} s, "
          f"total {total:.3f} s")
    wall, cpu = run_seconds(split, sub, ("velocity_error",))
    print(f"score --metrics velocity_error: wall {wall:.1f} s, CPU {cpu:.1f} s; added share {100 * total / cpu:.1f}% of CPU")
    if not args.no_default:
        wall, cpu = run_seconds(split, sub, None)
        print(f"score (default metrics): wall {wall:.1f} s, CPU {cpu:.1f} s; added share {100 * total / cpu:.2f}% of CPU")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()
