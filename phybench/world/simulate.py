"""Box2D simulation of the fundamental scenarios, made exact.

Stock Box2D (PyPI ``box2d`` 2.3.10) departs from the laws in five ways; each is fixed here
and tested in ``tests/test_simulate.py``:

1. Restitution threshold: contacts closing slower than 1 unit/s are perfectly inelastic
   (``b2_velocityThreshold`` is compiled in).  We run Box2D ``time_scale`` = k times
   faster (velocities x k, gravity x k^2, steps / k): every trajectory is the same, but
   Box2D sees closing speeds k times larger, so the threshold falls to 1/k units/s.
2. Contact position: a contact found at the end of a step has already penetrated.  Balls
   are bullets (continuous collision: Box2D finds the time of impact inside the step),
   and the world is ``length_scale`` = L times larger, so Box2D's fixed slop
   (0.005 units, the TOI target 3 x slop) shrinks L-fold in our units.  Both scales
   together also keep displacement per step under ``b2_maxTranslation`` (2 units).
3. Semi-implicit Euler: after n steps of h, y = y0 + v0 n h - g h^2 n(n+1)/2, which is
   the exact parabola of initial vertical velocity v0 - g h / 2.  So we start Box2D at
   v0 + g h / 2 (gravity pointing down): positions are then exact at every step; and
   Box2D's velocity is the mid-step one, so we report v_box - g h / 2.
4. Slow balls: a ball slower than about 0.01 units/s is brought to rest by stock Box2D
   even with sleeping off (measured: v = 0.0082 stops within 32 frames).  The time scale
   of point 1 lifts every speed k-fold, which cures this too.
5. Timing: frame k is recorded after exactly k * steps_per_frame steps, t = 0.1 k s
   (the reference records one step late).  Sleeping is off (it zeroes slow balls).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from Box2D import b2CircleShape, b2World

from ..tasks.sampling import InitialState, SampleSpec
from ..tasks.spec import TaskSpec


@dataclass(frozen=True)
class States:
    """Per-frame states of a simulated sample (world units, seconds)."""

    positions: np.ndarray  # (T, B, 2) float64
    velocities: np.ndarray  # (T, B, 2) float64
    radii: np.ndarray  # (B,)
    colours: np.ndarray  # (B, 3) uint8


def simulate_initial(spec: TaskSpec, initial: InitialState) -> States:
    """Run Box2D from an initial state for `spec.frames` frames."""
    sim = spec.simulator
    k, L, spf = sim.time_scale, sim.length_scale, sim.steps_per_frame
    h = spec.frame_interval / spf  # real seconds per step
    g = sim.gravity
    world = b2World(gravity=(0.0, -g * k * k * L), doSleep=False)
    # Euler offset (point 3): start half a step's gravity "above" the true velocity.
    euler = np.array([0.0, 0.5 * g * h])
    bodies = []
    for pos, vel, radius in zip(initial.positions, initial.velocities, initial.radii):
        body = world.CreateDynamicBody(
            position=(float(pos[0] * L), float(pos[1] * L)), bullet=True, fixedRotation=True
        )
        body.CreateFixture(
            shape=b2CircleShape(radius=float(radius * L)),
            density=sim.density,
            friction=sim.friction,
            restitution=sim.restitution,
        )
        v0 = (vel + euler) * (k * L)
        body.linearVelocity = (float(v0[0]), float(v0[1]))
        bodies.append(body)
    T, B = spec.frames, len(bodies)
    raw = np.empty((T, B, 4))  # Box2D units: x, y, vx, vy
    for frame in range(T):
        for b, body in enumerate(bodies):
            p, v = body.position, body.linearVelocity
            raw[frame, b] = (p.x, p.y, v.x, v.y)
        if frame < T - 1:
            for _ in range(spf):
                world.Step(h / k, sim.velocity_iterations, sim.position_iterations)
    positions = raw[..., :2] / L
    velocities = raw[..., 2:] / (k * L) - euler
    colours = np.array(initial.colours, dtype=np.uint8).reshape(B, 3)
    return States(positions, velocities, np.asarray(initial.radii, dtype=np.float64), colours)


def simulate(spec: TaskSpec, sample: SampleSpec) -> States:
    return simulate_initial(spec, sample.initial)
