"""The building blocks of planted violations (`phybench.violations`): what a kind returns, the
onset frame, and how a kind picks and replaces a body of a scene.  Apart so that the kinds'
module holds kinds only."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from .tasks.spec import TaskSpec
from .world.scene import Body, Disc, Rect, Scene


class ViolationError(Exception):
    """The violation set cannot be made; the message says why."""


@dataclass(frozen=True)
class Planted:
    """One perturbed scene (None: the kind does not apply) and what was done."""

    scene: Scene | None
    body: int = -1  # the body changed (-1: all, or none)
    note: str = ""
    onset: int | None = None  # the first changed frame, where the kind sets its own


OFF = 1e3  # world units: a pose this far away renders nothing (a body that is gone)


def onset_frame(spec: TaskSpec) -> int:
    """The first perturbed frame: a third of the way into the generated frames."""
    c = spec.condition_frames
    return c + max(1, (spec.frames - c) // 3)


def visible(scene: Scene, t: int) -> np.ndarray:
    """(B,) bool: the body lies wholly in view at frame t."""
    p, r = scene.positions[t], scene.radii
    return ((p - r[:, None]) >= 0).all(axis=1) & ((p + r[:, None]) <= scene.world_size).all(axis=1)


def pick(scene: Scene, t: int, shapes: tuple[type, ...] = (Disc, Rect)) -> int | None:
    """The first dynamic body of one of `shapes` wholly in view at frames t-1 and t."""
    ok = visible(scene, t) & visible(scene, t - 1)
    for b, body in enumerate(scene.bodies):
        if body.dynamic and isinstance(body.shape, shapes) and ok[b]:
            return b
    return None


def with_body(scene: Scene, b: int, body: Body) -> Scene:
    bodies = list(scene.bodies)
    bodies[b] = body
    return dataclasses.replace(scene, bodies=tuple(bodies))


def scaled(shape: Any, k: float) -> Any:
    if isinstance(shape, Disc):
        return Disc(shape.radius * k)
    return Rect(shape.width * k, shape.height * k)
