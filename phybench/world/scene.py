"""Scene model: what the simulator produces and the renderer consumes.

A scene is a tuple of bodies (shape, colour, static or dynamic) plus per-frame poses.
It is plain data: the simulator writes it, the renderer and the parser read it, and
neither of those imports Box2D.

Coordinates (one mapping, used everywhere in phybench):
    The world is the square [0, L] x [0, L] (L = ``world_size``, 10 units), x to the
    right, y **up**, origin at the bottom-left corner.  An image of W x W pixels tiles
    that square exactly: pixel (row i, column j) is the cell
        x in [j * s, (j + 1) * s],  y in [L - (i + 1) * s, L - i * s],   s = L / W,
    so its centre is at x = (j + 0.5) * s, y = L - (i + 0.5) * s.  Row 0 is the top of
    the world.  A disc of radius r covers r / s pixels of radius.
    (The reference code maps column j to x = 10 j / (W - 1); `phybench.importers` converts.)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

WORLD_SIZE = 10.0  # world units; the square the camera sees

# Colours (RGB, uint8).
WHITE = (255, 255, 255)
RED = (255, 0, 0)
BLUE = (0, 0, 255)
BLACK = (0, 0, 0)
PHYRE_GREY = (0xB9, 0xCA, 0xD2)  # PHYRE dynamic objects
PHYRE_BLACK = (0, 0, 0)  # PHYRE static objects
PHYRE_RED = (0xF3, 0x4F, 0x46)  # PHYRE red ball
BACKGROUND = WHITE


@dataclass(frozen=True)
class Disc:
    """A filled circle."""

    radius: float  # world units


@dataclass(frozen=True)
class Rect:
    """A filled rectangle centred on the body position, rotated by the body angle."""

    width: float  # world units, along the body's x axis
    height: float  # world units, along the body's y axis


@dataclass(frozen=True)
class Ring:
    """An annulus: the points whose distance to the centre lies in [inner, outer]."""

    outer_radius: float  # world units
    inner_radius: float  # world units


@dataclass(frozen=True)
class Jar:
    """An open-topped container: a floor and two walls, as three rectangles.

    The body position is the centre of the jar's bounding box, so that a jar rotates
    like any other body.
    """

    width: float  # outer width, world units
    height: float  # outer height, world units
    thickness: float  # wall and floor thickness, world units

    def parts(self) -> tuple[tuple[float, float, Rect], ...]:
        """(x offset, y offset, rect) of the floor and the two walls, in the body frame."""
        w, h, t = self.width, self.height, self.thickness
        return (
            (0.0, -(h - t) / 2, Rect(w, t)),
            (-(w - t) / 2, 0.0, Rect(t, h)),
            ((w - t) / 2, 0.0, Rect(t, h)),
        )


@dataclass(frozen=True)
class Polygon:
    """A convex polygon, vertices counter-clockwise in the body frame (world units)."""

    vertices: tuple[tuple[float, float], ...]


Shape = Disc | Rect | Ring | Jar | Polygon


@dataclass(frozen=True)
class Body:
    """One object of a scene: its shape, its colour and whether physics moves it."""

    shape: Shape
    colour: tuple[int, int, int]
    dynamic: bool = True
    name: str = ""


@dataclass(frozen=True, eq=False)
class Scene:
    """Bodies plus their poses at every frame.

    poses: float64 (T, B, 3) with (x, y, angle): world units and radians, angle
    counter-clockwise.  Bodies are drawn in order, later ones on top.
    """

    bodies: tuple[Body, ...]
    poses: np.ndarray  # (T, B, 3)
    world_size: float = WORLD_SIZE
    velocities: np.ndarray | None = field(default=None)  # (T, B, 2) world units / s

    def __post_init__(self) -> None:
        poses = np.asarray(self.poses, dtype=np.float64)
        if poses.ndim != 3 or poses.shape[1] != len(self.bodies) or poses.shape[2] != 3:
            raise ValueError(
                f"poses must have shape (T, {len(self.bodies)}, 3), got {poses.shape}"
            )
        object.__setattr__(self, "poses", poses)

    @property
    def num_frames(self) -> int:
        return int(self.poses.shape[0])


def pixel_size(resolution: int, world_size: float = WORLD_SIZE) -> float:
    """World units per pixel."""
    return world_size / resolution


def world_to_pixel(
    x: np.ndarray, y: np.ndarray, resolution: int, world_size: float = WORLD_SIZE
) -> tuple[np.ndarray, np.ndarray]:
    """World (x, y) -> continuous pixel (column, row); pixel centres sit at k + 0.5."""
    s = world_size / resolution
    return np.asarray(x) / s, (world_size - np.asarray(y)) / s


def pixel_to_world(
    column: np.ndarray, row: np.ndarray, resolution: int, world_size: float = WORLD_SIZE
) -> tuple[np.ndarray, np.ndarray]:
    """Continuous pixel (column, row) -> world (x, y); inverse of `world_to_pixel`."""
    s = world_size / resolution
    return np.asarray(column) * s, world_size - np.asarray(row) * s
