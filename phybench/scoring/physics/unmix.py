"""Pixels to coverage, for the parser (`phybench.scoring.physics.parse`): unmixing and windows.

Every pixel is unmixed into the fraction of it each object covers (luma for how much, chroma
for whose; layers un-hidden in drawing order: the parser's docstring says why), and one pass
over the whole video finds each frame's rows and columns that differ from the background, so
that all later work happens on small windows.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .parse_flags import _CHROMA_WEIGHT, _CORE, _EXACT_FREE_FLOOR, _EXACT_LEVELS, _FREE_FLOOR, _MIN_SHARE, _YCC


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


