"""Spatial and temporal composition probe (paper Fig. 11 and Fig. 15): two learnt events at once or in turn.

A static black wall stands at the right edge (x in [9.5, 10], full height).  Two dynamic
bodies of equal mass (equal area, density 1): a red ball of radius r in [0.6, 0.9] and a
blue square of half-side r sqrt(pi) / 2.  No gravity, no friction, elastic contacts
(Box2D, `phybench.world.simulate`).  Speeds v in [1, 2] world units / s, to the right.

Training (``train``, states only) alternates two disjoint events, the bodies in separate
horizontal lanes (which body is above is drawn):

    square-moves   the blue square moves at constant speed (never reaching the wall),
                   the red ball rests;
    ball-bounces   the red ball moves, bounces off the wall (0.5-2.3 s) and comes back,
                   the square rests.

Evaluation, both bodies moving:

    eval-spatial   both events at once, in separate lanes (Fig. 11 left);
    eval-temporal  one event after the other, in one lane: the square moves and strikes
                   the resting ball (0.4-0.8 s); equal masses exchange velocities, so the
                   square stops and the ball moves on, then bounces off the wall (Fig. 11
                   right, Fig. 15).  The ball never meets the square again in the clip.

The paper's temporal case joins "two balls collide" with "a ball bounces off the wall";
ours keeps the two training events of the spatial case and joins them through one
contact, so that each half of a temporal video looks like one training event.  The
analysis (`phybench.probes.composition`, probe ``composition``) reads both bodies by colour
and checks each sub-event against the simulated trajectory, and flags a ball that
vanishes after its first contact (Fig. 15's failure).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...world.scene import BLACK, BLUE, RED, Body, Disc, Rect, Scene
from ..family import IMAGE_METRICS, Placement, TaskFamily, register_family, register_task
from ..spec import CategoricalDof, Dof, SimulatorSettings, SplitDecl, TaskSpec

RADIUS = (0.6, 0.9)  # world units, the ball; the square's half-side is r sqrt(pi) / 2 (equal area)
VELOCITY = (1.0, 2.0)  # world units / s
WALL_X = 9.5  # world units: the wall's face; it spans x in [9.5, 10], y in [0, 10]
MARGIN = 0.1  # world units between a body and the border / the wall / the other lane
BOUNCE = (0.5, 2.3)  # seconds: when a bouncing ball meets the wall (>= 8 frames after it)
CONTACT = (0.4, 0.8)  # seconds: temporal, when the square strikes the ball
SECOND_CONTACT_AFTER = 3.3  # seconds: temporal, the returning ball meets the square after the clip
TRAIN_SIZE = 40_000  # states only; the paper gives no size
EVAL_SIZE = 1000
EVENTS = {"train": ("square-moves", "ball-bounces"), "eval-spatial": ("spatial",), "eval-temporal": ("temporal",)}
WALL, SQUARE, BALL = 0, 1, 2  # body order in every scene (drawing order)


def half_side(r: float) -> float:
    return r * math.sqrt(math.pi) / 2


def _lerp(interval: tuple[float, float], u: float) -> float:
    return float(interval[0] + (interval[1] - interval[0]) * u)


@register_family
class CompositionFamily(TaskFamily):
    """A wall, a blue square and a red ball: each training video is one event, evaluation joins two."""

    name = "probe-composition"
    probe = "composition"
    metrics = ("velocity_error", "position_error", "trajectory_error") + IMAGE_METRICS
    plot_dof = None
    object_reader = "centroids"
    stores_bodies = True
    # when the ball first touches anything (the square in a temporal video, else the wall)
    # and when it meets the wall; NaN when it does not in the clip
    extra_columns = ("ball_contact", "bounce_time")
    board_layout = "splits"
    frames_in_view_doc = "every frame has every body fully in view"

    def draw(self, spec: TaskSpec, decl: Any, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
        if decl.draw != "composition":
            return super().draw(spec, decl, index, u)
        events = decl.option("events")
        event = events[index % len(events)]
        return event, {"radius": _lerp(RADIUS, u[1]), "velocity": _lerp(VELOCITY, u[2]), "event": event}

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        from ...world.simulate import simulate  # Box2D: generation only

        r, v, event = params["radius"], params["velocity"], params["event"]
        a, L, T = half_side(r), spec.world_size, spec.frames
        duration = spec.frame_interval * (T - 1)
        square_moves = event in ("square-moves", "spatial", "temporal")
        ball_moves = event in ("ball-bounces", "spatial")
        if event == "temporal":
            y = _lerp((r + MARGIN, L - r - MARGIN), u[0])
            y_square = y_ball = y
            t1 = _lerp(CONTACT, u[1])
            tau = _lerp(((SECOND_CONTACT_AFTER - t1) / 2, BOUNCE[1] - t1), u[2])  # ball -> wall after the hit
            x_ball = WALL_X - r - v * tau
            x_square = x_ball - r - a - v * t1
        else:
            upper = u[0] < 0.5  # the square's lane is the upper one
            lanes = ((MARGIN + L / 2 + a, L - a - MARGIN), (a + MARGIN, L / 2 - a - MARGIN))
            y_square = _lerp(lanes[0] if upper else lanes[1], u[1])
            ball_lanes = ((r + MARGIN, L / 2 - r - MARGIN), (L / 2 + r + MARGIN, L - r - MARGIN))
            y_ball = _lerp(ball_lanes[0] if upper else ball_lanes[1], u[2])
            if square_moves:  # never reaching the wall
                x_square = _lerp((a + MARGIN, WALL_X - MARGIN - a - v * duration), u[3])
            else:
                x_square = _lerp((a + MARGIN, WALL_X - MARGIN - a), u[3])
            if ball_moves:
                x_ball = WALL_X - r - v * _lerp(BOUNCE, u[4])
            else:
                x_ball = _lerp((r + MARGIN, WALL_X - MARGIN - r), u[4])
        bodies = (Body(Rect(L - WALL_X, L), BLACK, dynamic=False, name="wall"),
                  Body(Rect(2 * a, 2 * a), BLUE, name="blue square", attrs=(("shape", "square"),)),
                  Body(Disc(r), RED, name="red ball", attrs=(("shape", "disc"),)))
        poses = np.array([[[(L + WALL_X) / 2, L / 2, 0.0], [x_square, y_square, 0.0], [x_ball, y_ball, 0.0]]])
        velocities = np.array([[[0.0, 0.0], [v if square_moves else 0.0, 0.0], [v if ball_moves else 0.0, 0.0]]])
        initial = Scene(bodies, poses, L, velocities)
        result = simulate(initial, spec.simulator, T, spec.frame_interval, record_contacts=True)
        assert isinstance(result, tuple)  # record_contacts: (scene, first_touch)
        trajectory, touch = result
        ball_square, ball_wall, square_wall = touch[BALL, SQUARE], touch[BALL, WALL], touch[SQUARE, WALL]
        expected = {  # the event each scene must be (the placement's guarantee; tests check it too)
            "square-moves": np.isinf(ball_square) and np.isinf(ball_wall) and np.isinf(square_wall),
            "ball-bounces": np.isinf(ball_square) and np.isfinite(ball_wall) and np.isinf(square_wall),
            "spatial": np.isinf(ball_square) and np.isfinite(ball_wall) and np.isinf(square_wall),
            "temporal": np.isfinite(ball_square) and ball_square < ball_wall < np.inf and np.isinf(square_wall),
        }[event]
        if not expected:  # pragma: no cover - the placement rule makes it so
            raise RuntimeError(f"{event} scene is not its event: contacts {touch.tolist()}")
        first = min(ball_square, ball_wall)
        extra = {"ball_contact": float(first) if np.isfinite(first) else float("nan"),
                 "bounce_time": float(ball_wall) if np.isfinite(ball_wall) else float("nan")}
        return Placement(initial, T, extra=extra, trajectory=trajectory)

    def describe(self, spec: TaskSpec) -> list[str]:
        return [f"{split}: {', '.join(events)}" for split, events in EVENTS.items()]


COMPOSITION = register_task(TaskSpec(
    name="composition",
    version=1,
    scenario="probe-composition",
    description=("Spatial and temporal composition (Fig. 11, 15): a static wall, a blue square and a red ball. "
                 "Training: the square moves while the ball rests, or the ball bounces off the wall while the "
                 "square rests. Evaluation: both at once (eval-spatial) or one after the other through a "
                 "square-ball contact (eval-temporal)."),
    dofs=(Dof("radius", "world units", RADIUS, (), "radius of the ball (the square has its area)"),
          Dof("velocity", "world units / s", VELOCITY, (), "speed of each moving body, to the right")),
    ood_levels=(),
    training_sets=(),
    id_eval_size=0,
    simulator=SimulatorSettings(steps_per_frame=10, time_scale=1000.0, length_scale=10.0, gravity=0.0),
    base_seed=2024_11_18,
    declared_splits=tuple(SplitDecl(name, "train" if name == "train" else "eval",
                                    TRAIN_SIZE if name == "train" else EVAL_SIZE, "composition",
                                    (("events", events),), " / ".join(events))
                          for name, events in EVENTS.items()),
    categorical=(CategoricalDof("event", ("square-moves", "ball-bounces", "spatial", "temporal")),),
    notes=("The paper's temporal case joins two-ball collisions with a wall bounce; ours joins the spatial case's "
           "two events through one square-ball contact (equal masses: the square stops, the ball moves on).",
           "Sizes, speeds, the wall's place and the training size are ours; the paper gives none.",),
))
