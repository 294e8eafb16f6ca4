"""Frames in and out of the frame-autoregressive model: uint8 video <-> [-1, 1] tensors at the
model's resolution, and training clips rendered by the split's own renderer (eagerly or lazily).

Below both `train` and `sample`: condition frames arrive area-downsampled at sampling time
exactly as training frames were.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from phybench.data.documents import SplitRow
from phybench.data.split import render_row


def downsample(video: np.ndarray, resolution: int) -> torch.Tensor:
    """uint8 (T, H, W, 3) -> float (T, 3, r, r) in [-1, 1], area-downsampled (how condition frames arrive)."""
    x = torch.from_numpy(np.ascontiguousarray(video)).permute(0, 3, 1, 2).float()
    if x.shape[-1] != resolution:
        x = F.interpolate(x, size=(resolution, resolution), mode="area")
    return x / 127.5 - 1


def upsample(frames: torch.Tensor, size: int) -> np.ndarray:
    """float (T, 3, r, r) in [-1, 1] -> uint8 (T, size, size, 3), bilinear."""
    if frames.shape[-1] != size:
        frames = F.interpolate(frames.float(), size=(size, size), mode="bilinear", align_corners=False)
    return ((frames.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()


def render_clips(rows: list[SplitRow], resolution: int) -> torch.Tensor:
    """uint8 (N, T, 3, r, r): each row rendered at 128 px by the split's renderer, area-downsampled, rounded.

    Written into one tensor allocated up front: a list of per-row clips stacked at the end held each
    small clip between the large per-row temporaries, and the fragmented heap never shrank (6,000 rows
    at 48 px, 1.3 GB of clips, reached 13-21 GB and were killed for memory; 1,500 rows held 5 GB)."""
    out: torch.Tensor | None = None
    for i, row in enumerate(rows):
        x = downsample(render_row(row, 128), resolution)
        clip = ((x + 1) * 127.5).round().clamp(0, 255).to(torch.uint8)
        if out is None:
            out = torch.empty((len(rows), *clip.shape), dtype=torch.uint8)
        out[i] = clip
    if out is None:
        raise ValueError("no rows to render")
    return out


class LazyClips:
    """Stands in for `render_clips(rows, r)` without holding it: indexing with (clip, frame) index tensors
    renders only the frames asked for (per clip, the span between the lowest and highest asked).

    Why: 30K rows at 48 px are 6.6 GB of uint8; a run of S steps reads at most 32 S of them.  The
    pixels are the eager ones (a frame slice renders as the same frames of the whole clip; tested)."""

    def __init__(self, rows: list[SplitRow], resolution: int, frames: int) -> None:
        self.rows, self.resolution = rows, resolution
        self.shape = (len(rows), frames, 3, resolution, resolution)

    def __getitem__(self, key: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        r_i, k = torch.broadcast_tensors(*(torch.as_tensor(x) for x in key))
        out = torch.empty((*r_i.shape, *self.shape[2:]), dtype=torch.uint8)
        flat_r, flat_k, flat_out = r_i.reshape(-1), k.reshape(-1), out.view(-1, *self.shape[2:])
        for row in flat_r.unique().tolist():
            where = (flat_r == row).nonzero().squeeze(1)
            lo, hi = int(flat_k[where].min()), int(flat_k[where].max())
            x = downsample(render_row(self.rows[row], 128, slice(lo, hi + 1)), self.resolution)
            x = ((x + 1) * 127.5).round().clamp(0, 255).to(torch.uint8)  # (hi - lo + 1, 3, r, r)
            flat_out[where] = x[flat_k[where] - lo]
        return out
