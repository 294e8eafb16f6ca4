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
6. Static bodies: Box2D reports a rotated static body one float32 ulp off its pose
   after the first step (measured: 4.4e-7 units); their poses are reported as given.

Walls (`SimulatorSettings.walls`): a floor and two side walls just outside the view,
PHYRE's scene boundary; they are not bodies of the scene (never stored or drawn).

The simulator takes and returns the one object-level trajectory type, `Scene`: a
one-frame scene (bodies and their initial poses and velocities) in, every frame out.
Bodies may be discs, rectangles, convex polygons or jars (three fixtures on one body),
dynamic or static, spinning or not; rings collide as their outer disc.  Nothing here
knows a task's name.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from Box2D import b2CircleShape, b2PolygonShape, b2World

from .settings import SimulatorSettings
from .scene import Disc, Jar, Polygon, Rect, Ring, Scene, Shape


def _fixtures(shape: Shape, L: float) -> list:
    """Box2D shapes of one body, in Box2D units (L times ours)."""
    if isinstance(shape, Disc):
        return [b2CircleShape(radius=float(shape.radius * L))]
    if isinstance(shape, Ring):  # collides as its outer disc
        return [b2CircleShape(radius=float(shape.outer_radius * L))]
    if isinstance(shape, Rect):
        return [b2PolygonShape(box=(float(shape.width * L / 2), float(shape.height * L / 2)))]
    if isinstance(shape, Jar):
        return [
            b2PolygonShape(box=(float(r.width * L / 2), float(r.height * L / 2), (float(dx * L), float(dy * L)), 0.0))
            for dx, dy, r in shape.parts()
        ]
    if isinstance(shape, Polygon):
        return [b2PolygonShape(vertices=[(float(x * L), float(y * L)) for x, y in shape.vertices])]
    raise TypeError(f"cannot simulate {shape!r}")


def _add_walls(world: b2World, size: float, L: float, sim: SimulatorSettings) -> None:
    """A floor under the view and a wall either side of it, just outside it (never drawn)."""
    walls = world.CreateStaticBody(position=(0.0, 0.0))
    t = size  # thickness: thick enough that nothing tunnels through
    for hx, hy, cx, cy in ((size + 2 * t, t / 2, size / 2, -t / 2),  # floor: y <= 0
                           (t / 2, 2 * size, -t / 2, size), (t / 2, 2 * size, size + t / 2, size)):  # x <= 0, x >= L
        walls.CreateFixture(shape=b2PolygonShape(box=(hx * L, hy * L, (cx * L, cy * L), 0.0)),
                            friction=sim.friction, restitution=sim.restitution)
    walls.userData = -1


def _create_bodies(world: b2World, initial: Scene, sim: SimulatorSettings, euler: np.ndarray,
                   dynamic_collide: bool, ghost: int | None, densities: Sequence[float] | None = None) -> list:
    """One Box2D body per body of `initial`'s first frame, in its order (`userData` = its index),
    in Box2D units and time scale, dynamic ones started at their velocity plus the Euler offset;
    densities: per body (None: every body `sim.density`)."""
    k, L = sim.time_scale, sim.length_scale
    poses0 = initial.poses[0]  # (B, 3)
    velocities0 = np.zeros((len(initial.bodies), 2)) if initial.velocities is None else np.asarray(initial.velocities)[0]
    bodies: list = []
    for i, (spec, pose, vel) in enumerate(zip(initial.bodies, poses0, velocities0)):
        density = sim.density if densities is None else float(densities[i])
        position = (float(pose[0] * L), float(pose[1] * L))
        if spec.dynamic:
            if pose[2] != 0.0:
                body = world.CreateDynamicBody(position=position, angle=float(pose[2]), bullet=spec.bullet,
                                               fixedRotation=spec.fixed_rotation)
            else:  # the exact call the ball tasks' golden trajectories were made with
                body = world.CreateDynamicBody(position=position, bullet=spec.bullet, fixedRotation=spec.fixed_rotation)
            if not spec.fixed_rotation:
                body.angularDamping = sim.angular_damping
        else:
            body = world.CreateStaticBody(position=position, angle=float(pose[2]))
        # dynamic_collide=False: dynamic bodies pass through each other (a shared negative
        # collision group) but still meet static bodies and walls (planted interpenetration)
        group = {} if dynamic_collide or not spec.dynamic else {"groupIndex": -1}
        if ghost is not None and len(bodies) == ghost:
            group = {"maskBits": 0}
        for shape in _fixtures(spec.shape, L):
            body.CreateFixture(shape=shape, density=density, friction=sim.friction, restitution=sim.restitution,
                               **group)
        if spec.dynamic:
            v0 = (vel + euler) * (k * L)
            body.linearVelocity = (float(v0[0]), float(v0[1]))
        body.userData = len(bodies)
        bodies.append(body)
    return bodies


def simulate(initial: Scene, settings: SimulatorSettings, frames: int, frame_interval: float,
             record_contacts: bool = False, dynamic_collide: bool = True,
             ghost: int | None = None, densities: Sequence[float] | None = None) -> Scene | tuple[Scene, np.ndarray]:
    """Run Box2D from the first frame of `initial` for `frames` frames.

    initial.poses[0]: (B, 3) x, y, angle; initial.velocities[0]: (B, 2) world units / s
    (static bodies: ignored).  Returns poses (T, B, 3) and velocities (T, B, 2).

    record_contacts: also return `first_touch`, float64 (B, B): the time (s) at which
    each pair of bodies first touches (checked after every Box2D step; 0.0: touching in
    the initial scene; inf: never; walls are not bodies).  Families use it for their
    placement rules (no initial overlap; "the scene is an event").

    dynamic_collide=False: dynamic bodies do not collide with one another (planted
    interpenetration, `phybench.violations`); they still meet static bodies and walls.

    ghost: the index of a body that collides with nothing, walls included (planted
    tunnelling: a body falling through the floor).

    densities: one per body, overriding `settings.density` (planted equal-mass collisions,
    `phybench.violations_law`: the masses a law changes without changing what is drawn).
    """
    sim = settings
    k, L, spf = sim.time_scale, sim.length_scale, sim.steps_per_frame
    h = frame_interval / spf  # real seconds per step
    g = sim.gravity
    world = b2World(gravity=(0.0, -g * k * k * L), doSleep=False)
    # Euler offset (point 3): start half a step's gravity "above" the true velocity.
    euler = np.array([0.0, 0.5 * g * h])
    bodies = _create_bodies(world, initial, sim, euler, dynamic_collide, ghost, densities)
    if sim.walls:
        _add_walls(world, initial.world_size, L, sim)
    T, B = frames, len(bodies)
    first_touch = np.full((B, B), np.inf) if record_contacts else None

    def _touching(t: float) -> None:
        for contact in world.contacts:
            if contact.touching:
                i, j = contact.fixtureA.body.userData, contact.fixtureB.body.userData
                if i >= 0 and j >= 0 and first_touch[i, j] == np.inf:
                    first_touch[i, j] = first_touch[j, i] = t

    if record_contacts:
        world.Step(0.0, sim.velocity_iterations, sim.position_iterations)  # finds contacts, moves nothing
        _touching(0.0)
    raw = np.empty((T, B, 5))  # Box2D units: x, y, angle, vx, vy
    for frame in range(T):
        for b, body in enumerate(bodies):
            p, v = body.position, body.linearVelocity
            raw[frame, b] = (p.x, p.y, body.angle, v.x, v.y)
        if frame < T - 1:
            for step in range(spf):
                world.Step(h / k, sim.velocity_iterations, sim.position_iterations)
                if record_contacts:
                    _touching((frame * spf + step + 1) * h)
    poses = raw[..., :3].copy()
    poses[..., :2] /= L
    velocities = raw[..., 3:] / (k * L) - euler
    static = np.array([not b.dynamic for b in initial.bodies], dtype=bool)
    velocities[:, static] = 0.0
    # Box2D keeps poses in float32 (in its units) and moves a rotated static body's
    # reported position by an ulp after a step; a static body never moves: report its pose.
    poses[:, static] = initial.poses[0, static]
    scene = Scene(initial.bodies, poses, initial.world_size, velocities)
    return (scene, first_touch) if record_contacts else scene
