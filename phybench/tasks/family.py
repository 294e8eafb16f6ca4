"""Task families: the unit of extension (as a PHYRE task template or an lm-eval task).

A family owns everything that is specific to a kind of scene: which bodies it has, how a
sample's parameters become an initial scene (placement, the redraw rule), its closed-form
law (tests and the physics oracle compare Box2D with it), extra row columns, which
metrics apply, which DoF the generated-vs-conditioned plot shows and how its objects are
read back from pixels.  Downstream code (sampling, splits, scoring, the leaderboard, the
CLI) asks the family and never branches on a task or family name.

A family is a `TaskFamily` subclass registered with ``@register_family``; its tasks are
`TaskSpec`s whose ``scenario`` names it, registered with `register_task`.  Built-in
families live one per module in this package; external ones are found through the
``phybench.families`` entry point group (the entry point's module is imported, and its
decorators register).  `temporary_task` registers a task for the duration of a ``with``
block (tests, notebooks) without leaking into the registry.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator, Mapping

import numpy as np

from ..registry import Registry
from ..world import laws
from ..world.scene import Scene
from .conditions import describe_state
from .spec import SplitDecl, TaskSpec

ENTRY_POINT_GROUP = "phybench.families"

# The image and perceptual metrics, compared against the ground-truth pixels (names of rows in
# `phybench.scoring.metrics`; this stage sits below the registry and cannot read it): the one place
# outside the registry that spells them, so a family lists them as `IMAGE_METRICS`.
IMAGE_METRICS = ("ssim", "psnr", "lpips", "fvd")
# Metrics every family gets unless it says otherwise (names in `phybench.scoring.metrics`).
DEFAULT_METRICS = ("velocity_error", "velocity_error_penalised", "velocity_error_ranked", "position_error", "trajectory_error", "size_error",
                   "colour_kept", "abnormal") + IMAGE_METRICS
# The paper-convention columns (`phybench.scoring.physics.paper_velocity`): a family that lists them says
# which of the reference authors' per-video numbers they are (`TaskFamily.paper_measure`).
PAPER_METRICS = ("velocity_error_paper", "velocity_error_paper_y")


@dataclass(frozen=True)
class Placement:
    """What a family's placement rule returns for one sample."""

    initial: Scene  # one frame: bodies, poses (1, B, 3), velocities (1, B, 2)
    frames_in_view: int  # frames with every body fully in view (see the family's docs)
    contact_time: float = float("nan")  # seconds; NaN when the scene has no designated contact
    extra: dict[str, float] = field(default_factory=dict)  # the family's `extra_columns`
    # the simulated trajectory, when the placement rule had to simulate (e.g. to check
    # that the scene is an event); `simulate_sample` then returns it instead of re-running
    trajectory: Scene | None = None


class TaskFamily:
    """Base class of task families; subclasses override what their scenes need.

    Class attributes are data the rest of phybench reads; methods are the family's rules.
    """

    name: ClassVar[str] = ""
    # names of registered metrics that apply to this family's tasks, in report order
    metrics: ClassVar[tuple[str, ...]] = DEFAULT_METRICS
    # the law fitted to parsed trajectories with free parameters (a key of
    # `phybench.scoring.learned.law.LAW_FITS`; None: no law fit) and its headline parameter (`law_error`)
    law_fit: ClassVar[str | None] = None
    law_headline: ClassVar[str | None] = None
    # DoF drawn on the leaderboard's generated-vs-conditioned scatter (None: no plot)
    plot_dof: ClassVar[str | None] = None
    # how objects are read back from pixels: "discs" (exact disc-edge inversion),
    # "centroids" (coverage-weighted centroid: exact for any shape fully in view) or
    # "none" (objects share colours: no per-object physics errors are computed)
    object_reader: ClassVar[str] = "discs"
    # the tracked body must stay the condition frames' (colour, size, shape: `phybench.scoring.physics.identity`);
    # False where a generated body may change by design (the attribute probes measure what it keeps)
    identity_check: ClassVar[bool] = False
    # float columns a row carries beyond the DoFs and `contact_time` (in the sample digest)
    extra_columns: ClassVar[tuple[str, ...]] = ()
    # rows keep each body's shape and per-frame angle (any family that is not plain discs)
    stores_bodies: ClassVar[bool] = False
    # training rows keep the trajectory (False: identity and parameters only; a loader
    # re-simulates and renders, for training sets too large to store states)
    stores_training_states: ClassVar[bool] = True
    # which per-video number of the reference authors' evaluation `velocity_error_paper` is for this
    # family (a key of `phybench.scoring.physics.paper_velocity.MEASURES`); None: the family lists no PAPER_METRICS
    paper_measure: ClassVar[str | None] = None
    # which of the paper's published tables or figures quotes this family's tasks on the board (a key of
    # `phybench.leaderboard.site.paper.QUOTED`, e.g. "Figure 3, uniform motion"); None: none does
    paper_quote: ClassVar[str | None] = None
    # the reference authors' ID ranges (phyworld importer), when they have such data
    phyworld_id_ranges: ClassVar[dict[str, tuple[float, float]] | None] = None
    # samples per evaluation split of the `lite` protocol (`phybench.tasks.protocols`)
    lite_size: ClassVar[int] = 200
    # position in `phybench quickstart` (None: not part of it)
    quickstart_order: ClassVar[int | None] = None
    # leaderboard columns: "levels" (ID, OOD overall, each OOD level) or "splits" (one
    # column per evaluation split, e.g. in-template / out-of-template as the paper's Table 2)
    board_layout: ClassVar[str] = "levels"
    # what `frames_in_view` means for this family (docs, dataset cards)
    # One meaning everywhere: at least this many frames have every body fully in view (a
    # lower bound, checked by tests/test_simulate.py); a family says when it is exact.
    frames_in_view_doc: ClassVar[str] = "at least this many frames have every body fully in view"
    # world units a body may reach past the view's edge and still count as in view for that
    # claim (`phybench.tasks.check`): float32 storage and Box2D's rounding, not a margin
    in_view_tolerance: ClassVar[float] = 1e-3
    # the generalisation probe that analyses this family's tasks (`phybench.probes`), if any
    probe: ClassVar[str | None] = None

    # ----------------------------------------------------------------- sampling
    def accept(self, spec: TaskSpec, params: dict[str, Any]) -> bool:
        """Redraw rule for random draws: False rejects a parameter draw (it is redrawn)."""
        return True

    def draw(self, spec: TaskSpec, decl: SplitDecl, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
        """(level, params) for a split whose draw rule the sampler does not know."""
        raise KeyError(f"family {self.name!r} does not implement the draw rule {decl.draw!r} of split {decl.name!r}")

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        """The initial scene of a sample from its parameters and placement randomness u."""
        raise NotImplementedError

    def closed_form(self, spec: TaskSpec, initial: Scene) -> tuple[np.ndarray, np.ndarray]:
        """The law's positions (T, B, 2) and velocities (T, B, 2) from an initial scene."""
        raise NotImplementedError(f"family {self.name!r} has no closed form")

    def describe(self, spec: TaskSpec) -> list[str]:
        """Extra lines for `phybench tasks show` (e.g. template sets and their proofs)."""
        return []

    def condition_text(self, spec: TaskSpec, state: dict[str, Any]) -> str:
        """A sample's plain-words prompt from its state at the last condition frame.

        `state` is `phybench.tasks.conditions.scene_state` (plain JSON data); a family
        that wants other wording overrides this, and can only word that state: the row,
        whose columns may tell the future, is never passed.
        """
        return describe_state(state)

    # ----------------------------------------------------------------- scoring
    def contact_time(self, row: Mapping[str, Any]) -> float:
        """Seconds after which a pair of frames is scored (NaN: from the condition frames on)."""
        value = row.get("contact_time", float("nan"))
        return float(value) if value is not None else float("nan")

    def conditioned_value(self, row: Mapping[str, Any]) -> float:
        """The `plot_dof` value of a row (NaN without a plot DoF)."""
        if self.plot_dof is None or row.get(self.plot_dof) is None:
            return float("nan")
        return float(row[self.plot_dof])


FAMILIES: Registry[TaskFamily] = Registry("task family")
TASKS: Registry[TaskSpec] = Registry("task")


def register_family(cls: type[TaskFamily]) -> type[TaskFamily]:
    """Class decorator: register one instance of a family under `cls.name`."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} needs a `name`")
    FAMILIES.register(cls.name, cls())
    return cls


def register_task(spec: TaskSpec) -> TaskSpec:
    """Register a task; its family must be registered first."""
    FAMILIES.get(spec.scenario)  # a clear error for a task of an unknown family
    return TASKS.register(spec.name, spec)


def get_task(name: str) -> TaskSpec:
    return TASKS.get(name)


def family_of(spec: TaskSpec) -> TaskFamily:
    return FAMILIES.get(spec.scenario)


def family_text(spec: TaskSpec, state: dict[str, Any]) -> str:
    """The task's family words a state (`TaskFamily.condition_text`): it sees the state, never the row."""
    return family_of(spec).condition_text(spec, state)


@contextlib.contextmanager
def temporary_task(spec: TaskSpec, family: type[TaskFamily] | None = None) -> Iterator[TaskSpec]:
    """Register a task (and its family) for a ``with`` block only."""
    added_family = family if family is not None and family.name not in FAMILIES else None
    if added_family is not None:
        register_family(added_family)
    register_task(spec)
    try:
        yield spec
    finally:
        TASKS.unregister(spec.name)
        if added_family is not None:
            FAMILIES.unregister(added_family.name)


def load_plugins() -> list[str]:
    """Import every ``phybench.families`` entry point; returns the names loaded."""
    from ..registry import load_entry_points

    return load_entry_points(ENTRY_POINT_GROUP, "family")


def frames_possible(travel_per_frame: float, room: float, frames: int) -> int:
    """Most consecutive frames a body moving `travel_per_frame` stays within `room`."""
    if travel_per_frame <= 0.0:
        return frames
    return int(min(frames, math.floor(room / travel_per_frame * (1 - 1e-12)) + 1))


def one_body_ballistic(spec: TaskSpec, initial: Scene, gravity: float) -> tuple[np.ndarray, np.ndarray]:
    """The closed form of a scene of one body in free flight: (positions (T, 1, 2), velocities
    (T, 1, 2)) from its initial pose and velocity under `gravity` (world units / s^2, along -y)."""
    t = laws.frame_times(spec.frames, spec.frame_interval)
    assert initial.velocities is not None  # placements set the initial velocities
    pos, vel = laws.ballistic(initial.positions[0, 0], initial.velocities[0, 0], gravity, t)
    return pos[:, None, :], vel[:, None, :]
