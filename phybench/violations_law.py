"""Planted collision laws the restitution alone cannot show (issue 34: "the collision law ignores momentum").

Two kinds of `phybench.violations.KINDS`, kept here so that module stays small:

- ``equal-mass``: Box2D re-run from the last condition frame with the two moving balls given
  equal masses (the radii drawn stay; each ball's density is set to r0^2 / r^2 of the task's, so
  every ball weighs what ball 0 weighs).  The collision stays elastic (restitution 1) but the
  momentum exchange is the equal-mass one: the balls swap velocities.  A restitution-only law
  reads it as right; the law block must name ``momentum``.
- ``momentum-1.5``: every generated displacement after the first contact between moving
  bodies is 1.5 times as long (both balls), positions continuous at the contact frame: the
  balls leave the contact with 1.5 times their momentum (and restitution 1.5).

Both skip a sample they cannot change (fewer than two moving bodies, equal radii, no contact
in the generated frames) and say why, like every kind.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .planting import Planted
from .tasks.spec import TaskSpec
from .world.scene import Scene

MOMENTUM_FACTOR = 1.5  # momentum-1.5: every displacement after the first contact this many times as long
MIN_FRAMES_AFTER = 3  # momentum-1.5: frames after the contact, at least (a law fit needs 3 a side)


def _moving(scene: Scene) -> np.ndarray:
    return np.array([x.dynamic for x in scene.bodies], dtype=bool)


def equal_mass(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """The collision re-simulated with equal masses: elastic, but the wrong momentum exchange.

    Rows whose moving balls already have equal radii are skipped: their masses are equal, so
    the re-run is the ground truth (nothing planted)."""
    from .world.simulate import simulate

    moving = _moving(scene)
    if moving.sum() < 2:
        return Planted(None, note="fewer than two moving bodies: no collision")
    radii = scene.radii
    r = radii[moving]
    if np.allclose(r, r[0], rtol=1e-9, atol=0.0):
        return Planted(None, note="the moving balls have equal radii: their masses are equal already")
    ref = float(r[0])
    densities = [spec.simulator.density * (ref / float(radii[i])) ** 2 if moving[i] else spec.simulator.density
                 for i in range(len(scene.bodies))]
    c = spec.condition_frames - 1
    tail = simulate(scene.frames(slice(c, c + 1)), spec.simulator, scene.num_frames - c, spec.frame_interval,
                    densities=densities)
    assert isinstance(tail, Scene)  # no record_contacts: the scene alone
    poses = scene.poses.copy()
    poses[c:] = tail.poses
    return Planted(dataclasses.replace(scene, poses=poses))


def first_contact_frame(scene: Scene, spec: TaskSpec) -> float:
    """The first frame at or after the moving bodies first touch, after the last condition frame (inf: never)."""
    from .world.simulate import simulate

    c = spec.condition_frames - 1
    result = simulate(scene.frames(slice(c, c + 1)), spec.simulator, scene.num_frames - c, spec.frame_interval,
                      record_contacts=True)
    assert isinstance(result, tuple)  # record_contacts: (scene, first_touch)
    _, touch = result
    moving = _moving(scene)
    t = touch[np.ix_(moving, moving)]
    t = t[np.isfinite(t)]
    if not t.size:
        return float("inf")
    return float(c + np.ceil(t.min() / spec.frame_interval - 1e-9))


def momentum_scaled(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """Every moving body's displacement from the first contact frame f on is MOMENTUM_FACTOR as long:
    p'(t) = p(f) + MOMENTUM_FACTOR (p(t) - p(f)) for t >= f, so the positions are continuous at f."""
    moving = _moving(scene)
    if moving.sum() < 2:
        return Planted(None, note="fewer than two moving bodies: no collision")
    f = first_contact_frame(scene, spec)
    if not np.isfinite(f) or f < spec.condition_frames or f > scene.num_frames - 1 - MIN_FRAMES_AFTER:
        return Planted(None, note=f"no contact in the generated frames with {MIN_FRAMES_AFTER} frames after it")
    f_i = int(f)
    poses = scene.poses.copy()
    base = poses[f_i, moving, :2]
    poses[f_i:, moving, :2] = base + MOMENTUM_FACTOR * (poses[f_i:, moving, :2] - base)
    return Planted(dataclasses.replace(scene, poses=poses), onset=f_i + 1)
