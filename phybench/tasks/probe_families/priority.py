"""Attribute priority probe (paper section 5.3, Fig. 8, 9 and 14): which attribute a model keeps.

Uniform motion of one body.  Four attributes, each with two disjoint value sets:

    colour    red | blue
    shape     disc | square (half-side = r)   (the ring variant: disc | ring)
    size      small r in [0.7, 0.98] | large r in [1.12, 1.4]      world units
    velocity  slow v in [1.0, 2.25] | fast v in [2.75, 4.0]         world units / s

Each task compares one pair of attributes.  Of the pair's four value combinations two
form the training split (``train``) and the other two the ``conflict-eval`` split: a
conflict video's body matches one training combination in the first attribute and the
other in the second, so a model that retrieves the closest training case must give one
attribute up.  The analysis (`phybench.probes.priority`) reads every generated body back (colour by
hue, shape by a measured fill descriptor, size by area, velocity by tracking) and says
which attribute was kept.  Attributes outside the pair are fixed (red, disc) or drawn
over their whole range (r in [0.7, 1.4], v in [1, 4]).

Where we differ from the reference code (REFERENCE.md section 1: red r in [0.7, 1.05],
blue r in [1.05, 1.4]; v split at 2.5): the value sets leave a gap (0.98-1.12 and
2.25-2.75) so that a body read back from pixels falls unambiguously in one set; the
ground-truth test (every ground-truth video "kept both") depends on it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...world.scene import BLUE, RED, Body, Disc, Rect, Ring, Scene
from ..family import (IMAGE_METRICS, Placement, TaskFamily, frames_possible, one_body_ballistic, register_family,
                     register_task)
from ..spec import CategoricalDof, Dof, SimulatorSettings, SplitDecl, TaskSpec

# The attributes' value sets: name -> (value name, range or None for a categorical value).
SIZE_SETS = {"small": (0.7, 0.98), "large": (1.12, 1.4)}  # world units (radius / half-side)
VELOCITY_SETS = {"slow": (1.0, 2.25), "fast": (2.75, 4.0)}  # world units / s
SIZE_THRESHOLD = 1.05  # world units: the midpoint of the gap, used by the reader
VELOCITY_THRESHOLD = 2.5  # world units / s
FULL_RADIUS = (0.7, 1.4)
FULL_VELOCITY = (1.0, 4.0)
COLOURS = {"red": RED, "blue": BLUE}
MARGIN = 0.1  # world units between a body and the image border (1.3 px at 128 px) while in view
RING_INNER = 0.5  # inner radius / outer radius of a ring
ATTRIBUTES = ("colour", "size", "velocity", "shape")  # the paper's order: colour > size > velocity > shape

TRAIN_SIZE = 40_000  # states only; the paper does not give the probe training size
CONFLICT_SIZE = 1400  # the paper's 1,400 test cases


def attribute_of(value: str) -> str:
    """Which attribute a value name belongs to ("red" -> "colour", "fast" -> "velocity")."""
    if value in COLOURS:
        return "colour"
    if value in SIZE_SETS:
        return "size"
    if value in VELOCITY_SETS:
        return "velocity"
    if value in ("disc", "square", "ring"):
        return "shape"
    raise KeyError(f"unknown attribute value {value!r}")


def body_shape(shape: str, r: float) -> Disc | Rect | Ring:
    """The shape of a body of size r (a disc's radius, a square's half-side, a ring's outer radius)."""
    if shape == "disc":
        return Disc(r)
    if shape == "square":
        return Rect(2 * r, 2 * r)
    if shape == "ring":
        return Ring(r, RING_INNER * r)
    raise KeyError(f"unknown shape {shape!r}")


@register_family
class PriorityFamily(TaskFamily):
    """One body in uniform motion whose attributes put two training cases in conflict."""

    name = "probe-priority"
    probe = "priority"  # its analysis: `phybench.probes.priority`
    metrics = ("velocity_error", "velocity_error_penalised", "position_error", "trajectory_error", "colour_kept") + IMAGE_METRICS
    plot_dof = "velocity"
    object_reader = "centroids"  # squares and rings: the coverage centroid
    stores_bodies = True
    board_layout = "splits"
    lite_size = 200
    frames_in_view_doc = ("at least this many frames have the body fully in view: min(24, the most its size and "
                          "speed allow)")

    def draw(self, spec: TaskSpec, decl: Any, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
        if decl.draw != "combinations":
            return super().draw(spec, decl, index, u)
        combos = spec.param(decl.option("combinations"))
        combo = combos[index % len(combos)]
        values = {attribute_of(v): v for v in combo}
        params: dict[str, Any] = {
            "radius": _uniform(SIZE_SETS[values["size"]] if "size" in values else FULL_RADIUS, u[1]),
            "velocity": _uniform(VELOCITY_SETS[values["velocity"]] if "velocity" in values else FULL_VELOCITY,
                                 u[2]),
            "colour": values.get("colour", "red"),
            "shape": values.get("shape", "disc"),
        }
        return "+".join(combo), params

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        v, L, dt = params["velocity"], spec.world_size, spec.frame_interval
        # every shape here is axis-aligned and spans [-r, r] around its centre; `MARGIN`
        # keeps it off the border pixels, so that the reader can tell "in view" from "cut"
        r = params["radius"] + MARGIN
        n = min(spec.min_frames_in_view, frames_possible(v * dt, L - 2 * r, spec.frames))
        x_hi = max(r, L - r - v * dt * (n - 1))
        x0 = r + u[0] * (x_hi - r)
        y0 = r + u[1] * (L - 2 * r)
        r = params["radius"]
        shape, colour = params["shape"], params["colour"]
        body = Body(body_shape(shape, r), COLOURS[colour], name=f"{colour} {shape}",
                    attrs=(("colour", colour), ("shape", shape)))
        initial = Scene((body,), np.array([[[x0, y0, 0.0]]]), L, np.array([[[v, 0.0]]]))
        return Placement(initial, n)

    def closed_form(self, spec: TaskSpec, initial: Scene) -> tuple[np.ndarray, np.ndarray]:
        return one_body_ballistic(spec, initial, 0.0)

    def describe(self, spec: TaskSpec) -> list[str]:
        pair = spec.param("pair")
        return [f"pair: {pair[0]} vs {pair[1]}",
                "training combinations: " + ", ".join("+".join(c) for c in spec.param("train")),
                "conflict combinations: " + ", ".join("+".join(c) for c in spec.param("conflict"))]


def _uniform(interval: tuple[float, float], u: float) -> float:
    lo, hi = interval
    return float(lo + (hi - lo) * u)


def _spec(name: str, train: tuple[tuple[str, str], ...], figure: str, ranked: bool = True) -> TaskSpec:
    pair = tuple(attribute_of(v) for v in train[0])
    conflict = ((train[0][0], train[1][1]), (train[1][0], train[0][1]))
    shapes = tuple(sorted({c[pair.index("shape")] for c in train})) if "shape" in pair else ("disc",)
    return TaskSpec(
        name=name,
        version=1,
        scenario="probe-priority",
        description=(f"Attribute priority, {pair[0]} vs {pair[1]} ({figure}): trained on "
                     f"{' and '.join(' '.join(c) for c in train)}; evaluated on "
                     f"{' and '.join(' '.join(c) for c in conflict)}."),
        dofs=(Dof("radius", "world units", FULL_RADIUS, (), "radius / half-side / outer radius of the body"),
              Dof("velocity", "world units / s", FULL_VELOCITY, (), "initial horizontal speed")),
        ood_levels=(),
        training_sets=(),
        id_eval_size=0,
        simulator=SimulatorSettings(steps_per_frame=1, time_scale=1000.0, length_scale=1.0, gravity=0.0),
        base_seed=2024_11_14,
        declared_splits=(
            SplitDecl("train", "train", TRAIN_SIZE, "combinations", (("combinations", "train"),),
                      "the two training combinations, alternating"),
            SplitDecl("conflict-eval", "eval", CONFLICT_SIZE, "combinations", (("combinations", "conflict"),),
                      "the two held-out combinations, alternating"),
        ),
        categorical=(CategoricalDof("colour", ("red", "blue")), CategoricalDof("shape", shapes)),
        family_params=(("pair", pair), ("train", train), ("conflict", conflict), ("ranked", ranked)),
        notes=("Value sets leave a gap (r 0.98-1.12, v 2.25-2.75) where the reference code splits at one "
               "value, so that a body read back from pixels falls in one set unambiguously.",),
    )


# The paper's pairs; train combinations as in Fig. 8, 9, 14 where the paper names them.
# The ring variant is reported beside the ranking, not in it (the paper's Fig. 14 is a test
# of the pixel-distance explanation, not a seventh pair).
PRIORITY_TASKS = tuple(register_task(_spec(name, train, fig, name != "priority-colour-ring"))
                       for name, train, fig in (
    ("priority-colour-shape", (("red", "disc"), ("blue", "square")), "Fig. 8 (1)"),
    ("priority-size-shape", (("small", "disc"), ("large", "square")), "Fig. 8 (2)"),
    ("priority-velocity-shape", (("slow", "disc"), ("fast", "square")), "Fig. 8 (3)"),
    ("priority-velocity-size", (("slow", "small"), ("fast", "large")), "Fig. 9 (1)"),
    ("priority-colour-size", (("red", "small"), ("blue", "large")), "Fig. 9 (2)"),
    ("priority-colour-velocity", (("red", "slow"), ("blue", "fast")), "Fig. 9 (3)"),
    ("priority-colour-ring", (("red", "ring"), ("blue", "disc")), "Fig. 14"),
))
