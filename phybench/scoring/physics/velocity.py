"""Velocity error and the other physics errors of one generated video (paper, section 3.1).

The paper's metric: per video, e = 1/(N |T|) sum over balls and valid frames of
|v - v_hat|, in world units per second, where v_hat is the velocity of the ball parsed from
the generated pixels.  Our conventions, stated in `SETTINGS` and in every results file:

- Velocities are forward differences, v_k = (p_{k+1} - p_k) / dt, for the generated video
  *and* for the ground truth (the simulator's stored positions).  Differencing both the same
  way makes the metric measure the video rather than the scheme: against the analytic
  velocity a one-sided difference of a parabola is off by g dt / 2.
- |.| is the Euclidean norm of the 2-D velocity difference.
- A pair (k, k+1) is scored when frame k+1 is generated (k + 1 >= condition frames), the
  ground-truth ball is fully in view in both frames, and, for collisions, t_k is at or after
  the contact instant.
- A video whose ball cannot be found in a scored frame is *untrackable*; it gets no error
  and is reported with its reason and counted separately (the reference code substitutes a
  constant without saying so).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...world.laws import fully_in_view
from .identity import SETTINGS as IDENTITY_SETTINGS
from .parse import COLOUR_CHANGED, MISSING, PARTLY_OUT, SPLIT, Parsed

SETTINGS: dict[str, Any] = {
    "velocity": "forward difference (p[k+1] - p[k]) / dt of parsed and of ground-truth positions",
    "norm": "euclidean norm of the 2-D velocity difference, world units / s",
    "scored_pairs": (
        "frame k+1 generated (k+1 >= condition_frames), ground-truth ball fully in view at k and "
        "k+1, collision: t_k >= contact time"
    ),
    "untrackable": (
        "a ball missing in any scored frame (nothing of its colour, or no ball: a frame-wide wash, colour noise, a "
        "smear far more spread than a disc; phybench.scoring.parse NOT_A_BALL); no error is computed, counted "
        "separately"
    ),
    "excluded": (
        "a ball visible (at least partly) in fewer than 2 condition frames (not predictable from the "
        "conditioning), or no scored pair in the ground truth; no error is computed, counted separately"
    ),
    "momentum_error": "collision: mean over scored pairs of |sum m (v_hat - v)| / sum m, m = r^2, world units / s",
    "energy_error": "collision: mean over scored pairs of |KE_hat - KE| / KE, KE with m = r^2 (relative)",
    "position_error": "mean |p_hat - p| over the frames of scored pairs, world units",
    "identity": IDENTITY_SETTINGS,
}


@dataclass
class VideoErrors:
    """Physics errors of one video; NaN where not defined or untrackable."""

    velocity_error: float = float("nan")  # world units / s
    position_error: float = float("nan")  # world units
    momentum_error: float = float("nan")  # world units / s (collision only)
    energy_error: float = float("nan")  # relative (collision only)
    generated_velocity: float = float("nan")  # ball 0's mean x velocity in generated frames, world units / s
    scored_pairs: int = 0  # (ball, frame pair) terms in the mean
    untrackable: str | None = None  # reason, when the video could not be scored
    excluded: str | None = None  # reason, when no model could predict it from its conditioning
    flagged_frames: dict[str, int] = field(default_factory=dict)  # parser flags in scored frames
    # For the ranked column (`ranked_velocity_error`): computed even when the video is untrackable.
    lost_share: float = float("nan")  # share of in-view generated (frame, ball) entries whose ball is lost
    tracked_error: float = float("nan")  # velocity error over the scored pairs whose frames both find the ball

    @property
    def ok(self) -> bool:
        return self.untrackable is None and self.excluded is None and self.scored_pairs > 0


MIN_CONDITION_VIEWS = 2  # condition frames in which each ball must be at least partly visible


def unseen_in_condition(positions: np.ndarray, radii: np.ndarray, world_size: float, condition_frames: int) -> list[int]:
    """Balls visible (at least partly) in fewer than MIN_CONDITION_VIEWS condition frames.

    Such a video cannot be predicted from its conditioning: a ball seen in one frame has
    no measurable velocity, one never seen has no position.  Some OOD collisions of large,
    fast balls cannot be placed otherwise (the placement keeps them in view afterwards).
    """
    p = np.asarray(positions, dtype=np.float64)[:condition_frames]  # (C, B, 2)
    r = np.asarray(radii, dtype=np.float64)[None, :, None]
    visible = ((p + r > 0) & (p - r < world_size)).all(axis=-1)  # (C, B)
    return [int(b) for b in np.flatnonzero(visible.sum(axis=0) < min(MIN_CONDITION_VIEWS, condition_frames))]


def scored_pairs(
    positions: np.ndarray,
    radii: np.ndarray,
    *,
    world_size: float,
    frame_interval: float,
    condition_frames: int,
    contact_time: float = float("nan"),
) -> np.ndarray:
    """bool (T-1, B): which forward-difference pairs (k, k+1) of which ball count."""
    T = positions.shape[0]
    view = fully_in_view(positions, radii, world_size)  # (T, B)
    ok = view[:-1] & view[1:]
    k = np.arange(T - 1)
    ok &= (k + 1 >= condition_frames)[:, None]
    if np.isfinite(contact_time):
        # 1e-9 s slack: contact exactly on a frame counts that frame as after contact.
        ok &= (k * frame_interval >= contact_time - 1e-9)[:, None]
    return ok


def _frame_ranges(frames: np.ndarray) -> str:
    """[3, 4, 5, 9] -> '3-5, 9' for error messages."""
    out, start = [], None
    for i, f in enumerate(frames):
        if start is None:
            start = f
        if i + 1 == len(frames) or frames[i + 1] != f + 1:
            out.append(f"{start}" if start == f else f"{start}-{f}")
            start = None
    return ", ".join(out)


def video_errors(
    parsed: Parsed,
    positions: np.ndarray,
    radii: np.ndarray,
    *,
    world_size: float,
    frame_interval: float,
    condition_frames: int,
    contact_time: float = float("nan"),
    colour_names: tuple[str, ...] | None = None,
) -> VideoErrors:
    """Errors of one parsed video against the ground-truth states.

    positions: (T, B, 2) ground-truth centres, world units; radii: (B,), world units.
    """
    gt = np.asarray(positions, dtype=np.float64)  # (T, B, 2)
    radii = np.asarray(radii, dtype=np.float64)
    if parsed.positions.shape != gt.shape:
        raise ValueError(f"parsed positions {parsed.positions.shape} do not match ground truth {gt.shape}")
    pairs = scored_pairs(
        gt,
        radii,
        world_size=world_size,
        frame_interval=frame_interval,
        condition_frames=condition_frames,
        contact_time=contact_time,
    )  # (T-1, B)
    result = VideoErrors(scored_pairs=int(pairs.sum()))
    unseen = unseen_in_condition(gt, radii, world_size, condition_frames)
    if unseen:
        names = [colour_names[b] if colour_names and b < len(colour_names) else f"ball {b}" for b in unseen]
        result.excluded = (
            f"{', '.join(names)} visible in fewer than {MIN_CONDITION_VIEWS} condition frames: "
            "not predictable from the conditioning"
        )
        return result
    if result.scored_pairs == 0:
        # Nothing to score is a property of the sample, not of the model: excluded, like a
        # ball unseen in the conditioning, never "untrackable" (which would be a wrong reason
        # and, in the penalised ranking, a penalty every model pays).
        result.excluded = "the ground truth has no scorable frame pair (no ball fully in view in two generated frames)"
        return result
    frames = np.zeros(gt.shape[:2], dtype=bool)  # (T, B) frames that enter a scored pair
    frames[:-1] |= pairs
    frames[1:] |= pairs
    flags = parsed.flags
    for bit, name in ((MISSING, "missing"), (PARTLY_OUT, "partly_out"), (SPLIT, "split"), (COLOUR_CHANGED, "colour_changed")):
        result.flagged_frames[name] = int(((flags & bit) != 0)[frames].sum())
    missing = ((flags & MISSING) != 0) | ~np.isfinite(parsed.positions).all(axis=-1)  # (T, B)
    _lost_share_and_tracked_error(result, parsed.positions, gt, missing, pairs, radii, world_size, frame_interval,
                                  condition_frames)
    lost = frames & missing
    if lost.any():
        result.untrackable = _untrackable_reason(lost, colour_names)
        return result
    _motion_errors(result, parsed.positions, gt, radii, pairs, frames, world_size=world_size,
                   frame_interval=frame_interval, condition_frames=condition_frames, contact_time=contact_time)
    return result


def _untrackable_reason(lost: np.ndarray, colour_names: tuple[str, ...] | None) -> str:
    """Which ball was not found in which scored frames, in words (`lost`: (T, B))."""
    reasons = []
    for b in range(lost.shape[1]):
        idx = np.flatnonzero(lost[:, b])
        if idx.size:
            who = colour_names[b] if colour_names and b < len(colour_names) else f"ball {b}"
            reasons.append(f"{who} not found in frame(s) {_frame_ranges(idx.tolist())}")
    return "; ".join(reasons)


def _motion_errors(result: VideoErrors, parsed: np.ndarray, gt: np.ndarray, radii: np.ndarray, pairs: np.ndarray,
                   frames: np.ndarray, *, world_size: float, frame_interval: float, condition_frames: int,
                   contact_time: float) -> None:
    """Fill the velocity, position, generated-velocity, momentum and energy errors of a tracked video."""
    dt = frame_interval
    v_hat = np.diff(parsed, axis=0) / dt  # (T-1, B, 2) world units / s
    v = np.diff(gt, axis=0) / dt
    # Figure-5 style "generated vs conditioned velocity": ball 0's x velocity over the
    # generated pairs where it is in view (collisions: before contact, where it still
    # moves at its conditioned velocity).
    free = scored_pairs(gt, radii, world_size=world_size, frame_interval=dt, condition_frames=condition_frames)[:, 0]
    if np.isfinite(contact_time):
        free &= (np.arange(len(free)) + 1) * dt <= contact_time + 1e-9
    if free.any():
        result.generated_velocity = float(v_hat[free, 0, 0].mean())
    err = np.linalg.norm(v_hat - v, axis=-1)  # (T-1, B)
    result.velocity_error = float(err[pairs].mean())
    result.position_error = float(np.linalg.norm(parsed - gt, axis=-1)[frames].mean())
    if gt.shape[1] > 1 and np.isfinite(contact_time):
        both = pairs.all(axis=1)  # (T-1,) pairs where every ball is scored
        if both.any():
            m = radii**2  # mass of a disc of density 1, up to pi
            dp = np.einsum("b,kbd->kd", m, v_hat[both] - v[both])  # (K, 2)
            result.momentum_error = float((np.linalg.norm(dp, axis=-1) / m.sum()).mean())
            ke_hat = 0.5 * np.einsum("b,kb->k", m, (v_hat[both] ** 2).sum(-1))
            ke = 0.5 * np.einsum("b,kb->k", m, (v[both] ** 2).sum(-1))
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.abs(ke_hat - ke) / ke
            rel = rel[np.isfinite(rel)]
            if rel.size:
                result.energy_error = float(rel.mean())


def _lost_share_and_tracked_error(result: VideoErrors, parsed: np.ndarray, gt: np.ndarray, missing: np.ndarray,
                                  pairs: np.ndarray, radii: np.ndarray, world_size: float, frame_interval: float,
                                  condition_frames: int) -> None:
    """Fill `lost_share` and `tracked_error` (the two inputs of the ranked column).

    The share counts every generated frame with the ground-truth ball fully in view, not only
    those of scored pairs: a collision's pre-contact frames are frames a model can lose too.
    """
    view = fully_in_view(gt, radii, world_size)  # (T, B)
    view[:condition_frames] = False
    n = int(view.sum())
    result.lost_share = float((view & missing).sum() / n) if n else float("nan")
    kept = pairs & ~missing[:-1] & ~missing[1:]  # (T-1, B)
    if kept.any():
        with np.errstate(invalid="ignore"):
            err = np.linalg.norm(np.diff(parsed, axis=0) / frame_interval - np.diff(gt, axis=0) / frame_interval, axis=-1)
        result.tracked_error = float(err[kept].mean())
