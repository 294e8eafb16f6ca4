"""A generated video's background, exposure and bad pixels read from the video itself (issue 48).

The parser (`phybench.scoring.physics.parse`) and the judge's segmentation (`phybench.scoring.judge.segment`)
unmix each pixel between the renderer's white background and a body's colour.  A model draws
the right scene on a background of its own: off-white, grey, tinted, darker or brighter, with a
vignette or a gradient, drifting a little from frame to frame; a sensor adds isolated dead or
hot pixels.  Read against pure white, a grey wash is a frame-wide blob of the ball's colour and
one dead pixel inside a ball is a hole.  `normalise` maps such a video back to the renderer's
picture before either reads it:

* **Isolated pixels** (`despeckle`): a pixel whose channel sum differs from each of its eight
  neighbours by more than `SPECK` levels, all in the same direction, is replaced by the
  per-channel median of those neighbours.  No rendered body is that small: the smallest disc
  is 3.8 px in radius at 128 px, and a thin line or a corner has a neighbour along it.
* **The background field** (`background_field`): per frame, a smooth field (per channel, the
  polynomial `_BASIS`: constant, linear, quadratic and a fourth-order radial term, enough for a
  vignette, a gradient, a tint or a level) is fitted to a `GRID` x `GRID` sample of the frame's
  pixels, re-fitted `_ROUNDS` times on the points it explains (bodies are outliers).  Per frame,
  so it follows drift and exposure changes between the condition and the generated frames.
* **Flattening**: where a frame's field is off the expected background by more than
  `FIELD_TOL` levels somewhere, each channel is divided by the field and multiplied by the
  background (``p' = p * background / field``): the model of exposure, white balance, tint and
  vignette (each a gain on the light), which takes a body's colour back to its own too.

A frame whose field is within `FIELD_TOL` of the background everywhere is left untouched, so
phybench's exact renders (and every lossy copy of them within a few levels) pass through
byte for byte: their scores, verdicts and golden hashes do not move.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

BACKGROUND = (255, 255, 255)

SPECK = 150  # levels of R + G + B: a pixel this far from all 8 neighbours, one way, is a bad pixel
GRID = 16  # sample points per side for the background fit
FIELD_TOL = 4.0  # levels: a frame whose field is this close to the background everywhere is left alone
_START = 48.0  # levels: first inliers, within this of the frame's median on every channel
_FLOOR = 6.0  # levels: least residual threshold of a re-fit
_ROUNDS = 4  # re-fits on the points the field explains
_MIN_INLIERS = 0.3  # share of the sample a field must explain, else the frame keeps its pixels
_MIN_FIELD = 32.0  # levels: a darker field is no background (no flattening by more than 8x)
COLOUR_KEEP = 8  # levels: a body colour read within this of the scene's (every channel) is the scene's
JUDGE_KEEP = 24  # ... for the judge's segmentation, whose colour lines already allow 24 levels (lossy chroma)
COLOUR_REACH = 120.0  # RGB distance: a colour read farther than this is another body, not this one's light
_MIN_SOLID = 6  # solid pixels a body needs in the condition frames for its colour to be read

SETTINGS = (f"before parsing and segmenting, a generated video's isolated pixels (R+G+B off all 8 neighbours by "
            f"more than {SPECK}, one way) take their neighbours' median, and each frame whose smooth background "
            f"field (fitted on a {GRID} x {GRID} sample) is off white by more than {FIELD_TOL:g} levels is divided "
            "by it: exposure, tint, grey levels, vignettes and gradients are the model's light, not bodies")

__all__ = ["BACKGROUND", "SETTINGS", "normalise", "despeckle", "background_field", "flatten", "observed_colours"]


def normalise(video: np.ndarray, background: Sequence[int] = BACKGROUND) -> np.ndarray:
    """`video` (T, H, W, 3) uint8 with bad pixels mended and its background flattened to
    `background`; `video` itself (the same object) when neither applies."""
    out = despeckle(video)
    field = background_field(out, background)
    if field is None:
        return out
    return flatten(out, field, background)


def despeckle(video: np.ndarray) -> np.ndarray:
    """`video` with isolated pixels replaced by their 8 neighbours' per-channel median (a copy),
    or `video` itself when it has none.  A bad pixel is one whose channel sum is off that of at
    least 7 of its 8 neighbours by more than SPECK, all one way (so two bad pixels side by side
    are both found).  Candidates are the two pixels of each jump of more than SPECK along a row
    (a bad pixel has one on each side; a rendered body only at its rim): few, so only they are
    checked against all 8 neighbours.  Interior pixels only."""
    T, H, W, _ = video.shape
    if H < 3 or W < 3:
        return video
    flat = video.reshape(-1)  # contiguous bytes: a channel's next pixel along the row is 3 on
    jump = _jumps(flat)
    if not jump.size:
        return video
    # A bad pixel is a jump one way then, one or two pixels on (two bad pixels side by side), the
    # other way, in one channel; the pixel(s) between are the candidates.  Never across rows.
    pixel = jump // 3
    col = pixel % W
    up = (flat[jump + 3] >> 1) > (flat[jump] >> 1)
    big = np.zeros(flat.size + 6, dtype=bool)
    big[jump] = True
    cands = []
    for gap in (1, 2):
        ok = col + gap < W - 1
        k = jump[ok]
        k = k[big[k + 3 * gap] & (((flat[k + 3 * gap + 3] >> 1) > (flat[k + 3 * gap] >> 1)) != up[ok])]
        cands += [k // 3 + j for j in range(1, gap + 1)]  # the pixels between
    flat_px = np.unique(np.concatenate(cands))
    t, rest = np.divmod(flat_px, H * W)
    r, c = np.divmod(rest, W)
    keep = (r >= 1) & (r < H - 1) & (c >= 1) & (c < W - 1)
    t, r, c = t[keep], r[keep], c[keep]
    bad = _isolated(video, t, r, c)
    if not bad.any():
        return video
    t, r, c = t[bad], r[bad], c[bad]
    neighbours = np.stack([video[t, r + dr, c + dc] for dr, dc in _RING], axis=1)  # (n, 8, 3)
    out = video.copy()
    # The mean of the 4th and 5th of 8 sorted values: the median, rounded half up.
    ranked = np.sort(neighbours.astype(np.int16), axis=1)
    out[t, r, c] = ((ranked[:, 3] + ranked[:, 4] + 1) // 2).astype(np.uint8)
    return out


_CHUNK = 1 << 18  # bytes of the video per pass of `_jumps`: its buffers stay in the core's cache


def _jumps(flat: np.ndarray) -> np.ndarray:
    """Sorted i where byte i + 3 (the same channel one pixel on) differs from byte i by more than
    SPECK / 3 levels, in half levels: chunk by chunk (the same bytes, each chunk 3 bytes into the
    next), so the arithmetic runs in cache rather than on whole-video temporaries."""
    step = SPECK // 6  # a jump of more than SPECK / 3 levels in one channel, in half levels
    n = flat.size - 3
    out = []
    for s in range(0, max(n, 0), _CHUNK):
        e = min(s + _CHUNK, n)
        half = flat[s:e + 3] >> 1  # uint8 in [0, 127], so 128 + half[i + 3] - half[i] never wraps
        d = half[3:] + np.uint8(128)
        d -= half[:-3]  # 128 + (half of the same channel one pixel right) - half
        d -= np.uint8(128 - step)  # below 128 - step wraps high
        out.append(np.flatnonzero(d > 2 * step) + s)
    return np.concatenate(out) if out else np.zeros(0, np.intp)


_RING = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc]


def _isolated(video: np.ndarray, t: np.ndarray, r: np.ndarray, c: np.ndarray,
              back: np.ndarray | None = None) -> np.ndarray:
    """bool (n,): the interior pixels (t, r, c) whose R + G + B is off all 8 neighbours' by more
    than SPECK, one way; or off 7 of them where the eighth (its partner) is off all of its own
    but this one, the same way: two bad pixels side by side.  A one-pixel line (the gap between
    two touching balls) goes on past the partner, which is then no bad pixel.  back: (n,) a ring
    index to leave out (the partner's check: the pixel that asked)."""
    H, W = video.shape[1:3]
    centre = video[t, r, c].sum(axis=1, dtype=np.int16)  # (n,)
    around = np.stack([video[t, r + dr, c + dc].sum(axis=1, dtype=np.int16) for dr, dc in _RING], axis=1)  # (n, 8)
    high = centre[:, None] - around > SPECK
    low = around - centre[:, None] > SPECK
    if back is not None:  # the asking pixel counts as differing: all 7 others must
        rows = np.arange(len(t))
        high[rows, back] = low[rows, back] = True
        return high.all(axis=1) | low.all(axis=1)
    n_high, n_low = high.sum(axis=1), low.sum(axis=1)
    bad = (n_high == 8) | (n_low == 8)
    seven = np.flatnonzero(((n_high == 7) | (n_low == 7)) & ~bad)
    if seven.size:
        odd = np.argmin(np.where((n_high[seven] == 7)[:, None], high[seven], low[seven]), axis=1)  # the eighth
        ring = np.asarray(_RING)
        pr, pc = r[seven] + ring[odd, 0], c[seven] + ring[odd, 1]
        inside = (pr >= 1) & (pr < H - 1) & (pc >= 1) & (pc < W - 1)
        seven, pr, pc, odd = seven[inside], pr[inside], pc[inside], odd[inside]
        partner = _isolated(video, t[seven], pr, pc, back=7 - odd)  # _RING's index i and 7 - i are opposite
        alike = np.abs(video[t[seven], pr, pc].sum(axis=1, dtype=np.int16) - centre[seven]) <= SPECK  # one way
        bad[seven] = partner & alike
    return bad


def _basis(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(n, 7) smooth-field basis at normalised coordinates u, v in [-1, 1]."""
    r2 = u * u + v * v
    return np.stack([np.ones_like(u), u, v, u * u, u * v, v * v, r2 * r2], axis=-1)


def _grid(width: int) -> tuple[np.ndarray, np.ndarray]:
    """Sample indices (n,) along one side and their normalised coordinates (n,)."""
    n = min(GRID, width)
    index = ((np.arange(n) + 0.5) * width / n).astype(np.intp)
    return index, (index + 0.5) / width * 2.0 - 1.0


def background_field(video: np.ndarray, background: Sequence[int] = BACKGROUND) -> np.ndarray | None:
    """Per-frame field coefficients (T, 7, 3) of the smooth background, or None when every
    frame's field is within FIELD_TOL of `background` (nothing to flatten).  A frame whose
    field explains too little of it (a frame full of bodies or noise) gets coefficients that
    say "the background itself" (it is left alone)."""
    T, H, W, _ = video.shape
    bg = np.asarray(background, np.float64)
    rows, v = _grid(H)
    cols, u = _grid(W)
    points = video[:, rows][:, :, cols].reshape(T, -1, 3).astype(np.float64)  # (T, n, 3)
    if np.all(np.abs(points - bg) <= FIELD_TOL):  # the common case: a white picture's sample
        return None
    basis, products = _sample_basis(H, W)  # (n, 7), (n, 49)
    m = basis.shape[1]
    own = np.zeros((T, m, 3))
    own[:, 0, :] = bg
    flat = points.transpose(1, 0, 2).reshape(-1, T * 3)  # (n, T 3): plain matrix products below
    median = np.median(points, axis=1)  # (T, 3)
    inliers = _max3(np.abs(points - median[:, None])) <= _START  # (T, n)
    coef = own
    for _ in range(_ROUNDS):
        w = inliers.astype(np.float64)  # (T, n)
        gram = (w @ products).reshape(T, m, m) + 1e-6 * np.eye(m)  # (T, 7, 7)
        rhs = basis.T @ (flat * np.repeat(w.T, 3, axis=1))  # (7, T 3)
        coef = np.linalg.solve(gram, rhs.reshape(m, T, 3).transpose(1, 0, 2))  # (T, 7, 3)
        fitted = (basis @ coef.transpose(1, 0, 2).reshape(m, T * 3)).reshape(-1, T, 3).transpose(1, 0, 2)
        residual = _max3(np.abs(points - fitted))  # (T, n)
        rms = np.sqrt((w * residual * residual).sum(axis=1) / np.maximum(w.sum(axis=1), 1.0))  # (T,)
        inliers = residual <= np.maximum(_FLOOR, 3.0 * rms)[:, None]
    usable = (inliers.mean(axis=1) >= _MIN_INLIERS) & np.all(fitted.min(axis=1) >= _MIN_FIELD, axis=1)
    off = np.abs(fitted - bg).max(axis=(1, 2)) > FIELD_TOL  # (T,)
    move = usable & off
    if not move.any():
        return None
    return np.where(move[:, None, None], coef, own)


def _max3(a: np.ndarray) -> np.ndarray:
    """The largest of the last axis's 3 values (numpy's reduce over a length-3 axis is slow)."""
    return np.maximum(np.maximum(a[..., 0], a[..., 1]), a[..., 2])


@lru_cache(maxsize=8)
def _sample_basis(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The field basis at the sample points (n, 7) and its products per point (n, 49)."""
    _, v = _grid(height)
    _, u = _grid(width)
    uu, vv = np.meshgrid(u, v)
    basis = _basis(uu.ravel(), vv.ravel())
    return basis, (basis[:, :, None] * basis[:, None, :]).reshape(basis.shape[0], -1)


def flatten(video: np.ndarray, field: np.ndarray, background: Sequence[int] = BACKGROUND) -> np.ndarray:
    """`video` with each channel of each frame divided by its field (T, 7, 3) and multiplied by
    `background`, rounded (a copy); frames whose field is the background are left as they are."""
    T, H, W, _ = video.shape
    bg = np.asarray(background, np.float64)
    uu, vv = np.meshgrid((np.arange(W) + 0.5) / W * 2.0 - 1.0, (np.arange(H) + 0.5) / H * 2.0 - 1.0)
    basis = _basis(uu.ravel(), vv.ravel()).astype(np.float32)  # (H W, 7)
    out = video.copy()
    for t in range(T):
        if np.all(field[t, 0] == bg) and not np.any(field[t, 1:]):
            continue
        plane = basis @ field[t].astype(np.float32)  # (H W, 3)
        gain = (bg.astype(np.float32) / np.maximum(plane, np.float32(_MIN_FIELD))).reshape(H, W, 3)
        frame = video[t].astype(np.float32) * gain
        out[t] = np.clip(np.rint(frame), 0, 255).astype(np.uint8)
    return out


_LAST: list = [None, None, None]  # (video, key, medians): the parser and the judge ask for the same video


def observed_colours(video: np.ndarray, colours: Sequence[Sequence[int]], frames: int,
                     background: Sequence[int] = BACKGROUND, keep: int = COLOUR_KEEP) -> list[tuple[int, int, int]]:
    """Each body colour as the (normalised) video draws it in its first `frames` frames.

    A pixel is a solid pixel of colour k when, of the background and the scene's colours, k's
    is nearest to it and it lies nearer k than half k's distance from the background, and so do
    its four neighbours (no rim, no blend).  The per-channel median of those pixels is the colour
    read; it replaces the scene's colour only where it is off it by more than COLOUR_KEEP levels
    on some channel and within COLOUR_REACH of it, with at least _MIN_SOLID pixels, and the colours
    read stay distinct (else the scene's colours, all of them).  Exact and lossy renders keep the
    scene's colours; a model that draws red a little orange, desaturated or hue-shifted gets its
    own red read, so that a ball's coverage, area and colour test are not biased by the shift."""
    scene = [(int(c[0]), int(c[1]), int(c[2])) for c in colours]
    key = (tuple(scene), int(frames), tuple(int(x) for x in background))
    if _LAST[0] is video and _LAST[1] == key:  # the same array object: its pixels read once per video
        medians = _LAST[2]  # (the parser's and the judge's `keep` differ: only the choice below)
    else:
        medians = _solid_medians(video, scene, int(frames), background)
        _LAST[:] = [video, key, medians]
    return scene if medians is None else _choose(scene, medians, background, int(keep))


def _choose(scene: list[tuple[int, int, int]], medians: list[tuple[int, int, int] | None],
            background: Sequence[int], keep: int) -> list[tuple[int, int, int]]:
    """The colours read from each colour's solid-pixel median (None: too few solid pixels)."""
    read = []
    for colour, est in zip(scene, medians):
        if est is None:
            read.append(colour)
            continue
        off = np.abs(np.asarray(est) - np.asarray(colour))
        far = np.linalg.norm(np.asarray(est, float) - np.asarray(colour, float)) > COLOUR_REACH
        read.append(colour if off.max() <= keep or far else est)
    if len(set(read)) != len(set(scene)) or tuple(int(x) for x in background) in read:
        return scene
    return read


_FOUR = ((-1, 0), (1, 0), (0, -1), (0, 1))  # a solid pixel's neighbours must be its colour too


def _solid_medians(video: np.ndarray, scene: list[tuple[int, int, int]], frames: int,
                   background: Sequence[int]) -> list[tuple[int, int, int] | None] | None:
    """Each scene colour's solid pixels' per-channel median, rounded (None for a colour with fewer
    than _MIN_SOLID of them), or None where nothing can be read (no colour, no ink, a tiny frame):
    everything of `observed_colours` that does not depend on `keep`."""
    clip = np.asarray(video[: max(int(frames), 1)])
    if not scene or clip.shape[1] < 3:
        return None
    palette = np.asarray([tuple(background)] + scene, np.float32)  # (K + 1, 3)
    bg = palette[0]
    if np.all(bg == 255):  # white: a channel under 231 (uint8 only, no copy of the frames in int16)
        ink = np.flatnonzero(np.minimum(np.minimum(clip[..., 0], clip[..., 1]), clip[..., 2]) < 231)
    else:
        ink = np.flatnonzero(_max3(np.abs(clip.astype(np.int16) - bg.astype(np.int16))) > 24)  # flat (t, r, c)
    if not ink.size:
        return None
    T, H, W, _ = clip.shape
    t, rest = np.divmod(ink, H * W)
    r, c = np.divmod(rest, W)
    inner = (r > 0) & (r < H - 1) & (c > 0) & (c < W - 1)
    t, r, c = t[inner], r[inner], c[inner]
    reach = 0.5 * np.linalg.norm(palette[1:] - bg, axis=1)  # (K,)

    # Each pixel's label depends on its value alone, so each pixel an ink pixel or one of its four
    # neighbours is labelled once (not once per neighbourhood: 5x the pixels), into a (T, H, W) map.
    needed = np.zeros((T, H, W), bool)
    needed[t, r, c] = True
    for dr, dc in _FOUR:
        needed[t, r + dr, c + dc] = True
    where = np.flatnonzero(needed)
    labels = np.zeros(T * H * W, np.intp)
    pix = clip.reshape(-1, 3)[where].astype(np.float32)  # (n, 3)
    dist = np.linalg.norm(pix[:, None, :] - palette[None], axis=2)  # (n, K + 1)
    best = dist.argmin(axis=1)
    near = dist[np.arange(len(best)), best] < np.concatenate([[np.inf], reach])[best]
    labels[where] = np.where(near, best, 0)  # 0: background or no colour
    labels = labels.reshape(T, H, W)
    own = labels[t, r, c]
    for dr, dc in _FOUR:
        own = np.where(labels[t, r + dr, c + dc] == own, own, 0)
    medians: list[tuple[int, int, int] | None] = []
    for k in range(1, len(scene) + 1):
        solid = own == k
        if solid.sum() < _MIN_SOLID:
            medians.append(None)
            continue
        median = np.median(clip[t[solid], r[solid], c[solid]].astype(np.float64), axis=0)
        medians.append((int(round(median[0])), int(round(median[1])), int(round(median[2]))))
    return medians
