"""Is a blob a ball? Its spread, its peak, and the solid core of a blended frame's ghost.

The parser (`phybench.scoring.physics.parse`) calls a blob far more spread than a disc, or one
with no pixel covered past `_MIN_PEAK`, no ball (NOT_A_BALL): noise, a smear, a frame-wide
wash.  A fast ball in blended frames (a generated video's motion blur) draws a ghost that fails
that test while its solid core (coverage >= `_MIN_PEAK`) is a ball: `_solid_cores` keeps that
ball, flagged SPLIT.  Split from `blobs` along that seam.
"""
from __future__ import annotations

import numpy as np

from .parse_flags import SPLIT, _BORDER_GAP, _MAX_SPREAD, _MIN_PEAK


def _solid_cores(c: np.ndarray, ghost: np.ndarray, reference: float, row0: np.ndarray, col0: np.ndarray,
                 flags: np.ndarray, cu: np.ndarray, cv: np.ndarray, radius: np.ndarray) -> None:
    """In place: a frame read as no ball whose solid core is a ball keeps that ball, flagged SPLIT.

    Frame blending (a temporal autoencoder's ghosting: each frame half itself and a quarter of
    each neighbour) draws a fast ball as three overlapping copies, one elongated blob that
    `_not_a_ball` reads as a smear; its pixels covered at least `_MIN_PEAK` (the middle copy,
    at one half and more) are one disc.  Where that core is no more spread than a disc may be
    and holds 0.3 to 1.2 of the video's typical whole ball (`reference`, px^2), its centroid is
    the ball's centre (not exact: the frame is flagged, out of the law fit and the size error).
    A real smear, noise or a wash has no such core.  c: (T, h, w) coverage; ghost: (T,) frames
    to try; the rest are the frames' outputs, updated where a core is found."""
    idx = np.flatnonzero(ghost)
    solid = np.where(c[idx] >= _MIN_PEAK, c[idx], 0.0)  # (n, h, w)
    col_sum = solid.sum(axis=1).astype(np.float64)  # (n, w)
    row_sum = solid.sum(axis=2).astype(np.float64)  # (n, h)
    area = col_sum.sum(axis=1)
    safe = np.where(area > 0, area, 1.0)
    u = col_sum @ np.arange(0.5, solid.shape[2]) / safe
    v = row_sum @ np.arange(0.5, solid.shape[1]) / safe
    qx, qy = _spread(col_sum, row_sum, area, u, v)
    ok = (area >= 0.3 * reference) & (area <= 1.2 * reference) & (0.5 * (qx + qy) <= _MAX_SPREAD)
    idx = idx[ok]
    flags[idx] = SPLIT
    cu[idx] = u[ok] + col0[idx]
    cv[idx] = v[ok] + row0[idx]
    radius[idx] = np.sqrt(area[ok] / np.pi)


def _spread(col_sum: np.ndarray, row_sum: np.ndarray, area: np.ndarray, cu: np.ndarray,
            cv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per frame (T,) and axis (x, y): 4 pi I_axis / M^2, the blob's second moment about its centroid
    against a disc's of its mass.

    1 for a disc (I_axis = M^2 / 4 pi), about 1 + 4 s^2 / R^2 for a disc blurred by a Gaussian of
    s px, several for noise spread over the frame; a sliver cut by an edge is spread along the
    edge but not across it.  From the column and row sums (the marginals hold each axis's
    second moment); cu, cv are the centroid in window pixels."""
    w, h = col_sum.shape[1], row_sum.shape[1]
    dx = np.arange(0.5, w)[None, :] - cu[:, None]  # (T, w)
    dy = np.arange(0.5, h)[None, :] - cv[:, None]
    safe = np.where(area > 0, area, 1.0)
    scale = 4.0 * np.pi / (safe * safe)
    return (np.einsum("tw,tw->t", col_sum, dx * dx) * scale, np.einsum("th,th->t", row_sum, dy * dy) * scale)


def _not_a_ball(col_sum: np.ndarray, row_sum: np.ndarray, area: np.ndarray, cu: np.ndarray, cv: np.ndarray,
                out: np.ndarray | None, split: np.ndarray, row0: np.ndarray, col0: np.ndarray,
                width: int, peak: np.ndarray) -> np.ndarray:
    """bool (T,): what was found of this colour is no ball (issue 34: "no ball is no ball").

    Noise, a heavy smear or a wash of the colour still leaves core pixels, and their
    centroid used to pass as a ball in every frame.  A blob is no ball when it is cut by two
    opposite image edges (wider or taller than the view: a frame-wide wash), or, in one piece
    and not cut, when it is far more spread than a disc of its mass (`_spread` >
    `_MAX_SPREAD`, the mean of both axes; the benign blurs and codecs of `phybench.benign`
    stay below 1.9), or, anywhere, when it has no solid interior (no pixel covered more than
    `_MIN_PEAK`: a disc blurred by a Gaussian of its own radius peaks at 0.39, and its blur
    reaching the border must not make it a ball cut by the edge; the benign kinds keep 0.58 and
    more on the smallest OOD ball; a sliver under half a pixel deep is no ball either).  Within `_BORDER_GAP` px of an edge a ball may be cut without the edge
    test seeing it (a shifted picture with a white margin), and a sliver is spread along the
    edge: there only the axis across that edge is judged.  Torn (SPLIT) blobs are SPLIT's."""
    qx, qy = _spread(col_sum, row_sum, area, cu, cv)
    cols, rows = col_sum > 0, row_sum > 0
    w, h = cols.shape[1], rows.shape[1]
    left = col0 + np.argmax(cols, axis=1)
    right = width - (col0 + w - np.argmax(cols[:, ::-1], axis=1))
    top = row0 + np.argmax(rows, axis=1)
    bottom = width - (row0 + h - np.argmax(rows[:, ::-1], axis=1))
    near_x = np.minimum(left, right) < _BORDER_GAP  # by a left or right edge: judge x only
    near_y = np.minimum(top, bottom) < _BORDER_GAP
    spread = np.where(near_x & near_y, np.minimum(qx, qy), np.where(near_x, qx, np.where(near_y, qy, 0.5 * (qx + qy))))
    smear = (spread > _MAX_SPREAD) & ~split
    hollow = (peak < _MIN_PEAK) & ~split
    if out is None:
        return smear | hollow
    wide = (out[:, 0] & out[:, 1]) | (out[:, 2] & out[:, 3])
    return wide | hollow | (smear & ~out.any(axis=1))


