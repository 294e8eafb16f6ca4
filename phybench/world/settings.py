"""`SimulatorSettings`: how Box2D is driven, as data.

It lives in `world`, beside the simulator that reads it, so that `world` imports nothing
above it; a `TaskSpec` (`phybench.tasks.spec`) holds one and hashes it with the rest.  No
Box2D here: the scorer reads specs without importing the simulator.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SimulatorSettings:
    """How Box2D is driven.  See `phybench.world.simulate` for why each setting exists."""

    steps_per_frame: int  # Box2D steps between recorded frames
    time_scale: float  # Box2D runs k times faster: velocities x k, gravity x k^2
    length_scale: float  # Box2D world is L times larger than ours
    gravity: float  # world units / s^2, pointing down (0 for no gravity)
    density: float = 1.0  # all balls: mass proportional to area
    restitution: float = 1.0
    friction: float = 0.0  # head-on, spin-free contacts: friction never acts
    velocity_iterations: int = 15
    position_iterations: int = 20
    angular_damping: float = 0.0  # spinning bodies only (PHYRE: 0.01); omitted from the hash at 0
    walls: bool = False  # a floor and two side walls just outside the view; omitted from the hash when off
