"""Contact geometry of two bodies that meet: *how* they meet, not only how they leave (issue 48 item 3).

The velocity error and the collision law (`phybench.scoring.learned.law`) look at motion after the
contact: a video whose balls bounce from a distance, or after passing into each other, or a few
frames early or late, can leave with the right velocities.  This module reads the meeting itself:

- the **turning point** of a pair: each body's path is two straight lines (before and after the
  contact; the law fit's lines in world units, or the judge's centroid distance in px), the
  contact instant where the lines cross and the **gap** there (centre separation less the sum
  of the radii: > 0 a bounce from a distance, < 0 an overlap);
- the **position error around the contact**: mean |p_hat - p| over the found frames within
  `WINDOW` frames of the ground truth's contact instant (world units);
- the **contact aspect** of the law (`contact_aspect`): max(|gap - gap_true|, |t_c - t_c,true| x
  the true closing speed) over the smaller radius, so a gap, an overlap, an early or a late
  bounce read as one relative number beside restitution and momentum;
- the **fallback** (`fallback_aspect`) where the law fit finds nothing (too few frames on one
  side of the contact: a fast ball leaves the view, or the contact comes a frame after the
  conditioning): the contact position error over the smaller radius, and each ball's velocity
  after contact (a line through its found frames after the true contact, at least 2) against
  the truth's, over the true closing speed; their maximum.  A wrong collision still pays.

Nothing here knows a task: a family whose law fit is a two-body contact uses it, and the judge's
``contact`` rule (`phybench.scoring.judge.rules`) uses `turn_of_series` on any two single-body
colours that meet in the ground truth.  `SETTINGS` is the results files' ``contact`` block.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

WINDOW = 2  # frames either side of the ground truth's contact instant for the position error around contact
SPEED_FLOOR = 0.05  # world units / s: the least closing speed a velocity error is relative to (as the law's)
MIN_AFTER = 2  # found frames after the contact a ball needs for the fallback's velocity after contact
# The judge's contact rule (`phybench.scoring.judge.rules`), px at 128 px and frames:
GAP_PX = 1.5  # the turning point's centre distance may differ from the ground truth's by this x blur ...
GAP_REL = 0.06  # ... or this share of the ground truth's distance at contact (the sum of the radii)
TIME_FRAMES = 0.6  # the turning instant may differ from the ground truth's by this many frames
TURN_MIN = 2  # frames on each side of the turn (both bodies single pieces off the border)
TURN_SPEED = 0.3  # px / frame at 128 px: the ground truth's closing and separating speeds, at least
TURN_ANGLE = 0.5  # the two lines' slopes differ by at least half the larger speed (a turn, not a graze)

SETTINGS: dict[str, Any] = {
    "turning_point": "each ball's x before and after the contact as the law fit's two lines (collision_1d); the "
                     "contact instant t_c where the lines cross (weighted by each ball's |w - u|); contact_gap = "
                     "(x2 - x1 at t_c, each ball the mean of its two lines there) - (r1 + r2), world units, true "
                     "radii, t_c clipped to the fitted frames' times: > 0 a bounce from a distance, < 0 an "
                     "overlap; the ground truth's fit the same way "
                     "(from its stored states: gap 0 at the closed-form contact time)",
    "contact_position_error": f"mean |p_hat - p| over both balls' found frames within {WINDOW} frames of the ground "
                              "truth's contact instant, world units",
    "contact_error": "max(|contact_gap - truth's|, |t_c - truth's t_c| x the truth's closing speed |u1 - u2|, both "
                     "t_c clipped to the generated frames' times) / min(r1, r2) (relative; a law aspect `contact` of collision_1d and part of its law_error); "
                     "where the law fit finds nothing, the fallback below",
    "law_error": "collision_1d: max(restitution, momentum, contact) (law's aspects); where the model's fit finds "
                 "nothing (too few frames on a side of the contact) the fallback, never NaN for a tracked pair",
    "fallback": f"max(contact_position_error / min(r1, r2), max over balls of |w_hat - w| / max(|u1 - u2|, "
                f"{SPEED_FLOOR}) ), w_hat the slope of a line through the ball's found generated frames after the "
                f"true contact (at least {MIN_AFTER}), w and u the truth's velocities after and before; "
                "`law.errors.fallback` says it was used",
    "judge_contact": f"two colours of one dynamic body each, single pieces off the border in at least {TURN_MIN} "
                     "frames before and after the turn of the ground truth's centre distance (two lines, the break "
                     f"by least squares; closing and separating faster than {TURN_SPEED:g} px/frame, slopes "
                     f"differing by half the larger): the generated video's turning point (same fit) lies more than "
                     f"max({GAP_PX:g} px x blur, {GAP_REL:g} x the truth's distance at contact) farther (gap) or "
                     f"nearer (overlap), or more than {TIME_FRAMES:g} frames earlier or later, than the truth's; "
                     "a generated video without a turn where the truth has one is left to the motion rules",
}


def fsum_line(t: np.ndarray, x: np.ndarray) -> tuple[float, float] | None:
    """(intercept, slope) of x against t by least squares with correctly rounded sums; None if < 2 points."""
    tl, xl = [float(v) for v in t], [float(v) for v in x]
    n = len(tl)
    if n < 2:
        return None
    mt, mx = math.fsum(tl) / n, math.fsum(xl) / n
    stt = math.fsum((a - mt) ** 2 for a in tl)
    if not stt > 0.0:
        return None
    slope = math.fsum((a - mt) * (b - mx) for a, b in zip(tl, xl)) / stt
    return mx - slope * mt, slope


Line = tuple[float, float]  # (intercept, slope): x = intercept + slope t


def turning_point(lines: Sequence[tuple[Line, Line]], radii: Sequence[float],
                  window: tuple[float, float] = (-math.inf, math.inf)) -> tuple[float, float]:
    """(t_c, gap) of two balls from each ball's (before, after) lines, x along the line of centres.

    t_c: the crossing of each ball's two lines, weighted by its |w - u| (a ball whose velocity
    barely changes has no crossing of its own); gap: x2 - x1 at t_c (each ball the mean of its
    two lines there, so a near-parallel pair still gives its position) less r1 + r2, read at t_c
    clipped to `window` (s: a pair that never turns round in the video, e.g. balls passing through
    each other, is read at the video's edge, not at a crossing extrapolated far outside it).  World
    units and seconds; NaN where no ball changes velocity."""
    weights, times = [], []
    for (a, u), (c, w) in lines:
        if abs(u - w) > 1e-9:
            weights.append(abs(u - w))
            times.append((c - a) / (u - w))
    if not weights:
        return float("nan"), float("nan")
    tc = math.fsum(wt * ti for wt, ti in zip(weights, times)) / math.fsum(weights)
    at = min(max(tc, window[0]), window[1])
    x = [0.5 * ((a + u * at) + (c + w * at)) for (a, u), (c, w) in lines]
    return float(tc), float(x[1] - x[0] - (radii[0] + radii[1]))


def contact_aspect(fit: dict[str, float], truth: dict[str, float], radii: Sequence[float],
                   window: tuple[float, float] = (-math.inf, math.inf)) -> float:
    """max(|gap - gap_true|, |t_c - t_c,true| x |u1 - u2|_true) / min(r): relative; NaN without a fit.

    Both contact times are clipped to `window` (s, the generated frames): a fitted "contact" far
    outside the video is a pair that never turns round in it, as wrong as one at its edge."""
    closing = max(abs(truth.get("velocity_before_1", math.nan) - truth.get("velocity_before_2", math.nan)), SPEED_FLOOR)
    gap = abs(fit.get("contact_gap", math.nan) - truth.get("contact_gap", math.nan))
    times = [min(max(x.get("contact_time", math.nan), window[0]), window[1]) for x in (fit, truth)]
    late = abs(times[0] - times[1]) * closing
    parts = [p for p in (gap, late) if math.isfinite(p)]
    return max(parts) / float(min(radii)) if parts else float("nan")


def position_error_at_contact(parsed: np.ndarray, gt: np.ndarray, found: np.ndarray, contact_time: float,
                              frame_interval: float) -> float:
    """Mean |p_hat - p| (world units) over found (T, B) entries within WINDOW frames of contact_time (s)."""
    if not math.isfinite(contact_time):
        return float("nan")
    k = np.arange(gt.shape[0]) * frame_interval
    near = (np.abs(k - contact_time) <= WINDOW * frame_interval + 1e-9)[:, None] & found  # (T, B)
    if not near.any():
        return float("nan")
    return float(np.linalg.norm(parsed - gt, axis=-1)[near].mean())


def fallback_aspect(parsed: np.ndarray, gt: np.ndarray, found: np.ndarray, radii: Sequence[float],
                    contact_time: float, frame_interval: float, truth: dict[str, float]) -> float:
    """The law error where the model's fit finds nothing (see `SETTINGS["fallback"]`); NaN if nothing is found.

    parsed, gt: (T, 2, 2) world units; found: (T, 2) the model's frames to use (generated, whole, inside)."""
    dt = frame_interval
    parts = [position_error_at_contact(parsed, gt, found, contact_time, dt) / float(min(radii))]
    u = (truth.get("velocity_before_1", math.nan), truth.get("velocity_before_2", math.nan))
    closing = max(abs(u[0] - u[1]), SPEED_FLOOR) if all(map(math.isfinite, u)) else SPEED_FLOOR
    k = np.arange(gt.shape[0])
    after = (k * dt >= contact_time - 1e-9) if math.isfinite(contact_time) else np.zeros_like(k, dtype=bool)
    for b in range(2):
        use = after & found[:, b]
        w_true = truth.get(f"velocity_after_{b + 1}", math.nan)
        if use.sum() >= MIN_AFTER and math.isfinite(w_true):
            line = fsum_line(k[use] * dt, parsed[use, b, 0])
            if line is not None:
                parts.append(abs(line[1] - w_true) / closing)
    finite = [p for p in parts if math.isfinite(p)]
    return max(finite) if finite else float("nan")


def turn_of_series(t: np.ndarray, d: np.ndarray, min_side: int = TURN_MIN) -> tuple[float, float, float, float] | None:
    """(t*, d*, slope before, slope after) of a 1-D series that falls then rises (two lines, the break by
    least squares, at least `min_side` points a side); None without such a turn.

    The judge's contact rule reads the centre distance of two bodies this way (px against frames)."""
    n = len(t)
    best: tuple[float, int] | None = None
    for s in range(min_side, n - min_side + 1):
        pre, post = fsum_line(t[:s], d[:s]), fsum_line(t[s:], d[s:])
        if pre is None or post is None or not (pre[1] < 0 < post[1]):
            continue
        res = float(((d[:s] - pre[0] - pre[1] * t[:s]) ** 2).sum() + ((d[s:] - post[0] - post[1] * t[s:]) ** 2).sum())
        if best is None or res < best[0]:
            best = (res, s)
    if best is None:
        return None
    s = best[1]
    pre, post = fsum_line(t[:s], d[:s]), fsum_line(t[s:], d[s:])
    assert pre is not None and post is not None
    ts = (post[0] - pre[0]) / (pre[1] - post[1])
    return float(ts), float(pre[0] + pre[1] * ts), pre[1], post[1]
