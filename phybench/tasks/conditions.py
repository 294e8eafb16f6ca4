"""Conditions beyond frames, the pure part: a scene's numeric state and its plain-words description.

Most open video models are image- or video-to-video pipelines that also take a text
prompt, and the paper (appendix A.6.1, Fig. 13) compares conditioning on frames, frames
plus numbers and frames plus text.  This module derives both extra conditions from a
scene, for every family, with no branching on task names:

* `scene_state(spec, scene)` (of a stored row: `phybench.data.conditions.condition_state`):
  plain JSON data: the world (size, frame rate, gravity, walls, background) and, for every
  body, its shape and size, colour, whether it moves, and its position, velocity and angle
  **at the last condition frame** (where generation continues, so the numbers match the
  image an image-to-video model is given).
* `describe_state(state)`: one paragraph in plain words built from that state alone, the
  default wording of a family (`TaskFamily.condition_text`; a task's own words:
  `phybench.tasks.family.family_text`).

Neither ever states the future: the row's scene is cut to its condition frames before
anything is read (`Scene.frames`), and the family's wording sees the state only, never
the row (whose parameter columns, e.g. a collision's contact time, describe the future).
Both are versioned by `CONDITIONS_VERSION` and hashed on their own
(`phybench.data.conditions.conditions_hash`), so adding them changed no spec or split hash.

Reading rows and splits, and the files (``prompts.csv``, ``states.jsonl``,
``conditions.json``: `write_conditions`, `read_conditions`), are I/O over splits and live in
`phybench.data.conditions`; this module, on the task layer, reads no split.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..world.scene import BACKGROUND, COLOUR_NAMES, SHAPE_NOUNS, Disc, Jar, Polygon, Rect, Ring, Scene
from .spec import TaskSpec

# Bump when the state's fields or the default wording change: the hash changes with it.
CONDITIONS_VERSION = 1
CONDITIONS_KIND = "phybench-conditions"
PROMPTS_FILE = "prompts.csv"
STATES_FILE = "states.jsonl"
CONDITIONS_FILE = "conditions.json"

# Names for colours in text (the state keeps the exact RGB): the nearest of these.
_PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (255, 0, 0), "green": (0, 160, 0), "blue": (0, 0, 255), "yellow": (255, 220, 0),
    "orange": (255, 140, 0), "purple": (140, 0, 200), "black": (0, 0, 0), "white": (255, 255, 255),
    "grey": (185, 202, 210),
}



def colour_name(rgb: tuple[int, int, int] | list[int]) -> str:
    """The scene's own name of a colour (`COLOUR_NAMES`), else the nearest palette name (ties: palette order)."""
    key = tuple(int(v) for v in rgb)
    if key in COLOUR_NAMES:
        return COLOUR_NAMES[key]
    c = np.asarray(rgb, dtype=np.float64)
    return min(_PALETTE, key=lambda n: float(((np.asarray(_PALETTE[n], dtype=np.float64) - c) ** 2).sum()))


def _shape_dict(shape: Any) -> dict[str, Any]:
    if isinstance(shape, Disc):
        return {"shape": "disc", "radius": float(shape.radius)}
    if isinstance(shape, Rect):
        return {"shape": "rect", "width": float(shape.width), "height": float(shape.height)}
    if isinstance(shape, Ring):
        return {"shape": "ring", "outer_radius": float(shape.outer_radius), "inner_radius": float(shape.inner_radius)}
    if isinstance(shape, Jar):
        return {"shape": "jar", "width": float(shape.width), "height": float(shape.height),
                "thickness": float(shape.thickness)}
    if isinstance(shape, Polygon):
        return {"shape": "polygon", "vertices": [[float(x), float(y)] for x, y in shape.vertices]}
    raise TypeError(f"not a shape: {shape!r}")


def scene_state(spec: TaskSpec, scene: Scene) -> dict[str, Any]:
    """The state of `scene` at its last frame, with the world's settings (plain JSON data).

    `scene` must already be cut to the condition frames; `condition_state` does that.
    """
    t = scene.num_frames - 1
    vel = scene.velocities if scene.velocities is not None else np.zeros(scene.poses.shape[:2] + (2,))
    bodies = []
    for b, body in enumerate(scene.bodies):
        x, y, angle = (float(v) for v in scene.poses[t, b])
        bodies.append({
            **_shape_dict(body.shape),
            "colour": [int(c) for c in body.colour],
            "colour_name": colour_name(body.colour),
            "dynamic": bool(body.dynamic),
            "position": [x, y],
            "velocity": [float(vel[t, b, 0]), float(vel[t, b, 1])],
            "angle": angle,
        })
    return {
        "conditions_version": CONDITIONS_VERSION,
        "task": spec.name,
        "world_size": float(spec.world_size),
        "fps": 1.0 / float(spec.frame_interval),
        "frames": int(spec.frames),
        "condition_frames": int(spec.condition_frames),
        "state_frame": int(t),
        "state_time": float(t * spec.frame_interval),
        "gravity": float(spec.simulator.gravity),
        "walls": bool(spec.simulator.walls),
        "background": [int(c) for c in BACKGROUND],
        "bodies": bodies,
    }


# ------------------------------------------------------------------ wording
def _n(x: float) -> str:
    """A number for text: two decimals at most, no trailing zeros, never "-0"."""
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


_DIRECTIONS = ("right", "up and to the right", "up", "up and to the left",
               "left", "down and to the left", "down", "down and to the right")


def _motion(vx: float, vy: float) -> str:
    speed = math.hypot(vx, vy)
    if speed < 5e-3:
        return "is at rest"
    deg = math.degrees(math.atan2(vy, vx)) % 360.0
    word = _DIRECTIONS[int(((deg + 22.5) % 360.0) // 45.0)]
    text = f"moves {word} at {_n(speed)} units per second"
    if abs(vx) >= 5e-3 and abs(vy) >= 5e-3:
        text += (f" ({_n(abs(vx))} {'right' if vx > 0 else 'left'}, "
                 f"{_n(abs(vy))} {'up' if vy > 0 else 'down'})")
    return text


def _noun(body: dict[str, Any]) -> str:
    kind = body["shape"]
    if kind == "disc":
        return f"ball of radius {_n(body['radius'])}"
    if kind == "rect":
        if abs(body["width"] - body["height"]) < 1e-9:
            return f"square of side {_n(body['width'])}"
        return f"{SHAPE_NOUNS['rect']} {_n(body['width'])} wide and {_n(body['height'])} high"
    if kind == "ring":
        return f"ring of outer radius {_n(body['outer_radius'])} and inner radius {_n(body['inner_radius'])}"
    if kind == "jar":
        return (f"open-topped jar {_n(body['width'])} wide and {_n(body['height'])} high "
                f"with walls {_n(body['thickness'])} thick")
    v = np.asarray(body["vertices"], dtype=np.float64)
    w, h = np.ptp(v[:, 0]), np.ptp(v[:, 1])
    return f"{len(v)}-sided polygon {_n(w)} wide and {_n(h)} high"


def describe_body(body: dict[str, Any]) -> str:
    """One body of a state in words: 'a red ball of radius 1.2 at (3, 5) moves right at 2.5 units per second'."""
    x, y = body["position"]
    words = f"{body['colour_name']} {_noun(body)}"
    text = f"{'an' if words[0] in 'aeiou' else 'a'} {words} at ({_n(x)}, {_n(y)})"
    if abs(body["angle"]) >= math.radians(0.5):
        text += f", turned {_n(math.degrees(body['angle']))} degrees,"
    if not body["dynamic"]:
        return text + " is fixed in place"
    return f"{text} {_motion(*body['velocity'])}"


def describe_world(state: dict[str, Any]) -> str:
    """The world's settings in words (size, background, frame rate, gravity, walls)."""
    g = state["gravity"]
    gravity = "no gravity" if g == 0 else f"gravity pulls down at {_n(g)} units per second squared"
    walls = "a floor and two side walls just outside the view" if state["walls"] else "no walls"
    size = _n(state["world_size"])
    return (f"The view is a {size} by {size} units square (x to the right, y up, origin at the bottom left) "
            f"on a {colour_name(state['background'])} background, filmed at {_n(state['fps'])} frames per second; "
            f"{gravity}, {walls}.")


def describe_state(state: dict[str, Any]) -> str:
    """The default wording of a state: every body, then the world; never anything after its frame."""
    bodies = [describe_body(b) for b in state["bodies"]]
    if not bodies:
        sentence = "The view is empty."
    else:
        sentence = "; ".join(bodies) + "."
        sentence = sentence[0].upper() + sentence[1:]
    return f"{sentence} {describe_world(state)}"

