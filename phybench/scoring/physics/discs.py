"""Exact-disc centres, for the parser (`phybench.scoring.physics.parse`).

With exact area coverage the cumulative column sums of a disc are the disc's area left of each
pixel boundary, a known function of (boundary - centre) / radius, so each boundary gives the
centre exactly; the estimates are averaged, weighted by how well each is conditioned (the
parser's docstring: the floor this leaves is the uint8 rounding of the blend).
"""
from __future__ import annotations

import numpy as np

from .parse_flags import PARTLY_OUT, _REFINE_MIN_RADIUS


# ------------------------------------------------------------------ exact discs
def _share_table(steps: int) -> np.ndarray:
    """u = G^-1(f) on the grid f = i / steps, by bisection (float64, once at import).

    G(u) = 1/2 + (u sqrt(1 - u^2) + asin u) / pi is the share of a unit disc left of
    the line x = u.  On a uniform grid in f the inverse is a table lookup with no
    search; linear interpolation on 16385 points is within ~3e-7 of u wherever the
    estimates below carry weight (|u| < 0.97), i.e. ~1e-5 px at the largest radii.
    """
    f = np.linspace(0.0, 1.0, steps + 1)
    lo, hi = np.full_like(f, -1.0), np.full_like(f, 1.0)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        g = 0.5 + (mid * np.sqrt(np.maximum(1.0 - mid * mid, 0.0)) + np.arcsin(mid)) / np.pi
        low = g < f
        lo = np.where(low, mid, lo)
        hi = np.where(low, hi, mid)
    return 0.5 * (lo + hi)


_STEPS = 16384
_INVERSE_SHARE = _share_table(_STEPS)  # (_STEPS + 1,)
_INVERSE_SLOPE = np.append(np.diff(_INVERSE_SHARE), 0.0)  # per step


def _inverse_share(f: np.ndarray) -> np.ndarray:
    """G^-1(f) for shares f in [0, 1] (any shape), by the table above."""
    position = f * _STEPS
    index = position.astype(np.intp)
    np.minimum(index, _STEPS, out=index)
    position -= index
    position *= _INVERSE_SLOPE[index]
    position += _INVERSE_SHARE[index]
    return position


_MAX_OFFSET = 0.97  # |u| beyond which a boundary's estimate is too ill-conditioned to use
_SLIVER_OFFSET = 0.999  # the same for a disc cut by the image edge, where tails may be all


def _axis_centre(
    sums: np.ndarray,
    start: np.ndarray,
    before: np.ndarray,
    full_area: np.ndarray,
    radius: np.ndarray,
    max_offset: np.ndarray,
) -> np.ndarray:
    """Disc centre along one axis (R,) from strip areas `sums` (R, n), pixel units.

    The disc's area before boundary j (image coordinate start + j, j = 1..n) is
    before + cumsum(sums)[j - 1]; as a share f of the full disc area it says the
    boundary sits at u = G^-1(f) radii from the centre, so each boundary gives
    centre = boundary - radius * u.  Estimates are averaged with weight 1 - u^2 (the
    chord, i.e. how sharply f pins u), ignoring the |u| > max_offset tails (per row).
    NaN where no boundary is usable.
    """
    share = np.cumsum(sums, axis=1)  # (R, n)
    share += before[:, None]
    share /= full_area[:, None]
    np.clip(share, 0.0, 1.0, out=share)
    u = _inverse_share(share)  # (R, n): boundary offsets from the centre, in radii
    weight = 1.0 - u * u
    weight *= weight > (1.0 - max_offset * max_offset)[:, None]
    total = weight.sum(axis=1)
    estimate = np.arange(1.0, sums.shape[1] + 1.0) - radius[:, None] * u  # (R, n)
    centre = start + np.einsum("rn,rn->r", estimate, weight) / np.where(total > 0, total, 1.0)
    return np.where(total > 0, centre, np.nan)


def _refine_centres(
    col_sum: np.ndarray,
    row_sum: np.ndarray,
    area: np.ndarray,
    radius: np.ndarray,
    row0: np.ndarray,
    col0: np.ndarray,
    out: np.ndarray | None,
    flags: np.ndarray,
    cu: np.ndarray,
    cv: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact-disc centres (pixel units) where they apply; the centroid elsewhere.

    Whole discs (no flag): both axes from `_axis_centre`.  A disc cut by one image
    edge, in a video where the object is whole in some frames: its radius is the median
    of those frames', so the full area is known and the axis across the cut is exact
    too (the missing area lies before the first boundary or after the last; even a
    sliver's tail boundaries are used, `_SLIVER_OFFSET`); the axis along the cut keeps
    the centroid, which a straight cut does not bias.  Corner cuts keep the centroid.
    """
    num_frames = area.shape[0]
    whole = (flags == 0) & (radius >= _REFINE_MIN_RADIUS)  # (T,)
    if not whole.any():
        return cu, cv
    # Columns (rows 0..T-1) and rows (T..2T-1) in one pass, strips padded to a common
    # length behind a leading empty strip, so that the window's first edge is a
    # boundary too (it carries the missing share of a disc cut there).
    w, h = col_sum.shape[1], row_sum.shape[1]
    sums = np.zeros((2 * num_frames, max(w, h) + 1))
    sums[:num_frames, 1 : w + 1] = col_sum
    sums[num_frames:, 1 : h + 1] = row_sum
    start = np.concatenate([col0, row0]) - 1.0
    before = np.zeros(2 * num_frames)
    full = np.concatenate([area, area])
    disc_radius = np.concatenate([radius, radius])
    max_offset = np.full(2 * num_frames, _MAX_OFFSET)
    use = np.concatenate([whole, whole])
    if out is not None:
        reference = float(np.median(radius[whole]))
        full_reference = np.pi * reference * reference
        single_cut = (flags == PARTLY_OUT) & (out.sum(axis=1) == 1) & (area < full_reference)
        for axis, (low_edge, high_edge) in enumerate(((0, 1), (2, 3))):
            pick = np.flatnonzero(single_cut & (out[:, low_edge] | out[:, high_edge]))
            rows = axis * num_frames + pick
            before[rows] = np.where(out[pick, low_edge], full_reference - area[pick], 0.0)
            full[rows] = full_reference
            disc_radius[rows] = reference
            max_offset[rows] = _SLIVER_OFFSET
            use[rows] = True
    full[full <= 0] = 1.0
    centre = _axis_centre(sums, start, before, full, disc_radius, max_offset)  # (2T,)
    centre = np.where(use & np.isfinite(centre), centre, np.concatenate([cu, cv]))
    return centre[:num_frames], centre[num_frames:]
