"""One object in its windows, for the parser (`phybench.scoring.physics.parse`): blobs, flags, centre.

Each object gets its own window per frame; inside it the core's 8-connected blobs are found,
dust and cross-talk dropped, a torn ball flagged SPLIT, a disc cut by the image edge flagged
PARTLY_OUT, and the centre taken as the centroid or, for the "tile" mapping, refined on the
exact disc (`discs`).  Whether a blob is a ball at all: `solid_core`.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import ndimage

from .discs import _refine_centres
from .parse_flags import COLOUR_CHANGED, MISSING, NOT_A_BALL, PARTLY_OUT, SPLIT, _BLOB_SHARE, _CORE, _CUT_MARGIN, _MIN_MASS, _WHOLE_SHARE
from .solid_core import _not_a_ball, _solid_cores
from .unmix import _gather, _spans


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


