"""Parabolic motion (Newton's second law): one red ball launched horizontally, falling."""
from __future__ import annotations

from typing import Any

import numpy as np

from .family import Placement, register_family, register_task
from .fundamental import (
    ONE_BALL_GRIDS,
    ONE_BALL_LEVELS,
    PAPER_VS_CODE,
    ball_dofs,
    ball_scene,
)
from .spec import OODLevel, SimulatorSettings, TaskSpec, TrainingSet
from .uniform import UniformFamily
from ..world.scene import RED

PARABOLA_GRAVITY = 2.5  # world units / s^2, as the reference code


@register_family
class ParabolaFamily(UniformFamily):
    """One ball launched to the right under gravity (closed form: `UniformFamily`'s, with g).

    Placement: the largest n <= 24 frames for which both the horizontal run and the fall
    stay in view; start x and y drawn so the ball is fully in view for those frames.
    """

    name = "parabola"
    frames_in_view_doc = ("at least this many frames have the ball fully in view: min(24, the most its launch "
                          "allows), the placement's guarantee (the actual count may be higher)")
    quickstart_order = 2
    law_headline = "gravity"  # the free-flight fit's constant acceleration (UniformFamily's law_fit)
    # the authors' parabola table is a position error ('abs_x_err_avg'): it, not their velocity
    # convention (0.0100), gives the paper's parabola floor 0.0210 (docs/scoring.md)
    paper_measure = "position"
    paper_quote = "Figure 3, parabola"

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        r, v, L, dt = params["radius"], params["velocity"], spec.world_size, spec.frame_interval
        g = spec.simulator.gravity
        room = L - 2 * r
        n = spec.frames
        # Largest n with both the horizontal run and the fall inside the room.
        while n > 1 and (v * dt * (n - 1) > room or 0.5 * g * (dt * (n - 1)) ** 2 > room):
            n -= 1
        n = min(spec.min_frames_in_view, n)
        t_end = dt * (n - 1)
        x_hi = max(r, L - r - v * t_end)
        y_lo = min(L - r, r + 0.5 * g * t_end * t_end)
        x0 = r + u[0] * (x_hi - r)
        y0 = y_lo + u[1] * (L - r - y_lo)
        initial = ball_scene([[x0, y0]], [[v, 0.0]], [r], [RED], ("red ball",))
        return Placement(initial, n)


register_task(
    TaskSpec(
        name="parabola",
        version=1,
        scenario="parabola",
        description=(
            "Parabolic motion (Newton's second law): one red ball is launched horizontally "
            f"to the right and falls under gravity {PARABOLA_GRAVITY} world units/s^2."
        ),
        dofs=ball_dofs(),
        ood_levels=tuple(
            OODLevel(name, dofs, 834, f"OOD {' and '.join(dofs)}") for name, dofs in ONE_BALL_LEVELS
        ),
        training_sets=tuple(TrainingSet(n, g) for n, g in ONE_BALL_GRIDS),
        id_eval_size=1100,
        simulator=SimulatorSettings(
            steps_per_frame=1, time_scale=1000.0, length_scale=1.0, gravity=PARABOLA_GRAVITY
        ),
        base_seed=2024_11_04,
        notes=PAPER_VS_CODE,
    )
)
