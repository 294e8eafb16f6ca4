"""Perfectly elastic head-on collision (conservation of momentum and energy): two balls."""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..world import laws
from ..world.scene import BLUE, RED, Scene
from .family import DEFAULT_METRICS, PAPER_METRICS, Placement, TaskFamily, register_family, register_task
from .fundamental import ID_RADIUS, ID_VELOCITY, OOD_RADIUS, OOD_VELOCITY, PAPER_VS_CODE, ball_scene
from .spec import Dof, OODLevel, SimulatorSettings, TaskSpec, TrainingSet

_TC_CANDIDATES = 16
_XC_CANDIDATES = 48


@register_family
class CollisionFamily(TaskFamily):
    """A red ball on the left moves right, a blue ball on the right moves left.

    Redraw rule: random draws whose closing speed v1 + v2 is below
    `spec.min_approach_speed` are redrawn (the balls would never meet).  Placement: see
    `place`.  Pairs of frames are scored from the contact instant on.
    """

    name = "collision"
    quickstart_order: ClassVar[int | None] = 1
    metrics: ClassVar[tuple[str, ...]] = DEFAULT_METRICS + ("momentum_error", "energy_error", "law_error", "contact_error") + PAPER_METRICS
    paper_measure: ClassVar[str | None] = "velocity_after_contact"  # the authors' 'post_vel_error'
    paper_quote: ClassVar[str | None] = "Figure 3, collision"
    law_fit = "collision_1d"  # phybench.scoring.learned.law: velocities before / after, restitution, contact time
    law_headline = "restitution"
    identity_check: ClassVar[bool] = True  # another colour, size or shape in a ball's place is not that ball
    plot_dof = "velocity_1"
    phyworld_id_ranges: ClassVar[dict[str, tuple[float, float]] | None] = {
        "radius_1": (0.5, 1.5),
        "radius_2": (0.5, 1.5),
        "velocity_1": (1.0, 4.0),
        "velocity_2": (1.0, 4.0),
    }
    frames_in_view_doc = "at least this many frames have both balls fully in view (here: exactly this many)"

    def accept(self, spec: TaskSpec, params: dict[str, Any]) -> bool:
        return params["velocity_1"] + params["velocity_2"] >= spec.min_approach_speed

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        """Choose the contact instant and point so both balls stay in view longest.

        Candidates (contact time tc, contact point xc) on a jittered grid; keep those with
        both balls fully in view during the condition frames (if any can), then those with
        at least min(24, best achievable) frames fully in view; draw one uniformly.
        """
        r1, r2 = params["radius_1"], params["radius_2"]
        v1, v2 = params["velocity_1"], params["velocity_2"]
        L, dt, T = spec.world_size, spec.frame_interval, spec.frames
        m1, m2 = laws.disc_mass(r1), laws.disc_mass(r2)
        w1, w2 = laws.elastic_1d(m1, m2, v1, -v2)
        t_lo = spec.earliest_contact
        t_hi = dt * (T - 1) - dt * spec.min_frames_after_contact  # latest allowed contact
        tcs = t_lo + (np.arange(_TC_CANDIDATES) + u[0]) * (t_hi - t_lo) / _TC_CANDIDATES
        xcs = 2 * r1 + (np.arange(_XC_CANDIDATES) + u[1]) * (L - 2 * r2 - 2 * r1) / _XC_CANDIDATES
        t = laws.frame_times(T, dt)[None, None, :]  # (1, 1, T)
        tc = tcs[:, None, None]  # (K, 1, 1)
        xc = xcs[None, :, None]  # (1, M, 1)
        before = t < tc
        x1 = xc - r1 + np.where(before, -v1 * (tc - t), w1 * (t - tc))  # (K, M, T)
        x2 = xc + r2 + np.where(before, v2 * (tc - t), w2 * (t - tc))
        view = (x1 >= r1) & (x1 <= L - r1) & (x2 >= r2) & (x2 <= L - r2)  # (K, M, T)
        count = view.sum(-1)  # (K, M)
        ok = view[..., : spec.condition_frames].all(-1)
        if ok.any():
            count = np.where(ok, count, -1)
        need = min(spec.min_frames_in_view, int(count.max()))
        kk, mm = np.nonzero(count >= need)
        pick = min(int(u[2] * len(kk)), len(kk) - 1)
        tc_, xc_ = float(tcs[kk[pick]]), float(xcs[mm[pick]])
        rmax = max(r1, r2)
        y = rmax + u[3] * (L - 2 * rmax)
        positions = [[xc_ - r1 - v1 * tc_, y], [xc_ + r2 + v2 * tc_, y]]
        initial = ball_scene(positions, [[v1, 0.0], [-v2, 0.0]], [r1, r2], [RED, BLUE], ("red ball", "blue ball"))
        return Placement(initial, int(count[kk[pick], mm[pick]]), tc_)

    def closed_form(self, spec: TaskSpec, initial: Scene) -> tuple[np.ndarray, np.ndarray]:
        t = laws.frame_times(spec.frames, spec.frame_interval)
        assert initial.velocities is not None  # placements set the initial velocities
        vel0 = initial.velocities[0]
        pos, vel, _ = laws.collision(
            initial.positions[0], initial.radii, (vel0[0, 0], -vel0[1, 0]), t, spec.simulator.density
        )
        return pos, vel


_COLLISION_LEVELS = (
    ("r1", ("radius_1",)),
    ("v1", ("velocity_1",)),
    ("r1+r2", ("radius_1", "radius_2")),
    ("v1+v2", ("velocity_1", "velocity_2")),
    ("r1+v1", ("radius_1", "velocity_1")),
    ("all", ("radius_1", "radius_2", "velocity_1", "velocity_2")),
)

register_task(
    TaskSpec(
        name="collision",
        version=1,
        scenario="collision",
        description=(
            "Perfectly elastic head-on collision (conservation of momentum and energy): a "
            "red ball on the left moves right, a blue ball on the right moves left, equal "
            "density (mass proportional to r^2), no gravity."
        ),
        dofs=(
            Dof("radius_1", "world units", ID_RADIUS, OOD_RADIUS, "radius of the red (left) ball"),
            Dof("radius_2", "world units", ID_RADIUS, OOD_RADIUS, "radius of the blue (right) ball"),
            Dof("velocity_1", "world units / s", ID_VELOCITY, OOD_VELOCITY, "speed of the red ball, moving +x"),
            Dof("velocity_2", "world units / s", ID_VELOCITY, OOD_VELOCITY, "speed of the blue ball, moving -x"),
        ),
        ood_levels=tuple(
            OODLevel(name, dofs, 800, f"OOD {' and '.join(dofs)}") for name, dofs in _COLLISION_LEVELS
        ),
        training_sets=(
            TrainingSet("train-30k", (12, 12, 14, 14)),
            TrainingSet("train-300k", (24, 24, 24, 24)),
            TrainingSet("train-3m", (42, 42, 44, 44)),
        ),
        id_eval_size=2000,
        simulator=SimulatorSettings(
            steps_per_frame=10, time_scale=1000.0, length_scale=10.0, gravity=0.0
        ),
        base_seed=2024_11_04,
        notes=PAPER_VS_CODE
        + (
            "Collision OOD draws with v1 + v2 below 0.05 units/s are redrawn: the balls "
            "would never meet.  Slow collisions are elastic (the reference's stock Box2D "
            "makes contacts under 1 unit/s stick).",
        ),
    )
)
