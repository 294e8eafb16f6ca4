"""The resolution floor: the ground truth drawn through a model's pixels, scored as a submission.

    python -m phybench_baselines.studies.floor --data W/data/collision-id-eval --resolution 48 \
        --out W/subs/collision-id-eval-truth-48px
    phybench score W/subs/collision-id-eval-truth-48px --data W/data/collision-id-eval \
        --metrics velocity_error,velocity_error_paper,law_error

Why: framear draws at 48 px and its frames are upsampled to the split's 128 (`framear.frames`).  A
model that drew every frame *exactly right* at 48 px would still not score zero: the area
downsample, the uint8 rounding of its training frames and the bilinear upsample move every ball's
rim, and the scorer reads positions from rims.  This writes that perfect model's submission, the
split's own videos through the same downsample -> round -> upsample (condition frames kept as given,
as the sampler keeps them), so the error it scores is the floor below which no model at that
resolution can go, whatever it learns.  Issue 46 item 2 reads its targets against it.
"""
from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from phybench.data.split import SplitReader

from ..framear.frames import downsample, upsample


def through_pixels(video: np.ndarray, resolution: int, condition_frames: int) -> np.ndarray:
    """uint8 (T, H, W, 3) -> uint8 (T, H, W, 3): area-downsampled to `resolution`, rounded to uint8 as
    the trainer's clips are (`framear.frames.render_clips`), bilinear-upsampled back; condition frames kept."""
    small = ((downsample(video, resolution) + 1) * 127.5).round().clamp(0, 255)  # float (T, 3, r, r), uint8 levels
    out = upsample(small / 127.5 - 1, video.shape[1])
    out[:condition_frames] = video[:condition_frames]
    return np.ascontiguousarray(out)


def main(argv=None) -> Path:
    from phybench.submission import submission_meta, write_submission

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, type=Path, help="an evaluation split folder")
    p.add_argument("--resolution", type=int, default=48, help="the model's frame size (framear: 48)")
    p.add_argument("--out", required=True, type=Path, help="the submission folder to write (must not exist)")
    p.add_argument("--limit", type=int, default=None, help="only the first N samples")
    args = p.parse_args(argv)
    reader = SplitReader(args.data)
    c = int(reader.manifest["condition_frames"])
    rows = list(reader.rows(columns=["sample_id", "video"]))[:args.limit]

    def videos() -> Iterator[tuple[str, np.ndarray]]:
        with torch.no_grad():
            for row in rows:
                yield row["sample_id"], through_pixels(reader.video(row), args.resolution, c)

    name = f"truth-{args.resolution}px"
    card = {"kind": "resolution floor", "resolution": args.resolution,
            "how": "the split's videos, area-downsampled, rounded to uint8, bilinear-upsampled (studies.floor)"}
    meta = submission_meta(reader.manifest, name, sampler=card, seeds=[0])
    return write_submission(args.out, meta, videos(), fmt="npz")


if __name__ == "__main__":
    main()
