"""The family checker: a family's rows must be what they claim (`phybench tasks check NAME`).

A family writes rows that downstream code trusts without looking: the scorer takes
``frames_in_view`` as a promise, tests compare Box2D with ``closed_form``, `verify
--regenerate` assumes a sample regenerates bit for bit, and splits, results and the
leaderboard carry the spec hash.  A family that breaks one of these promises (the docs'
old sliding square claimed 32 frames in view for a square that leaves the view) is not
caught by hashes, which are consistent with whatever was written.  So this module checks
each promise on the family's own samples (PHYRE's ``check_task`` does the same for every
instance a template yields):

``frames_in_view``
    at least that many frames have every body wholly inside the view (exact boxes of any
    shape at any angle, `world.scene.body_bounds`), give or take the family's
    `TaskFamily.in_view_tolerance`;
``closed_form``
    the trajectory's positions follow the family's closed form, where it has one, to
    `CLOSED_FORM_TOLERANCE` (velocities are not compared: at a collision frame Box2D's
    stored velocity may lag the closed form's instant, docs/physics.md);
``deterministic``
    the same key gives the same sample twice (parameters from `draw`/`accept`, placement,
    contact time, extra columns, initial scene, a trajectory the placement simulated);
``spec_hash``
    the spec's canonical JSON is plain JSON that round-trips, and its hash is the same
    computed twice, from a copy and (`spec_hashes_elsewhere`) in a fresh interpreter with
    another hash seed: a spec built from a set would differ there.

`generate` and `verify` run the row checks on the rows they write or read
(`data.split.shard_findings`: `disc_frames_in_view` on a whole shard of disc rows,
`check_trajectory` on the others and on 1 row in 16 for the closed form); `check_task`
draws samples itself and runs every check.  Imports only the world and task layers.
"""
from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from ..world.scene import Disc, Scene, body_bounds
from .family import TASKS, TaskFamily, family_of
from .sampling import SampleSpec, make_sample, simulate_sample
from .spec import TaskSpec

CHECKS = ("frames_in_view", "closed_form", "deterministic", "spec_hash")
CLOSED_FORM_TOLERANCE = 1e-2  # world units (1/8 px at 128 px): Box2D vs the law, contact instants included


@dataclass(frozen=True)
class FamilyFinding:
    """One broken promise: which row (or task), which check, and what was found."""

    task: str
    check: str  # one of `CHECKS`
    message: str
    sample_id: str | None = None  # None: the finding is about the task, not a row

    def __str__(self) -> str:
        return f"{self.sample_id or self.task}: {self.check}: {self.message}"


@dataclass
class CheckReport:
    """What `check_task` looked at and what it found."""

    task: str
    samples: int = 0  # samples checked (every split together)
    skipped: list[str] = field(default_factory=list)  # checks that did not apply, and why
    findings: list[FamilyFinding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings


class FamilyCheckError(ValueError):
    """A family's rows fail the checker; the message names the rows and the checks."""

    code = "family_check"

    def __init__(self, findings: list[FamilyFinding], where: str = "") -> None:
        self.findings = findings
        shown = "; ".join(str(f) for f in findings[:3])
        more = f" (and {len(findings) - 3} more)" if len(findings) > 3 else ""
        lead = f"{where}: " if where else ""
        super().__init__(f"{lead}the family's rows fail `phybench tasks check`: {shown}{more}")


def has_closed_form(family: TaskFamily) -> bool:
    """Does the family override `closed_form` (the base class raises NotImplementedError)?"""
    return type(family).closed_form is not TaskFamily.closed_form


# ----------------------------------------------------------------- one row
def frames_with_everything_in_view(spec: TaskSpec, scene: Scene) -> np.ndarray:
    """bool (T,): frames in which every body lies wholly inside the view (with tolerance)."""
    tol, L = family_of(spec).in_view_tolerance, spec.world_size
    if all(type(b.shape) is Disc for b in scene.bodies):  # the common case, 3x cheaper than body_bounds
        p, r = scene.positions, scene.radii[None, :, None]
        return np.asarray(((p - r >= -tol) & (p + r <= L + tol)).all(axis=(1, 2)))
    box = body_bounds(scene)  # (T, B, 4)
    inside = (box[..., 0] >= -tol) & (box[..., 1] >= -tol) & (box[..., 2] <= L + tol) & (box[..., 3] <= L + tol)
    return np.asarray(inside.all(axis=1))


def disc_frames_in_view(spec: TaskSpec, positions: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """int (N,): frames with every disc in view, for N rows of plain discs at once.

    positions (N, T, B, 2), radii (N, B): what a shard of disc rows stores.  One numpy
    expression for a whole shard, so that `generate` checks every row's claim at a cost
    it does not notice; a row it flags is then described by `check_trajectory`."""
    tol, L = family_of(spec).in_view_tolerance, spec.world_size
    p, r = np.asarray(positions, dtype=np.float64), np.asarray(radii, dtype=np.float64)[:, None, :, None]
    return np.asarray(((p - r >= -tol) & (p + r <= L + tol)).all(axis=(2, 3)).sum(axis=1))


def _frames_text(frames: np.ndarray) -> str:
    """[0, 1, 2, 7] -> '0-2, 7'."""
    out: list[str] = []
    for f in frames.tolist():
        if out and out[-1].split("-")[-1] == str(f - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{f}"
        else:
            out.append(str(f))
    return ", ".join(out) or "none"


def _in_view_finding(spec: TaskSpec, sample_id: str, claimed: int, scene: Scene) -> FamilyFinding | None:
    view = frames_with_everything_in_view(spec, scene)
    if 0 <= claimed <= spec.frames and int(view.sum()) >= claimed:
        return None
    box = body_bounds(scene)
    first_out = int(np.flatnonzero(~view)[0]) if (~view).any() else 0
    L, tol = spec.world_size, family_of(spec).in_view_tolerance
    out = [b for b in range(box.shape[1]) if not ((box[first_out, b, :2] >= -tol).all() and (box[first_out, b, 2:] <= L + tol).all())]
    who = ", ".join(f"body {b} ({scene.bodies[b].name or 'unnamed'}, box x {box[first_out, b, 0]:.3f}..{box[first_out, b, 2]:.3f}, "
                    f"y {box[first_out, b, 1]:.3f}..{box[first_out, b, 3]:.3f})" for b in out[:2])
    return FamilyFinding(spec.name, "frames_in_view", (
        f"the row claims frames_in_view = {claimed}, but only {int(view.sum())} of {spec.frames} frames have every body "
        f"fully in view (frames {_frames_text(np.flatnonzero(view))}); at frame {first_out} {who or 'a body'} is outside "
        f"the view [0, {L:g}]^2; a placement rule must keep its bodies in view for the frames it claims"), sample_id)


def _closed_form_finding(spec: TaskSpec, sample_id: str, scene: Scene) -> FamilyFinding | None:
    family = family_of(spec)
    pos, _ = family.closed_form(spec, scene.frames(slice(0, 1)))
    pos = np.asarray(pos, dtype=np.float64)
    if pos.shape != scene.positions.shape:
        return FamilyFinding(spec.name, "closed_form", f"closed_form gives positions of shape {pos.shape}, the trajectory "
                       f"has {scene.positions.shape}", sample_id)
    diff = np.abs(scene.positions - pos)
    if diff.max() <= CLOSED_FORM_TOLERANCE:  # NaN fails
        return None
    err = diff.max(axis=(1, 2))  # (T,)
    if not (err <= CLOSED_FORM_TOLERANCE).all():
        worst = int(np.nanargmax(err)) if np.isfinite(err).any() else 0
        return FamilyFinding(spec.name, "closed_form", (
            f"positions differ from the family's closed form by {float(err[worst]):.3g} world units at frame {worst} "
            f"(tolerance {CLOSED_FORM_TOLERANCE:g}; first off at frame {int(np.flatnonzero(~(err <= CLOSED_FORM_TOLERANCE))[0])})"),
            sample_id)
    return None


def check_trajectory(spec: TaskSpec, sample_id: str, frames_in_view: int, scene: Scene,
                     closed_form: bool = True) -> list[FamilyFinding]:
    """The row-level checks of one row: its ``frames_in_view`` claim and its closed form.

    `scene` is the row's trajectory (every frame); `generate` and `verify` pass the stored
    row's (`data.split.row_scene`), so what is checked is what the scorer will read.
    closed_form: False for data the family did not simulate (imported splits).
    """
    found = [_in_view_finding(spec, sample_id, int(frames_in_view), scene)]
    if closed_form and has_closed_form(family_of(spec)):
        found.append(_closed_form_finding(spec, sample_id, scene))
    return [f for f in found if f is not None]


# ----------------------------------------------------------------- determinism
def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _scene_fields(scene: Scene | None) -> dict[str, Any]:
    if scene is None:
        return {}
    return {"bodies": scene.bodies, "poses": scene.poses, "velocities": scene.velocities}


def sample_differences(a: SampleSpec, b: SampleSpec) -> list[str]:
    """Field names in which two samples of one key differ (empty: identical)."""
    fields = {"level": (a.level, b.level), "params": (a.params, b.params), "frames_in_view": (a.frames_in_view, b.frames_in_view),
              "contact_time": (a.contact_time, b.contact_time), "extra": (a.extra, b.extra),
              "initial": (_scene_fields(a.initial), _scene_fields(b.initial)),
              "trajectory": (_scene_fields(a.trajectory), _scene_fields(b.trajectory))}
    return [name for name, (x, y) in fields.items() if not _same(x, y)]


def check_deterministic(spec: TaskSpec, split: str, index: int, first: SampleSpec | None = None) -> tuple[SampleSpec, list[FamilyFinding]]:
    """Make sample `index` twice (`first`: the one already made); they must be identical."""
    first = first if first is not None else make_sample(spec, split, index)
    again = make_sample(spec, split, index)
    differ = sample_differences(first, again)
    if not differ:
        return first, []
    return first, [FamilyFinding(spec.name, "deterministic", (
        f"the same key made twice gives a different {', '.join(differ)}: draw/accept/place must use only the sample's "
        "own randomness u (never numpy's global generator, the clock or a set's order)"), first.sample_id)]


# ----------------------------------------------------------------- spec hash
def check_spec_hash(spec: TaskSpec) -> list[FamilyFinding]:
    """The spec's canonical JSON is plain JSON that round-trips; its hash is a pure function of it."""
    try:
        canonical = spec.canonical_json()
        again = json.dumps(json.loads(canonical), sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        return [FamilyFinding(spec.name, "spec_hash", f"the spec's canonical JSON is not plain JSON ({exc}): every field "
                        "(family_params included) must be numbers, strings, lists or tuples of them")]
    problems = []
    if again != canonical:
        problems.append("its canonical JSON does not survive a JSON round trip")
    if spec.spec_hash() != hashlib.sha256(canonical.encode()).hexdigest() or spec.spec_hash() != spec.spec_hash():
        problems.append("spec_hash() is not the sha256 of the canonical JSON")
    if copy.deepcopy(spec).spec_hash() != spec.spec_hash():
        problems.append("a copy of the spec hashes differently")
    return [FamilyFinding(spec.name, "spec_hash", "; ".join(problems))] if problems else []


def spec_hashes_elsewhere(names: Iterable[str]) -> dict[str, str]:
    """Spec hashes of registered tasks computed in a fresh interpreter with other hash seeds.

    Tasks that interpreter does not know (registered in this process only, e.g. by
    `temporary_task`) are left out."""
    code = ("import json, sys; from phybench.tasks import TASKS; "
            "print(json.dumps({n: TASKS.get(n).spec_hash() for n in json.loads(sys.argv[1]) if n in TASKS}))")
    found: dict[str, str] = {}
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", code, json.dumps(sorted(names))], capture_output=True, text=True,
                              env=env, check=True, timeout=300)
        for name, value in json.loads(done.stdout.strip().splitlines()[-1]).items():
            if found.setdefault(name, value) != value:
                found[name] = "differs between hash seeds"
    return found


def check_spec_hashes_elsewhere(specs: list[TaskSpec]) -> tuple[list[FamilyFinding], list[str]]:
    """(findings, names not known to a fresh interpreter) for `spec_hashes_elsewhere`."""
    there = spec_hashes_elsewhere(s.name for s in specs)
    findings = [FamilyFinding(s.name, "spec_hash", f"a fresh interpreter computes spec hash {there[s.name][:16]}, this one "
                        f"{s.spec_hash()[:16]}: the spec depends on the hash seed or on import order")
                for s in specs if s.name in there and there[s.name] != s.spec_hash()]
    return findings, [s.name for s in specs if s.name not in there]


# ----------------------------------------------------------------- a whole task
def sample_indices(size: int, per_split: int) -> list[int]:
    """`per_split` indices spread over a split of `size` samples (first and last included)."""
    n = max(1, min(per_split, size))
    return sorted(set(np.linspace(0, size - 1, n).round().astype(int).tolist()))


def check_task(spec: TaskSpec, per_split: int = 8, splits: Iterable[str] | None = None,
               fresh_interpreter: bool = False) -> CheckReport:
    """Every check on `per_split` samples of each split (evenly spread, so OOD extremes are in)."""
    report = CheckReport(spec.name)
    report.findings += check_spec_hash(spec)
    if fresh_interpreter:
        found, unknown = check_spec_hashes_elsewhere([spec])
        report.findings += found
        if unknown:
            report.skipped.append("spec hash in a fresh interpreter: the task is registered in this process only")
    if not has_closed_form(family_of(spec)):
        report.skipped.append(f"closed_form: family {spec.scenario!r} has none")
    for split in splits if splits is not None else spec.split_names:
        for index in sample_indices(spec.split_size(split), per_split):
            sample, found = check_deterministic(spec, split, index)
            report.findings += found
            scene = simulate_sample(spec, sample)
            if sample.trajectory is None:
                again = simulate_sample(spec, sample)
                if not _same(_scene_fields(scene), _scene_fields(again)):
                    report.findings.append(FamilyFinding(spec.name, "deterministic", "simulating the same initial scene twice "
                                                   "gives different trajectories", sample.sample_id))
            report.findings += check_trajectory(spec, sample.sample_id, sample.frames_in_view, scene)
            report.samples += 1
    return report


def tasks_named(name: str) -> list[TaskSpec]:
    """A task's spec, or every task of a family (a family name that is not a task name)."""
    if name in TASKS:
        return [TASKS.get(name)]
    specs = [s for _, s in TASKS.items() if family_of(s).name == name]
    return specs if specs else [TASKS.get(name)]  # the registry's error, with suggestions
