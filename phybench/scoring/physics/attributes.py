"""Attribute consistency and the whole trajectory of each object (issue: every violation moves a number).

The paper's velocity error scores post-contact frame pairs only and leaves untrackable videos
out; a ball that wobbles before a collision, turns blue or grows 20% moves none of it.  These
per-video numbers come from what the parser already measures, over every *generated* frame
(k >= condition frames) where the ground-truth object is wholly in view:

- ``trajectory_error``: mean |p_hat - p| (world units) over those frames where the object is
  found, pre-contact frames included.
- ``size_error``: mean |r_hat - r| / r over those frames where the object is found whole and
  in view (r_hat from its visible area), for the worst object; only for tasks whose objects
  are all discs.
- ``colour_kept``: share of those frames where the object is found in its conditioned colour,
  for the worst object of the video; a vanished or recoloured object is not kept (1.0 on
  every ground-truth video).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...world.laws import fully_in_view
from .parse import COLOUR_CHANGED, MISSING, PARTLY_OUT, SPLIT, Parsed

SETTINGS: dict[str, Any] = {
    "frames": "generated frames (k >= condition_frames) where the ground-truth object is fully in view",
    "trajectory_error": "mean euclidean |p_hat - p| over those frames where the object is found, world units",
    "size_error": ("mean |r_hat - r| / r over those frames where the object is found whole and in view, "
                   "r_hat = sqrt(visible area / pi); the video's worst object; discs only"),
    "colour_kept": "share of those frames where the object is found in its conditioned colour; the video's worst object",
}


def attribute_errors(
    parsed: Parsed,
    positions: np.ndarray,
    radii: np.ndarray,
    *,
    world_size: float,
    condition_frames: int,
    discs: bool = True,
) -> dict[str, float]:
    """{"trajectory_error", "size_error", "colour_kept"} of one parsed video (NaN where undefined).

    positions: (T, B, 2) ground-truth centres; radii: (B,) ground-truth radii, world units.
    """
    gt = np.asarray(positions, dtype=np.float64)
    r = np.asarray(radii, dtype=np.float64)
    frames = fully_in_view(gt, r, world_size)  # (T, B)
    frames[:condition_frames] = False
    out = {"trajectory_error": float("nan"), "size_error": float("nan"), "colour_kept": float("nan")}
    if not frames.any():
        return out
    flags = parsed.flags
    found = frames & ((flags & MISSING) == 0) & np.isfinite(parsed.positions).all(axis=-1)
    if found.any():
        out["trajectory_error"] = float(np.linalg.norm(parsed.positions - gt, axis=-1)[found].mean())
    whole = found & ((flags & (PARTLY_OUT | SPLIT)) == 0)
    if discs and whole.any():
        rel = np.where(whole, np.abs(parsed.radii - r[None, :]) / r[None, :], 0.0)  # (T, B)
        count = whole.sum(axis=0)
        out["size_error"] = float((rel.sum(axis=0)[count > 0] / count[count > 0]).max())  # the worst object
    kept = found & ((flags & COLOUR_CHANGED) == 0)
    seen = frames.sum(axis=0)  # (B,) frames each object should be seen in
    share = kept.sum(axis=0)[seen > 0] / seen[seen > 0]
    out["colour_kept"] = float(share.min())  # the worst object: any object that loses its colour shows
    return out
