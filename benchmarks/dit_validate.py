"""Validate a DiT run on rows of its own training split that its data stream never visited (issue 46).

    python benchmarks/dit_validate.py --checkpoint RUN --train-data SPLIT [--rows 32 --steps 20]

Recipe choices read this, never an evaluation split.  The rows are evenly spread over the split's
rows that no training step drew (the trainer's stream is a pure function of seed and step, so the
visited rows are recomputed here), sampled from their first 3 frames with the run's EMA weights,
and scored from pixels as `phybench score` does; copy-last (the third frame repeated) is scored on
the same rows beside it.  Prints one JSON line: tracked share, mean velocity error, and each's
copy-last counterpart.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from phybench.data.split import SplitReader
from phybench.scoring.run.score import score_sample
from phybench_baselines.dit.sample import complete_clips, load_run
from phybench_baselines.training import StreamSampler


def visited_rows(cfg, n_rows: int, total_frames: int) -> set[int]:
    """Rows whose windows the run's first cfg.steps x batch_size stream items drew (one process)."""
    offsets = total_frames - cfg.frames + 1 if cfg.windows else 1
    stream = iter(StreamSampler(n_rows * offsets, cfg.batch_size, 0, 1, cfg.seed))
    return {next(stream) // offsets for _ in range(cfg.steps * cfg.batch_size)}


def score(rows: list[dict], videos: list[np.ndarray], manifest: dict) -> dict:
    errors, tracked = [], 0
    for row, video in zip(rows, videos, strict=True):
        d = score_sample(row, video, None, manifest, ("velocity_error",))
        if d["excluded"]:
            continue
        if not d["untrackable"]:
            tracked += 1
            errors.append(d["velocity_error"])
    return {"tracked": tracked / max(1, len(rows)), "velocity_error": float(np.mean(errors)) if errors else None}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--train-data", required=True)
    p.add_argument("--rows", type=int, default=32)
    p.add_argument("--steps", type=int, default=None, help="sampler steps (default: the run's)")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    cfg, model, codec = load_run(Path(a.checkpoint), "cpu")
    reader = SplitReader(a.train_data)
    rows = list(reader.rows())
    m = reader.manifest
    free = sorted(set(range(len(rows))) - visited_rows(cfg, len(rows), int(m["frames"])))
    pick = [rows[free[j]] for j in np.linspace(0, len(free) - 1, a.rows).round().astype(int)]
    t0 = time.process_time()
    videos = complete_clips(model, codec, cfg, reader, pick, a.steps or cfg.sample_steps,
                            0, "cpu", bf16=False)  # seed 0: each video seeded from it and its own frames
    sample_s = time.process_time() - t0
    c = int(m["condition_frames"])
    copies = []
    for row in pick:
        v = reader.video(row).copy()
        v[c:] = v[c - 1]
        copies.append(v)
    out = {"rows": len(pick), "model": score(pick, videos, m), "copy_last": score(pick, copies, m),
           "sample_cpu_s": round(sample_s, 1)}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
