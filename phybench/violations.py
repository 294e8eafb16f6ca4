"""Planted violations: videos with known faults, made from an evaluation split's own scenes.

Each kind perturbs the *scene* (the bodies and their poses, `phybench.world.scene.Scene`) or
the *simulation* (Box2D re-run from a frame's state with one law changed), from an onset
frame on, and re-renders it with our renderer; frames before the onset are the ground
truth's.  No pixel is drawn by hand.  Every video knows its kind, its onset frame and the
body it changed, so the judge's recall and every metric's response can be measured
(README, "The abnormality judge").

Kinds (`KINDS`): vanish, appear, break, deform, reshape (a disc becomes a bar of equal area,
or a bar a disc), colour, teleport, static (a static body
moves), freeze, speed-1.2, speed-0.8, gravity-1.2, restitution-0.8, restitution-0,
reverse (time runs backwards from the onset), interpenetration (Box2D re-run with the
dynamic bodies passing through one another); motion without a cause: drift (sideways,
DRIFT units over the clip), reverse-midair (turns back in free flight), stutter (every
generated frame twice: stop-go), gravity-0.8 and gravity-reversed (Box2D re-run),
gravity-sideways (each fall turned sideways), spin (a bar turns SPIN rad a frame), stop
(dead at its first contact, found by Box2D), tunnel (Box2D re-run with one body passing
through everything, floor and walls included), sink (into the static body it touches);
appear-far (a body appears at rest, far from every other), square (a ball becomes a square of
its area), static-slide (a static body slides STATIC_SLIDE units a frame), drift-start (every
moving body drifts up a third of a pixel a frame from the first generated frame on), slow-3
(each generated move 3% shorter than the one before), curve (every moving body's height
shifted by CURVE s^2: a smooth sideways drift); equal-mass and momentum-1.5 (collision laws
that keep restitution 1 or scale the momentum after contact: `phybench.violations_law`).
A kind that does not apply to a sample (no static body, no gravity, no collision) skips it
and says so in the labels.  Benign degradations (`phybench.benign`) are the other half:
correct videos made imperfect, which no rule should flag.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .data.split import SplitReader, row_scene
from .io import atomic_write_bytes
from .planting import OFF, Planted, ViolationError, onset_frame
from .planting import bite as _bite_painter, pick as _pick, scaled as _scaled, visible as _visible, with_body as _with_body
from .submission import submission_meta, write_submission
from .tasks.spec import TaskSpec
from .violations_law import equal_mass as _equal_mass, momentum_scaled as _momentum_scaled
from .violations_contact import CONTACT_KINDS
from .violations_identity import IDENTITY_KINDS
from .violations_scene import SCENE_KINDS
from .world.render import render
from .data.documents import SplitRow
from .world.scene import BLUE, RED, Disc, Jar, Polygon, Rect, Scene, bounding_radius


def _vanish(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    b = _pick(scene, k)
    if b is None:
        return Planted(None, note="no dynamic body in view at the onset")
    poses = scene.poses.copy()
    poses[k:, b, :2] = OFF
    return Planted(dataclasses.replace(scene, poses=poses), b)


def _appear(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    b = _pick(scene, k)
    if b is None:
        return Planted(None, note="no dynamic body in view at the onset")
    poses = np.concatenate([scene.poses, scene.poses[:, b:b + 1]], axis=1)  # a copy of body b ...
    poses[:k, -1, :2] = OFF  # ... absent before the onset, then mirrored across the vertical centre line
    poses[k:, -1, 0] = scene.world_size - poses[k:, -1, 0]
    if abs(poses[k, -1, 0] - poses[k, b, 0]) < 2 * scene.radii[b]:
        poses[k:, -1, 1] = scene.world_size - poses[k:, -1, 1]  # too close: mirror through the centre instead
    return Planted(Scene(scene.bodies + (scene.bodies[b],), poses, scene.world_size), b)


def _break(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    b = _pick(scene, k)
    if b is None:
        return Planted(None, note="no dynamic disc or bar in view at the onset")
    body = scene.bodies[b]
    half = _scaled(body.shape, 1 / np.sqrt(2))  # two pieces of half the area each
    gap = bounding_radius(body.shape)
    poses = np.concatenate([scene.poses, scene.poses[:, b:b + 1]], axis=1)
    grow = np.clip(np.arange(scene.num_frames) - k + 1, 0, None)[:, None] * 0.25 * gap  # they drift apart
    poses[k:, b, 0] -= gap * 0.8 + grow[k:, 0]
    poses[k:, -1, 0] += gap * 0.8 + grow[k:, 0]
    poses[:k, -1, :2] = OFF
    piece = dataclasses.replace(body, shape=half)
    before = Scene(scene.bodies + (piece,), poses, scene.world_size)
    # frames before k keep the whole body: composited from the original in `plant`
    return Planted(_with_body(before, b, piece), b)


def _deform(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    b = _pick(scene, k)
    if b is None:
        return Planted(None, note="no dynamic disc or bar in view at the onset")
    body = scene.bodies[b]
    return Planted(_with_body(scene, b, dataclasses.replace(body, shape=_scaled(body.shape, 1.3))), b)


def _reshape(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """A rigid body changes shape at equal area: a disc becomes a 2:1 bar, a bar a disc."""
    b = _pick(scene, k)
    if b is None:
        return Planted(None, note="no dynamic disc or bar in view at the onset")
    body = scene.bodies[b]
    shape = body.shape
    assert isinstance(shape, (Disc, Rect))  # _pick's default shapes
    area = np.pi * shape.radius ** 2 if isinstance(shape, Disc) else shape.width * shape.height
    new = Rect(np.sqrt(2 * area), np.sqrt(area / 2)) if isinstance(shape, Disc) else Disc(np.sqrt(area / np.pi))
    return Planted(_with_body(scene, b, dataclasses.replace(body, shape=new)), b)


def _colour(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    b = _pick(scene, k, (Disc, Rect, type(None)))
    b = _pick(scene, k, tuple({type(x.shape) for x in scene.bodies})) if b is None else b
    if b is None:
        return Planted(None, note="no dynamic body in view at the onset")
    used = {tuple(x.colour) for x in scene.bodies}
    new = next(c for c in (BLUE, RED, (0, 160, 0), (160, 0, 160)) if c not in used)
    return Planted(_with_body(scene, b, dataclasses.replace(scene.bodies[b], colour=new)), b)


def _teleport(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    b = _pick(scene, k, tuple({type(x.shape) for x in scene.bodies}))
    if b is None:
        return Planted(None, note="no dynamic body in view at the onset")
    poses = scene.poses.copy()
    centre = scene.world_size / 2
    jump = np.sign(centre - poses[k, b, :2]) * scene.world_size * 0.4  # towards the centre: stays in view
    poses[k:, b, :2] += jump
    return Planted(dataclasses.replace(scene, poses=poses), b)


def _static(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    b = next((i for i, x in enumerate(scene.bodies) if not x.dynamic), None)
    if b is None:
        return Planted(None, note="the scene has no static body")
    poses = scene.poses.copy()
    shift = np.sign(scene.world_size / 2 - poses[k, b, :2]) * 0.05 * scene.world_size
    poses[k:, b, :2] += shift
    return Planted(dataclasses.replace(scene, poses=poses), b)


def _freeze(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    poses = scene.poses.copy()
    poses[k:] = poses[k - 1]
    return Planted(dataclasses.replace(scene, poses=poses))


def _speed(factor: float) -> Callable[[Scene, TaskSpec, int], Planted]:
    def plant(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        c = spec.condition_frames - 1  # from the last condition frame on, every move is `factor` as long
        poses = scene.poses.copy()
        dynamic = np.array([x.dynamic for x in scene.bodies])
        poses[c:, dynamic] = poses[c, dynamic] + factor * (poses[c:, dynamic] - poses[c, dynamic])
        return Planted(dataclasses.replace(scene, poses=poses))

    return plant


def _resimulate(change: Callable[[Any], Any], applies: Callable[[TaskSpec, Scene], str | None],
                **simulate_args: Any) -> Callable[[Scene, TaskSpec, int], Planted]:
    """Box2D re-run from the last condition frame's state with one setting changed."""
    def plant(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        why = applies(spec, scene)
        if why:
            return Planted(None, note=why)
        from .world.simulate import simulate

        c = spec.condition_frames - 1
        start = scene.frames(slice(c, c + 1))
        settings = change(spec.simulator)
        tail = simulate(start, settings, scene.num_frames - c, spec.frame_interval, **simulate_args)
        assert isinstance(tail, Scene)  # no record_contacts: the scene alone
        poses = scene.poses.copy()
        poses[c:] = tail.poses
        return Planted(dataclasses.replace(scene, poses=poses))

    return plant


def _needs_gravity(spec: TaskSpec, scene: Scene) -> str | None:
    return None if spec.simulator.gravity else "the task has no gravity"


def _needs_collision(spec: TaskSpec, scene: Scene) -> str | None:
    return None if sum(x.dynamic for x in scene.bodies) >= 2 else "fewer than two moving bodies: no collision"


def _interpenetrate(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """Box2D re-run from the last condition frame with the moving bodies passing through one
    another (they still meet static bodies and walls); skipped where they never touch."""
    why = _needs_collision(spec, scene)
    if why:
        return Planted(None, note=why)
    from .world.simulate import simulate

    c = spec.condition_frames - 1
    start = scene.frames(slice(c, c + 1))
    result = simulate(start, spec.simulator, scene.num_frames - c, spec.frame_interval, record_contacts=True)
    assert isinstance(result, tuple)  # record_contacts: (scene, first_touch)
    _, touch = result
    dynamic = np.array([x.dynamic for x in scene.bodies])
    if not np.isfinite(touch[np.ix_(dynamic, dynamic)]).any():
        return Planted(None, note="the moving bodies never touch after the condition frames")
    tail = simulate(start, spec.simulator, scene.num_frames - c, spec.frame_interval, dynamic_collide=False)
    assert isinstance(tail, Scene)  # no record_contacts: the scene alone
    poses = scene.poses.copy()
    poses[c:] = tail.poses
    return Planted(dataclasses.replace(scene, poses=poses))


def _reverse(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    c = spec.condition_frames
    poses = scene.poses.copy()
    poses[c:] = scene.poses[c:][::-1]
    return Planted(dataclasses.replace(scene, poses=poses))


DRIFT = 0.5  # world units sideways over the frames after the onset
DRIFT_SEEN = 8  # frames the body must stay in view after the onset for a drift to be planted
SPIN = 0.15  # rad per frame added to a bar's angle
SINK = 0.05  # world units per frame into the static body
MIN_SPEED = 0.05  # world units per frame: slower bodies have no direction to reverse


def _travel(scene: Scene, b: int, k: int) -> np.ndarray:
    """(2,) the body's displacement over the frame before the onset, world units."""
    return scene.poses[k, b, :2] - scene.poses[k - 1, b, :2]


def _drift(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """Motion without cause: a body drifts sideways (perpendicular to its travel, towards the
    view's centre), DRIFT units over the frames after the onset, at a constant rate."""
    b = _pick(scene, k)
    if b is None:
        return Planted(None, note="no dynamic body in view at the onset")
    if not _visible(scene, min(k + DRIFT_SEEN, scene.num_frames - 1))[b]:
        return Planted(None, note=f"the body leaves the view within {DRIFT_SEEN} frames of the onset: no drift to see")
    v = _travel(scene, b, k)
    n = np.array([-v[1], v[0]]) / np.linalg.norm(v) if np.linalg.norm(v) > 1e-9 else np.array([0.0, 1.0])
    if np.dot(scene.world_size / 2 - scene.poses[k, b, :2], n) < 0:
        n = -n
    ramp = np.clip(np.arange(scene.num_frames) - (k - 1), 0, None) / max(scene.num_frames - k, 1) * DRIFT
    poses = scene.poses.copy()
    poses[:, b, :2] += ramp[:, None] * n
    return Planted(dataclasses.replace(scene, poses=poses), b)


def _reverse_midair(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """A free-flying body turns back at the onset: its displacement along its travel is
    mirrored (as if it bounced off nothing)."""
    b = _pick(scene, k)
    if b is None:
        return Planted(None, note="no dynamic body in view at the onset")
    v = _travel(scene, b, k)
    if np.linalg.norm(v) < MIN_SPEED:
        return Planted(None, note="the body is (nearly) at rest at the onset")
    u = v / np.linalg.norm(v)
    poses = scene.poses.copy()
    rel = poses[k:, b, :2] - poses[k - 1, b, :2]
    poses[k:, b, :2] = poses[k - 1, b, :2] + rel - 2 * (rel @ u)[:, None] * u
    return Planted(dataclasses.replace(scene, poses=poses), b)


def _stutter(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """Stop-go at half speed: every generated frame shown twice."""
    c = spec.condition_frames
    poses = scene.poses.copy()
    poses[c:] = scene.poses[c + np.arange(scene.num_frames - c) // 2]
    return Planted(dataclasses.replace(scene, poses=poses), onset=c + 1)


def _gravity_sideways(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """Free flight under gravity turned sideways (towards the view's centre) from the last
    condition frame: each dynamic body's fall is replaced by the same displacement sideways."""
    g = spec.simulator.gravity
    if not g:
        return Planted(None, note="the task has no gravity")
    c = spec.condition_frames - 1
    tau = np.clip(np.arange(scene.num_frames) - c, 0, None) * spec.frame_interval
    fall = 0.5 * g * tau ** 2  # world units
    poses = scene.poses.copy()
    for b, body in enumerate(scene.bodies):
        if body.dynamic:
            side = 1.0 if poses[c, b, 0] < scene.world_size / 2 else -1.0
            poses[:, b, 1] += fall
            poses[:, b, 0] += side * fall
    return Planted(dataclasses.replace(scene, poses=poses), onset=c + 1)


def _spin(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """A bar (or jar, polygon) starts turning SPIN rad per frame with nothing touching it."""
    b = _pick(scene, k, (Rect, Jar, Polygon))
    if b is None:
        return Planted(None, note="no dynamic bar, jar or polygon in view at the onset")
    poses = scene.poses.copy()
    poses[:, b, 2] += np.clip(np.arange(scene.num_frames) - (k - 1), 0, None) * SPIN
    return Planted(dataclasses.replace(scene, poses=poses), b)


def _contacts(scene: Scene, spec: TaskSpec) -> np.ndarray:
    """(B, B) the frame at which each pair first touches after the last condition frame (inf: never)."""
    from .world.simulate import simulate

    c = spec.condition_frames - 1
    result = simulate(scene.frames(slice(c, c + 1)), spec.simulator, scene.num_frames - c, spec.frame_interval,
                      record_contacts=True)
    assert isinstance(result, tuple)
    _, touch = result
    return np.where(np.isfinite(touch), c + np.ceil(touch / spec.frame_interval - 1e-9), np.inf)


def _stop(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """A body stops dead at its first contact with another body (the contact Box2D finds)."""
    frames = _contacts(scene, spec)
    dynamic = [b for b, x in enumerate(scene.bodies) if x.dynamic]
    c = spec.condition_frames
    first = [(float(frames[b][[j for j in range(len(scene.bodies)) if j != b]].min(initial=np.inf)), b)
             for b in dynamic]
    first = [(f, b) for f, b in first if c <= f <= scene.num_frames - 4 and _visible(scene, int(f))[b]]
    if not first:
        return Planted(None, note="no body meets another after the condition frames, in view")
    f, b = min(first)
    f = int(f)
    poses = scene.poses.copy()
    poses[f:, b] = poses[f, b]
    return Planted(dataclasses.replace(scene, poses=poses), b, onset=f + 1)


def _tunnel(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """Box2D re-run from the last condition frame with one body passing through everything,
    walls and floor included; kept where it leaves the view while its ground truth stays."""
    from .world.simulate import simulate

    frames = _contacts(scene, spec)
    T = scene.num_frames
    c = spec.condition_frames - 1
    for b in sorted((b for b, x in enumerate(scene.bodies) if x.dynamic),
                    key=lambda b: (float(frames[b].min(initial=np.inf)), b)):
        tail = simulate(scene.frames(slice(c, c + 1)), spec.simulator, T - c, spec.frame_interval, ghost=b)
        assert isinstance(tail, Scene)
        poses = scene.poses.copy()
        poses[c:, b] = tail.poses[:, b]  # the others keep their ground truth
        planted = dataclasses.replace(scene, poses=poses)
        p, r = planted.positions[-1, b], planted.radii[b]
        gone = ((p + r) < 0).any() or ((p - r) > scene.world_size).any()
        if gone and _visible(scene, T - 1)[b]:
            return Planted(planted, b, onset=c + 1)
    return Planted(None, note="no body leaves the view through what its ground truth meets")


def _sink(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """A body touching a static body sinks into it, SINK units a frame, from the onset (or
    the contact, if later)."""
    frames = _contacts(scene, spec)
    static = [j for j, x in enumerate(scene.bodies) if not x.dynamic]
    pairs = sorted((max(k, int(frames[b, j]) + 1), b, j) for b, x in enumerate(scene.bodies) if x.dynamic
                   for j in static if np.isfinite(frames[b, j]))
    pairs = [(f, b, j) for f, b, j in pairs if f <= scene.num_frames - 4 and _visible(scene, f)[b]]
    if not pairs:
        return Planted(None, note="no moving body touches a static one in view")
    f, b, j = pairs[0]
    poses = scene.poses.copy()
    to = poses[f, j, :2] - poses[f, b, :2]
    u = to / np.linalg.norm(to) if np.linalg.norm(to) > 1e-9 else np.array([0.0, -1.0])
    depth = np.clip(np.arange(scene.num_frames) - f + 1, 0, None) * SINK
    poses[:, b, :2] += depth[:, None] * u
    return Planted(dataclasses.replace(scene, poses=poses), b, onset=f)


STATIC_SLIDE = 0.02  # world units per frame a static body slides
DRIFT_START = 1.0 / 3.0  # px at 128 px per frame: every moving body's sideways drift from the first generated frame
SLOW = 0.97  # each generated frame's move is this fraction of the one before
CURVE = 0.5  # world units: a smooth drift of CURVE s^2, s from 0 (last condition frame) to 1 (last frame)


def _appear_far(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """A body that appears from nothing at the onset, far from every other body: a copy of
    a dynamic body's shape and colour, at rest where it is farthest from the scene."""
    b = _pick(scene, k)
    if b is None:
        return Planted(None, note="no dynamic disc or bar in view at the onset")
    r = bounding_radius(scene.bodies[b].shape)
    w = scene.world_size
    grid = np.stack(np.meshgrid(np.linspace(2 * r, w - 2 * r, 25), np.linspace(2 * r, w - 2 * r, 25)), -1).reshape(-1, 2)
    seen = _visible(scene, k)
    others = scene.poses[k, seen, :2] if seen.any() else scene.poses[k, :, :2]
    reach = np.array([bounding_radius(x.shape) for x, v in zip(scene.bodies, seen) if v or not seen.any()])
    gap = (np.sqrt(((grid[:, None] - others[None]) ** 2).sum(-1)) - reach[None]).min(axis=1)
    spot = grid[int(np.argmax(gap))]
    if gap.max() < 3 * r:
        return Planted(None, note="no free place far from every body")
    poses = np.concatenate([scene.poses, scene.poses[:, b:b + 1]], axis=1)
    poses[:k, -1, :2] = OFF
    poses[k:, -1, :2] = spot
    poses[k:, -1, 2] = 0.0
    return Planted(Scene(scene.bodies + (scene.bodies[b],), poses, scene.world_size), b)


def _square(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """A ball turns into a square of the same area (elongation and compactness barely move)."""
    b = _pick(scene, k, (Disc,))
    if b is None:
        return Planted(None, note="no dynamic disc in view at the onset")
    disc = scene.bodies[b].shape
    assert isinstance(disc, Disc)  # `_pick` chose among discs
    side = float(np.sqrt(np.pi) * disc.radius)
    return Planted(_with_body(scene, b, dataclasses.replace(scene.bodies[b], shape=Rect(side, side))), b)


def _bite(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """A ball loses a round bite from its back (`planting.bite`): a notch the moments hardly see."""
    b = _pick(scene, k, (Disc,))
    return Planted(None, note="no dynamic disc in view at the onset") if b is None else \
        Planted(scene, b, paint=_bite_painter(scene, b, k))


def _static_slide(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """A static body slides STATIC_SLIDE units a frame towards the view's centre."""
    b = next((i for i, x in enumerate(scene.bodies) if not x.dynamic), None)
    if b is None:
        return Planted(None, note="the scene has no static body")
    poses = scene.poses.copy()
    to = scene.world_size / 2 - poses[k, b, :2]
    u = to / np.linalg.norm(to) if np.linalg.norm(to) > 1e-9 else np.array([1.0, 0.0])
    poses[:, b, :2] += np.clip(np.arange(scene.num_frames) - k + 1, 0, None)[:, None] * STATIC_SLIDE * u
    return Planted(dataclasses.replace(scene, poses=poses), b)


def _moved_from_condition(scene: Scene, spec: TaskSpec, change: Callable[[np.ndarray, np.ndarray], np.ndarray]
                          ) -> Planted:
    """Every dynamic body's positions from the last condition frame c on replaced by
    change(positions (T - c, n, 2), s (T - c,) from 0 at c to 1 at the last frame)."""
    c = spec.condition_frames - 1
    dynamic = np.array([x.dynamic for x in scene.bodies])
    if not dynamic.any() or scene.num_frames - c < 2:
        return Planted(None, note="nothing moves after the condition frames")
    poses = scene.poses.copy()
    s = np.arange(scene.num_frames - c, dtype=np.float64) / (scene.num_frames - 1 - c)
    poses[c:, dynamic, :2] = change(poses[c:, dynamic, :2], s)
    return Planted(dataclasses.replace(scene, poses=poses))


def _drift_start(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """From the first generated frame on, every dynamic body drifts up DRIFT_START px (at 128 px)
    a frame: a velocity the condition frames never showed."""
    rate = DRIFT_START * scene.world_size / 128.0
    def change(pos: np.ndarray, s: np.ndarray) -> np.ndarray:
        out = pos.copy()
        out[..., 1] += rate * np.arange(len(pos))[:, None]
        return out
    return _moved_from_condition(scene, spec, change)


def _slow(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """Every generated frame's move is SLOW times the one before: the bodies slow down by themselves."""
    def change(pos: np.ndarray, s: np.ndarray) -> np.ndarray:
        steps = np.diff(pos, axis=0) * (SLOW ** np.arange(1, len(pos)))[:, None, None]
        return np.concatenate([pos[:1], pos[:1] + np.cumsum(steps, axis=0)])
    return _moved_from_condition(scene, spec, change)


def _curve(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """Every dynamic body's height shifted by CURVE s^2: a smooth sideways drift of a uniform
    mover (6.4 px by the last frame at 128 px)."""
    def change(pos: np.ndarray, s: np.ndarray) -> np.ndarray:
        out = pos.copy()
        out[..., 1] += CURVE * s[:, None] ** 2
        return out
    return _moved_from_condition(scene, spec, change)


KINDS: dict[str, Callable[[Scene, TaskSpec, int], Planted]] = {
    "vanish": _vanish,
    "appear": _appear,
    "break": _break,
    "deform": _deform,
    "reshape": _reshape,
    "colour": _colour,
    "teleport": _teleport,
    "static": _static,
    "freeze": _freeze,
    "speed-1.2": _speed(1.2),
    "speed-0.8": _speed(0.8),
    "gravity-1.2": _resimulate(lambda s: dataclasses.replace(s, gravity=1.2 * s.gravity), _needs_gravity),
    "restitution-0.8": _resimulate(lambda s: dataclasses.replace(s, restitution=0.8), _needs_collision),
    "restitution-0": _resimulate(lambda s: dataclasses.replace(s, restitution=0.0), _needs_collision),
    "reverse": _reverse,
    "interpenetration": _interpenetrate,
    "drift": _drift,
    "reverse-midair": _reverse_midair,
    "stutter": _stutter,
    "gravity-0.8": _resimulate(lambda s: dataclasses.replace(s, gravity=0.8 * s.gravity), _needs_gravity),
    "gravity-reversed": _resimulate(lambda s: dataclasses.replace(s, gravity=-s.gravity), _needs_gravity),
    "gravity-sideways": _gravity_sideways,
    "spin": _spin,
    "stop": _stop,
    "tunnel": _tunnel,
    "sink": _sink,
    "appear-far": _appear_far,
    "square": _square,
    "bite": _bite,
    "static-slide": _static_slide,
    "drift-start": _drift_start,
    "slow-3": _slow,
    "curve": _curve,
    "equal-mass": _equal_mass,
    "momentum-1.5": _momentum_scaled,
    **IDENTITY_KINDS,  # recolour, resize, swap-<shape>, identity-swap (`phybench.violations_identity`)
    **CONTACT_KINDS,  # gap-, overlap-, early- and late-bounce at three strengths each (`phybench.violations_contact`)
    **SCENE_KINDS,  # appear-fall, vanish-, duplicate-, identity-, shuffle-, pause-, reversal-, jump- (`phybench.violations_scene`)
}
# onset: the first frame that differs from the ground truth (speed and re-simulation: the first generated frame)
_ONSET_AT_CONDITION = {"speed-1.2", "speed-0.8", "gravity-1.2", "restitution-0.8", "restitution-0", "reverse",
                       "interpenetration", "gravity-0.8", "gravity-reversed", "drift-start", "slow-3", "curve",
                       "equal-mass"}


def plant(kind: str, row: SplitRow, spec: TaskSpec, resolution: int, gt_video: np.ndarray
          ) -> tuple[np.ndarray | None, dict[str, Any]]:
    """(video or None, label) of one sample with one planted violation."""
    if kind not in KINDS:
        raise ViolationError(f"unknown violation kind {kind!r}; known: {', '.join(KINDS)}")
    scene = row_scene(row)
    k = onset_frame(spec)
    planted = KINDS[kind](scene, spec, k)
    label: dict[str, Any] = {"sample_id": row["sample_id"], "kind": kind}
    if planted.scene is None:
        label["skipped"] = planted.note
        return None, label
    video = render(planted.scene, resolution)
    if planted.paint is not None:
        video = planted.paint(video)
    onset = planted.onset if planted.onset is not None else spec.condition_frames if kind in _ONSET_AT_CONDITION else k
    video[:onset] = gt_video[:onset]  # the ground truth's own frames before the onset
    label.update(onset=int(onset), body=int(planted.body))
    if np.array_equal(video, gt_video):
        label["skipped"] = "the perturbation left every frame unchanged (e.g. nothing moves)"
        return None, label
    return video, label


def write_violations(split_dir: str | os.PathLike[str], out: str | os.PathLike[str], kinds: Sequence[str],
                     *, limit: int | None = None, progress: bool = True) -> dict[str, Any]:
    """OUT/<kind>/ (a submission of the planted videos of one kind, or of the ground truth
    degraded by one benign kind of `phybench.benign`) and OUT/labels.json.

    Every kind's submission is complete, so `phybench score OUT/<kind> --data SPLIT` works:
    a sample the kind does not apply to gets its ground-truth video, and its label says
    `skipped` (leave it out of a recall).  Returns the labels document.
    """
    from tqdm import tqdm

    reader = SplitReader(split_dir)
    spec, m = reader.spec, reader.manifest
    if spec.is_training(m["split"]):
        raise ViolationError(f"{split_dir} is a training split; plant violations in an evaluation split")
    from .benign import BENIGN, degrade

    unknown = [k for k in kinds if k not in KINDS and k not in BENIGN]
    if unknown:
        raise ViolationError(f"unknown violation kind(s) {', '.join(unknown)}; known: {', '.join(KINDS)}; "
                             f"benign: {', '.join(BENIGN)}")
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ViolationError(f"{out} exists and is not empty; choose a new folder")
    rows = list(reader.rows())
    if limit is not None and limit < len(rows):
        raise ViolationError(f"--limit {limit}: a submission answers every sample of the split; make a "
                             f"{limit}-sample split instead (`phybench generate {m['task']} --split {m['split']} "
                             f"--limit {limit}`)")
    res = int(m["resolution"])
    labels: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    for kind in kinds:
        def videos() -> Iterator[tuple[str, np.ndarray]]:
            for row in tqdm(rows, desc=f"violations {kind}", unit="video", disable=not progress):
                gt = reader.video(row)  # decoded per kind: a whole split of videos would not fit in memory
                video: np.ndarray | None
                if kind in BENIGN:
                    video, label = degrade(kind, gt, spec.condition_frames, row["sample_id"]), {
                        "sample_id": row["sample_id"], "kind": kind, "benign": True}
                else:
                    video, label = plant(kind, row, spec, res, gt)
                labels[kind].append(label)
                yield row["sample_id"], gt if video is None else video

        what = "benign degradation" if kind in BENIGN else "planted violation"
        meta = submission_meta(m, f"{'degraded' if kind in BENIGN else 'violation'}:{kind}",
                               sampler={"name": f"{'benign' if kind in BENIGN else 'planted'}:{kind}"},
                               notes=f"{what} {kind!r} (phybench.{'benign' if kind in BENIGN else 'violations'})"
                                     + ("" if kind in BENIGN else "; ground truth before the onset"))
        write_submission(out / kind, meta, videos(), fmt="npz")
    doc = {"kind": "phybench-violations", "schema_version": 1, "task": m["task"], "split": m["split"],
           "split_hash": m["split_hash"], "onset_frame": onset_frame(spec), "labels": labels}
    atomic_write_bytes(out / "labels.json", (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())
    return doc
