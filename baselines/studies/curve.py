"""The learning curve: every EMA snapshot of a run, sampled and scored on the first N samples of splits.

    python -m phybench_baselines.studies.curve --run RUN --data ID_SPLIT OOD_SPLIT --limit 64 --out curve.jsonl

Per snapshot and split: the mean velocity error over trackable videos with a per-video bootstrap 95%
interval (2,000 resamples, seed 0), the untrackable share, and the share of videos whose fitted speed
(the learned-law block's free-flight fit) lies within 10% of the ground truth's own fit, counted over
every scored video (a video with no fit counts as a miss); also the scored videos' ids and per-video
errors (`sample_ids`, `velocity_errors`: intervals on ratios, `phybench_baselines.studies.findings`).  Scored with `score_sample`, as
`phybench score` scores each video.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from ..framear.sample import fitted_speed, generate_videos, law_within, load_run
from phybench.data.documents import dof_value
from phybench.data.split import SplitReader
from phybench.stats import bootstrap_mean_ci

RESAMPLES, SEED = 2000, 0  # the curves' interval: the one bootstrap drawn all at once


def score_split(model, cfg, split: str, limit: int | None, steps: int | None = None, batch: int = 64) -> dict:
    from phybench.scoring.run.score import score_sample

    reader = SplitReader(split)
    m = reader.manifest
    rows = list(reader.rows())[:limit]
    c, T = int(m["condition_frames"]), int(m["frames"])
    errors, within, untrackable, scored, fits, ids = [], [], 0, 0, [], []
    for i in range(0, len(rows), batch):
        chunk = rows[i:i + batch]
        cond = np.stack([reader.video(row)[:c] for row in chunk])
        for row, video in zip(chunk, generate_videos(model, cfg, cond, T, 0, steps), strict=True):
            d = score_sample(row, video, None, m, ("velocity_error", "law_error"))
            if d["excluded"]:
                continue
            scored += 1
            law = d.get("law") or {}
            fits.append([float(dof_value(row, "velocity")), fitted_speed(law.get("fit"))])
            ids.append(str(row["sample_id"]))
            within.append(law_within(law, 0.1))
            if d["untrackable"]:
                untrackable += 1
            else:
                errors.append(d["velocity_error"])
    e = np.asarray(errors, float)
    lo, hi = bootstrap_mean_ci(e, RESAMPLES, SEED)
    return {"split": m["split"], "videos": scored, "velocity_error": float(e.mean()) if len(e) else float("nan"),
            "ci95": [lo, hi], "untrackable": untrackable / max(1, scored),
            "law_within_10pct": float(np.mean(within)) if within else 0.0, "true_vs_fitted_speed": fits, "sample_ids": ids,
            "velocity_errors": [float(x) for x in e]}


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", required=True)
    p.add_argument("--data", nargs="+", required=True, help="evaluation split folders")
    p.add_argument("--limit", type=int, default=64)
    p.add_argument("--steps", type=int, default=None, help="sampler steps (default: the config's)")
    p.add_argument("--snapshots", nargs="*", type=int, help="only these steps")
    p.add_argument("--out", help="JSON lines, one per snapshot and split")
    args = p.parse_args(argv)
    snaps = sorted(Path(args.run, "snapshots").glob("ema_*.safetensors"))
    if args.snapshots:
        snaps = [s for s in snaps if int(s.stem.split("_")[1]) in args.snapshots]
    out = []
    for snap in snaps:
        step = int(snap.stem.split("_")[1])
        cfg, model = load_run(snap)
        for split in args.data:
            tic = time.perf_counter()
            r = {"step": step, **score_split(model, cfg, split, args.limit, args.steps)}
            r["seconds"] = round(time.perf_counter() - tic, 1)
            out.append(r)
            print(f"step {step:>6} {r['split']:>9}: velocity error {r['velocity_error']:.3f} "
                  f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}] over {r['videos']} videos, untrackable "
                  f"{100 * r['untrackable']:.1f}%, fitted speed within 10% {100 * r['law_within_10pct']:.1f}% "
                  f"({r['seconds']} s)", flush=True)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps(r) + "\n")
    return out


if __name__ == "__main__":
    main()
