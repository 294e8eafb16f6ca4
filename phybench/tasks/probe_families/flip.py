"""Flip memorisation probe (paper section 5.2, Fig. 7): does a slow ball turn back?

Uniform motion of one red ball.  Training balls are fast (v in [2.5, 4.0]); Set-1 moves
left to right only, Set-2 is Set-1 plus the horizontally flipped copy of every video
(sample 2k is Set-1's sample k, sample 2k + 1 its mirror image: x -> L - x, v -> -v).
Evaluation balls are slow (v in [1.0, 2.5]) and move left to right.  A model that
retrieves the closest training case rather than applying inertia may reverse the slow
ball after the condition frames when it has seen reversed motion (Set-2).  The analysis
(`phybench.probes.flip`, probe ``flip``) reads the generated velocity by tracking and
reports the share of videos that reverse direction.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...world.scene import RED, Body, Disc, Scene
from ..family import (IMAGE_METRICS, Placement, TaskFamily, frames_possible, one_body_ballistic, register_family,
                     register_task)
from ..spec import CategoricalDof, Dof, SimulatorSettings, SplitDecl, TaskSpec

TRAIN_VELOCITY = (2.5, 4.0)  # world units / s
EVAL_VELOCITY = (1.0, 2.5)  # world units / s
RADIUS = (0.7, 1.4)  # world units
MARGIN = 0.1  # world units between the ball and the border while in view (as the priority probe)
SET_SIZE = 30_000  # Set-1 videos; Set-2 holds these and their mirror images
EVAL_SIZE = 1000


@register_family
class FlipFamily(TaskFamily):
    """One red ball; Set-2's training videos include mirrored (right-to-left) copies."""

    name = "probe-flip"
    probe = "flip"
    metrics = ("velocity_error", "velocity_error_penalised", "position_error", "trajectory_error", "colour_kept") + IMAGE_METRICS
    plot_dof = "velocity"
    object_reader = "centroids"
    stores_bodies = True
    # where the ball starts, as fractions of the free room (drawn with the parameters, so that
    # Set-2's mirrored copy of a Set-1 video is exactly its mirror image)
    extra_columns = ("place_x", "place_y")
    board_layout = "splits"
    frames_in_view_doc = ("at least this many frames have the ball fully in view: min(24, the most its size and "
                          "speed allow)")

    def draw(self, spec: TaskSpec, decl: Any, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
        if decl.draw != "flip":
            return super().draw(spec, decl, index, u)
        if decl.option("mirrored"):
            from ..sampling import sample_uniforms  # Set-2 sample 2k + 1 mirrors Set-1 sample k

            source = decl.option("source")
            level, params = self.draw(spec, spec.split(source), index // 2, sample_uniforms(spec, source, index // 2))
            if index % 2:
                params["direction"] = "left"
            return ("mirrored" if index % 2 else "original"), params
        lo, hi = decl.option("velocity")
        return "right", {"radius": RADIUS[0] + (RADIUS[1] - RADIUS[0]) * float(u[1]),
                         "velocity": lo + (hi - lo) * float(u[2]), "direction": "right",
                         "place_x": float(u[3]), "place_y": float(u[4])}

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        r, v, L, dt = params["radius"], params["velocity"], spec.world_size, spec.frame_interval
        reach = r + MARGIN
        n = min(spec.min_frames_in_view, frames_possible(v * dt, L - 2 * reach, spec.frames))
        x_hi = max(reach, L - reach - v * dt * (n - 1))
        # placement fractions are drawn with the parameters, so a mirrored copy is exact
        x0 = reach + params["place_x"] * (x_hi - reach)
        y0 = reach + params["place_y"] * (L - 2 * reach)
        if params["direction"] == "left":  # the mirror image of the right-moving scene
            x0, v = L - x0, -v
        body = Body(Disc(r), RED, name="red ball", attrs=(("direction", params["direction"]),))
        initial = Scene((body,), np.array([[[x0, y0, 0.0]]]), L, np.array([[[v, 0.0]]]))
        return Placement(initial, n, extra={"place_x": params["place_x"], "place_y": params["place_y"]})

    def closed_form(self, spec: TaskSpec, initial: Scene) -> tuple[np.ndarray, np.ndarray]:
        return one_body_ballistic(spec, initial, 0.0)


FLIP = register_task(TaskSpec(
    name="flip-memorisation",
    version=1,
    scenario="probe-flip",
    description=("Flip memorisation (Fig. 7): fast red balls (v in [2.5, 4]) for training, left to right only "
                 "(train-set1) or with mirrored copies (train-set2); slow balls (v in [1, 2.5]) moving right for "
                 "evaluation. Does the generated ball turn back?"),
    dofs=(Dof("radius", "world units", RADIUS, (), "radius of the ball"),
          Dof("velocity", "world units / s", (1.0, 4.0), (), "initial speed (its sign is `direction`)")),
    ood_levels=(),
    training_sets=(),
    id_eval_size=0,
    simulator=SimulatorSettings(steps_per_frame=1, time_scale=1000.0, length_scale=1.0, gravity=0.0),
    base_seed=2024_11_15,
    declared_splits=(
        SplitDecl("train-set1", "train", SET_SIZE, "flip", (("velocity", TRAIN_VELOCITY),),
                  "Set-1: fast balls moving left to right"),
        SplitDecl("train-set2", "train", 2 * SET_SIZE, "flip", (("mirrored", True), ("source", "train-set1")),
                  "Set-2: Set-1 and the mirror image of each of its videos, interleaved"),
        SplitDecl("eval", "eval", EVAL_SIZE, "flip", (("velocity", EVAL_VELOCITY),),
                  "slow balls moving left to right"),
    ),
    categorical=(CategoricalDof("direction", ("right", "left")),),
    notes=("The paper gives no training-set size for this probe; 30,000 (Set-1) and 60,000 (Set-2) are ours.",),
))
