"""Planted identity violations: another body in the tracked body's place (issue 48 item 2).

A model that loses a ball's identity draws *a* ball where the ball should be: of another colour,
another size or another shape.  The parser follows its colour by brightness, so such a body used
to be tracked as the ball.  Four families of `phybench.violations.KINDS`, several strengths each,
kept here so that module stays small.  Each changes the first dynamic disc wholly in view at the
onset (`planting.pick`) from the onset frame on; frames before it are the ground truth's:

- ``recolour-N``: its colour's hue turned by N degrees (HSV, saturation and value kept): for the
  red ball 20 an orange-red (a small but visible change), 40 orange, 60 yellow, 120 green,
  240 blue, 300 magenta.
- ``resize-0.7`` / ``resize-1.4``: a ball of 0.7 or 1.4 times its radius, same colour, same path.
- ``swap-square`` / ``swap-triangle`` / ``swap-pentagon``: a square, an equilateral triangle or a
  regular pentagon of the ball's area, same colour, same path (the renderer draws convex polygons).
- ``identity-swap``: the two moving bodies of a collision exchange colours at their contact (the
  frame after their closest approach): each colour's track jumps to the other body.
"""
from __future__ import annotations

import colorsys
import dataclasses
from typing import Callable

import numpy as np

from .planting import Planted, pick, with_body
from .scoring.physics.identity import HUES, SHAPES, SIZES
from .tasks.spec import TaskSpec
from .world.scene import Disc, Polygon, Rect, Scene

POLYGONS = {"triangle": 3, "pentagon": 5}  # regular polygons of the disc's area


def turned_hue(colour: tuple[int, int, int], degrees: float) -> tuple[int, int, int]:
    """`colour` with its HSV hue turned by `degrees` (saturation and value kept)."""
    h, s, v = colorsys.rgb_to_hsv(*(c / 255.0 for c in colour))
    r, g, b = colorsys.hsv_to_rgb((h + degrees / 360.0) % 1.0, s, v)
    return int(round(255 * r)), int(round(255 * g)), int(round(255 * b))


def _disc(scene: Scene, k: int) -> tuple[int | None, Disc | None]:
    b = pick(scene, k, (Disc,))
    if b is None:
        return None, None
    shape = scene.bodies[b].shape
    assert isinstance(shape, Disc)  # `pick` chose among discs
    return b, shape


def _recolour(degrees: float) -> Callable[[Scene, TaskSpec, int], Planted]:
    def kind(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        b, _ = _disc(scene, k)
        if b is None:
            return Planted(None, note="no dynamic disc in view at the onset")
        body = scene.bodies[b]
        return Planted(with_body(scene, b, dataclasses.replace(body, colour=turned_hue(body.colour, degrees))), b)
    return kind


def _resize(factor: float) -> Callable[[Scene, TaskSpec, int], Planted]:
    def kind(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        b, disc = _disc(scene, k)
        if b is None or disc is None:
            return Planted(None, note="no dynamic disc in view at the onset")
        return Planted(with_body(scene, b, dataclasses.replace(scene.bodies[b], shape=Disc(disc.radius * factor))), b)
    return kind


def regular_polygon(n: int, area: float) -> Polygon:
    """A regular n-gon of `area` (world units^2), a vertex up, counter-clockwise."""
    rc = float(np.sqrt(2 * area / (n * np.sin(2 * np.pi / n))))  # circumradius
    angles = np.pi / 2 + 2 * np.pi * np.arange(n) / n
    return Polygon(tuple((float(rc * np.cos(a)), float(rc * np.sin(a))) for a in angles))


def _shape(name: str) -> Callable[[Scene, TaskSpec, int], Planted]:
    def kind(scene: Scene, spec: TaskSpec, k: int) -> Planted:
        b, disc = _disc(scene, k)
        if b is None or disc is None:
            return Planted(None, note="no dynamic disc in view at the onset")
        area = float(np.pi * disc.radius ** 2)
        new = Rect(np.sqrt(area), np.sqrt(area)) if name == "square" else regular_polygon(POLYGONS[name], area)
        return Planted(with_body(scene, b, dataclasses.replace(scene.bodies[b], shape=new)), b)
    return kind


def _identity_swap(scene: Scene, spec: TaskSpec, k: int) -> Planted:
    """The two moving bodies exchange colours from the frame after their closest approach on."""
    moving = np.flatnonzero([b.dynamic for b in scene.bodies])
    if moving.size != 2:
        return Planted(None, note="not two moving bodies: no identity to swap")
    a, b = int(moving[0]), int(moving[1])
    ca, cb = scene.bodies[a].colour, scene.bodies[b].colour
    if tuple(ca) == tuple(cb):
        return Planted(None, note="the two bodies share a colour")
    gap = np.linalg.norm(scene.positions[:, a] - scene.positions[:, b], axis=-1) - scene.radii[[a, b]].sum()
    onset = int(np.argmin(gap)) + 1
    if onset <= spec.condition_frames or onset >= scene.num_frames - 3:
        return Planted(None, note="the contact falls in the condition frames or too near the end")
    swapped = with_body(with_body(scene, a, dataclasses.replace(scene.bodies[a], colour=cb)), b,
                        dataclasses.replace(scene.bodies[b], colour=ca))
    return Planted(swapped, a, onset=onset)


IDENTITY_KINDS: dict[str, Callable[[Scene, TaskSpec, int], Planted]] = {
    **{f"recolour-{d}": _recolour(d) for d in HUES},
    **{f"resize-{f}": _resize(f) for f in SIZES},
    **{f"swap-{s}": _shape(s) for s in SHAPES},
    "identity-swap": _identity_swap,
}
