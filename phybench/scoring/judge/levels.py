"""The generated frames' levels mapped back to the ground truth's before the judge reads them.

A model that washes its colours out (a contrast of 0.85 turns the white background into grey
236) draws the right scene in the wrong levels; the judge's colour lines start at the white
background, so it would read the grey as a grey body.  `match_levels` fits, per channel, the
affine map from the ground truth's levels to the generated frames' and undoes it where it moves
some level by more than LEVELS_TOL.
"""
from __future__ import annotations

import numpy as np

from . import segment_fast

LEVELS_TOL = 8.0  # levels: a level map of the generated frames moving no level further is left alone
LEVELS_SHARE = 0.002  # a level bin of the ground truth enters the map's fit with this share of the pixels
LEVELS_EVERY = 4  # the map is fitted on every 4th generated frame

SETTINGS = (f"the generated frames are first mapped back, per channel, through the affine level map from the ground "
            f"truth's levels to theirs (medians per 8-level bin holding {LEVELS_SHARE:g} of the pixels, every "
            f"{LEVELS_EVERY}th generated frame), where it moves a level more than {LEVELS_TOL:g} and its slope lies "
            "within (0.5, 2): a washed-out or contrasted picture is not a grey body")


def match_levels(video: np.ndarray, gt_video: np.ndarray, start: int) -> np.ndarray:
    """`video` with its generated frames (index >= start) mapped back through the affine level
    map, per channel, that takes the ground truth's levels to theirs, where that map moves
    some level by more than LEVELS_TOL (else `video` itself, the same object).

    The map is fitted on the generated frames against the ground truth's (every
    LEVELS_EVERY-th frame): per channel,
    the median generated level of the pixels in each 8-level bin of the ground truth holding
    at least LEVELS_SHARE of them, weighted by their count.  The medians ignore what a model
    drew in the wrong place (a few bodies' pixels); a map steeper or flatter than 2x is no
    contrast change, and is left to the rules."""
    frames = np.arange(start, len(video), LEVELS_EVERY)
    if not len(frames):
        return video
    a = np.ones(3)
    b = np.zeros(3)
    refs, gens = gt_video[frames], video[frames]
    for ch in range(3):
        counts, x, y, kept = _bin_means_medians(_joint(refs, gens, ch))
        w = counts[kept].astype(np.float64)
        if len(kept) >= 2 and np.ptp(x) >= 64:
            xm, ym = np.average(x, weights=w), np.average(y, weights=w)
            a[ch] = np.sum(w * (x - xm) * (y - ym)) / np.sum(w * (x - xm) ** 2)
            b[ch] = ym - a[ch] * xm
        elif len(kept):
            b[ch] = float(np.average(y - x, weights=w))
    levels = np.arange(256.0)
    if np.abs(np.outer(a - 1.0, levels) + b[:, None]).max() <= LEVELS_TOL or not np.all((a > 0.5) & (a < 2.0)):
        return video
    out = video.copy()
    lut = np.clip(np.rint((levels[None, :] - b[:, None]) / a[:, None]), 0, 255).astype(np.uint8)  # (3, 256)
    for ch in range(3):
        out[start:, ..., ch] = lut[ch][video[start:, ..., ch]]
    return out


def _joint(refs: np.ndarray, gens: np.ndarray, ch: int) -> np.ndarray:
    """(32, 8, 256) int64: pixels of channel ch per (ref level, gen level) of two (F, H, W, 3)
    uint8 stacks (compiled where `segment_fast` allows: the same exact counts)."""
    from .segment import segment  # (the compiled kernels' check runs the segmentation)

    kern = segment_fast.compiled(segment)
    if kern is None:
        ref, gen = refs[..., ch].ravel(), gens[..., ch].ravel()
        joint = np.bincount((ref.astype(np.uint16) << 8) | gen, minlength=65536)
    else:
        joint = np.zeros(65536, np.int64)
        kern.joint_histogram(np.ascontiguousarray(refs), np.ascontiguousarray(gens), ch, joint)
    return joint.reshape(32, 8, 256)


def _bin_means_medians(joint: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(counts per 8-level bin of the reference, then per kept bin (holding LEVELS_SHARE of the pixels) the
    mean of its `ref` levels and the median of the `gen` levels at its pixels, the kept bins) from
    one joint histogram of the two uint8 arrays instead of a mask and a sort per bin (most of the
    level map's cost); equal bit for bit to ``ref[bins == k].mean()`` and
    ``np.median(gen[bins == k])``: sums of whole levels are exact in float64, and a median is the
    middle level, or the mean of the two middle ones."""
    per_level = joint.sum(axis=2)  # (32, 8): pixels of each ref level
    counts = per_level.sum(axis=1)
    kept = np.flatnonzero(counts >= LEVELS_SHARE * int(counts.sum()))
    sums = (per_level * np.arange(256).reshape(32, 8)).sum(axis=1)  # int64: exact
    x = sums[kept].astype(np.float64) / counts[kept]
    below = np.cumsum(joint[kept].sum(axis=1), axis=1)  # (K, 256): the bin's pixels at or under each gen level
    n = counts[kept]
    lo = (below > ((n - 1) // 2)[:, None]).argmax(axis=1)  # the sorted values' (n-1)//2-th and n//2-th
    hi = (below > (n // 2)[:, None]).argmax(axis=1)
    return counts, x, (lo.astype(np.float64) + hi) / 2, kept
