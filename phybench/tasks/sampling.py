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
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..world import laws
from ..world.scene import BLUE, RED
from .spec import TaskSpec

_WORDS = 64  # random words per sample
_PLACEMENT_OFFSET = 48  # placement uses words [48, 64): redraws of parameters never shift it
_COLLISION_TC_CANDIDATES = 16
_COLLISION_XC_CANDIDATES = 48


@dataclass(frozen=True)
class InitialState:
    """Where everything starts.  Arrays are float64 world units (and per second)."""

    positions: np.ndarray  # (B, 2)
    velocities: np.ndarray  # (B, 2)
    radii: np.ndarray  # (B,)
    colours: tuple[tuple[int, int, int], ...]


@dataclass(frozen=True)
class SampleSpec:
    """One sample before simulation: identity, parameters, level, initial state."""

    sample_id: str
    index: int
    level: str  # "id" or an OOD level name
    params: dict[str, float]
    initial: InitialState
    contact_time: float = float("nan")  # seconds; collision only
    frames_in_view: int = 0  # frames with every ball fully in view (closed form)


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
def _id_eval_order(name: str, version: int, base_seed: int, size: int) -> np.ndarray:
    """A fixed permutation of the id-eval strata (depends on the task, not the index)."""
    seq = np.random.SeedSequence(entropy=base_seed, spawn_key=(_key(name), version, _key("id-eval-order")))
    keys = seq.generate_state(size, dtype=np.uint64)
    return np.argsort(keys, kind="stable")


def _grid_value(lo: float, hi: float, n: int, k: float) -> float:
    """Point k of an n-point grid over [lo, hi] (k may be fractional for midpoints)."""
    return lo + (hi - lo) * k / (n - 1)


def _uniform_in(intervals: tuple[tuple[float, float], ...], u: float) -> float:
    """u in [0, 1) -> uniform over the union of disjoint intervals (length-weighted)."""
    lengths = [b - a for a, b in intervals]
    x = u * sum(lengths)
    for (a, b), length in zip(intervals, lengths):
        if x < length:
            return a + x
        x -= length
    return intervals[-1][1]


def draw_params(spec: TaskSpec, split: str, index: int, u: np.ndarray) -> tuple[str, dict[str, float]]:
    """(level, {dof: value}) of sample `index`."""
    n = spec.split_size(split)
    if not 0 <= index < n:
        raise IndexError(f"{spec.name}/{split} has {n} samples; index {index} is out of range")
    if spec.is_training(split):
        grid = spec.training_set(split).grid
        ks = np.unravel_index(index, grid)
        return "id", {
            d.name: _grid_value(*d.id_range, g, int(k)) for d, g, k in zip(spec.dofs, grid, ks)
        }
    if split == "id-eval":
        grid = max(spec.training_sets, key=lambda ts: ts.size).grid
        cells = tuple(g - 1 for g in grid)
        total = math.prod(cells)
        stratum = int(_id_eval_order(spec.name, spec.version, spec.base_seed, n)[index])
        lo, hi = stratum * total // n, (stratum + 1) * total // n
        flat = lo + min(int(u[0] * (hi - lo)), hi - lo - 1)
        ks = np.unravel_index(flat, cells)
        return "id", {
            d.name: _grid_value(*d.id_range, g, int(k) + 0.5) for d, g, k in zip(spec.dofs, grid, ks)
        }
    if split == "ood-eval":
        levels = spec.ood_levels
        level = levels[index % len(levels)]
        cursor = 1
        for _attempt in range(8):
            params = {}
            for d in spec.dofs:
                ranges = d.ood_ranges if d.name in level.ood_dofs else (d.id_range,)
                params[d.name] = _uniform_in(ranges, float(u[cursor]))
                cursor += 1
            if spec.scenario != "collision":
                break
            if params["velocity_1"] + params["velocity_2"] >= spec.min_approach_speed:
                break
        else:  # pragma: no cover - probability below 1e-20
            raise RuntimeError(f"could not draw approaching balls for {sample_id(spec, split, index)}")
        return level.name, params
    raise KeyError(f"unknown split {split!r} for task {spec.name!r}; known: {', '.join(spec.split_names)}")


# ------------------------------------------------------------------ placement
def _frames_possible(travel_per_frame: float, room: float, frames: int) -> int:
    """Most consecutive frames a ball moving `travel_per_frame` stays within `room`."""
    if travel_per_frame <= 0.0:
        return frames
    return int(min(frames, math.floor(room / travel_per_frame * (1 - 1e-12)) + 1))


def _place_uniform(spec: TaskSpec, p: dict[str, float], u: np.ndarray) -> tuple[InitialState, int]:
    r, v, L, dt = p["radius"], p["velocity"], spec.world_size, spec.frame_interval
    n_max = _frames_possible(v * dt, L - 2 * r, spec.frames)
    n = min(spec.min_frames_in_view, n_max)
    x_hi = max(r, L - r - v * dt * (n - 1))
    x0 = r + u[0] * (x_hi - r)
    y0 = r + u[1] * (L - 2 * r)
    state = InitialState(np.array([[x0, y0]]), np.array([[v, 0.0]]), np.array([r]), (RED,))
    return state, n


def _place_parabola(spec: TaskSpec, p: dict[str, float], u: np.ndarray) -> tuple[InitialState, int]:
    r, v, L, dt = p["radius"], p["velocity"], spec.world_size, spec.frame_interval
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
    state = InitialState(np.array([[x0, y0]]), np.array([[v, 0.0]]), np.array([r]), (RED,))
    return state, n


def _place_collision(spec: TaskSpec, p: dict[str, float], u: np.ndarray) -> tuple[InitialState, int, float]:
    """Choose the contact instant and point so both balls stay in view longest.

    Candidates (contact time tc, contact point xc) on a jittered grid; keep those with
    both balls fully in view during the condition frames (if any can), then those with
    at least min(24, best achievable) frames fully in view; draw one uniformly.
    """
    r1, r2 = p["radius_1"], p["radius_2"]
    v1, v2 = p["velocity_1"], p["velocity_2"]
    L, dt, T = spec.world_size, spec.frame_interval, spec.frames
    m1, m2 = laws.disc_mass(r1), laws.disc_mass(r2)
    w1, w2 = laws.elastic_1d(m1, m2, v1, -v2)
    t_lo = spec.earliest_contact
    t_hi = dt * (T - 1) - dt * spec.min_frames_after_contact  # latest allowed contact
    tcs = t_lo + (np.arange(_COLLISION_TC_CANDIDATES) + u[0]) * (t_hi - t_lo) / _COLLISION_TC_CANDIDATES
    xcs = 2 * r1 + (np.arange(_COLLISION_XC_CANDIDATES) + u[1]) * (L - 2 * r2 - 2 * r1) / _COLLISION_XC_CANDIDATES
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
    positions = np.array([[xc_ - r1 - v1 * tc_, y], [xc_ + r2 + v2 * tc_, y]])
    velocities = np.array([[v1, 0.0], [-v2, 0.0]])
    state = InitialState(positions, velocities, np.array([r1, r2]), (RED, BLUE))
    return state, int(count[kk[pick], mm[pick]]), tc_


def make_sample(spec: TaskSpec, split: str, index: int) -> SampleSpec:
    """Parameters, level and initial state of one sample: a pure function of its key."""
    u = sample_uniforms(spec, split, index)
    level, params = draw_params(spec, split, index, u)
    place = u[_PLACEMENT_OFFSET:]
    tc = float("nan")
    if spec.scenario == "uniform":
        initial, n_view = _place_uniform(spec, params, place)
    elif spec.scenario == "parabola":
        initial, n_view = _place_parabola(spec, params, place)
    elif spec.scenario == "collision":
        initial, n_view, tc = _place_collision(spec, params, place)
    else:  # pragma: no cover - TaskSpec restricts scenarios
        raise ValueError(spec.scenario)
    return SampleSpec(sample_id(spec, split, index), index, level, params, initial, tc, n_view)


def closed_form(spec: TaskSpec, sample: SampleSpec) -> tuple[np.ndarray, np.ndarray]:
    """The law's positions (T, B, 2) and velocities (T, B, 2) for a sample."""
    t = laws.frame_times(spec.frames, spec.frame_interval)
    init = sample.initial
    if spec.scenario == "collision":
        pos, vel, _ = laws.collision(
            init.positions, init.radii, (init.velocities[0, 0], -init.velocities[1, 0]), t,
            spec.simulator.density,
        )
        return pos, vel
    g = spec.simulator.gravity
    pos, vel = laws.ballistic(init.positions[0], init.velocities[0], g, t)
    return pos[:, None, :], vel[:, None, :]
