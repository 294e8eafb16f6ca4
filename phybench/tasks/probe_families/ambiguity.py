"""Visual ambiguity probe (paper section 5.5, Fig. 10): is video enough when the outcome hinges on a pixel?

The paper's section 5.5 shows two PHYRE scenes whose outcome cannot be read from the
pixels: a ball dropped on a gap whose width differs from the ball's diameter at the
pixel level, and a ball dropped near a block's edge with a horizontal margin of a pixel
or two; its models produce visually plausible but wrong outcomes.  The authors'
generator (``combinatorial_data/data_generator_ambiguity_v0.py``) sweeps one number per
PHYRE template on a fine grid (the ball's radius for the gap, its x for the edge; about
+-2.5 px at 256 px); we draw it per row instead, and measure it in pixels.

Two scene kinds (one evaluation and one training split each), PHYRE's look and physics
as the `combinatorial` task (red ball, black static bars, gravity 9.8 m/s^2 in PHYRE
metres, friction 0.5, restitution 0.2, a floor and side walls just outside the view,
1 condition frame); the ball starts at rest, its lowest point `DROP` above the bars:

    gap    two static bars of thickness `THICKNESS` with a gap between them, centred at
           ``barrier_x``, the ball centred over it; the gap's width is the ball's diameter
           plus ``margin_px`` pixels: negative, it does not fit; positive, it falls through;
    edge   one static bar whose right edge is at ``barrier_x``; the ball's centre is
           ``margin_px`` pixels right of that edge: negative, it lands on the bar (on its
           flat top); positive, it strikes the corner and rolls off.

A pixel is ``world_size / resolution`` world units at the task's one resolution: the
margin is a pixel count only at a fixed resolution, so there is one task per
resolution (``ambiguity`` at 256 px, PHYRE's and the paper's; ``ambiguity-128``), each
supporting only its own.  Box2D decides the outcome; every row records it (``outcome``:
1.0 when the ball ends below the bars' bottom face at the last frame, fallen through the
gap or off the bar; 0.0 when it stays above).  Box2D's polygon skin (0.01 PHYRE metres,
0.06 px at 256) and its contact slop move the true threshold a tenth of a pixel off
zero; near zero the outcome is whatever Box2D says, which is the point of the probe.

The analysis (`phybench.probes.ambiguity`, probe ``ambiguity``) reads the outcome back
from the generated pixels, asks the judge whether the video looks normal, and reports the
share of visually plausible but physically wrong videos by |margin| in pixels.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...world.scene import PHYRE_BLACK, PHYRE_RED, Body, Disc, Rect, Scene, body_bounds
from ..family import IMAGE_METRICS, Placement, TaskFamily, register_family, register_task
from ..spec import CategoricalDof, Dof, SimulatorSettings, SplitDecl, TaskSpec

MARGIN_PX = (-3.0, 3.0)  # pixels at the task's resolution: gap width - diameter, or ball centre - edge
RADIUS = (0.35, 0.6)  # world units: the combinatorial task's red ball
BARRIER_TOP = (3.0, 5.0)  # world units: height of the bars' top face
BARRIER_X = (4.0, 6.0)  # world units: the gap's centre, or the bar's right edge
THICKNESS = 0.3  # world units: the bars (the combinatorial task's static bar)
BAR_LENGTH = 2.5  # world units: each bar of the gap; the edge's bar
DROP = 1.5  # world units: the ball's lowest point above the bars' top at rest (about 1.1 s of fall)
KINDS = ("gap", "edge")
TRAIN_SIZE = 20_000  # per kind, states stored
EVAL_SIZE = 1000  # per kind
LITE_SIZE = 100  # per evaluation split: the `lite` protocol (generation ~0.1 s a row)
IN_VIEW_TOLERANCE = 0.02  # world units: a ball resting on the floor sinks ~0.001 into it (as combinatorial)
# PHYRE's physics, exactly the combinatorial task's (phybench.tasks.combinatorial)
PHYRE_SIMULATOR = SimulatorSettings(
    steps_per_frame=6, time_scale=1.0, length_scale=256 / 6 / 10, gravity=9.8 * 6 * 10 / 256,
    density=0.25, restitution=0.2, friction=0.5, velocity_iterations=10, position_iterations=10,
    angular_damping=0.01, walls=True,
)


def pixel(spec: TaskSpec) -> float:
    """World units per pixel at the task's resolution (its only one)."""
    return spec.world_size / spec.resolution


def _lerp(interval: tuple[float, float], u: float) -> float:
    return float(interval[0] + (interval[1] - interval[0]) * u)


def ambiguity_scene(spec: TaskSpec, params: dict[str, Any]) -> Scene:
    """The initial scene of a row's parameters: the bars (static, first) and the red ball (last)."""
    kind, m = params["kind"], float(params["margin_px"]) * pixel(spec)  # m: world units
    r, top, x = float(params["radius"]), float(params["barrier_top"]), float(params["barrier_x"])
    y_bar = top - THICKNESS / 2
    bar = Rect(BAR_LENGTH, THICKNESS)
    if kind == "gap":
        half_gap = r + m / 2  # the gap's width is 2 r + m
        bars = [(x - half_gap - BAR_LENGTH / 2, "left bar"), (x + half_gap + BAR_LENGTH / 2, "right bar")]
        ball_x = x
    elif kind == "edge":
        bars = [(x - BAR_LENGTH / 2, "bar")]
        ball_x = x + m
    else:
        raise ValueError(f"unknown scene kind {kind!r}; kinds: {', '.join(KINDS)}")
    bodies = tuple(Body(bar, PHYRE_BLACK, dynamic=False, name=f"black {name}") for _, name in bars)
    ball = Body(Disc(r), PHYRE_RED, name="red ball", fixed_rotation=False)
    poses = [[bx, y_bar, 0.0] for bx, _ in bars] + [[ball_x, top + DROP + r, 0.0]]
    velocities = np.zeros((1, len(poses), 2))
    return Scene(bodies + (ball,), np.array([poses]), spec.world_size, velocities)


def fell_below(spec: TaskSpec, params: dict[str, Any], trajectory: Scene) -> bool:
    """The outcome: the ball's centre ends (last frame) below the bars' bottom face."""
    bottom = float(params["barrier_top"]) - THICKNESS
    return bool(trajectory.positions[-1, -1, 1] < bottom)


@register_family
class AmbiguityFamily(TaskFamily):
    """A red ball dropped on a gap or near a bar's edge, the outcome decided within a few pixels."""

    name = "probe-ambiguity"
    probe = "ambiguity"
    metrics = ("abnormal",) + IMAGE_METRICS
    plot_dof = None
    object_reader = "none"  # the gap's two bars share a colour: image metrics and the judge only
    stores_bodies = True
    extra_columns = ("outcome",)  # 1.0: the ball ends below the bars (through the gap / off the bar)
    board_layout = "splits"
    lite_size = LITE_SIZE
    frames_in_view_doc = ("at least this many frames have every body in view (here: exactly this many, with "
                          f"{IN_VIEW_TOLERANCE} world units of tolerance for a ball resting on the floor)")
    in_view_tolerance = IN_VIEW_TOLERANCE

    def draw(self, spec: TaskSpec, decl: Any, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
        if decl.draw != "ambiguity":
            return super().draw(spec, decl, index, u)
        kind = decl.option("kind")
        return kind, {"kind": kind, "margin_px": _lerp(MARGIN_PX, u[0]), "radius": _lerp(RADIUS, u[1]),
                      "barrier_top": _lerp(BARRIER_TOP, u[2]), "barrier_x": _lerp(BARRIER_X, u[3])}

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        from ...world.simulate import simulate  # Box2D: generation only

        initial = ambiguity_scene(spec, params)
        trajectory = simulate(initial, spec.simulator, spec.frames, spec.frame_interval)
        assert isinstance(trajectory, Scene)  # no record_contacts: the scene alone
        bounds = body_bounds(trajectory)  # (T, B, 4) x0, y0, x1, y1
        tol, L = IN_VIEW_TOLERANCE, spec.world_size
        inside = ((bounds[..., 0] >= -tol) & (bounds[..., 1] >= -tol) & (bounds[..., 2] <= L + tol)
                  & (bounds[..., 3] <= L + tol)).all(axis=1)
        outcome = 1.0 if fell_below(spec, params, trajectory) else 0.0
        return Placement(initial, int(inside.sum()), extra={"outcome": outcome}, trajectory=trajectory)

    def contact_time(self, row: Mapping[str, Any]) -> float:
        return float("nan")  # every generated frame is scored

    def describe(self, spec: TaskSpec) -> list[str]:
        s = pixel(spec)
        return [f"one pixel = {s:g} world units at {spec.resolution} px; margin in [{MARGIN_PX[0]:g}, "
                f"{MARGIN_PX[1]:g}] px = [{MARGIN_PX[0] * s:g}, {MARGIN_PX[1] * s:g}] world units",
                "gap: the gap's width is the ball's diameter + margin (negative: does not fit)",
                "edge: the ball's centre is margin right of the bar's right edge (negative: over the bar)"]


def _spec(name: str, resolution: int, seed: int) -> TaskSpec:
    splits = tuple(SplitDecl(f"{role}-{kind}", role, TRAIN_SIZE if role == "train" else EVAL_SIZE, "ambiguity",
                             (("kind", kind),), f"{kind} scenes, margin uniform over [{MARGIN_PX[0]:g}, "
                                                f"{MARGIN_PX[1]:g}] px at {resolution} px")
                   for role in ("train", "eval") for kind in KINDS)
    return TaskSpec(
        name=name,
        version=1,
        scenario="probe-ambiguity",
        description=(f"Visual ambiguity (section 5.5, Fig. 10) at {resolution} px: a red ball dropped on a gap a "
                     "few pixels wider or narrower than the ball (eval-gap), or near a bar's edge with a margin of "
                     "a few pixels (eval-edge); does the generated outcome follow the simulator's?"),
        dofs=(Dof("margin_px", f"pixels at {resolution} px", MARGIN_PX, (),
                  "gap: width - diameter; edge: ball centre - bar edge (positive: the ball falls below)"),
              Dof("radius", "world units", RADIUS, (), "radius of the ball"),
              Dof("barrier_top", "world units", BARRIER_TOP, (), "height of the bars' top face"),
              Dof("barrier_x", "world units", BARRIER_X, (), "the gap's centre or the bar's right edge")),
        ood_levels=(),
        training_sets=(),
        id_eval_size=0,
        simulator=PHYRE_SIMULATOR,
        frames=32,
        frame_interval=0.1,
        resolution=resolution,
        resolutions=(resolution,),
        condition_frames=1,
        min_frames_in_view=32,
        base_seed=seed,
        declared_splits=splits,
        categorical=(CategoricalDof("kind", KINDS, "gap: through a gap; edge: past a bar's edge"),),
        family_params=(("thickness", THICKNESS), ("drop", DROP)),
        notes=("The paper shows two examples (Fig. 10) and gives no numbers; the authors' generator sweeps one "
               "PHYRE action parameter on a grid. Sizes, ranges and the per-row draw are ours.",
               "The margin is in pixels at this task's one resolution; the other resolution is its own task.",
               "PHYRE's look and physics, as the combinatorial task (phybench.tasks.combinatorial)."),
    )


AMBIGUITY = register_task(_spec("ambiguity", 256, 2024_11_20))
AMBIGUITY_128 = register_task(_spec("ambiguity-128", 128, 2024_11_21))
