"""A generated video's background, exposure and bad pixels read from the video itself (issue 48).

The parser (`phybench.scoring.parse`) and the judge's segmentation (`phybench.scoring.segment`)
unmix each pixel between the renderer's white background and a body's colour.  A model draws
the right scene on a background of its own: off-white, grey, tinted, darker or brighter, with a
vignette or a gradient, drifting a little from frame to frame; a sensor adds isolated dead or
hot pixels.  Read against pure white, a grey wash is a frame-wide blob of the ball's colour and
one dead pixel inside a ball is a hole.  `normalise` maps such a video back to the renderer's
picture before either reads it:

* **Isolated pixels** (`despeckle`): a pixel whose channel sum differs from each of its eight
  neighbours by more than `SPECK` levels, all in the same direction, is replaced by the
  per-channel median of those neighbours.  No rendered body is that small: the smallest disc
  is 3.8 px in radius at 128 px, and a thin line or a corner has a neighbour along it.
* **The background field** (`background_field`): per frame, a smooth field (per channel, the
  polynomial `_BASIS`: constant, linear, quadratic and a fourth-order radial term, enough for a
  vignette, a gradient, a tint or a level) is fitted to a `GRID` x `GRID` sample of the frame's
  pixels, re-fitted `_ROUNDS` times on the points it explains (bodies are outliers).  Per frame,
  so it follows drift and exposure changes between the condition and the generated frames.
* **Flattening**: where a frame's field is off the expected background by more than
  `FIELD_TOL` levels somewhere, each channel is divided by the field and multiplied by the
  background (``p' = p * background / field``): the model of exposure, white balance, tint and
  vignette (each a gain on the light), which takes a body's colour back to its own too.

A frame whose field is within `FIELD_TOL` of the background everywhere is left untouched, so
phybench's exact renders (and every lossy copy of them within a few levels) pass through
byte for byte: their scores, verdicts and golden hashes do not move.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

BACKGROUND = (255, 255, 255)

SPECK = 150  # levels of R + G + B: a pixel this far from all 8 neighbours, one way, is a bad pixel
GRID = 16  # sample points per side for the background fit
FIELD_TOL = 4.0  # levels: a frame whose field is this close to the background everywhere is left alone
_START = 48.0  # levels: first inliers, within this of the frame's median on every channel
_FLOOR = 6.0  # levels: least residual threshold of a re-fit
_ROUNDS = 4  # re-fits on the points the field explains
_MIN_INLIERS = 0.3  # share of the sample a field must explain, else the frame keeps its pixels
_MIN_FIELD = 32.0  # levels: a darker field is no background (no flattening by more than 8x)

SETTINGS = (f"before parsing and segmenting, a generated video's isolated pixels (R+G+B off all 8 neighbours by "
            f"more than {SPECK}, one way) take their neighbours' median, and each frame whose smooth background "
            f"field (fitted on a {GRID} x {GRID} sample) is off white by more than {FIELD_TOL:g} levels is divided "
            "by it: exposure, tint, grey levels, vignettes and gradients are the model's light, not bodies")

__all__ = ["BACKGROUND", "SETTINGS", "normalise", "despeckle", "background_field", "flatten"]


def normalise(video: np.ndarray, background: Sequence[int] = BACKGROUND) -> np.ndarray:
    """`video` (T, H, W, 3) uint8 with bad pixels mended and its background flattened to
    `background`; `video` itself (the same object) when neither applies."""
    out = despeckle(video)
    field = background_field(out, background)
    if field is None:
        return out
    return flatten(out, field, background)


def despeckle(video: np.ndarray) -> np.ndarray:
    """`video` with isolated pixels replaced by their 8 neighbours' per-channel median (a copy),
    or `video` itself when it has none.  Candidates come from one horizontal test on the
    channel sum; only they are checked against all 8 neighbours (interior pixels only)."""
    T, H, W, _ = video.shape
    if H < 3 or W < 3:
        return video
    s = video[..., 0].astype(np.int16)
    s += video[..., 1]
    s += video[..., 2]  # (T, H, W) R + G + B
    mid = s[:, 1:-1, 1:-1]
    left = mid - s[:, 1:-1, :-2]
    right = mid - s[:, 1:-1, 2:]
    cand = np.flatnonzero((np.minimum(left, right) > SPECK) | (np.maximum(left, right) < -SPECK))
    if not cand.size:
        return video
    t, rest = np.divmod(cand, (H - 2) * (W - 2))
    r, c = np.divmod(rest, W - 2)
    r += 1
    c += 1
    offsets = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc]
    centre = s[t, r, c]
    around = np.stack([s[t, r + dr, c + dc] for dr, dc in offsets], axis=1)  # (n, 8)
    high = np.all(centre[:, None] - around > SPECK, axis=1)
    low = np.all(around - centre[:, None] > SPECK, axis=1)
    bad = high | low
    if not bad.any():
        return video
    t, r, c = t[bad], r[bad], c[bad]
    neighbours = np.stack([video[t, r + dr, c + dc] for dr, dc in offsets], axis=1)  # (n, 8, 3)
    out = video.copy()
    # The mean of the 4th and 5th of 8 sorted values: the median, rounded half up.
    ranked = np.sort(neighbours.astype(np.int16), axis=1)
    out[t, r, c] = ((ranked[:, 3] + ranked[:, 4] + 1) // 2).astype(np.uint8)
    return out


def _basis(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(n, 7) smooth-field basis at normalised coordinates u, v in [-1, 1]."""
    r2 = u * u + v * v
    return np.stack([np.ones_like(u), u, v, u * u, u * v, v * v, r2 * r2], axis=-1)


def _grid(width: int) -> tuple[np.ndarray, np.ndarray]:
    """Sample indices (n,) along one side and their normalised coordinates (n,)."""
    n = min(GRID, width)
    index = ((np.arange(n) + 0.5) * width / n).astype(np.intp)
    return index, (index + 0.5) / width * 2.0 - 1.0


def background_field(video: np.ndarray, background: Sequence[int] = BACKGROUND) -> np.ndarray | None:
    """Per-frame field coefficients (T, 7, 3) of the smooth background, or None when every
    frame's field is within FIELD_TOL of `background` (nothing to flatten).  A frame whose
    field explains too little of it (a frame full of bodies or noise) gets coefficients that
    say "the background itself" (it is left alone)."""
    T, H, W, _ = video.shape
    bg = np.asarray(background, np.float64)
    rows, v = _grid(H)
    cols, u = _grid(W)
    points = video[:, rows][:, :, cols].reshape(T, -1, 3).astype(np.float64)  # (T, n, 3)
    if np.all(np.abs(points - bg) <= FIELD_TOL):  # the common case: a white picture's sample
        return None
    uu, vv = np.meshgrid(u, v)
    basis = _basis(uu.ravel(), vv.ravel())  # (n, 7)
    own = np.zeros((T, basis.shape[1], 3))
    own[:, 0, :] = bg
    median = np.median(points, axis=1)  # (T, 3)
    inliers = np.all(np.abs(points - median[:, None]) <= _START, axis=2)  # (T, n)
    coef = own.copy()
    for _ in range(_ROUNDS):
        w = inliers.astype(np.float64)
        gram = np.einsum("tn,ni,nj->tij", w, basis, basis)  # (T, 7, 7)
        gram += 1e-6 * np.eye(basis.shape[1])
        rhs = np.einsum("tn,ni,tnc->tic", w, basis, points)  # (T, 7, 3)
        coef = np.linalg.solve(gram, rhs)
        residual = np.abs(points - np.einsum("ni,tic->tnc", basis, coef)).max(axis=2)  # (T, n)
        spread = np.array([np.median(r[m]) if m.any() else 0.0 for r, m in zip(residual, inliers)])
        inliers = residual <= np.maximum(_FLOOR, 4.5 * spread)[:, None]
    fitted = np.einsum("ni,tic->tnc", basis, coef)  # (T, n, 3)
    usable = (inliers.mean(axis=1) >= _MIN_INLIERS) & np.all(fitted.min(axis=1) >= _MIN_FIELD, axis=1)
    off = np.abs(fitted - bg).max(axis=(1, 2)) > FIELD_TOL  # (T,)
    move = usable & off
    if not move.any():
        return None
    return np.where(move[:, None, None], coef, own)


def flatten(video: np.ndarray, field: np.ndarray, background: Sequence[int] = BACKGROUND) -> np.ndarray:
    """`video` with each channel of each frame divided by its field (T, 7, 3) and multiplied by
    `background`, rounded (a copy); frames whose field is the background are left as they are."""
    T, H, W, _ = video.shape
    bg = np.asarray(background, np.float64)
    uu, vv = np.meshgrid((np.arange(W) + 0.5) / W * 2.0 - 1.0, (np.arange(H) + 0.5) / H * 2.0 - 1.0)
    basis = _basis(uu.ravel(), vv.ravel()).astype(np.float32)  # (H W, 7)
    out = video.copy()
    for t in range(T):
        if np.all(field[t, 0] == bg) and not np.any(field[t, 1:]):
            continue
        plane = basis @ field[t].astype(np.float32)  # (H W, 3)
        gain = (bg.astype(np.float32) / np.maximum(plane, np.float32(_MIN_FIELD))).reshape(H, W, 3)
        frame = video[t].astype(np.float32) * gain
        out[t] = np.clip(np.rint(frame), 0, 255).astype(np.uint8)
    return out
