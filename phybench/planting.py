"""The building blocks of planted violations (`phybench.violations`): what a kind returns, the
onset frame, and how a kind picks and replaces a body of a scene.  Apart so that the kinds'
module holds kinds only."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .tasks.spec import TaskSpec
from .world.scene import BACKGROUND, Body, Disc, Rect, Scene


class ViolationError(Exception):
    """The violation set cannot be made; the message says why."""


@dataclass(frozen=True)
class Planted:
    """One perturbed scene (None: the kind does not apply) and what was done."""

    scene: Scene | None
    body: int = -1  # the body changed (-1: all, or none)
    note: str = ""
    onset: int | None = None  # the first changed frame, where the kind sets its own
    paint: Callable[[np.ndarray], np.ndarray] | None = None  # a pixel edit of the rendered (T, H, W, 3) video


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


BITE_SHARE, BITE_MIN_PX = 0.5, 3.0  # a bite's radius: half the ball's, and at least 3 px at 128 px


def bite(scene: Scene, b: int, onset: int) -> Callable[[np.ndarray], np.ndarray]:
    """A painter that takes a round bite out of disc b's back (the side it comes from) from frame
    `onset` on: the "Pac-Man" a frame-autoregressive model draws as its ball decays.  The bite is
    a disc of BITE_SHARE of the ball's radius (at least BITE_MIN_PX px) centred on the rim, the
    ball's pixels inside it painted background."""
    world = scene.world_size

    def paint(video: np.ndarray) -> np.ndarray:  # uint8 (T, H, W, 3)
        out = video.copy()
        res = video.shape[1]
        s = world / res  # world units per px
        centres = (np.arange(res) + 0.5) * s  # (res,) pixel centres, world units
        x, y = np.meshgrid(centres, world - centres)  # (H, W): col -> x, row -> world - y
        radius = float(scene.radii[b])
        r_bite = max(BITE_SHARE * radius, BITE_MIN_PX * world / 128.0)
        for t in range(onset, scene.num_frames):
            c = scene.positions[t, b]
            v = c - scene.positions[t - 1, b]
            back = -v / np.linalg.norm(v) if np.linalg.norm(v) > 1e-9 else np.array([-1.0, 0.0])
            rim = c + radius * back
            inside = (x - c[0]) ** 2 + (y - c[1]) ** 2 <= radius ** 2
            bitten = inside & ((x - rim[0]) ** 2 + (y - rim[1]) ** 2 <= r_bite ** 2)
            out[t][bitten] = BACKGROUND
        return out

    return paint
