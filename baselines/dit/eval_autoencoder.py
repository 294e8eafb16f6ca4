"""Reconstruction error of a video autoencoder, as the paper's table 3 measures it.

    python -m phybench_baselines.dit.eval_autoencoder --autoencoder FOLDER --data EVAL_SPLIT [--limit N]

Each ground-truth video of an evaluation split is encoded, decoded and rounded to uint8,
then both the ground truth and the reconstruction go through the scorer's own per-video
path (`phybench.scoring.run.score.score_sample`: the parser, then `video_errors`) against the split's
simulator states.  The ground truth's velocity error is the metric's floor (the uint8
rounding of the anti-aliased rim); the autoencoder is fine for the DiT when its error is
close to that floor.  `score_sample` rather than a whole `phybench score` run, because
`--limit` scores part of a split and a submission must cover all of it; the per-video
numbers are the same.  Prints a JSON dict; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from .autoencoder import VideoAutoencoder, load_autoencoder, num_params
from .train_autoencoder import to_tensor, to_uint8
from phybench.scoring.run.results import summarise
from phybench.scoring.run.score import score_sample
from phybench.data.split import SplitReader

METRICS = ("velocity_error", "position_error")


@torch.no_grad()
def reconstruct(model: VideoAutoencoder, video: np.ndarray) -> np.ndarray:
    """uint8 (T, H, W, 3) -> its reconstruction, uint8 (T, H, W, 3)."""
    x = to_tensor(video)[None].to(next(iter(model.buffers())).device)  # (1, 3, T, H, W)
    return to_uint8(model.decode(model.encode(x))[0])


def evaluate_autoencoder(autoencoder: str, data: str, limit: int | None = None, progress: bool = True) -> dict[str, Any]:
    """{ground_truth, reconstruction: summaries; ratio; pixel stats} over the first `limit` videos."""
    model = load_autoencoder(autoencoder)
    reader = SplitReader(data)
    manifest = reader.manifest
    if not manifest.get("with_video"):
        raise SystemExit(f"{data} stores no videos: give an evaluation split (id-eval / ood-eval)")
    n = len(reader) if limit is None else min(limit, len(reader))
    gt_details, rec_details = [], []
    abs_err, exact, psnr = [], [], []
    start = time.time()
    rows = (row for _, row in zip(range(n), reader.rows()))
    for row in tqdm(rows, total=n, desc="reconstruct", disable=not progress):
        gt = reader.video(row)
        rec = reconstruct(model, gt)
        gt_details.append(score_sample(row, gt, None, manifest, METRICS))
        rec_details.append(score_sample(row, rec, None, manifest, METRICS))
        d = np.abs(rec.astype(np.int16) - gt.astype(np.int16))
        abs_err.append(d.mean())
        exact.append((d == 0).mean())
        mse = float((d.astype(np.float64) ** 2).mean())
        psnr.append(10 * np.log10(255.0**2 / mse) if mse > 0 else float("inf"))
    gt_sum, rec_sum = summarise(gt_details, METRICS), summarise(rec_details, METRICS)
    gt_v = gt_sum.get("velocity_error", {}).get("mean")
    rec_v = rec_sum.get("velocity_error", {}).get("mean")
    finite = [p for p in psnr if np.isfinite(p)]
    return {
        "autoencoder": str(autoencoder), "params": num_params(model), "data": str(data),
        "task": manifest["task"], "split": manifest["split"], "videos": n,
        "ground_truth": gt_sum, "reconstruction": rec_sum,
        "velocity_error_ratio": (rec_v / gt_v) if gt_v and rec_v is not None else None,
        "within_10_percent": bool(gt_v and rec_v is not None and rec_v <= 1.1 * gt_v),
        "pixels": {"mean_abs_error_uint8": float(np.mean(abs_err)), "exact_fraction": float(np.mean(exact)),
                   "psnr_db_mean_finite": float(np.mean(finite)) if finite else None,
                   "lossless_videos": int(sum(not np.isfinite(p) for p in psnr))},
        "seconds": round(time.time() - start, 1),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--autoencoder", required=True, help="folder written by train_autoencoder")
    p.add_argument("--data", required=True, help="an evaluation split folder (stores its videos)")
    p.add_argument("--limit", type=int, default=None, help="the first N videos only")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    args = p.parse_args(argv)
    if "OMP_NUM_THREADS" in os.environ:
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    result = evaluate_autoencoder(args.autoencoder, args.data, args.limit, args.progress)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
