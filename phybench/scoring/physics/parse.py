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
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple, Sequence

import numpy as np
from scipy import ndimage

from ...world.scene import WORLD_SIZE

__all__ = [
    "MISSING",
    "PARTLY_OUT",
    "SPLIT",
    "COLOUR_CHANGED",
    "NOT_A_BALL",
    "PixelMapping",
    "TILE",
    "PHYWORLD",
    "Parsed",
    "parse_video",
    "coverage",
    "describe_flags",
]

# Per-frame, per-object flag bits (uint8).
MISSING = 1  # no pixels of that colour: position and radius are NaN
PARTLY_OUT = 2  # the object touches the image border: centre from a partial view
SPLIT = 4  # its pixels form two or more substantial blobs (e.g. a torn ball)
COLOUR_CHANGED = 8  # its colour is off the expected one by more than the tolerance
NOT_A_BALL = 16  # (always with MISSING) ink of its colour, but no ball: noise, a smear, a frame-wide blob
_FLAG_NAMES = {
    MISSING: "missing",
    PARTLY_OUT: "partly_out",
    SPLIT: "split",
    COLOUR_CHANGED: "colour_changed",
    NOT_A_BALL: "not_a_ball",
}

_CORE = 0.15  # coverage that makes a pixel part of a blob; above lossy-video ringing
_MIN_MASS = 0.5  # px^2: less coverage than this in a frame counts as no object
_BLOB_SHARE = 0.1  # a blob holding less than this share of the object's largest is dust
_FREE_FLOOR = 0.25  # un-hide a lower layer only where the upper ones leave this much free
_EXACT_FREE_FLOOR = 0.02  # ... or this much, in a pixel that is an exact layered blend
_EXACT_LEVELS = 1.5  # uint8 levels within which a pixel counts as an exact blend
_CHROMA_WEIGHT = 0.25  # weight of chroma against luma when one colour sets the coverage
_MIN_SHARE = 0.02  # below this chroma signal a pixel is split by plain RGB least squares
_REFINE_MIN_RADIUS = 1.0  # px: smaller blobs keep the centroid
_CUT_MARGIN = 0.05  # px: how far past the image edge a disc must reach to be PARTLY_OUT
_WHOLE_SHARE = 0.9  # a piece on the image border with less of the video's whole-disc area is PARTLY_OUT
_BORDER_GAP = 3  # px: blobs this close to an image edge are judged across that edge only
_MIN_PEAK = 0.45  # a blob with no pixel covered more than this is no ball (a smear)
_MAX_SPREAD = 2.5  # `_spread` above which a whole, unsplit blob is no ball (a disc is 1; blur sigma adds 4 s^2 / R^2)

# BT.601 full-range RGB -> (Y, Cb, Cr), the matrix H.264 decoders use for yuv420p.
_YCC = np.array(
    [[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]]
)


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
    flags: uint8 (T, K) bit mask of MISSING, PARTLY_OUT, SPLIT, COLOUR_CHANGED.
    """

    positions: np.ndarray
    radii: np.ndarray
    flags: np.ndarray

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


# ------------------------------------------------------------------ unmixing
class _Unmixer:
    """Everything about a colour set that does not depend on the video, computed once.

    Coverage is linear in the pixel for one colour, and a few linear combinations of
    the channels plus a ratio for several; all weights are folded with the background
    so that they apply to raw uint8 channels.
    """

    def __init__(self, colours: np.ndarray, background: np.ndarray) -> None:
        self.colours = colours  # (K, 3)
        self.background = background  # (3,)
        m = (colours - background).T  # (3, K) colour directions
        k_count = m.shape[1]
        # Content: half of what a `_CORE` coverage of the weakest colour changes, so that
        # every blob pixel is content and lossy ringing of a few levels is not; the rim
        # below it is recovered by the one-pixel margin of every window.
        contrast = np.abs(m).max(axis=0).min() if k_count else 255.0
        self.tolerance = int(max(1, np.floor(0.5 * _CORE * contrast)))
        weight = np.diag([1.0, _CHROMA_WEIGHT, _CHROMA_WEIGHT])
        my = _YCC @ m  # (3, K) colours in (Y, Cb, Cr)
        if k_count == 1:
            # Weighted projection in (Y, Cb, Cr): luma carries the coverage, chroma a little.
            p = _YCC.T @ weight @ my[:, 0] / (my[:, 0] @ weight @ my[:, 0])  # (3,)
            self.projection = _affine(p[None], background)  # (1, 4)
        elif k_count > 1:
            # The linear quantities of `_split`, as (K, 4) maps on (R, G, B, 1): the
            # chroma-only coefficients and the numerators of the luma-weighted scale
            # (stacked), and the plain RGB least squares (the fallback).
            self.linear = np.concatenate(
                [
                    _affine(np.linalg.pinv(my[1:]) @ _YCC[1:], background),
                    _affine((_YCC.T @ weight @ my).T, background),
                ]
            )
            self.least_squares = _affine(np.linalg.pinv(m), background)
            self.directions = m  # (3, K)
            self.gram = (my.T @ weight @ my).astype(np.float32)  # (K, K)
        self.uniform_background = bool(np.all(background == background[0]))

    def coverage(self, pixels: np.ndarray) -> np.ndarray:
        """Coverage (K, T, h, w) float32 in [0, 1] of uint8 pixels (T, h, w, 3)."""
        k_count = self.colours.shape[0]
        if k_count == 1:  # windows are tight around one ball: unmix densely
            a = _combine(pixels, self.projection[0])[None]
            return np.clip(a, 0.0, 1.0, out=a)
        # Several objects: the window spans the gaps between them, so unmix only the
        # pixels that differ from the background (an exact background pixel is 0).
        index, values = self.sparse_coverage(pixels)
        cover = np.zeros((k_count, pixels.size // 3), dtype=np.float32)
        for k in range(k_count):
            cover[k][index] = values[k]  # row by row: 5x faster than cover[:, index]
        return cover.reshape((k_count,) + pixels.shape[:-1])

    def sparse_coverage(self, pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Coverage of K >= 2 colours at the pixels (..., 3) that differ from the background.

        Returns their flat indices (n,) and coverage (K, n) float32; every other pixel is
        exact background, whose coverage is 0.
        """
        flat = pixels.reshape(-1, 3)
        channels = [flat[:, 0], flat[:, 1], flat[:, 2]]  # strided uint8 views
        bg = self.background.astype(np.uint8)
        if self.uniform_background and bg[0] in (0, 255):  # one min (or max) per pixel
            extreme = np.minimum if bg[0] == 255 else np.maximum
            differs = extreme(extreme(channels[0], channels[1]), channels[2]) != bg[0]
        else:
            differs = channels[0] != bg[0]
            differs |= channels[1] != bg[1]
            differs |= channels[2] != bg[2]
        index = np.flatnonzero(differs)
        values = np.empty((3, index.size), dtype=np.float32)  # (R, G, B) rows
        for ch in range(3):
            values[ch] = channels[ch][index]
        return index, self._split(values)

    def _split(self, values: np.ndarray) -> np.ndarray:
        """Coverage (K, n) of K >= 2 colours in pixels given as float32 rows (R, G, B).

        Chroma gives the split, luma the total: the chroma-only least-squares
        coefficients g (clipped at 0) give each colour's share of the pixel, and one
        scale factor, fitted mostly to luma, sets their sum:
        scale = sum_k g_k (q_k . d) / (g^T Gram g).  Where the pixel has almost no
        chroma signal, a plain RGB least-squares unmix is used instead.  Then the
        layers are un-hidden (`_unhide_layers`).
        """
        k_count = self.colours.shape[0]
        linear = np.einsum("kc,cn->kn", self.linear[:, :3], values)  # (2K, n)
        linear += self.linear[:, 3:]
        g = np.maximum(linear[:k_count], 0.0)  # (K, n)
        numerator = np.einsum("kn,kn->n", g, linear[k_count:])  # (n,)
        denominator = np.einsum("kn,kn->n", g, np.einsum("kj,jn->kn", self.gram, g))
        weak = np.einsum("kn->n", g) < _MIN_SHARE
        denominator[weak] = 1.0
        a = g
        a *= numerator / denominator
        if weak.any():
            few = np.flatnonzero(weak)
            fallback = np.einsum("kc,cn->kn", self.least_squares[:, :3], values[:, few])
            a[:, few] = fallback + self.least_squares[:, 3:]
        np.clip(a, 0.0, 1.0, out=a)
        _unhide_layers(a, self._exact_floor(a, values))
        return a

    def _exact_floor(self, a: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Per-pixel `_unhide_layers` floor (n,): lower where the pixel is exactly a blend.

        At a contact a lower ball may show through only a sliver of a pixel that the upper
        one mostly covers.  In lossless video such a pixel is the layered blend of its
        visible coverages to within rounding, and dividing by even a small free share is
        right; in lossy video it is not, and `_FREE_FLOOR` applies.  Only the few
        pixels where it matters are checked.
        """
        floor = np.full(a.shape[1], _FREE_FLOOR, dtype=np.float32)
        deep = np.flatnonzero((a[1:].sum(axis=0) > 1.0 - _FREE_FLOOR) & (a[:-1].sum(axis=0) > 0))
        if deep.size:
            predicted = self.directions @ a[:, deep] + self.background[:, None]  # (3, m)
            exact = np.abs(values[:, deep] - predicted).max(axis=0) <= _EXACT_LEVELS
            floor[deep[exact]] = _EXACT_FREE_FLOOR
        return floor


def _affine(weights: np.ndarray, background: np.ndarray) -> np.ndarray:
    """Weights (K, 3) on pixel - background -> float32 (K, 4) on raw pixels, 4th = constant."""
    return np.concatenate([weights, -(weights @ background)[:, None]], axis=1).astype(np.float32)


def _combine(pixels: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """w0 R + w1 G + w2 B + w3 (float32) for uint8 pixels (..., 3)."""
    out = pixels[..., 0] * weights[0]
    out += pixels[..., 1] * weights[1]
    out += pixels[..., 2] * weights[2]
    out += weights[3]
    return out


def _unhide_layers(a: np.ndarray, floor: np.ndarray | float = _FREE_FLOOR) -> None:
    """In place: visible coverage (K, ...) -> each object's own coverage, top layer first.

    The renderer blends objects in order, so object k's visible share is
    c_k * prod_{j > k} (1 - c_j); divide it back out where enough is left free (below
    `floor` the division would amplify rounding or lossy noise more than it helps).
    """
    free = 1.0 - a[-1]
    for k in range(a.shape[0] - 2, -1, -1):
        a[k] /= np.where(free >= floor, free, np.float32(1.0))
        np.minimum(a[k], 1.0, out=a[k])
        if k:
            free *= 1.0 - a[k]


@lru_cache(maxsize=64)
def _unmixer(
    colours: tuple[tuple[float, float, float], ...], background: tuple[float, float, float]
) -> _Unmixer:
    """The (cached) `_Unmixer` of a colour set, after checking it can be unmixed."""
    array = np.array(colours, dtype=np.float64).reshape(-1, 3)
    bg = np.array(background, dtype=np.float64)
    for k, colour in enumerate(array):
        if np.array_equal(colour, bg):
            raise ValueError(f"colour {k} {colour.tolist()} equals the background")
        for j in range(k):
            if np.array_equal(colour, array[j]):
                raise ValueError(f"colours {j} and {k} are the same: one object per colour")
    if array.shape[0] > 1:
        if array.shape[0] > 3 or np.linalg.matrix_rank((array - bg).T) < array.shape[0]:
            raise ValueError(
                "colours are linearly dependent over the background (or more than 3): cannot unmix"
            )
        chroma = (_YCC @ (array - bg).T)[1:]  # (2, K)
        if np.linalg.matrix_rank(chroma) < min(array.shape[0], 2):
            raise ValueError("colours differ only in brightness: chroma cannot tell them apart")
    return _Unmixer(array, bg)


# ------------------------------------------------------------------ windows
def _content_windows(
    video: np.ndarray, unmix: _Unmixer
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Each frame's window around its content: pixels (T, h, w, 3), origins row0, col0 (T,).

    One pass over the uint8 video, a byte compare against the background +- tolerance,
    then `any` over rows and columns.  The window is each frame's bounding box of
    content plus one pixel, all the same size (the largest), origins clamped into the
    image, so the rest is one gather and vectorised maths.  None if no frame has any.
    """
    num_frames, height, width, _ = video.shape
    flat = video.reshape(num_frames, height, width * 3)
    bg, tolerance = unmix.background, unmix.tolerance
    low, high = np.clip(bg - tolerance, 0, 255), np.clip(bg + tolerance, 0, 255)  # (3,)
    content = None
    if low.max() > 0:  # some channel can be darker than the background
        content = flat < _per_byte(low, width)
    if high.min() < 255:  # some channel can be brighter
        brighter = flat > _per_byte(high, width)
        content = brighter if content is None else (content | brighter)
    if content is None:  # tolerance wider than the range: everything is content
        content = np.ones_like(flat, dtype=bool)
    lines = np.empty((2, num_frames, width), dtype=bool)  # rows and columns with content
    if width % 8 == 0:  # reduce 8 flags at a time, as uint64 words: a third faster
        words = content.view(np.uint64)  # (T, H, 3 W / 8)
        lines[0] = words.max(axis=2) != 0
        column_bytes = np.bitwise_or.reduce(words, axis=1).view(np.uint8).reshape(num_frames, width, 3)
        lines[1] = (column_bytes[..., 0] | column_bytes[..., 1] | column_bytes[..., 2]) != 0
    else:
        lines[0] = content.any(axis=2)
        lines[1] = content.any(axis=1).reshape(num_frames, width, 3).any(axis=2)
    start, size = _spans(lines)
    if size is None:
        return None
    return _gather(video, start[0], start[1], size[0], size[1]), start[0], start[1]


def _per_byte(levels: np.ndarray, width: int) -> np.uint8 | np.ndarray:
    """Per-channel levels (3,) as a uint8 scalar if equal (fastest compare), else (3 W,)."""
    if np.all(levels == levels[0]):
        return np.uint8(levels[0])
    return np.tile(levels.astype(np.uint8), width)


def _spans(lines: np.ndarray, boxes: bool = False):
    """Windows around the True runs of masks `lines` (A, T, N), one pixel of margin.

    Returns per-axis, per-frame starts (A, T) and per-axis common lengths (A,), clamped
    to [0, N); lengths None if no frame has anything.  Frames without content get
    start 0 (their window is empty of content anyway).  With `boxes`, also each frame's
    own [lo, hi) (A, T) (the common length is the largest of them).
    """
    n = lines.shape[2]
    has = lines.any(axis=2)  # (A, T)
    if not has.any():
        start, size = np.zeros(lines.shape[:2], np.intp), None
        return (start, size, start, start) if boxes else (start, size)
    lo = np.maximum(np.argmax(lines, axis=2) - 1, 0)  # (A, T)
    hi = np.minimum(n + 1 - np.argmax(lines[..., ::-1], axis=2), n)
    lo[~has] = hi[~has] = 0
    size = np.clip((hi - lo).max(axis=1), 1, n)  # (A,)
    start = np.minimum(lo, (n - size)[:, None])
    return (start, size, lo, hi) if boxes else (start, size)


def _gather(array: np.ndarray, row0: np.ndarray, col0: np.ndarray, h: int, w: int) -> np.ndarray:
    """(T, h, w, ...) copy of frame t's window at (row0[t], col0[t]) of array (T, H, W, ...).

    A strided view of all windows at all origins, then one fancy index; built with the
    ndarray constructor, which costs a fraction of `as_strided`'s Python overhead.
    """
    num_frames, height, width = array.shape[:3]
    rest, st = array.shape[3:], array.strides
    windows = np.ndarray(
        (num_frames, height - h + 1, width - w + 1, h, w) + rest,
        dtype=array.dtype,
        buffer=array,
        strides=(st[0], st[1], st[2], st[1], st[2]) + st[3:],
    )
    return windows[np.arange(num_frames), row0, col0]


# ------------------------------------------------------------------ one object
# Reductions and products in the hot path use `np.einsum` (numpy's own loops): `sum`
# along a short axis is ~3x slower for these small arrays, and `@` calls OpenBLAS,
# which goes multi-threaded above ~10k elements and then leaves threads spinning that
# slow everything else down (several-fold on two cores, in separate scorer processes).


def _row_sums(a: np.ndarray) -> np.ndarray:
    """(T, h, w) -> (T, h) sums over w."""
    return np.einsum("thw->th", a)


def _col_sums(a: np.ndarray) -> np.ndarray:
    """(T, h, w) -> (T, w) sums over h."""
    return np.einsum("thw->tw", a)


class _ObjectWindow(NamedTuple):
    """One object's own window, the same size in every frame."""

    cover: np.ndarray  # (T, h, w) float32 its coverage, zero outside each frame's box
    core: np.ndarray  # (T, h, w) bool, cover >= _CORE
    row_count: np.ndarray  # (T, h) float32 core pixels per row
    pixels: np.ndarray  # (T, h, w, 3) uint8
    row0: np.ndarray  # (T,) image row of the window's top
    col0: np.ndarray  # (T,) image column of its left


def _object_window(
    cover: np.ndarray, pixels: np.ndarray, row0: np.ndarray, col0: np.ndarray
) -> _ObjectWindow | None:
    """An object's own window: its core's bounding box plus one pixel, in every frame.

    cover: (T, h, w) its coverage in the shared windows pixels (T, h, w, 3) at (row0,
    col0).  Its own window keeps the other balls and far-off faint junk out of its blob
    analysis, and makes that analysis small.  None when it has no core pixel anywhere.
    """
    core = cover >= _CORE  # (T, h, w)
    core_f = core.astype(np.float32)
    row_count, col_count = _row_sums(core_f), _col_sums(core_f)  # (T, h), (T, w)
    row_start, row_size, row_lo, row_hi = _spans(row_count[None] > 0, boxes=True)
    if row_size is None:
        return None
    col_start, col_size, col_lo, col_hi = _spans(col_count[None] > 0, boxes=True)
    sub = (row_start[0], col_start[0], int(row_size[0]), int(col_size[0]))
    if (sub[2], sub[3]) != cover.shape[1:] or sub[0].any() or sub[1].any():
        cover = _gather(cover, *sub)
        core = cover >= _CORE
        row_count = _row_sums(core.astype(np.float32))
        pixels = _gather(pixels, *sub)
    # Every frame keeps only its own box: the common size is the largest frame's, and
    # what lies outside a smaller frame's box is not this object's (and results do not
    # depend on the other frames).
    rows = np.arange(sub[2]) + sub[0][:, None]  # (T, sh) rows in the shared window
    cols = np.arange(sub[3]) + sub[1][:, None]  # (T, sw)
    in_rows = (rows >= row_lo[0][:, None]) & (rows < row_hi[0][:, None])
    in_cols = (cols >= col_lo[0][:, None]) & (cols < col_hi[0][:, None])
    cover = cover * (in_rows[:, :, None] & in_cols[:, None, :])
    return _ObjectWindow(cover, core, row_count, pixels, row0 + sub[0], col0 + sub[1])


def _occluded(above: np.ndarray, own: _ObjectWindow, row0: np.ndarray, col0: np.ndarray) -> np.ndarray:
    """bool (T,): a clean ball drawn above has core pixels inside this object's window.

    above: (T, h, w) in the shared window at image origin (row0, col0); own: the object's
    window, inside the shared one."""
    if not above.any():
        return np.zeros(above.shape[0], dtype=bool)
    h, w = own.cover.shape[1:]
    return np.asarray(_gather(above, own.row0 - row0, own.col0 - col0, h, w).any(axis=(1, 2)), dtype=bool)


def _parse_object(
    cover: np.ndarray,
    core: np.ndarray,
    row_count: np.ndarray,
    pixels: np.ndarray,
    row0: np.ndarray,
    col0: np.ndarray,
    width: int,
    colour: np.ndarray,
    bg: np.ndarray,
    refine: bool,
    colour_tolerance: float,
    hidden: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centre column, row and radius (T,) in pixels, and flags (T,) of one object.

    cover: (T, h, w) its coverage in its own window, core = cover >= `_CORE`,
    row_count (T, h) core pixels per row, pixels (T, h, w, 3) the window's pixels, at
    image origin (row0, col0) (T,); hidden (T,): a ball drawn above reaches into the window
    (what is seen of this one may be a crescent: not judged by its spread).
    """
    h, w = cover.shape[1:]
    c, split = _own_blobs(cover, core, row_count)  # (T, h, w), (T,)
    col_sum = _col_sums(c).astype(np.float64)  # (T, w) px^2
    row_sum = _row_sums(c).astype(np.float64)  # (T, h)
    area = col_sum.sum(axis=1)  # (T,) px^2
    found = area >= _MIN_MASS
    safe = np.where(found, area, 1.0)
    cu = np.einsum("tw,w->t", col_sum, np.arange(0.5, w)) / safe + col0  # (T,) column
    cv = np.einsum("th,h->t", row_sum, np.arange(0.5, h)) / safe + row0  # (T,) row
    radius = np.sqrt(area / np.pi)  # (T,) px

    out = _cut_by_border(col_sum, row_sum, row0, col0, width, radius)  # (T, 4) or None
    flags = np.where(found, 0, MISSING).astype(np.uint8)
    flags[split & found] |= SPLIT
    if out is not None:
        flags[out.any(axis=1) & found] |= PARTLY_OUT
    fitted = _fitted_colour(c, pixels, bg)  # (T, 3)
    off = ((fitted - colour) ** 2).sum(axis=1) > colour_tolerance**2
    flags[off & found] |= COLOUR_CHANGED
    peak = c.max(axis=(1, 2)) if c.size else np.zeros(c.shape[0], dtype=c.dtype)  # (T,) the most covered pixel
    flags[found & _not_a_ball(col_sum, row_sum, area, cu - col0, cv - row0, out, split | hidden, row0, col0, width,
                              peak)] = MISSING | NOT_A_BALL
    ghost = found & (flags == (MISSING | NOT_A_BALL)) & ~(split | hidden)
    if ghost.any() and np.any(flags == 0):
        _solid_cores(c, ghost, float(np.median(area[flags == 0])), row0, col0, flags, cu, cv, radius)
    if refine:
        cu, cv = _refine_centres(col_sum, row_sum, area, radius, row0, col0, out, flags, cu, cv)
    # A piece with core pixels on the image's outermost row or column and less area than
    # the video's typical unflagged piece (the median: whole discs, tangent ones included): part of the ball lies outside, whatever the edge test above
    # concluded (blur and codecs soften a sliver's edge, which then passed as a small whole
    # ball).  A whole disc tangent to the edge keeps its full area and stays unflagged.
    # Set after the centres, which keep their exact-disc estimate where the disc is inside.
    touch = _core_on_border(c >= _CORE, row0, col0, width) & (flags == 0)
    if touch.any():
        reference = float(np.median(area[flags == 0]))  # touching frames included: most are whole discs
        flags[touch & (area < _WHOLE_SHARE * reference)] |= PARTLY_OUT
    return cu, cv, radius, flags


def _solid_cores(c: np.ndarray, ghost: np.ndarray, reference: float, row0: np.ndarray, col0: np.ndarray,
                 flags: np.ndarray, cu: np.ndarray, cv: np.ndarray, radius: np.ndarray) -> None:
    """In place: a frame read as no ball whose solid core is a ball keeps that ball, flagged SPLIT.

    Frame blending (a temporal autoencoder's ghosting: each frame half itself and a quarter of
    each neighbour) draws a fast ball as three overlapping copies, one elongated blob that
    `_not_a_ball` reads as a smear; its pixels covered at least `_MIN_PEAK` (the middle copy,
    at one half and more) are one disc.  Where that core is no more spread than a disc may be
    and holds 0.3 to 1.2 of the video's typical whole ball (`reference`, px^2), its centroid is
    the ball's centre (not exact: the frame is flagged, out of the law fit and the size error).
    A real smear, noise or a wash has no such core.  c: (T, h, w) coverage; ghost: (T,) frames
    to try; the rest are the frames' outputs, updated where a core is found."""
    idx = np.flatnonzero(ghost)
    solid = np.where(c[idx] >= _MIN_PEAK, c[idx], 0.0)  # (n, h, w)
    col_sum = solid.sum(axis=1).astype(np.float64)  # (n, w)
    row_sum = solid.sum(axis=2).astype(np.float64)  # (n, h)
    area = col_sum.sum(axis=1)
    safe = np.where(area > 0, area, 1.0)
    u = col_sum @ np.arange(0.5, solid.shape[2]) / safe
    v = row_sum @ np.arange(0.5, solid.shape[1]) / safe
    qx, qy = _spread(col_sum, row_sum, area, u, v)
    ok = (area >= 0.3 * reference) & (area <= 1.2 * reference) & (0.5 * (qx + qy) <= _MAX_SPREAD)
    idx = idx[ok]
    flags[idx] = SPLIT
    cu[idx] = u[ok] + col0[idx]
    cv[idx] = v[ok] + row0[idx]
    radius[idx] = np.sqrt(area[ok] / np.pi)


def _spread(col_sum: np.ndarray, row_sum: np.ndarray, area: np.ndarray, cu: np.ndarray,
            cv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per frame (T,) and axis (x, y): 4 pi I_axis / M^2, the blob's second moment about its centroid
    against a disc's of its mass.

    1 for a disc (I_axis = M^2 / 4 pi), about 1 + 4 s^2 / R^2 for a disc blurred by a Gaussian of
    s px, several for noise spread over the frame; a sliver cut by an edge is spread along the
    edge but not across it.  From the column and row sums (the marginals hold each axis's
    second moment); cu, cv are the centroid in window pixels."""
    w, h = col_sum.shape[1], row_sum.shape[1]
    dx = np.arange(0.5, w)[None, :] - cu[:, None]  # (T, w)
    dy = np.arange(0.5, h)[None, :] - cv[:, None]
    safe = np.where(area > 0, area, 1.0)
    scale = 4.0 * np.pi / (safe * safe)
    return (np.einsum("tw,tw->t", col_sum, dx * dx) * scale, np.einsum("th,th->t", row_sum, dy * dy) * scale)


def _not_a_ball(col_sum: np.ndarray, row_sum: np.ndarray, area: np.ndarray, cu: np.ndarray, cv: np.ndarray,
                out: np.ndarray | None, split: np.ndarray, row0: np.ndarray, col0: np.ndarray,
                width: int, peak: np.ndarray) -> np.ndarray:
    """bool (T,): what was found of this colour is no ball (issue 34: "no ball is no ball").

    Noise, a heavy smear or a wash of the colour still leaves core pixels, and their
    centroid used to pass as a ball in every frame.  A blob is no ball when it is cut by two
    opposite image edges (wider or taller than the view: a frame-wide wash), or, in one piece
    and not cut, when it is far more spread than a disc of its mass (`_spread` >
    `_MAX_SPREAD`, the mean of both axes; the benign blurs and codecs of `phybench.benign`
    stay below 1.9), or, anywhere, when it has no solid interior (no pixel covered more than
    `_MIN_PEAK`: a disc blurred by a Gaussian of its own radius peaks at 0.39, and its blur
    reaching the border must not make it a ball cut by the edge; the benign kinds keep 0.58 and
    more on the smallest OOD ball; a sliver under half a pixel deep is no ball either).  Within `_BORDER_GAP` px of an edge a ball may be cut without the edge
    test seeing it (a shifted picture with a white margin), and a sliver is spread along the
    edge: there only the axis across that edge is judged.  Torn (SPLIT) blobs are SPLIT's."""
    qx, qy = _spread(col_sum, row_sum, area, cu, cv)
    cols, rows = col_sum > 0, row_sum > 0
    w, h = cols.shape[1], rows.shape[1]
    left = col0 + np.argmax(cols, axis=1)
    right = width - (col0 + w - np.argmax(cols[:, ::-1], axis=1))
    top = row0 + np.argmax(rows, axis=1)
    bottom = width - (row0 + h - np.argmax(rows[:, ::-1], axis=1))
    near_x = np.minimum(left, right) < _BORDER_GAP  # by a left or right edge: judge x only
    near_y = np.minimum(top, bottom) < _BORDER_GAP
    spread = np.where(near_x & near_y, np.minimum(qx, qy), np.where(near_x, qx, np.where(near_y, qy, 0.5 * (qx + qy))))
    smear = (spread > _MAX_SPREAD) & ~split
    hollow = (peak < _MIN_PEAK) & ~split
    if out is None:
        return smear | hollow
    wide = (out[:, 0] & out[:, 1]) | (out[:, 2] & out[:, 3])
    return wide | hollow | (smear & ~out.any(axis=1))


def _core_on_border(core: np.ndarray, row0: np.ndarray, col0: np.ndarray, width: int) -> np.ndarray:
    """bool (T,): a core pixel of the window lies on the image's first or last row or column."""
    h, w = core.shape[1:]
    hit = np.zeros(core.shape[0], dtype=bool)
    if not (row0.min() == 0 or col0.min() == 0 or (row0 + h).max() == width or (col0 + w).max() == width):
        return hit
    hit |= (row0 == 0) & core[:, 0, :].any(axis=1)
    hit |= (row0 + h == width) & core[:, -1, :].any(axis=1)
    hit |= (col0 == 0) & core[:, :, 0].any(axis=1)
    hit |= (col0 + w == width) & core[:, :, -1].any(axis=1)
    return hit


_IN_PLANE = np.zeros((3, 3, 3), dtype=bool)
_IN_PLANE[1] = True  # 8-connected within a frame, never across frames


def _own_blobs(
    cover: np.ndarray, core: np.ndarray, row_count: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Keep an object's substantial blobs (plus a one-pixel rim); find torn objects.

    cover: (T, h, w) one object's coverage in its window; core: cover >= `_CORE`;
    row_count: (T, h) core pixels per row.  Returns the kept coverage (T, h, w) and
    SPLIT (T,).  Blobs are the 8-connected components, per frame, of the core; a blob
    is kept if it holds at least `_MIN_MASS` and `_BLOB_SHARE` of the frame's largest.
    Per object, not over all colours: two touching balls are one blob of ink, and lossy
    cross-talk at one's edge must not ride along with the other.
    """
    num_frames = cover.shape[0]
    if _one_run_blob(core, row_count):
        # The common case, a disc: every pixel of its window (its core's bounding box
        # plus one pixel, so the whole rim) is its own; no labelling needed.
        return cover, np.zeros(num_frames, dtype=bool)
    labels, count = ndimage.label(core, structure=_IN_PLANE)  # (T, h, w) int32
    # Labels are numbered in scan order and never span frames.
    last = np.maximum.accumulate(labels.reshape(num_frames, -1).max(axis=1))  # (T,)
    frame_of = np.searchsorted(last, np.arange(1, count + 1))  # (count,)
    inside = np.flatnonzero(labels)
    mass = np.bincount(labels.ravel()[inside], weights=cover.ravel()[inside], minlength=count + 1)[1:]
    largest = np.zeros(num_frames)
    np.maximum.at(largest, frame_of, mass)
    own = (mass >= _MIN_MASS) & (mass >= _BLOB_SHARE * largest[frame_of])  # (count,)
    # Colour bleed: in lossy video a large ball of another colour gets a fringe of this
    # object's hue along its rim (chroma subsampling), a sliver at most 2 px thick.  A piece
    # of a ball is thick (its core survives a 3x3 erosion); where a frame has a thick blob,
    # its slivers are cross-talk, not pieces: dropped, and not counted towards SPLIT.  (A
    # ball too small to have a thick core keeps every blob, as before.)
    eroded = ndimage.binary_erosion(core, structure=_IN_PLANE)  # (T, h, w)
    thick = np.bincount(labels[eroded], minlength=count + 1)[1:] > 0  # (count,)
    frame_thick = np.bincount(frame_of, weights=own & thick, minlength=num_frames) > 0  # (T,)
    own &= thick | ~frame_thick[frame_of]
    kept = np.bincount(frame_of, weights=own, minlength=num_frames)  # (T,) blobs kept
    split = kept >= 2
    keep = _grow(np.concatenate([[False], own])[labels])  # (T, h, w)
    # A frame with a single kept blob keeps its whole box, as in the fast path above:
    # a frame's result must not depend on whether another frame needed labelling.
    blobs = np.diff(last, prepend=0)  # (T,) blobs per frame
    keep[(blobs == 1) & (kept == 1)] = True
    return cover * keep, split


def _one_run_blob(core: np.ndarray, row_count: np.ndarray) -> bool:
    """True if every frame of `core` (T, h, w) is empty or one blob of one run per row.

    A sufficient test for "one 8-connected blob per frame" at a fraction of the cost of
    `ndimage.label`: each row's True pixels form one run, the rows holding one are
    consecutive, and consecutive runs overlap or touch diagonally.  A disc's core
    (pixels with coverage above a threshold) always passes: the coverage of a convex
    shape along a row is unimodal.  row_count: (T, h) True pixels per row.
    """
    h = core.shape[1]
    runs = _row_sums((core[:, :, 1:] > core[:, :, :-1]).astype(np.float32)) + core[:, :, 0]  # (T, h)
    filled = row_count > 0  # (T, h)
    if np.any(runs != filled):
        return False
    rows = filled.sum(axis=1)  # (T,) rows holding a run: they must be consecutive
    span = h - np.argmax(filled[:, ::-1], axis=1) - np.argmax(filled, axis=1)
    if np.any((span != rows) & (rows > 0)):
        return False
    first = np.argmax(core, axis=2)  # (T, h) first pixel of each row's run
    last = first + row_count.astype(np.intp) - 1
    apart = (first[:, 1:] > last[:, :-1] + 1) | (first[:, :-1] > last[:, 1:] + 1)
    return not np.any(apart & filled[:, 1:] & filled[:, :-1])


def _grow(mask: np.ndarray) -> np.ndarray:
    """Dilate a (T, h, w) mask by one pixel (8-neighbourhood) within each frame."""
    grown = mask.copy()
    grown[:, 1:, :] |= mask[:, :-1, :]
    grown[:, :-1, :] |= mask[:, 1:, :]
    rows = grown.copy()
    grown[:, :, 1:] |= rows[:, :, :-1]
    grown[:, :, :-1] |= rows[:, :, 1:]
    return grown


def _cap_area(depth: np.ndarray | float, radius: np.ndarray) -> np.ndarray:
    """Area (px^2) of the part of a disc (radius px) within `depth` px of a tangent line."""
    depth = np.minimum(depth, 2.0 * radius)
    inner = radius - depth
    cosine = np.clip(inner / np.maximum(radius, 1e-12), -1.0, 1.0)
    half_chord = np.sqrt(np.maximum(radius * radius - inner * inner, 0.0))
    return radius * radius * np.arccos(cosine) - inner * half_chord


def _cut_by_border(
    col_sum: np.ndarray,
    row_sum: np.ndarray,
    row0: np.ndarray,
    col0: np.ndarray,
    width: int,
    radius: np.ndarray,
) -> np.ndarray | None:
    """bool (T, 4): the object crosses the image's left, right, top, bottom edge.

    None when no frame's window even reaches an edge (the common case, checked first).
    Touching the edge pixels is not enough: a disc just inside the image covers part of
    them.  It crosses the edge when the edge line of pixels holds more coverage than a
    disc of its radius could with its rim inside the image, i.e. more than its cap one
    pixel deep (plus `_CUT_MARGIN` px of slack for rounding and blur).
    """
    w, h = col_sum.shape[1], row_sum.shape[1]
    if min(col0.min(), row0.min()) > 0 and col0.max() + w < width and row0.max() + h < width:
        return None
    limit = _cap_area(1.0 + _CUT_MARGIN, radius) - _cap_area(_CUT_MARGIN, radius)  # (T,) px^2
    left = (col0 == 0) & (col_sum[:, 0] > limit)
    right = (col0 + w == width) & (col_sum[:, -1] > limit)
    top = (row0 == 0) & (row_sum[:, 0] > limit)
    bottom = (row0 + h == width) & (row_sum[:, -1] > limit)
    return np.stack([left, right, top, bottom], axis=1)


def _fitted_colour(c: np.ndarray, pixels: np.ndarray, bg: np.ndarray) -> np.ndarray:
    """Least-squares colour (T, 3) of an object: bg + sum(c d) / sum(c^2) over its pixels.

    c: (T, h, w) the object's coverage; pixels: (T, h, w, 3) uint8; d = pixel - bg.  For
    a pure blend d = c (colour - bg) this is the colour exactly, whatever the coverage;
    a ball that turned purple, or whose red drifted, moves it.
    """
    num_frames = c.shape[0]
    flat = c.reshape(num_frames, 1, -1)  # (T, 1, n)
    values = pixels.reshape(num_frames, -1, 3).astype(np.float32)  # (T, n, 3)
    # Per-frame products of at most 3 x W^2 elements: far below BLAS's threading size.
    first = np.matmul(flat, values)[:, 0, :].astype(np.float64)  # (T, 3): sum c * pixel
    total = np.einsum("tjn->t", flat).astype(np.float64)  # (T,): sum c
    second = np.einsum("tjn,tjn->t", flat, flat).astype(np.float64)  # (T,): sum c^2
    return bg + (first - bg * total[:, None]) / np.where(second > 0, second, 1.0)[:, None]


# ------------------------------------------------------------------ exact discs
def _share_table(steps: int) -> np.ndarray:
    """u = G^-1(f) on the grid f = i / steps, by bisection (float64, once at import).

    G(u) = 1/2 + (u sqrt(1 - u^2) + asin u) / pi is the share of a unit disc left of
    the line x = u.  On a uniform grid in f the inverse is a table lookup with no
    search; linear interpolation on 16385 points is within ~3e-7 of u wherever the
    estimates below carry weight (|u| < 0.97), i.e. ~1e-5 px at the largest radii.
    """
    f = np.linspace(0.0, 1.0, steps + 1)
    lo, hi = np.full_like(f, -1.0), np.full_like(f, 1.0)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        g = 0.5 + (mid * np.sqrt(np.maximum(1.0 - mid * mid, 0.0)) + np.arcsin(mid)) / np.pi
        low = g < f
        lo = np.where(low, mid, lo)
        hi = np.where(low, hi, mid)
    return 0.5 * (lo + hi)


_STEPS = 16384
_INVERSE_SHARE = _share_table(_STEPS)  # (_STEPS + 1,)
_INVERSE_SLOPE = np.append(np.diff(_INVERSE_SHARE), 0.0)  # per step


def _inverse_share(f: np.ndarray) -> np.ndarray:
    """G^-1(f) for shares f in [0, 1] (any shape), by the table above."""
    position = f * _STEPS
    index = position.astype(np.intp)
    np.minimum(index, _STEPS, out=index)
    position -= index
    position *= _INVERSE_SLOPE[index]
    position += _INVERSE_SHARE[index]
    return position


_MAX_OFFSET = 0.97  # |u| beyond which a boundary's estimate is too ill-conditioned to use
_SLIVER_OFFSET = 0.999  # the same for a disc cut by the image edge, where tails may be all


def _axis_centre(
    sums: np.ndarray,
    start: np.ndarray,
    before: np.ndarray,
    full_area: np.ndarray,
    radius: np.ndarray,
    max_offset: np.ndarray,
) -> np.ndarray:
    """Disc centre along one axis (R,) from strip areas `sums` (R, n), pixel units.

    The disc's area before boundary j (image coordinate start + j, j = 1..n) is
    before + cumsum(sums)[j - 1]; as a share f of the full disc area it says the
    boundary sits at u = G^-1(f) radii from the centre, so each boundary gives
    centre = boundary - radius * u.  Estimates are averaged with weight 1 - u^2 (the
    chord, i.e. how sharply f pins u), ignoring the |u| > max_offset tails (per row).
    NaN where no boundary is usable.
    """
    share = np.cumsum(sums, axis=1)  # (R, n)
    share += before[:, None]
    share /= full_area[:, None]
    np.clip(share, 0.0, 1.0, out=share)
    u = _inverse_share(share)  # (R, n): boundary offsets from the centre, in radii
    weight = 1.0 - u * u
    weight *= weight > (1.0 - max_offset * max_offset)[:, None]
    total = weight.sum(axis=1)
    estimate = np.arange(1.0, sums.shape[1] + 1.0) - radius[:, None] * u  # (R, n)
    centre = start + np.einsum("rn,rn->r", estimate, weight) / np.where(total > 0, total, 1.0)
    return np.where(total > 0, centre, np.nan)


def _refine_centres(
    col_sum: np.ndarray,
    row_sum: np.ndarray,
    area: np.ndarray,
    radius: np.ndarray,
    row0: np.ndarray,
    col0: np.ndarray,
    out: np.ndarray | None,
    flags: np.ndarray,
    cu: np.ndarray,
    cv: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact-disc centres (pixel units) where they apply; the centroid elsewhere.

    Whole discs (no flag): both axes from `_axis_centre`.  A disc cut by one image
    edge, in a video where the object is whole in some frames: its radius is the median
    of those frames', so the full area is known and the axis across the cut is exact
    too (the missing area lies before the first boundary or after the last; even a
    sliver's tail boundaries are used, `_SLIVER_OFFSET`); the axis along the cut keeps
    the centroid, which a straight cut does not bias.  Corner cuts keep the centroid.
    """
    num_frames = area.shape[0]
    whole = (flags == 0) & (radius >= _REFINE_MIN_RADIUS)  # (T,)
    if not whole.any():
        return cu, cv
    # Columns (rows 0..T-1) and rows (T..2T-1) in one pass, strips padded to a common
    # length behind a leading empty strip, so that the window's first edge is a
    # boundary too (it carries the missing share of a disc cut there).
    w, h = col_sum.shape[1], row_sum.shape[1]
    sums = np.zeros((2 * num_frames, max(w, h) + 1))
    sums[:num_frames, 1 : w + 1] = col_sum
    sums[num_frames:, 1 : h + 1] = row_sum
    start = np.concatenate([col0, row0]) - 1.0
    before = np.zeros(2 * num_frames)
    full = np.concatenate([area, area])
    disc_radius = np.concatenate([radius, radius])
    max_offset = np.full(2 * num_frames, _MAX_OFFSET)
    use = np.concatenate([whole, whole])
    if out is not None:
        reference = float(np.median(radius[whole]))
        full_reference = np.pi * reference * reference
        single_cut = (flags == PARTLY_OUT) & (out.sum(axis=1) == 1) & (area < full_reference)
        for axis, (low_edge, high_edge) in enumerate(((0, 1), (2, 3))):
            pick = np.flatnonzero(single_cut & (out[:, low_edge] | out[:, high_edge]))
            rows = axis * num_frames + pick
            before[rows] = np.where(out[pick, low_edge], full_reference - area[pick], 0.0)
            full[rows] = full_reference
            disc_radius[rows] = reference
            max_offset[rows] = _SLIVER_OFFSET
            use[rows] = True
    full[full <= 0] = 1.0
    centre = _axis_centre(sums, start, before, full, disc_radius, max_offset)  # (2T,)
    centre = np.where(use & np.isfinite(centre), centre, np.concatenate([cu, cv]))
    return centre[:num_frames], centre[num_frames:]
