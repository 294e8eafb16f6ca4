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

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Iterable

import numpy as np
from numpy.typing import ArrayLike

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
COLOUR_NAMES = {RED: "red", BLUE: "blue", BLACK: "black", PHYRE_GREY: "grey", PHYRE_RED: "red"}


def rgb(colour: Iterable[Any]) -> tuple[int, int, int]:
    """An RGB triple of Python ints from a list, an array row or a tuple: the type `Body.colour` holds."""
    r, g, b = (int(c) for c in colour)
    return r, g, b


SHAPE_NOUNS = {"disc": "ball", "rect": "bar", "ring": "ring", "jar": "jar", "polygon": "polygon"}


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


SHAPES: dict[str, type] = {"disc": Disc, "rect": Rect, "ring": Ring, "jar": Jar, "polygon": Polygon}


def shape_kind(shape: Shape) -> str:
    """'disc', 'rect', ... : the name a stored row uses for a shape."""
    for kind, cls in SHAPES.items():
        if isinstance(shape, cls):
            return kind
    raise TypeError(f"not a shape: {shape!r}")


def bounding_radius(shape: Shape) -> float:
    """Largest distance of the shape from the body position, world units.

    A body whose centre lies at least this far inside the image is wholly in view at any
    angle; for a disc it is the radius, so in-view tests of discs are unchanged.
    """
    if isinstance(shape, Disc):
        return shape.radius
    if isinstance(shape, Ring):
        return shape.outer_radius
    if isinstance(shape, (Rect, Jar)):
        return 0.5 * math.hypot(shape.width, shape.height)
    return max(math.hypot(x, y) for x, y in shape.vertices)


@dataclass(frozen=True)
class Body:
    """One object of a scene: its shape, its colour and whether physics moves it.

    attrs: categorical attributes a task varies and an analysis reads back, e.g.
    (("shape", "square"), ("colour", "blue")); they never change how a body is drawn.
    bullet / fixed_rotation: how Box2D moves a dynamic body (continuous collision;
    no spin: head-on ball collisions never spin, and a free rigid body may).
    """

    shape: Shape
    colour: tuple[int, int, int]
    dynamic: bool = True
    name: str = ""
    attrs: tuple[tuple[str, str], ...] = ()
    bullet: bool = True
    fixed_rotation: bool = True

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data: what a stored row keeps of a body that is not a plain disc."""
        return {
            "shape": shape_kind(self.shape),
            **{k: v for k, v in asdict(self.shape).items()},
            "colour": list(self.colour),
            "dynamic": self.dynamic,
            "name": self.name,
            "attrs": [list(a) for a in self.attrs],
            "bullet": self.bullet,
            "fixed_rotation": self.fixed_rotation,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Body":
        kind = SHAPES[d["shape"]]
        dims = {f.name: d[f.name] for f in fields(kind)}
        if kind is Polygon:
            dims["vertices"] = tuple(tuple(float(c) for c in v) for v in dims["vertices"])
        return cls(
            kind(**dims),
            rgb(d["colour"]),
            bool(d["dynamic"]),
            str(d.get("name", "")),
            tuple((str(k), str(v)) for k, v in d.get("attrs", ())),
            bool(d.get("bullet", True)),
            bool(d.get("fixed_rotation", True)),
        )

    def describe(self) -> str:
        """How messages name the body: its name, else colour and shape ("red ball")."""
        if self.name:
            return self.name
        colour = COLOUR_NAMES.get(rgb(self.colour), "rgb(%d, %d, %d)" % rgb(self.colour))
        return f"{colour} {SHAPE_NOUNS[shape_kind(self.shape)]}"

    @property
    def is_plain_disc(self) -> bool:
        """A dynamic disc with no attributes: a row stores it as (radius, colour) alone."""
        return isinstance(self.shape, Disc) and self.dynamic and not self.attrs and self.bullet and self.fixed_rotation


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

    # The object-level trajectory: one type from sampling to parsing.  Sampling builds
    # a one-frame scene (the initial state), the simulator extends it to every frame,
    # splits store it, the renderer draws it and the scorer compares parsed objects
    # with it.
    @property
    def positions(self) -> np.ndarray:
        """(T, B, 2) body positions, world units."""
        return self.poses[..., :2]

    @property
    def angles(self) -> np.ndarray:
        """(T, B) body angles, radians counter-clockwise."""
        return self.poses[..., 2]

    @property
    def radii(self) -> np.ndarray:
        """(B,) bounding radius of each body (a disc's radius), world units."""
        return np.array([bounding_radius(b.shape) for b in self.bodies], dtype=np.float64)

    @property
    def colours(self) -> np.ndarray:
        """(B, 3) uint8 RGB."""
        return np.array([b.colour for b in self.bodies], dtype=np.uint8).reshape(len(self.bodies), 3)

    def frames(self, index: slice | np.ndarray | list[int]) -> "Scene":
        """The same bodies over a subset of frames (e.g. the condition frames)."""
        vel = None if self.velocities is None else self.velocities[index]
        return Scene(self.bodies, self.poses[index], self.world_size, vel)

    @classmethod
    def discs(
        cls,
        positions: ArrayLike,
        velocities: ArrayLike | None,
        radii: ArrayLike,
        colours: ArrayLike,
        world_size: float = WORLD_SIZE,
    ) -> "Scene":
        """Plain dynamic discs: positions (T, B, 2) or (B, 2) for one frame."""
        positions = np.asarray(positions, dtype=np.float64)
        if positions.ndim == 2:
            positions = positions[None]
        T, B, _ = positions.shape
        poses = np.zeros((T, B, 3))
        poses[..., :2] = positions
        if velocities is not None:
            velocities = np.asarray(velocities, dtype=np.float64).reshape(T, B, 2)
        bodies = tuple(
            Body(Disc(float(r)), rgb(colour)) for r, colour in zip(np.asarray(radii), np.asarray(colours))
        )
        return cls(bodies, poses, world_size, velocities)


def body_bounds(scene: Scene) -> np.ndarray:
    """float64 (T, B, 4): each body's exact axis-aligned box (xmin, ymin, xmax, ymax) per frame.

    Exact for every shape at any angle (a jar's box is its outer rectangle's), so a
    placement rule can ask "is everything in view" without a bounding-circle margin.
    """
    T, B = scene.poses.shape[:2]
    out = np.empty((T, B, 4))
    for b, body in enumerate(scene.bodies):
        x, y, a = scene.poses[:, b, 0], scene.poses[:, b, 1], scene.poses[:, b, 2]
        shape = body.shape
        if isinstance(shape, (Disc, Ring)):
            ex = ey = bounding_radius(shape)
        elif isinstance(shape, (Rect, Jar)):
            c, s_ = np.abs(np.cos(a)), np.abs(np.sin(a))
            ex = c * shape.width / 2 + s_ * shape.height / 2
            ey = s_ * shape.width / 2 + c * shape.height / 2
        else:
            v = np.asarray(shape.vertices, dtype=np.float64)  # (V, 2)
            c, s_ = np.cos(a)[:, None], np.sin(a)[:, None]
            vx, vy = c * v[:, 0] - s_ * v[:, 1], s_ * v[:, 0] + c * v[:, 1]  # (T, V)
            out[:, b] = np.stack([x + vx.min(1), y + vy.min(1), x + vx.max(1), y + vy.max(1)], axis=-1)
            continue
        out[:, b] = np.stack([x - ex, y - ey, x + ex, y + ey], axis=-1)
    return out


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
