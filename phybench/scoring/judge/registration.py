"""Static colours and bodies at rest: their coverage against the last condition frame, after
registering the picture (a shift, then a turn and a zoom about the centre).

A model's camera is never exactly still: a picture moved by a pixel or two, zoomed by 2% or
turned by a degree moves every static edge, and is no static body moving.  The judge's
`static` and `rest` rules (`phybench.scoring.judge.rules`) compare the smoothed coverage after the
best such registration, found on the mean of the generated frames.
"""
from __future__ import annotations

import numpy as np
from scipy import ndimage

from .findings import Ctx, Finding
from .segment import Layer

# Static and at-rest colours
SHIFT = 2.0  # px at 128 px: a global shift of the picture registered away ...
TURNS = (-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5)  # ... then a turn about the centre (degrees) ...
ZOOMS = (0.97, 0.98, 0.99, 1.0, 1.01, 1.02, 1.03)  # ... and a zoom, each kept where it lowers the difference
STATIC_SIGMA = 1.0  # px at 128 px: both frames smoothed before they are compared
STATIC_BASE = 0.4  # px^2 per px of the colour's perimeter ...
STATIC_EDGE = 0.5  # ... + this per unit of blur factor above 1 ...
STATIC_GT = 2.0  # ... + twice the ground truth's own largest change (contacts mix colours at the rim)
REST_GT = 4.0  # px^2 at 128 px: a colour whose ground truth changes less than this is at rest
AREA_ABS = 6.0  # px^2 at 128 px, times the blur factor: the area rules' least change, and the static rules' slack


def similar(img: np.ndarray, zoom: float, degrees: float) -> np.ndarray:
    """(H, W) `img` read through a zoom by `zoom` and a turn by `degrees` about its centre
    (bilinear, zero outside): what a picture drawn `1 / zoom` times the size looks like at
    the reference's scale."""
    a = np.deg2rad(degrees)
    m = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]) * zoom
    c = np.array([(img.shape[0] - 1) / 2.0, (img.shape[1] - 1) / 2.0])
    return ndimage.affine_transform(img, m, c - m @ c, order=1, mode="constant", cval=0.0)


def _pooled(x: np.ndarray, f: int, extent: tuple[int, int, int, int] | None = None) -> np.ndarray:
    """(n, h // f, w // f) sums of f x f blocks of (n, h, w) `x` (px^2 of the full frame per block;
    `x` itself for f = 1), summed only over the blocks that meet `extent` (rows and columns
    outside which `x` is 0: the other blocks are 0 either way), each block in the same order."""
    if f == 1:
        return x
    n, h, w = x.shape
    h2, w2 = h // f, w // f
    out = np.zeros((n, h2, w2), np.float32)
    r0, r1, c0, c1 = (0, h2, 0, w2) if extent is None else (extent[0] // f, min(-(-extent[1] // f), h2),
                                                             extent[2] // f, min(-(-extent[3] // f), w2))
    if r1 <= r0 or c1 <= c0:
        return out
    part = out[:, r0:r1, c0:c1]
    for i in range(f):
        for j in range(f):
            part += x[:, r0 * f + i:r1 * f:f, c0 * f + j:c1 * f:f]
    return out


def registered_change(soft: np.ndarray, ref: int, frames: range, ctx: Ctx, register: bool,
                      extent: tuple[int, int, int, int] | None = None) -> np.ndarray:
    """(len(frames),) sum |smoothed coverage - the reference frame's|, px^2, after the best
    global shift of at most SHIFT px (found once, on the mean of the frames).  extent: the rows
    and columns outside which `soft` is 0 (`Layer.extent`), where known."""
    if not len(frames):
        return np.zeros(0)
    f = max(1, int(round(ctx.scale_l)))  # compared at 128 px: block averages of f x f pixels
    sig = STATIC_SIGMA
    k = int(round(SHIFT))
    raw_ref, raw = _pooled(soft[ref:ref + 1], f, extent)[0], _pooled(soft[frames.start:frames.stop], f, extent)
    ref_img, stack = np.zeros_like(raw_ref), np.zeros_like(raw)
    b0, b1, d0, d1 = (0, raw.shape[1], 0, raw.shape[2]) if extent is None else (
        extent[0] // f, -(-extent[1] // f), extent[2] // f, -(-extent[3] // f))  # the blocks coverage can be in
    rows = b0 + np.flatnonzero(raw_ref[b0:b1, d0:d1].any(axis=1) | raw[:, b0:b1, d0:d1].any(axis=(0, 2)))
    cols = d0 + np.flatnonzero(raw_ref[b0:b1, d0:d1].any(axis=0) | raw[:, b0:b1, d0:d1].any(axis=(0, 1)))
    if rows.size:  # smoothed only where there is coverage (+ the kernel's reach): zeros elsewhere either way
        m = k + int(np.ceil(4 * sig)) + 1
        r0, r1 = max(rows[0] - m, 0), min(rows[-1] + 1 + m, raw.shape[1])
        c0, c1 = max(cols[0] - m, 0), min(cols[-1] + 1 + m, raw.shape[2])
        ref_img[r0:r1, c0:c1] = ndimage.gaussian_filter(raw_ref[r0:r1, c0:c1], sig, mode="nearest")
        stack[:, r0:r1, c0:c1] = ndimage.gaussian_filter(raw[:, r0:r1, c0:c1], (0, sig, sig), mode="nearest")
    H, W = ref_img.shape
    crop = (slice(k, H - k), slice(k, W - k))
    best = (0, 0)
    if register and k:
        mean = stack.mean(axis=0)
        base = ref_img[crop]

        diff = np.empty_like(base)  # one buffer for every shift: C-contiguous as `a - b` is, so the same sums

        def shift_cost(img: np.ndarray) -> tuple[float, tuple[int, int]]:
            costs: dict[tuple[int, int], float] = {}
            for dy in range(-k, k + 1):
                for dx in range(-k, k + 1):
                    np.subtract(img[k + dy:H - k + dy, k + dx:W - k + dx], base, out=diff)
                    costs[dy, dx] = float(np.abs(diff, out=diff).sum())
            key = min(costs, key=lambda key: (costs[key], abs(key[0]) + abs(key[1]), key))
            return costs[key], key

        cost, best = shift_cost(mean)
        if cost > 0.0:  # then a small turn and zoom about the centre, one axis at a time, twice over
            pose = (1.0, 0.0)
            tried: dict[tuple[float, float], tuple[float, tuple[int, int]]] = {}  # the second round repeats the first's
            for axis, grid in ((1, TURNS), (0, ZOOMS), (1, TURNS), (0, ZOOMS)):  # trials where the pose has not moved
                for value in grid:
                    trial = (value, pose[1]) if axis == 0 else (pose[0], value)
                    if trial == pose:
                        continue
                    if trial not in tried:
                        tried[trial] = shift_cost(similar(mean, *trial))
                    c, key = tried[trial]
                    if c < cost - 1e-9:
                        cost, best, pose = c, key, trial
            if pose != (1.0, 0.0):
                stack = np.stack([similar(frame, *pose) for frame in stack])
    dy, dx = best
    moved = stack[:, k + dy:H - k + dy, k + dx:W - k + dx]
    return np.abs(moved - ref_img[crop][None]).reshape(len(moved), -1).sum(axis=1)


def rest_change(g: Layer, ctx: Ctx) -> np.ndarray | None:
    """The ground truth's own change (as `registered_change`) when its colour is at rest, else None."""
    frames = range(ctx.start, ctx.T)
    if not len(frames) or g.area[ctx.ref] <= 0:
        return None
    ref = g.centroids[ctx.ref]
    for t in frames:  # cheap test first: a piece that moves a pixel is not at rest
        c = g.centroids[t]
        if len(c) != len(ref) or (len(c) and np.sqrt(((c[:, None] - ref[None]) ** 2).sum(-1)).min(axis=1).max() > 1.0):
            return None
    change = registered_change(g.soft, ctx.ref, frames, ctx, register=False, extent=g.extent)
    return change if change.max() <= REST_GT * ctx.scale_a else None


def unmoved(p: Layer, g: Layer, name: str, ctx: Ctx, rule: str, own: np.ndarray | None = None) -> list[Finding]:
    """A static colour (or a body at rest in the ground truth) stays where it was.

    own: the ground truth's own change, when the caller has it already."""
    frames = range(ctx.start, ctx.T)
    if not len(frames):
        return []
    gen = registered_change(p.soft, ctx.ref, frames, ctx, register=True, extent=p.extent)
    if own is None:
        own = registered_change(g.soft, ctx.ref, frames, ctx, register=False, extent=g.extent)
    perimeter = max(float(p.perimeter[ctx.ref]), float(g.perimeter[ctx.ref]))
    allowed = (perimeter * (STATIC_BASE + STATIC_EDGE * (ctx.blur - 1.0)) + STATIC_GT * float(own.max(initial=0.0))
               + AREA_ABS * ctx.scale_a)
    bad = np.flatnonzero(gen > allowed) + ctx.start
    if not bad.size:
        return []
    what = "static pixels" if rule == "static" else "bodies at rest in the ground truth"
    return [Finding(rule, name, bad.tolist(), f"{what} moved: smoothed coverage differs by up to {gen.max():.0f} px^2 "
                                              f"from the last condition frame (at most {allowed:.0f} allowed)")]
