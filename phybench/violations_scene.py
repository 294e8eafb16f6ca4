"""Planted scene violations: bodies that appear, vanish, double or change, and frames out of order
(issue 48 item 4).

Families of `phybench.violations.KINDS`, several strengths each, designed for the combinatorial
(PHYRE-style) scenes and applicable to every family; kept here so that module stays small.  The
onset k is `planting.onset_frame` (a third into the generated frames); a kind that does not apply
to a scene skips it, saying why.

- ``appear-fall-S``: a copy of a dynamic body, scaled by S (1, 0.6), appears at frame k at rest at
  the free place farthest from every body (upper half first) and falls from there under the
  scene's gravity (it stops on the view's floor): a moving body from nowhere.
- ``vanish-rest`` / ``vanish-moving``: a body at rest (a dynamic body that does not move any more,
  else a static one) / a moving body is gone from frame k on.
- ``duplicate-A``: a second copy of a moving body, at opacity A (1, 0.5), follows it from frame k on,
  2.5 radii beside it (the side with room).
- ``identity-colour-rest`` / ``-moving``, ``identity-shape-rest`` / ``-moving``: a body at rest / a
  moving one takes another colour (one the scene does not use), or another shape of its area (a
  disc becomes a square, a bar a disc), from frame k on.
- ``shuffle-N``: the N frames from k on are shown in another order (rotated by one: N = 2 swaps two).
- ``pause-N``: frame k - 1 is shown N more times, then the video resumes where it stopped (every
  later frame N frames late): the scene stands exactly still, then goes on.
- ``reversal-N``: from frame k, time runs backwards for N frames, then forwards again (continuous:
  no jump, two reversals of every velocity).
- ``jump-moving-D`` / ``jump-rest-D``: a moving body / a body at rest (a static one where none of the
  dynamic ones rests) is displaced by D px of the video's own resolution (3, 4, 6) in frame k only,
  across its motion (upwards at rest), and is back on its path in frame k + 1.

Every change is in the scene's poses (re-rendered by `phybench.world.render`), but the
half-transparent duplicate, which is painted over the render of the scene with an opaque one.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from .planting import OFF, Planted, scaled, visible, with_body
from .tasks.spec import TaskSpec
from .world.scene import BLUE, RED, Disc, Rect, Scene, bounding_radius

Kind = Callable[[Scene, TaskSpec, int], Planted]
MOVING = 0.02  # world units (of 10) a frame: a body this fast around the onset moves
RESTING = 0.005  # world units: a body that stays this close to its onset pose to the end rests
JUMP_PX = (3, 4, 6)  # px of the video's own resolution
APPEAR_SCALE = (1.0, 0.6)
DUPLICATE_ALPHA = (1.0, 0.5)
SHUFFLE_N, PAUSE_N, REVERSAL_N = (2, 3, 5), (2, 3, 5), (2, 4, 8)
NEW_COLOURS = (BLUE, RED, (0, 160, 0), (160, 0, 160))


def _moving(scene: Scene, k: int) -> int | None:
    """The fastest dynamic body in view at frames k - 1 and k (at least MOVING a frame there)."""
    ok = visible(scene, k) & visible(scene, k - 1) & np.array([b.dynamic for b in scene.bodies])
    speed = np.linalg.norm(scene.positions[k] - scene.positions[k - 1], axis=1) * ok
    return int(np.argmax(speed)) if speed.max(initial=0.0) >= MOVING else None


def _resting(scene: Scene, k: int) -> int | None:
    """A dynamic body in view that stays at its pose of frame k - 1 to the end, else a static one in view."""
    p = scene.poses[k - 1:, :, :2]
    still = (np.abs(p - p[0]).max(axis=(0, 2)) < RESTING) & visible(scene, k)
    dynamic = np.array([b.dynamic for b in scene.bodies])
    for pool in (still & dynamic, still & ~dynamic):
        if pool.any():
            return int(np.flatnonzero(pool)[0])
    return None


def _free_spot(scene: Scene, k: int, r: float) -> np.ndarray | None:
    """(2,) world units: the place of a body of reach r farthest from every body at frame k, upper half first."""
    w = scene.world_size
    g = np.stack(np.meshgrid(np.linspace(2 * r, w - 2 * r, 25), np.linspace(w / 2, w - 2 * r, 13)), -1).reshape(-1, 2)
    reach = np.array([bounding_radius(b.shape) for b in scene.bodies])
    gap = (np.linalg.norm(g[:, None] - scene.poses[k, None, :, :2], axis=-1) - reach[None]).min(axis=1)
    return g[int(np.argmax(gap))] if gap.max() >= 2 * r else None


def _add(scene: Scene, b: int, poses_b: np.ndarray, shape: Any = None) -> Scene:
    """The scene with a copy of body b (shape replaced where given) posed by poses_b (T, 3)."""
    body = scene.bodies[b] if shape is None else dataclasses.replace(scene.bodies[b], shape=shape)
    return Scene(scene.bodies + (dataclasses.replace(body, dynamic=True),),
                 np.concatenate([scene.poses, poses_b[:, None]], axis=1), scene.world_size)


def _appear_fall(s: float) -> Kind:
    def kind(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        b = next((i for i, x in enumerate(scene.bodies) if x.dynamic and isinstance(x.shape, (Disc, Rect))), None)
        if b is None:
            return Planted(None, note="no dynamic disc or bar")
        shape = scaled(scene.bodies[b].shape, s)
        r = bounding_radius(shape)
        spot = _free_spot(scene, k, r)
        if spot is None:
            return Planted(None, note="no free place far from every body")
        g = abs(spec.simulator.gravity) or 9.8
        t = np.clip(np.arange(scene.num_frames) - k, 0, None) * spec.frame_interval
        poses = np.zeros((scene.num_frames, 3))
        poses[:, 0], poses[:, 1] = spot[0], np.maximum(spot[1] - 0.5 * g * t ** 2, r)
        poses[:k, :2] = OFF
        return Planted(_add(scene, b, poses, shape), b)
    return kind


def _gone(moving: bool) -> Kind:
    def kind(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        b = _moving(scene, k) if moving else _resting(scene, k)
        if b is None:
            return Planted(None, note=f"no {'moving' if moving else 'resting'} body in view at the onset")
        poses = scene.poses.copy()
        poses[k:, b, :2] = OFF
        return Planted(dataclasses.replace(scene, poses=poses), b)
    return kind


def _duplicate(alpha: float) -> Kind:
    def kind(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        b = _moving(scene, k)
        if b is None:
            return Planted(None, note="no moving body in view at the onset")
        r, w = bounding_radius(scene.bodies[b].shape), scene.world_size
        p = scene.poses[:, b].copy()
        side = 1.0 if p[k, 0] < w / 2 else -1.0  # towards the side with room
        p[:, 0] += side * 2.5 * r
        p[:k, :2] = OFF
        doubled = _add(scene, b, p)
        if alpha >= 1.0:
            return Planted(doubled, b)
        from .world.render import render

        def paint(video: np.ndarray) -> np.ndarray:  # uint8 (T, H, W, 3): the opaque copy at opacity alpha
            plain = render(scene, video.shape[1]).astype(np.float32)
            return np.round(plain + alpha * (video.astype(np.float32) - plain)).astype(np.uint8)
        return Planted(doubled, b, paint=paint)
    return kind


def _identity(what: str, moving: bool) -> Kind:
    def kind(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        b = _moving(scene, k) if moving else _resting(scene, k)
        if b is None:
            return Planted(None, note=f"no {'moving' if moving else 'resting'} body in view at the onset")
        body = scene.bodies[b]
        if what == "colour":
            used = {tuple(x.colour) for x in scene.bodies}
            new = dataclasses.replace(body, colour=next(c for c in NEW_COLOURS if c not in used))
        elif isinstance(body.shape, Disc):
            new = dataclasses.replace(body, shape=Rect(*(2 * [float(np.sqrt(np.pi) * body.shape.radius)])))
        elif isinstance(body.shape, Rect):
            new = dataclasses.replace(body, shape=Disc(float(np.sqrt(body.shape.width * body.shape.height / np.pi))))
        else:
            return Planted(None, note="the body is neither a disc nor a bar")
        before = Scene(scene.bodies + (body,), np.concatenate([scene.poses, scene.poses[:, b:b + 1]], axis=1),
                       scene.world_size)  # the old body until k, the new one from k
        changed = with_body(before, b, new)
        poses = changed.poses.copy()
        poses[:k, b, :2] = OFF
        poses[k:, -1, :2] = OFF
        return Planted(dataclasses.replace(changed, poses=poses), b)
    return kind


def _reorder(source: Callable[[int, int], np.ndarray | None], what: str) -> Kind:
    """Frames re-indexed: pose t of the planted scene is pose source(T, k)[t] of the true one."""
    def kind(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        idx = source(scene.num_frames, k)
        if idx is None:
            return Planted(None, note=f"the {what} does not fit in the video")
        moved = np.abs(scene.poses[idx, :, :2] - scene.poses[:, :, :2]).max()
        if moved < MOVING:
            return Planted(None, note=f"nothing moves in the {what}'s frames")
        return Planted(dataclasses.replace(scene, poses=scene.poses[idx]), onset=int(np.flatnonzero(idx != np.arange(len(idx)))[0]))
    return kind


def _shuffled(n: int) -> Callable[[int, int], np.ndarray | None]:
    def idx(T: int, k: int) -> np.ndarray | None:
        if k + n > T:
            return None
        out = np.arange(T)
        out[k:k + n] = np.roll(out[k:k + n], -1)
        return out
    return idx


def _paused(n: int) -> Callable[[int, int], np.ndarray | None]:
    def idx(T: int, k: int) -> np.ndarray | None:
        if k + n + 2 > T:
            return None
        return np.concatenate([np.arange(k), np.full(n, k - 1), np.arange(k, T - n)])
    return idx


def _reversed(n: int) -> Callable[[int, int], np.ndarray | None]:
    def idx(T: int, k: int) -> np.ndarray | None:
        if k - 1 - n < 0:
            return None
        back = np.arange(k - 2, k - 2 - n, -1)  # n frames backwards from k - 1
        return np.concatenate([np.arange(k), back, np.arange(back[-1] + 1, back[-1] + 1 + T - k - n)])
    return idx


def _jump(px: float, moving: bool) -> Kind:
    def kind(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        b = _moving(scene, k) if moving else _resting(scene, k)
        if b is None:
            return Planted(None, note=f"no {'moving' if moving else 'resting'} body in view at the onset")
        v = scene.positions[k][b] - scene.positions[k - 1][b]
        across = np.array([-v[1], v[0]]) / np.linalg.norm(v) if np.linalg.norm(v) > 1e-9 else np.array([0.0, 1.0])

        def paint(video: np.ndarray) -> np.ndarray:  # uint8 (T, H, W, 3): frame k re-rendered, body b displaced
            from .world.render import render
            poses = scene.poses[k:k + 1].copy()
            poses[0, b, :2] += across * px * scene.world_size / video.shape[1]
            out = video.copy()
            out[k] = render(Scene(scene.bodies, poses, scene.world_size), video.shape[1])[0]
            return out
        return Planted(scene, b, paint=paint)
    return kind


SCENE_KINDS: dict[str, Kind] = {
    **{f"appear-fall-{s:g}": _appear_fall(s) for s in APPEAR_SCALE},
    "vanish-rest": _gone(False), "vanish-moving": _gone(True),
    **{f"duplicate-{a:g}": _duplicate(a) for a in DUPLICATE_ALPHA},
    **{f"identity-{w}-{m}": _identity(w, m == "moving") for w in ("colour", "shape") for m in ("rest", "moving")},
    **{f"shuffle-{n}": _reorder(_shuffled(n), "shuffle") for n in SHUFFLE_N},
    **{f"pause-{n}": _reorder(_paused(n), "pause") for n in PAUSE_N},
    **{f"reversal-{n}": _reorder(_reversed(n), "reversal") for n in REVERSAL_N},
    **{f"jump-{m}-{d}": _jump(d, m == "moving") for m in ("moving", "rest") for d in JUMP_PX},
}
