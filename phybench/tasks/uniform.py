"""Uniform linear motion (law of inertia): one red ball, constant velocity, no gravity."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..world.scene import RED, Scene
from .family import (PAPER_METRICS, Placement, TaskFamily, frames_possible, one_body_ballistic, register_family,
                     register_task)
from .fundamental import (
    ONE_BALL_GRIDS,
    ONE_BALL_LEVELS,
    PAPER_VS_CODE,
    PHYWORLD_ONE_BALL_ID_RANGES,
    ball_dofs,
    ball_scene,
)
from .spec import OODLevel, SimulatorSettings, TaskSpec, TrainingSet


@register_family
class UniformFamily(TaskFamily):
    """One ball moving to the right at constant speed.

    Placement: the start x is drawn so the ball stays fully in view for
    min(24, the most frames its size and speed allow) frames; y anywhere in view.
    """

    name = "uniform"
    quickstart_order = 0
    plot_dof = "velocity"
    metrics = TaskFamily.metrics + ("law_error",) + PAPER_METRICS
    paper_measure = "velocity"  # the authors' uniform 'vel_error': |mean v_x - v0|
    paper_quote = "Figure 3, uniform motion"
    law_fit = "free_flight"  # phybench.scoring.learned.law: velocity and acceleration (0 here) fitted
    law_headline = "velocity_x"
    identity_check = True  # another colour, size or shape in the ball's place is not the ball (parabola inherits)
    phyworld_id_ranges = PHYWORLD_ONE_BALL_ID_RANGES
    frames_in_view_doc = ("at least this many frames have the ball fully in view: min(24, the most its size and "
                          "speed allow), the placement's guarantee (the actual count may be higher)")

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        r, v, L, dt = params["radius"], params["velocity"], spec.world_size, spec.frame_interval
        n_max = frames_possible(v * dt, L - 2 * r, spec.frames)
        n = min(spec.min_frames_in_view, n_max)
        x_hi = max(r, L - r - v * dt * (n - 1))
        x0 = r + u[0] * (x_hi - r)
        y0 = r + u[1] * (L - 2 * r)
        initial = ball_scene([[x0, y0]], [[v, 0.0]], [r], [RED], ("red ball",))
        return Placement(initial, n)

    def closed_form(self, spec: TaskSpec, initial: Scene) -> tuple[np.ndarray, np.ndarray]:
        return one_body_ballistic(spec, initial, spec.simulator.gravity)


register_task(
    TaskSpec(
        name="uniform",
        version=1,
        scenario="uniform",
        description=(
            "Uniform linear motion (law of inertia): one red ball moves to the right at "
            "constant speed, no gravity, no walls."
        ),
        dofs=ball_dofs(),
        ood_levels=tuple(
            OODLevel(name, dofs, 800, f"OOD {' and '.join(dofs)}") for name, dofs in ONE_BALL_LEVELS
        ),
        training_sets=tuple(TrainingSet(n, g) for n, g in ONE_BALL_GRIDS),
        id_eval_size=1050,
        simulator=SimulatorSettings(steps_per_frame=1, time_scale=1000.0, length_scale=1.0, gravity=0.0),
        base_seed=2024_11_04,
        notes=PAPER_VS_CODE,
    )
)
