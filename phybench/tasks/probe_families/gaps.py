"""Interpolation gaps probe (paper section 5.1, Fig. 5): does a ball in an unseen speed range snap to a seen one?

Uniform motion of one red ball.  Five training sets of equal size (the paper's 200K),
each covering v in [1, 4] minus a middle gap: the paper gives set (1) in words,
[1.0, 1.25] U [3.75, 4.0]; the other four are ours, built as its text describes
(a smaller gap; a sub-range reintroduced "without increasing data amount").  The
evaluation split covers the whole [1, 4], so every set is evaluated on the same videos:
the analysis (`phybench.probes.gaps`, probe ``gaps``) is told which set the model was
trained on and reports, for the videos whose speed lies in that set's gap, the share
whose generated speed moved toward a training range, and the errors in and out of it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...world.scene import RED, Body, Scene
from ..family import (Placement, TaskFamily, frames_possible, one_body_ballistic, register_family,
                     register_task)
from ..sampling import uniform_in
from ..spec import Dof, SimulatorSettings, SplitDecl, TaskSpec

RADIUS = (0.7, 1.4)  # world units
VELOCITY = (1.0, 4.0)  # world units / s
MARGIN = 0.1  # world units between the ball and the border while in view
TRAIN_SIZE = 200_000  # the paper's size, equal for every set (states only)
EVAL_SIZE = 1000
# training velocity ranges of each set, world units / s
GAP_SETS = (
    ("train-gap1", ((1.0, 1.25), (3.75, 4.0)), "the paper's set (1): gap [1.25, 3.75]"),
    ("train-gap2", ((1.0, 1.75), (3.25, 4.0)), "gap [1.75, 3.25]"),
    ("train-gap3", ((1.0, 2.25), (2.75, 4.0)), "a small gap [2.25, 2.75]"),
    ("train-gap4", ((1.0, 1.25), (2.375, 2.625), (3.75, 4.0)), "set (1)'s gap with [2.375, 2.625] reintroduced"),
    ("train-gap5", ((1.0, 1.25), (2.0, 2.25), (2.75, 3.0), (3.75, 4.0)),
     "set (1)'s gap with [2.0, 2.25] and [2.75, 3.0] reintroduced"),
)


@register_family
class GapsFamily(TaskFamily):
    """One red ball at constant speed; training sets miss a middle range of speeds."""

    name = "probe-gaps"
    probe = "gaps"
    plot_dof = "velocity"
    stores_bodies = False
    board_layout = "splits"
    frames_in_view_doc = ("at least this many frames have the ball fully in view: min(24, the most its size and "
                          "speed allow)")

    def draw(self, spec: TaskSpec, decl: Any, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
        if decl.draw != "velocity-ranges":
            return super().draw(spec, decl, index, u)
        ranges = tuple(tuple(r) for r in decl.option("ranges"))
        return "id", {"radius": RADIUS[0] + (RADIUS[1] - RADIUS[0]) * float(u[1]),
                      "velocity": uniform_in(ranges, float(u[2]))}

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        r, v, L, dt = params["radius"], params["velocity"], spec.world_size, spec.frame_interval
        reach = r + MARGIN
        n = min(spec.min_frames_in_view, frames_possible(v * dt, L - 2 * reach, spec.frames))
        x_hi = max(reach, L - reach - v * dt * (n - 1))
        x0 = reach + u[0] * (x_hi - reach)
        y0 = reach + u[1] * (L - 2 * reach)
        scene = Scene.discs([[x0, y0]], [[v, 0.0]], [r], [RED], L)
        initial = Scene((Body(scene.bodies[0].shape, RED, name="red ball"),), scene.poses, L, scene.velocities)
        return Placement(initial, n)

    def closed_form(self, spec: TaskSpec, initial: Scene) -> tuple[np.ndarray, np.ndarray]:
        return one_body_ballistic(spec, initial, 0.0)

    def describe(self, spec: TaskSpec) -> list[str]:
        return [f"{name}: v in {' U '.join(f'[{a:g}, {b:g}]' for a, b in ranges)}  ({text})"
                for name, ranges, text in GAP_SETS]


GAPS = register_task(TaskSpec(
    name="interpolation-gaps",
    version=1,
    scenario="probe-gaps",
    description=("Interpolation gaps (Fig. 5): a red ball at constant speed; five training sets of equal size miss "
                 "a middle range of speeds; one evaluation split over the whole [1, 4]."),
    dofs=(Dof("radius", "world units", RADIUS, (), "radius of the ball"),
          Dof("velocity", "world units / s", VELOCITY, (), "initial horizontal speed")),
    ood_levels=(),
    training_sets=(),
    id_eval_size=0,
    simulator=SimulatorSettings(steps_per_frame=1, time_scale=1000.0, length_scale=1.0, gravity=0.0),
    base_seed=2024_11_16,
    declared_splits=tuple(SplitDecl(name, "train", TRAIN_SIZE, "velocity-ranges", (("ranges", ranges),), text)
                          for name, ranges, text in GAP_SETS) + (
        SplitDecl("eval", "eval", EVAL_SIZE, "velocity-ranges", (("ranges", (VELOCITY,)),),
                  "v uniform over [1, 4]: seen and unseen speeds of every set"),
    ),
    family_params=(("gap_sets", tuple((name, ranges) for name, ranges, _ in GAP_SETS)),),
    notes=("The paper states the ranges of set (1) only; sets (2)-(5) are ours, as its text describes them.",),
))
