"""Object parser: uint8 video -> per-frame centre, radius and flags of each coloured ball.

This is the step between a (generated or ground-truth) video and the velocity metric.
It imports nothing from phybench but `scene`: the parser must not know how a video was
made, only the colours to look for and the pixel mapping.

How it works, and why:

* **Coverage, not masks.**  Every pixel is unmixed into the fraction ``c`` of it that
  each object covers, under the model ``pixel = background * (1 - c) + colour * c``
  that our renderer uses (`phybench.world.render` blends exact disc areas that way and
  rounds to uint8).  A thresholded mask would quantise positions to ~1/(perimeter)
  pixel; coverage keeps the sub-pixel information.
* **Luma for how much, chroma for whose.**  Lossy video (H.264 yuv420p, the reference
  data) keeps luma at full resolution but averages chroma over 2 x 2 blocks, so a
  blue ball's edge pixels decode as dark grey-blue and a plain RGB unmix calls part
  of them red.  With one colour the coverage is a luma-dominated projection; with
  several, the chroma only splits a pixel between the colours (its direction) and
  the luma sets the total.  On lossless video both are exact.
* **Layers.**  Colours are given in drawing order, later ones on top (blue over red in
  the collision task).  An object's visible coverage is divided by what the objects
  drawn over it leave free, as our renderer's sequential blend implies, so a red ball
  touching a blue one keeps its full area.
* **Blobs.**  Each object gets its own window per frame: the bounding box of its core
  pixels (coverage >= `_CORE`) plus one pixel, which holds its whole faint rim (down to
  one uint8 level) and keeps the other balls and far-off junk out.  Inside, the core's
  8-connected blobs are found (a cheap run test first: a disc's core is one run per
  row; `ndimage.label` only when that fails); an object keeps the blobs that hold a
  real share of its mass, drops dust and lossy cross-talk (slivers at most 2 px thick
  beside a thick blob: colour bleed from another ball's rim), and two substantial, thick
  blobs mean the ball was torn (SPLIT).  A blob far more spread than a disc is no ball
  (NOT_A_BALL), unless its solid core (coverage >= 0.45) is one: the middle ghost of a fast
  ball in blended frames (`_solid_cores`, flagged SPLIT).
* **Exact-disc centres.**  A coverage-weighted centroid over pixel centres is biased by
  the in-pixel first moments of the rim pixels (about 1e-3 px, varying smoothly with
  the sub-pixel position: a velocity floor of ~0.0005 units/s).  With exact area
  coverage the cumulative column sums of a disc are the disc's area left of each pixel
  boundary, a known function of (boundary - centre) / radius, so each boundary gives
  the centre exactly; we average those estimates (weighted by how well each is
  conditioned).  What is left is the uint8 rounding of the blend: ~2e-5 world units
  per frame at 128 px, a velocity floor of ~2.7e-4 units/s.  This is done for the
  "tile" mapping (our renderer); other renderers (the reference's; generated blobs
  that are not discs) get the centroid, and so does every flagged frame but one: a
  disc cut by one image edge, whose radius is known from the video's whole frames, is
  still exact across the cut.
* **Speed.**  One pass over the whole video (a byte compare, then `any` over rows and
  columns, 8 flags per uint64) finds each frame's rows and columns that differ from the
  background; all later work happens on small windows, vectorised over frames, in
  float32, with `np.einsum` rather than BLAS (see `_row_sums`).  About 1.2 ms per
  32 x 128 x 128 single-ball clip and 2.7 ms per collision clip in one process
  (benchmarks/bench_parse.py).

Where the parts live (issue 50 split this module along its seams; the public names stay here):
`parse_flags` (the flag bits and thresholds), `unmix` (pixels to coverage; the content windows),
`blobs` (one object in its windows: blobs, border cuts, centre), `solid_core` (is a blob a ball:
spread, peak, and the solid core of a blended frame's ghost), `discs` (exact-disc centres).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ...world.scene import WORLD_SIZE
from .blobs import _object_window, _occluded, _parse_object
from .parse_flags import COLOUR_CHANGED, IDENTITY, MISSING, NOT_A_BALL, PARTLY_OUT, SPLIT, _CORE, _FLAG_NAMES
from .unmix import _content_windows, _unmixer

__all__ = [
    "MISSING",
    "PARTLY_OUT",
    "SPLIT",
    "COLOUR_CHANGED",
    "NOT_A_BALL",
    "IDENTITY",
    "PixelMapping",
    "TILE",
    "PHYWORLD",
    "Parsed",
    "parse_video",
    "coverage",
    "describe_flags",
]


# ------------------------------------------------------------------ mapping
@dataclass(frozen=True)
class PixelMapping:
    """How pixel indices map to world coordinates.

    Continuous pixel coordinates (col, row) follow `phybench.world.scene.world_to_pixel`:
    pixel (row i, column j) is the unit square [j, j+1] x [i, i+1], its centre at
    (j + 0.5, i + 0.5), row 0 at the top.

    kind "tile" (phybench): the image tiles the world square, pixel size s = L / W,
        x = col * s, y = L - row * s.
    kind "grid" (the phyworld reference renderer): pixel centres are grid points,
        column j at x = L j / (W - 1), row i at y = L (W - 1 - i) / (W - 1); s = L / (W - 1).
    """

    kind: str
    world_size: float = WORLD_SIZE

    def __post_init__(self) -> None:
        if self.kind not in ("tile", "grid"):
            raise ValueError(f"PixelMapping kind must be 'tile' or 'grid', got {self.kind!r}")
        if not self.world_size > 0:
            raise ValueError(f"world_size must be positive, got {self.world_size}")

    def pixel_size(self, width: int) -> float:
        """World units per pixel for a `width`-pixel image."""
        if self.kind == "tile":
            return self.world_size / width
        if width < 2:
            raise ValueError("a 'grid' mapping needs at least 2 pixels")
        return self.world_size / (width - 1)

    def _offset(self) -> float:
        return 0.0 if self.kind == "tile" else 0.5

    def to_world(self, col, row, width: int) -> tuple[np.ndarray, np.ndarray]:
        """Continuous pixel (col, row) -> world (x, y), world units."""
        s, o = self.pixel_size(width), self._offset()
        return (np.asarray(col) - o) * s, self.world_size - (np.asarray(row) - o) * s

    def to_pixel(self, x, y, width: int) -> tuple[np.ndarray, np.ndarray]:
        """World (x, y) -> continuous pixel (col, row); the inverse of `to_world`."""
        s, o = self.pixel_size(width), self._offset()
        return np.asarray(x) / s + o, (self.world_size - np.asarray(y)) / s + o


TILE = PixelMapping("tile")
PHYWORLD = PixelMapping("grid")


@dataclass
class Parsed:
    """What the parser found, per frame and object (objects in the order of `colours`).

    positions: float64 (T, K, 2) world units, centre of each object; NaN when MISSING.
    radii: float64 (T, K) world units, sqrt(visible area / pi); NaN when MISSING (biased
        low when PARTLY_OUT).
    flags: uint8 (T, K) bit mask of MISSING, PARTLY_OUT, SPLIT, COLOUR_CHANGED, NOT_A_BALL, IDENTITY.
    """

    positions: np.ndarray
    radii: np.ndarray
    flags: np.ndarray
    identity: Any = None  # `phybench.scoring.physics.identity.Identity` where the identity check ran

    def clean(self) -> np.ndarray:
        """bool (T, K): frames where the object was found whole, in view, in its colour."""
        return self.flags == 0


def describe_flags(flags: int) -> str:
    """'partly_out|split' for a flag value; 'ok' for 0."""
    names = [name for bit, name in _FLAG_NAMES.items() if flags & bit]
    return "|".join(names) or "ok"


# ------------------------------------------------------------------ public
def parse_video(
    video: np.ndarray,
    colours: Sequence[tuple[int, int, int]],
    mapping: PixelMapping = TILE,
    background: tuple[int, int, int] = (255, 255, 255),
    *,
    colour_tolerance: float = 80.0,
    refine: bool | None = None,
) -> Parsed:
    """Find each coloured object in every frame of `video`.

    video: uint8 (T, H, W, 3), H == W.  colours: the objects' RGB colours, one object per
    colour, in drawing order (later ones on top).  colour_tolerance: RGB distance beyond
    which an object's fitted colour counts as COLOUR_CHANGED.  refine: use the
    exact-disc centre estimator on unflagged frames; default: only for the "tile"
    mapping, the one whose renderer has exact area coverage.

    Never raises on pixel content (all-white, all-black, noise): what is not found is
    flagged MISSING.  Raises ValueError on a malformed video or colour list.
    """
    video = _check_video(video)
    unmix = _unmixer(_colour_key(colours), _colour_key([background])[0])
    num_frames, height, width, _ = video.shape
    k_count = unmix.colours.shape[0]
    refine = (mapping.kind == "tile") if refine is None else bool(refine)

    positions = np.full((num_frames, k_count, 2), np.nan)
    radii = np.full((num_frames, k_count), np.nan)
    flags = np.full((num_frames, k_count), MISSING, dtype=np.uint8)
    if num_frames == 0 or k_count == 0:
        return Parsed(positions, radii, flags)

    window = _content_windows(video, unmix)  # (T, h, w, 3) uint8, (T,), (T,)
    if window is None:  # nothing but background anywhere
        return Parsed(positions, radii, flags)
    pixels, row0, col0 = window
    cover = unmix.coverage(pixels)  # (K, T, h, w) float32
    objects = [_object_window(cover[k], pixels, row0, col0) for k in range(k_count)]
    scale = mapping.pixel_size(width)
    # Top layer first: a ball drawn later hides part of one drawn earlier, and what is left of
    # the lower one (a crescent) is spread like no disc is; only a clean ball above counts.
    above = np.zeros(cover.shape[1:], dtype=bool)  # (T, h, w) core of the clean balls drawn above
    for k in reversed(range(k_count)):
        own = objects[k]
        if own is None:  # not a single core pixel of this colour anywhere
            continue
        hidden = _occluded(above, own, row0, col0)  # (T,)
        cu, cv, radius, f = _parse_object(
            *own, width, unmix.colours[k], unmix.background, refine, colour_tolerance, hidden
        )
        above |= (cover[k] >= _CORE) & ((f & (MISSING | NOT_A_BALL)) == 0)[:, None, None]
        present = (f & MISSING) == 0
        x, y = mapping.to_world(cu, cv, width)
        positions[:, k, 0] = np.where(present, x, np.nan)
        positions[:, k, 1] = np.where(present, y, np.nan)
        radii[:, k] = np.where(present, radius * scale, np.nan)
        flags[:, k] = f
    return Parsed(positions, radii, flags)


def coverage(
    pixels: np.ndarray,
    colours: Sequence[tuple[int, int, int]],
    background: tuple[int, int, int] = (255, 255, 255),
) -> np.ndarray:
    """Per-colour coverage of each pixel: float32 (K, ...) in [0, 1] for uint8 (..., 3).

    The raw unmix that `parse_video` starts from (no blobs, no thresholds).  Exact up to
    the uint8 rounding for pixels made by sequential blends
    ``p = p (1 - c_k) + colour_k c_k`` in the order of `colours`.
    """
    unmix = _unmixer(_colour_key(colours), _colour_key([background])[0])
    pixels = np.asarray(pixels)
    if pixels.dtype != np.uint8 or pixels.shape[-1:] != (3,):
        raise ValueError(f"pixels must be uint8 (..., 3), got {pixels.dtype} {pixels.shape}")
    flat = pixels.reshape(1, -1, 1, 3)
    return unmix.coverage(flat).reshape((unmix.colours.shape[0],) + pixels.shape[:-1])


# ------------------------------------------------------------------ checks
def _check_video(video: np.ndarray) -> np.ndarray:
    video = np.asarray(video)
    if video.ndim != 4 or video.shape[-1] != 3:
        raise ValueError(f"video must have shape (T, H, W, 3), got {video.shape}")
    if video.dtype != np.uint8:
        raise ValueError(f"video must be uint8, got {video.dtype}")
    if video.shape[1] != video.shape[2]:
        raise ValueError(
            f"video frames must be square (H == W), got H={video.shape[1]}, W={video.shape[2]}"
        )
    if video.shape[1] < 2:
        raise ValueError(f"video frames must be at least 2 x 2 pixels, got {video.shape[1:3]}")
    return np.ascontiguousarray(video)


def _colour_key(colours: Sequence[tuple[int, int, int]]) -> tuple[tuple[float, float, float], ...]:
    """Colours as a hashable tuple of float triples, checked for shape and range."""
    array = np.asarray(colours, dtype=np.float64)
    if array.size == 0:
        return ()
    if array.ndim != 2 or array.shape[1] != 3:
        raise ValueError(f"colours must be (R, G, B) triples, got {np.shape(colours)}")
    if not np.all(np.isfinite(array)) or array.min() < 0 or array.max() > 255:
        raise ValueError(f"colour values must be in [0, 255], got {array.tolist()}")
    return tuple((float(r), float(g), float(b)) for r, g, b in array)


