"""Reading a ball's initial state off the condition frames: the parser, or a disc fit where a ball is cut.

See `phybench.reference` for what pixels can and cannot tell."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence
import numpy as np
from ..scoring.physics.parse import MISSING, PixelMapping, coverage, parse_video
from ..world.render import shape_coverage
from ..world.scene import Disc


# ------------------------------------------------------------------ reading states off pixels
@dataclass(frozen=True)
class Estimate:
    """Initial state (t = 0) of each ball, read from the condition frames.

    positions, velocities: (B, 2) world units, world units / s; radii: (B,) world
    units.  found: (B,) False for a ball seen in no condition frame (its values are
    NaN).  fitted: (B,) True where the pixel-coverage fit replaced the parser's
    estimate (a ball cut by the image edge in some condition frame).
    """

    positions: np.ndarray
    velocities: np.ndarray
    radii: np.ndarray
    found: np.ndarray
    fitted: np.ndarray


def _fit_line(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares y = y0 + v t over frames: y (n, 2), t (n,) -> y0 (2,), v (2,)."""
    if len(t) == 1:
        return y[0], np.zeros(2)
    design = np.stack([np.ones_like(t), t], axis=1)  # (n, 2)
    (y0, v), *_ = np.linalg.lstsq(design, y, rcond=None)
    return y0, v


def _disc_image(position: np.ndarray, radius: float, resolution: int, world_size: float,
                window: tuple[int, int, int, int]) -> np.ndarray:
    """Exact coverage (T, h, w) of a disc at positions (T, 2) in the pixel window
    (row0, col0, h, w) of the image."""
    top, left, h, w = window
    poses = np.zeros((len(position), 3))
    poses[:, :2] = position
    image = np.zeros((len(position), h, w))
    drawn = shape_coverage(Disc(radius), poses, resolution, world_size)
    if drawn is not None:
        cover, row0, col0 = drawn  # (T, ph, pw), (T,), (T,)
        ph, pw = cover.shape[1:]
        for k in range(len(position)):
            r0, c0 = max(row0[k], top), max(col0[k], left)
            r1, c1 = min(row0[k] + ph, top + h), min(col0[k] + pw, left + w)
            if r0 < r1 and c0 < c1:
                image[k, r0 - top : r1 - top, c0 - left : c1 - left] = \
                    cover[k, r0 - row0[k] : r1 - row0[k], c0 - col0[k] : c1 - col0[k]]
    return image


def _fit_disc(
    observed: np.ndarray,
    t: np.ndarray,
    accel: np.ndarray,
    start: np.ndarray,
    world_size: float,
) -> np.ndarray:
    """Least-squares (x0, y0, vx, vy, r) of a disc whose coverage over frames at times
    t (T,) best matches `observed` (T, H, W); start: the initial guess (5,).

    The coverage is the renderer's exact disc area per pixel, smooth in all five
    parameters, so a partial view at the image edge still pins the centre and radius.
    Only the pixels near what was observed (its bounding box over all frames, plus a
    margin) enter the fit.
    """
    from scipy.optimize import least_squares

    resolution = observed.shape[1]
    rows, cols = np.flatnonzero(observed.any(axis=(0, 2))), np.flatnonzero(observed.any(axis=(0, 1)))
    margin = 4  # pixels
    top, left = max(rows[0] - margin, 0), max(cols[0] - margin, 0)
    bottom, right = min(rows[-1] + 1 + margin, resolution), min(cols[-1] + 1 + margin, resolution)
    window = (int(top), int(left), int(bottom - top), int(right - left))
    target = observed[:, top:bottom, left:right].astype(np.float64).ravel()
    gravity_term = 0.5 * accel[None, :] * t[:, None] ** 2  # (T, 2)

    def residual(p: np.ndarray) -> np.ndarray:
        pos = p[None, :2] + p[None, 2:4] * t[:, None] + gravity_term  # (T, 2)
        return _disc_image(pos, abs(float(p[4])), resolution, world_size, window).ravel() - target

    # Levenberg-Marquardt (MINPACK, QR): ~10x faster than the bounded "trf" on these
    # tall Jacobians; the radius enters as |r|, so no bound is needed.
    fit = least_squares(residual, start, method="lm", x_scale=[1, 1, 10, 10, 1], diff_step=1e-6,
                        xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=400)
    x = fit.x.copy()
    x[4] = abs(x[4])
    return x


def estimate_initial(
    frames: np.ndarray,
    colours: Sequence[tuple[int, int, int]],
    *,
    gravity: float,
    frame_interval: float,
    world_size: float = 10.0,
) -> Estimate:
    """Each ball's position and velocity at frame 0 and its radius, from frames alone.

    frames: uint8 (n, H, W, 3), the condition frames (frame k at t = k frame_interval);
    colours: one per ball, in drawing order.  gravity: world units / s^2 pointing down
    that the fit assumes (the physics oracle knows the task's; 0 fits straight lines).
    Each ball is fitted by least squares to p(t) = p0 + v t - g t^2 / 2 (y only) over
    the frames it was found in; exact for exact positions.
    """
    parsed = parse_video(frames, colours, PixelMapping("tile", world_size))
    n, balls = parsed.radii.shape
    t = np.arange(n) * frame_interval  # (n,) seconds
    accel = np.array([0.0, -gravity])  # world units / s^2
    positions = np.full((balls, 2), np.nan)
    velocities = np.full((balls, 2), np.nan)
    radii = np.full(balls, np.nan)
    found = np.zeros(balls, dtype=bool)
    fitted = np.zeros(balls, dtype=bool)
    observed = None
    for b in range(balls):
        seen = (parsed.flags[:, b] & MISSING) == 0
        if not seen.any():
            continue
        found[b] = True
        free = parsed.positions[seen, b] - 0.5 * accel[None, :] * t[seen, None] ** 2  # (m, 2)
        p0, v = _fit_line(t[seen], free)
        clean = parsed.flags[:, b] == 0
        if clean.all():
            positions[b], velocities[b], radii[b] = p0, v, float(np.median(parsed.radii[:, b]))
            continue
        # Cut by the image edge (or lost) in some frame: fit the disc to the pixels.
        if observed is None:
            observed = coverage(frames, colours)  # (B, n, H, W)
        pixel = world_size / frames.shape[1]  # world units
        start = np.array([*p0, *v, max(float(np.nanmax(parsed.radii[seen, b])), pixel)])
        p = _fit_disc(observed[b], t, accel, start, world_size)
        positions[b], velocities[b], radii[b] = p[:2], p[2:4], p[4]
        fitted[b] = True
    return Estimate(positions, velocities, radii, found, fitted)
