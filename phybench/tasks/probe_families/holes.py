"""Collision holes probe (paper section 5.1, Fig. 6): is an unseen (v1, v2) inside the training hull easier?

Elastic head-on collisions of two balls (the `collision` family's scenes, placement and
law).  Training sets of equal size (200K, states only) draw (v1, v2) uniformly over a
region of the velocity plane with square holes (0.5 x 0.5 world units / s) left out;
r1, r2 uniform over [0.7, 1.5].  The paper gives the layout only as a figure (holes
"within the convex hull of the training set" and in its "exterior space"), so ours is:

    h1 [1.5, 2.0] x [2.5, 3.0]   h2 [2.5, 3.0] x [1.5, 2.0]   (interior holes)
    h3 [3.5, 4.0] x [2.0, 2.5]   h4 [2.0, 2.5] x [3.5, 4.0]   (edge holes)
    id [2.5, 3.0] x [2.5, 3.0]   (a trained square: the ID control)

    train-set1: (v1, v2) in [1, 3.5]^2 minus h1, h2: h1 and h2 are inside the convex
                hull, h3 and h4 outside it (beyond the edge v = 3.5);
    train-set2: (v1, v2) in [1, 4]^2 minus h1..h4: all four holes are inside the hull
                (h3 and h4 are notches in its edge).

The same holes h3, h4 are outside the hull of set 1 and inside that of set 2: the
contrast the paper draws, with the velocities held fixed.  One evaluation split
(``eval``) draws its samples from the holes and the control square in round-robin order
(level = the square's name), uniformly inside each; every set is evaluated on it.  The
analysis (`phybench.probes.holes`, probe ``holes``) is told the training set, parses
both balls and reports the post-collision velocity error per square and per hull class.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..collision import CollisionFamily
from ..family import PAPER_METRICS, register_family, register_task
from ..fundamental import ID_RADIUS
from ..spec import Dof, SimulatorSettings, SplitDecl, TaskSpec

# (name, (v1_lo, v1_hi, v2_lo, v2_hi)), world units / s
SQUARES = (
    ("h1", (1.5, 2.0, 2.5, 3.0)),
    ("h2", (2.5, 3.0, 1.5, 2.0)),
    ("h3", (3.5, 4.0, 2.0, 2.5)),
    ("h4", (2.0, 2.5, 3.5, 4.0)),
    ("id", (2.5, 3.0, 2.5, 3.0)),
)
# (split, training rectangle, holes removed from it, text)
HOLE_SETS = (
    ("train-set1", (1.0, 3.5, 1.0, 3.5), ("h1", "h2"),
     "(v1, v2) in [1, 3.5]^2 minus h1, h2: h1, h2 inside the convex hull, h3, h4 outside"),
    ("train-set2", (1.0, 4.0, 1.0, 4.0), ("h1", "h2", "h3", "h4"),
     "(v1, v2) in [1, 4]^2 minus h1-h4: every hole inside the convex hull"),
)
TRAIN_SIZE = 200_000  # equal for every set (the gaps probe's size; the paper gives none here)
EVAL_SIZE = 1000  # 200 per square
_TRIES = 20  # rejection draws of (v1, v2) per sample (acceptance >= 0.9: failure below 1e-20)


def _inside(box: tuple[float, float, float, float], v1: float, v2: float) -> bool:
    return box[0] <= v1 <= box[1] and box[2] <= v2 <= box[3]


def hull_class(hole_set: tuple[tuple[float, ...], tuple[str, ...]], square: str) -> str:
    """"trained", "inside-hull" or "outside-hull": where a square lies for one training set.

    The training region is a rectangle with holes that never touch its corners, so its
    convex hull is the rectangle (checked at import for every set)."""
    rect, holes = hole_set
    box = dict(SQUARES)[square]
    if square in holes:
        return "inside-hull"
    if rect[0] <= box[0] and box[1] <= rect[1] and rect[2] <= box[2] and box[3] <= rect[3]:
        return "trained"
    return "outside-hull"


def _check_layout() -> None:
    squares = dict(SQUARES)
    for name, rect, holes, _ in HOLE_SETS:
        corners = [(rect[0], rect[2]), (rect[0], rect[3]), (rect[1], rect[2]), (rect[1], rect[3])]
        for h in holes:
            box = squares[h]
            if any(_inside(box, *c) for c in corners):
                raise AssertionError(f"{name}: hole {h} touches a corner of the training rectangle")
            if not (rect[0] <= box[0] and box[1] <= rect[1] and rect[2] <= box[2] and box[3] <= rect[3]):
                raise AssertionError(f"{name}: hole {h} is not inside the training rectangle")
        for s, box in SQUARES:  # a square is wholly trained, wholly a hole or wholly outside
            if s not in holes and hull_class((rect, holes), s) == "outside-hull":
                assert box[1] <= rect[0] or box[0] >= rect[1] or box[3] <= rect[2] or box[2] >= rect[3], (name, s)


_check_layout()


@register_family
class HolesFamily(CollisionFamily):
    """The collision family with (v1, v2) drawn from a region of the plane (training) or a square (eval)."""

    name = "probe-holes"
    probe = "holes"
    quickstart_order = None
    phyworld_id_ranges = None
    board_layout = "splits"
    # a probe, not one of the paper's Figure 3 tasks: no paper-convention columns
    metrics = tuple(m for m in CollisionFamily.metrics if m not in PAPER_METRICS)
    paper_measure = None
    paper_quote = None
    identity_check = False  # a probe: its results keep the parse they were made with

    def draw(self, spec: TaskSpec, decl: Any, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
        r = {"radius_1": ID_RADIUS[0] + (ID_RADIUS[1] - ID_RADIUS[0]) * float(u[1]),
             "radius_2": ID_RADIUS[0] + (ID_RADIUS[1] - ID_RADIUS[0]) * float(u[2])}
        if decl.draw == "hole-squares":
            names = decl.option("squares")
            name = names[index % len(names)]
            box = dict(SQUARES)[name]
            return name, {**r, "velocity_1": box[0] + (box[1] - box[0]) * float(u[3]),
                          "velocity_2": box[2] + (box[3] - box[2]) * float(u[4])}
        if decl.draw != "holed-region":
            return super().draw(spec, decl, index, u)
        rect = decl.option("rect")
        holes = [dict(SQUARES)[h] for h in decl.option("holes")]
        for k in range(_TRIES):
            v1 = rect[0] + (rect[1] - rect[0]) * float(u[5 + 2 * k])
            v2 = rect[2] + (rect[3] - rect[2]) * float(u[6 + 2 * k])
            if not any(box[0] < v1 < box[1] and box[2] < v2 < box[3] for box in holes):
                return "id", {**r, "velocity_1": v1, "velocity_2": v2}
        raise RuntimeError(f"{spec.name}/{decl.name}/{index}: {_TRIES} draws fell in holes")  # pragma: no cover

    def square_classes(self, spec: TaskSpec, train_split: str) -> dict[str, str]:
        """Each evaluation square's place for one training set (the analysis asks)."""
        sets = dict(spec.param("hole_sets"))
        return {name: hull_class(sets[train_split], name) for name, _ in spec.param("squares")}

    def describe(self, spec: TaskSpec) -> list[str]:
        lines = [f"{name}: v1 in [{b[0]:g}, {b[1]:g}], v2 in [{b[2]:g}, {b[3]:g}]" for name, b in SQUARES]
        for name, rect, holes, text in HOLE_SETS:
            lines.append(f"{name}: {text}; " + ", ".join(f"{s} {hull_class((rect, holes), s)}" for s, _ in SQUARES))
        return lines


HOLES = register_task(TaskSpec(
    name="collision-holes",
    version=1,
    scenario="probe-holes",
    description=("Collision holes (Fig. 6): elastic head-on collisions; two training sets of equal size leave "
                 "square regions of (v1, v2) out, inside and outside the training set's convex hull; one "
                 "evaluation split inside each hole and a trained control square."),
    dofs=(Dof("radius_1", "world units", ID_RADIUS, (), "radius of the red (left) ball"),
          Dof("radius_2", "world units", ID_RADIUS, (), "radius of the blue (right) ball"),
          Dof("velocity_1", "world units / s", (1.0, 4.0), (), "speed of the red ball, moving +x"),
          Dof("velocity_2", "world units / s", (1.0, 4.0), (), "speed of the blue ball, moving -x")),
    ood_levels=(),
    training_sets=(),
    id_eval_size=0,
    simulator=SimulatorSettings(steps_per_frame=10, time_scale=1000.0, length_scale=10.0, gravity=0.0),
    base_seed=2024_11_17,
    declared_splits=tuple(SplitDecl(name, "train", TRAIN_SIZE, "holed-region",
                                    (("rect", rect), ("holes", holes)), text)
                          for name, rect, holes, text in HOLE_SETS) + (
        SplitDecl("eval", "eval", EVAL_SIZE, "hole-squares", (("squares", tuple(s for s, _ in SQUARES)),),
                  "round-robin over h1-h4 and the trained control square id, uniform inside each"),
    ),
    family_params=(("squares", SQUARES),
                   ("hole_sets", tuple((name, (rect, holes)) for name, rect, holes, _ in HOLE_SETS))),
    notes=("The paper draws its holes in a figure without coordinates; the layout (0.5-wide squares, two sets "
           "that put the same edge holes outside and inside the hull) is ours.",
           "Training (v1, v2) are uniform over the region, not a grid, so that sets of different regions have "
           "equal sizes; radii are uniform over [0.7, 1.5] (the paper: a grid of radii per velocity point).",),
))
