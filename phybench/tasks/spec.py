"""Task specifications: a benchmark task is data, with a version and a content hash.

A `TaskSpec` says everything that determines a task's samples: its degrees of freedom
with in-distribution (ID) and out-of-distribution (OOD) ranges, the OOD levels, the
training grids, evaluation sizes, clip geometry, the simulator settings and the base
seed.  `spec_hash()` is the sha256 of its canonical JSON: any change to what a task
generates changes the hash, and splits, results and the leaderboard all carry it.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..world.settings import SimulatorSettings

__all__ = ["CategoricalDof", "Dof", "OODLevel", "SimulatorSettings", "SplitDecl", "SplitRole", "TaskSpec", "TrainingSet"]

SplitRole = Literal["train", "eval"]


@dataclass(frozen=True)
class Dof:
    """One degree of freedom of a scene, e.g. a ball's radius."""

    name: str  # column name in the split, e.g. "radius" or "velocity_2"
    unit: str  # e.g. "world units" or "world units / s"
    id_range: tuple[float, float]  # closed interval
    ood_ranges: tuple[tuple[float, float], ...]  # disjoint intervals outside id_range
    description: str = ""

    def __post_init__(self) -> None:
        lo, hi = self.id_range
        if not lo < hi:
            raise ValueError(f"{self.name}: empty ID range {self.id_range}")
        for a, b in self.ood_ranges:
            if not a < b:
                raise ValueError(f"{self.name}: empty OOD range {(a, b)}")
            if a < hi and b > lo:
                raise ValueError(f"{self.name}: OOD range {(a, b)} overlaps ID {self.id_range}")


@dataclass(frozen=True)
class OODLevel:
    """An OOD evaluation level: which DoFs are drawn from their OOD ranges."""

    name: str  # short id, e.g. "r" or "r1+v1"
    ood_dofs: tuple[str, ...]
    size: int  # samples in the ood-eval split at this level
    description: str = ""


@dataclass(frozen=True)
class TrainingSet:
    """A training split: the full grid over the DoFs' ID ranges (one count per DoF)."""

    name: str  # split name, e.g. "train-30k"
    grid: tuple[int, ...]  # points per DoF, in `TaskSpec.dofs` order; all even (see id-eval)

    @property
    def size(self) -> int:
        return math.prod(self.grid)


@dataclass(frozen=True)
class CategoricalDof:
    """A degree of freedom with named values, e.g. shape in {disc, square}."""

    name: str  # column name in the split, e.g. "shape"
    values: tuple[str, ...]
    description: str = ""


@dataclass(frozen=True)
class SplitDecl:
    """A split a task declares: its name, role, size and how its samples are drawn.

    draw: a rule the sampler knows ("grid": the training grid named `name`;
    "grid-midpoints": cell midpoints of the largest training grid; "ood-levels": the OOD
    levels in round-robin) or one the task's family implements.  restrict: the rule's
    arguments as (key, value) pairs, e.g. (("colour", "red"), ("shape", "disc")).
    """

    name: str
    role: SplitRole
    size: int
    draw: str
    restrict: tuple[tuple[str, Any], ...] = ()
    description: str = ""

    def option(self, key: str, default: Any = None) -> Any:
        for k, v in self.restrict:
            if k == key:
                return v
        return default


@dataclass(frozen=True)
class TaskSpec:
    """Everything that determines a task's data.  Frozen: a change is a new version."""

    name: str
    version: int
    scenario: str  # the task family (`phybench.tasks.family`); the key keeps v1 spec hashes
    description: str
    dofs: tuple[Dof, ...]
    ood_levels: tuple[OODLevel, ...]
    training_sets: tuple[TrainingSet, ...]
    id_eval_size: int
    simulator: SimulatorSettings
    frames: int = 32
    frame_interval: float = 0.1  # seconds between frames
    resolution: int = 128  # default pixels per side
    resolutions: tuple[int, ...] = (128, 256)  # supported
    condition_frames: int = 3  # frames a model is given
    world_size: float = 10.0  # world units per side
    min_frames_in_view: int = 24  # wanted frames with every ball fully in view
    min_frames_after_contact: int = 8  # collision: frames after the contact instant
    earliest_contact: float = 0.45  # collision: seconds; after frame 4, as in A.4
    min_approach_speed: float = 0.05  # collision: world units / s, so the balls meet
    base_seed: int = 0
    notes: tuple[str, ...] = field(default=())  # where we differ from the paper or code
    # Added after version 1 of the spec format; left out of the canonical JSON while
    # empty, so the spec hashes of the tasks that do not use them never change.
    declared_splits: tuple[SplitDecl, ...] = ()  # empty: train grids + id-eval + ood-eval
    categorical: tuple[CategoricalDof, ...] = ()
    family_params: tuple[tuple[str, Any], ...] = ()  # family-specific settings

    def __post_init__(self) -> None:
        names = [d.name for d in self.dofs]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: duplicate DoF names {names}")
        for level in self.ood_levels:
            unknown = set(level.ood_dofs) - set(names)
            if unknown:
                raise ValueError(f"{self.name}: OOD level {level.name} names unknown DoFs {unknown}")
        for ts in self.training_sets:
            if len(ts.grid) != len(self.dofs):
                raise ValueError(f"{self.name}: {ts.name} grid needs one count per DoF")
            if any(n % 2 for n in ts.grid):
                # Even counts make every cell midpoint of one grid miss every other grid.
                raise ValueError(f"{self.name}: {ts.name} grid counts must be even")
        if self.condition_frames >= self.frames:
            raise ValueError(f"{self.name}: condition_frames must be < frames")

    # ----------------------------------------------------------------- identity
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key, default in _HASH_OPTIONAL.items():
            if d.get(key) in (default, list(default)):
                del d[key]
        for key, default in _SIMULATOR_OPTIONAL.items():
            if d["simulator"].get(key) == default:
                del d["simulator"][key]
        return d

    def canonical_json(self) -> str:
        """Sorted keys, no whitespace, floats as Python's shortest repr: stable bytes."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def spec_hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()

    # ------------------------------------------------------------------ splits
    @property
    def splits(self) -> tuple[SplitDecl, ...]:
        """Every split of the task, training ones first.

        Declared splits when the task declares them; otherwise the fundamental layout:
        one training split per grid, ``id-eval`` (grid midpoints) and ``ood-eval``.
        """
        if self.declared_splits:
            return self.declared_splits
        return tuple(SplitDecl(ts.name, "train", ts.size, "grid") for ts in self.training_sets) + (
            SplitDecl("id-eval", "eval", self.id_eval_size, "grid-midpoints",
                      description="cell midpoints of the largest training grid"),
            SplitDecl("ood-eval", "eval", sum(level.size for level in self.ood_levels), "ood-levels",
                      description="OOD levels in round-robin order"),
        )

    def split(self, name: str) -> SplitDecl:
        for decl in self.splits:
            if decl.name == name:
                return decl
        raise KeyError(f"task {self.name!r} has no split {name!r}; splits: {', '.join(self.split_names)}")

    @property
    def split_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.splits)

    @property
    def eval_splits(self) -> tuple[str, ...]:
        """The splits a model is scored on, in declaration order."""
        return tuple(s.name for s in self.splits if s.role == "eval")

    @property
    def train_splits(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.splits if s.role == "train")

    def split_size(self, split: str) -> int:
        return self.split(split).size

    def training_set(self, split: str) -> TrainingSet:
        for ts in self.training_sets:
            if ts.name == split:
                return ts
        raise KeyError(split)

    def is_training(self, split: str) -> bool:
        """Declared role; a split the task does not declare (an imported one) is a
        training split when its name says so (``train-...``)."""
        if split in self.split_names:
            return self.split(split).role == "train"
        return split.startswith("train-")

    def param(self, key: str, default: Any = None) -> Any:
        """A family-specific setting from `family_params`."""
        for k, v in self.family_params:
            if k == key:
                return v
        return default

    def dof(self, name: str) -> Dof:
        for d in self.dofs:
            if d.name == name:
                return d
        raise KeyError(name)


_HASH_OPTIONAL: dict[str, Any] = {"declared_splits": (), "categorical": (), "family_params": ()}
_SIMULATOR_OPTIONAL: dict[str, Any] = {"angular_damping": 0.0, "walls": False}
