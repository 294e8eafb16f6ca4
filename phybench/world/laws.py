"""Closed-form laws of the fundamental scenarios.

These are what the simulated trajectories must obey (tests compare Box2D with them),
what the placement code uses to keep balls in view, and what the scorer and the
physics-oracle baseline reason with.  Pure numpy; no simulator.
"""
from __future__ import annotations

import numpy as np


def elastic_1d(m1: float, m2: float, u1: float, u2: float) -> tuple[float, float]:
    """Velocities after a perfectly elastic 1-D collision (momentum and energy kept)."""
    total = m1 + m2
    v1 = ((m1 - m2) * u1 + 2.0 * m2 * u2) / total
    v2 = ((m2 - m1) * u2 + 2.0 * m1 * u1) / total
    return v1, v2


def disc_mass(radius: float, density: float = 1.0) -> float:
    """Mass of a disc; Box2D's convention (area times density)."""
    return density * np.pi * radius * radius


def frame_times(frames: int, frame_interval: float) -> np.ndarray:
    """(T,) seconds; frame k is the state at t = k * frame_interval exactly."""
    return np.arange(frames, dtype=np.float64) * frame_interval


def ballistic(
    position: np.ndarray, velocity: np.ndarray, gravity: float, t: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Free flight under gravity (0, -g): positions (T, 2) and velocities (T, 2)."""
    t = t[:, None]  # (T, 1)
    accel = np.array([0.0, -gravity])
    pos = position[None, :] + velocity[None, :] * t + 0.5 * accel[None, :] * t * t
    vel = velocity[None, :] + accel[None, :] * t
    return pos, vel


def contact_time(x1: float, x2: float, r1: float, r2: float, v1: float, v2: float) -> float:
    """When two balls on one horizontal line first touch (ball 1 left, moving +v1;
    ball 2 right, moving -v2).  Infinite if they never meet."""
    gap = x2 - x1 - r1 - r2  # world units
    closing = v1 + v2  # world units / s
    if closing <= 0.0:
        return float("inf")
    return max(gap, 0.0) / closing


def collision(
    positions: np.ndarray,
    radii: np.ndarray,
    speeds: tuple[float, float],
    t: np.ndarray,
    density: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Head-on elastic collision of two balls at one height.

    positions: (2, 2) initial centres; radii: (2,); speeds: (v1, v2) with ball 1
    moving +x at v1 and ball 2 moving -x at v2.  Returns positions (T, 2, 2),
    velocities (T, 2, 2) and the contact time in seconds.
    """
    (x1, y), (x2, _) = positions
    r1, r2 = radii
    v1, v2 = speeds
    tc = contact_time(x1, x2, r1, r2, v1, v2)
    u1, u2 = elastic_1d(disc_mass(r1, density), disc_mass(r2, density), v1, -v2)
    before = t < tc  # (T,)
    dt_after = np.where(before, 0.0, t - tc)
    t_before = np.minimum(t, tc)
    xs1 = x1 + v1 * t_before + u1 * dt_after
    xs2 = x2 - v2 * t_before + u2 * dt_after
    vx1 = np.where(before, v1, u1)
    vx2 = np.where(before, -v2, u2)
    T = len(t)
    pos = np.empty((T, 2, 2))
    pos[:, 0, 0], pos[:, 1, 0], pos[:, :, 1] = xs1, xs2, y
    vel = np.zeros((T, 2, 2))
    vel[:, 0, 0], vel[:, 1, 0] = vx1, vx2
    return pos, vel, tc


def fully_in_view(positions: np.ndarray, radii: np.ndarray, world_size: float) -> np.ndarray:
    """(T, B) bool: each ball lies wholly inside the square [0, L]^2."""
    r = np.asarray(radii)[None, :, None]  # (1, B, 1)
    inside: np.ndarray = (positions >= r) & (positions <= world_size - r)  # (T, B, 2)
    return np.asarray(inside.all(axis=-1))  # inside is at least 3-D: always an array, never a scalar
