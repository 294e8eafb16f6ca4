"""Planted contact violations: a collision that meets wrongly and leaves rightly (issue 48 item 3).

Four families of `phybench.violations.KINDS`, each at three strengths, kept here so that module
stays small.  Each takes a scene of two moving bodies meeting head-on along x (the collision
family's scenes; any other skips, saying why), finds the true contact instant t_c from the
bodies' approach (the frames before it: x_b(t) = x_b(0) + u_b t, touching when x2 - x1 = r1 + r2)
and their true velocities after it (the last frames: w_b), and redraws the generated frames:

- ``gap-bounce-N``: the bodies turn round N px (at 128 px) before they touch, at the true approach
  velocities, and leave with the true velocities after: a bounce from a distance.
- ``overlap-bounce-N``: they pass N px into each other before they turn round: an overlap.
- ``early-bounce-N`` / ``late-bounce-N``: they meet touching (gap 0) at the true contact point,
  N frames before / after the true instant (the approach from the last condition frame sped up or
  slowed down to get there), and leave with the true velocities: a wrong contact time.

Positions are continuous at the last condition frame (the ground truth's frames come before it);
a kind whose bounce would fall in the condition frames, or leave fewer than 3 frames after it in
the video, skips the sample.  y and every angle are the ground truth's.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from .planting import Planted
from .tasks.spec import TaskSpec
from .world.scene import Scene

GAP_PX = (2, 4, 8)  # gap-bounce and overlap-bounce strengths, px at 128 px
SHIFT_FRAMES = (1, 2, 3)  # early-bounce and late-bounce strengths, frames
MIN_AFTER = 3  # frames of the video after the redrawn bounce, at least (a law fit needs 3 a side)


def _head_on(scene: Scene) -> tuple[np.ndarray, str]:
    """(the two moving bodies' indices, "") or (empty, why not)."""
    moving = np.flatnonzero([b.dynamic for b in scene.bodies])
    if moving.size != 2:
        return np.array([], int), "not two moving bodies: no two-body contact"
    y = scene.positions[:, moving, 1]  # (T, 2)
    if np.ptp(y) > 1e-6:
        return np.array([], int), "the moving bodies do not meet head-on along x"
    return moving, ""


def _redraw(scene: Scene, spec: TaskSpec, turn: Callable[[float, float], tuple[float, float]]) -> Planted:
    """Redraw the two bodies' x from the last condition frame on.

    turn(t_c, closing) -> (t_b, t_m): the bounce's instant t_b (s) and the instant t_m of the true
    approach whose positions the bodies turn round at (t_m = t_b: the true approach, a gap or an
    overlap; t_m = t_c: the true contact point, reached early or late); before t_b the bodies go
    from their last condition-frame positions in a straight line to those positions, after it
    they leave with the true velocities."""
    pair, why = _head_on(scene)
    if not pair.size:
        return Planted(None, note=why)
    dt, cf, T = spec.frame_interval, spec.condition_frames, scene.num_frames
    x = scene.positions[:, pair, 0].astype(np.float64)  # (T, 2) world units
    r = scene.radii[pair].astype(np.float64)
    order = np.argsort(x[0])  # left body first
    x, r, pair = x[:, order], r[order], pair[order]
    u, w = (x[1] - x[0]) / dt, (x[-1] - x[-2]) / dt  # (2,) approach and departure velocities, world units / s
    closing = float(u[0] - u[1])
    if closing <= 1e-9:
        return Planted(None, note="the bodies do not approach")
    tc = float((x[0, 1] - x[0, 0] - r.sum()) / closing)
    t0 = (cf - 1) * dt  # the last condition frame
    tb, tm = turn(tc, closing)
    if not (t0 + 0.5 * dt <= tb <= (T - 1 - MIN_AFTER) * dt) or tc <= t0:
        return Planted(None, note="the redrawn bounce would fall in the condition frames or too near the end")
    meet = x[0] + u * tm  # (2,) where each body turns round
    start = x[cf - 1]
    t = np.arange(T) * dt
    new = np.where(t[:, None] < tb, start + (meet - start) * ((t[:, None] - t0) / (tb - t0)),
                   meet + w * (t[:, None] - tb))  # (T, 2)
    poses = scene.poses.copy()
    poses[cf:, pair, 0] = new[cf:]
    return Planted(dataclasses.replace(scene, poses=poses), int(pair[0]), onset=cf)


def _gap(px: float, sign: float) -> Callable[[Scene, TaskSpec, int], Planted]:
    def kind(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        s = sign * px * scene.world_size / 128.0
        return _redraw(scene, spec, lambda tc, closing: (tc - s / closing, tc - s / closing))
    return kind


def _shift(frames: int) -> Callable[[Scene, TaskSpec, int], Planted]:
    def kind(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        return _redraw(scene, spec, lambda tc, closing: (tc + frames * spec.frame_interval, tc))
    return kind


CONTACT_KINDS: dict[str, Callable[[Scene, TaskSpec, int], Planted]] = {
    **{f"gap-bounce-{n}": _gap(n, 1.0) for n in GAP_PX},
    **{f"overlap-bounce-{n}": _gap(n, -1.0) for n in GAP_PX},
    **{f"early-bounce-{n}": _shift(-n) for n in SHIFT_FRAMES},
    **{f"late-bounce-{n}": _shift(n) for n in SHIFT_FRAMES},
}
