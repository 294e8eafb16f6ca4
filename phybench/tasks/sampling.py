"""What each sample is: its parameters, OOD level and initial state, from its index.

Determinism: a sample's randomness derives only from (task, version, split, index),
through numpy's `SeedSequence` (a fixed, documented hashing algorithm), and we turn its
words into floats ourselves, so no numpy distribution code whose stream might change
between releases is involved.  Any sample regenerates alone, on any machine, in any
worker, in any order.

Splits:
- ``train-*``: the full grid over the ID ranges, sample i is grid point i (row-major
  over the DoFs).  Randomness only places the balls.
- ``id-eval``: cell midpoints of the largest training grid, so on the same lattice but
  never a training point of any training set (all grid counts are even, so a midpoint
  of one grid is never a node of another).  Stratified: the midpoints are cut into
  `id_eval_size` equal runs and sample i draws one point from run pi(i), pi a fixed
  permutation, so any prefix (``--limit``) is spread over the whole range.
- ``ood-eval``: levels in round-robin order (sample i is at level i mod L); OOD DoFs are
  uniform over the union of their OOD intervals, the others uniform over the ID range.
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from ..world.scene import Scene
from .family import family_of
from .spec import TaskSpec

_WORDS = 64  # random words per sample
_PLACEMENT_OFFSET = 48  # placement uses words [48, 64): redraws of parameters never shift it


@dataclass(frozen=True)
class SampleSpec:
    """One sample before simulation: identity, parameters, level, initial scene."""

    sample_id: str
    index: int
    level: str  # "id" or an OOD level name
    params: dict[str, Any]
    initial: Scene  # one frame
    contact_time: float = float("nan")  # seconds; NaN when the family has no contact
    frames_in_view: int = 0  # see the family's `frames_in_view_doc`
    extra: dict[str, float] = field(default_factory=dict)  # the family's extra row columns
    trajectory: Scene | None = None  # every frame, when the placement rule simulated already


def sample_id(spec: TaskSpec, split: str, index: int) -> str:
    return f"{spec.name}/{split}/{index:07d}"


def _key(text: str) -> int:
    return zlib.crc32(text.encode())


def sample_uniforms(spec: TaskSpec, split: str, index: int, n: int = _WORDS) -> np.ndarray:
    """(n,) floats in [0, 1) owned by one sample."""
    seq = np.random.SeedSequence(
        entropy=spec.base_seed, spawn_key=(_key(spec.name), spec.version, _key(split), index)
    )
    words = seq.generate_state(n, dtype=np.uint64)
    return (words >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


@lru_cache(maxsize=16)
def _id_eval_order(name: str, version: int, base_seed: int, size: int, split: str = "id-eval") -> np.ndarray:
    """A fixed permutation of a midpoint split's strata (depends on the task, not the index)."""
    seq = np.random.SeedSequence(entropy=base_seed, spawn_key=(_key(name), version, _key(f"{split}-order")))
    keys = seq.generate_state(size, dtype=np.uint64)
    return np.argsort(keys, kind="stable")


def _grid_value(lo: float, hi: float, n: int, k: float) -> float:
    """Point k of an n-point grid over [lo, hi] (k may be fractional for midpoints)."""
    return lo + (hi - lo) * k / (n - 1)


def uniform_in(intervals: tuple[tuple[float, float], ...], u: float) -> float:
    """u in [0, 1) -> uniform over the union of disjoint intervals (length-weighted)."""
    lengths = [b - a for a, b in intervals]
    x = u * sum(lengths)
    for (a, b), length in zip(intervals, lengths):
        if x < length:
            return a + x
        x -= length
    return intervals[-1][1]


def draw_params(spec: TaskSpec, split: str, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
    """(level, {dof: value}) of sample `index`, by the split's draw rule.

    The sampler's own rules draw the numeric DoFs; a categorical DoF takes the value the
    split restricts it to (``restrict=(("shape", "square"),)``), else its first value.
    Rules it does not know are the family's (`TaskFamily.draw`).
    """
    decl = spec.split(split)
    if not 0 <= index < decl.size:
        raise IndexError(f"{spec.name}/{split} has {decl.size} samples; index {index} is out of range")
    if decl.draw not in _GENERIC_RULES:
        return family_of(spec).draw(spec, decl, index, u)
    level, params = _draw_generic(spec, split, index, u)
    for c in spec.categorical:
        params[c.name] = decl.option(c.name, c.values[0])
    return level, params


_GENERIC_RULES = ("grid", "grid-midpoints", "ood-levels")


def _draw_generic(spec: TaskSpec, split: str, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
    decl = spec.split(split)
    n = decl.size
    family = family_of(spec)
    if decl.draw == "grid":
        grid = spec.training_set(split).grid
        ks = np.unravel_index(index, grid)
        return "id", {
            d.name: _grid_value(*d.id_range, g, int(k)) for d, g, k in zip(spec.dofs, grid, ks)
        }
    if decl.draw == "grid-midpoints":
        grid = max(spec.training_sets, key=lambda ts: ts.size).grid
        cells = tuple(g - 1 for g in grid)
        total = math.prod(cells)
        stratum = int(_id_eval_order(spec.name, spec.version, spec.base_seed, n, split)[index])
        lo, hi = stratum * total // n, (stratum + 1) * total // n
        flat = lo + min(int(u[0] * (hi - lo)), hi - lo - 1)
        ks = np.unravel_index(flat, cells)
        return "id", {
            d.name: _grid_value(*d.id_range, g, int(k) + 0.5) for d, g, k in zip(spec.dofs, grid, ks)
        }
    if decl.draw == "ood-levels":
        levels = spec.ood_levels
        level = levels[index % len(levels)]
        cursor = 1
        for _attempt in range(8):
            params = {}
            for d in spec.dofs:
                ranges = d.ood_ranges if d.name in level.ood_dofs else (d.id_range,)
                params[d.name] = uniform_in(ranges, float(u[cursor]))
                cursor += 1
            if family.accept(spec, params):
                break
        else:  # pragma: no cover - probability below 1e-20 for the built-in families
            raise RuntimeError(f"{family.name}: 8 draws rejected for {sample_id(spec, split, index)}")
        return level.name, params
    raise AssertionError(decl.draw)  # pragma: no cover - draw_params dispatches only generic rules


def make_sample(spec: TaskSpec, split: str, index: int) -> SampleSpec:
    """Parameters, level and initial scene of one sample: a pure function of its key."""
    u = sample_uniforms(spec, split, index)
    level, params = draw_params(spec, split, index, u)
    placed = family_of(spec).place(spec, params, u[_PLACEMENT_OFFSET:])
    return SampleSpec(
        sample_id(spec, split, index), index, level, params, placed.initial, placed.contact_time,
        placed.frames_in_view, dict(placed.extra), placed.trajectory,
    )


def closed_form(spec: TaskSpec, sample: SampleSpec) -> tuple[np.ndarray, np.ndarray]:
    """The law's positions (T, B, 2) and velocities (T, B, 2) for a sample."""
    return family_of(spec).closed_form(spec, sample.initial)


def simulate_sample(spec: TaskSpec, sample: SampleSpec) -> Scene:
    """Box2D trajectory of a sample (imports Box2D: only generation and baselines need it)."""
    if sample.trajectory is not None:
        return sample.trajectory
    from ..world.simulate import simulate

    trajectory = simulate(sample.initial, spec.simulator, spec.frames, spec.frame_interval)
    assert isinstance(trajectory, Scene)  # no record_contacts: the scene alone
    return trajectory
