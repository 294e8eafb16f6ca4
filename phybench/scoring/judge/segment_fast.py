"""Whether `segment` runs its per-pixel steps compiled (`segment_numba`) or in NumPy: the same bits.

The compiled kernels are used only once they have imported, compiled and reproduced the NumPy
path's whole segmentation of a small synthetic video here (blurred edges, two colours that can
explain the same grey, noise): a numba that cannot compile, or any difference at all, means the
NumPy path, so a results file's bytes never depend on which path ran.  `PHYBENCH_NUMBA=0`
switches the compiled path off (as for SSIM).  Imported lazily: `import phybench` stays free of numba.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any, Callable

import numpy as np

_STATE: dict[str, ModuleType | None] = {}


def compiled(segment: Callable[..., Any]) -> ModuleType | None:
    """`segment_numba` once it passed its check here, else None (the NumPy path); `segment`:
    `segment.segment`, run both ways on the check video (passed in: no import cycle)."""
    if os.environ.get("PHYBENCH_NUMBA", "1") == "0":
        return None
    if "mod" not in _STATE:
        _STATE["mod"] = None  # the check's reference run takes the NumPy path
        _STATE["mod"] = _load(segment)
    return _STATE["mod"]


def _load(segment: Callable[..., Any]) -> ModuleType | None:
    try:
        from phybench.scoring.judge import segment_numba

        video, palette, static = check_video()
        want = segment(video, palette, soft_only=static, perimeter_frames=[0, 2])
        _STATE["mod"] = segment_numba
        got = segment(video, palette, soft_only=static, perimeter_frames=[0, 2])
        same = same_segmentation(want, got)
    except Exception:  # noqa: BLE001 - any failure of the optional compiled path means the NumPy one
        return None
    finally:
        _STATE["mod"] = None
    return segment_numba if same else None


def check_video(frames: int = 3, size: int = 48, seed: int = 52) -> tuple[np.ndarray, list[tuple[int, ...]], list[tuple[int, ...]]]:
    """(T, H, W, 3) uint8 frames of a black bar, a light grey square beside it (a blurred black rim
    and the grey read alike: the ambiguous pixels), a red disc and a blue bar moving (blurred
    edges of one colour only), box-blurred and noisy; the palette and its static colours."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size]
    video = np.full((frames, size, size, 3), 255.0)
    for t in range(frames):
        video[t, size // 6:size * 5 // 6, 6:12] = 0.0
        video[t, size // 5:size * 3 // 5, 14:size * 2 // 3] = 200.0
        disc = (yy - size * 0.6 - 2 * t) ** 2 + (xx - size * 0.75 + 3 * t) ** 2 < (size / 5) ** 2
        video[t, disc] = (230.0, 40.0, 30.0)
        video[t, 2 + t:8 + t, size // 2:size // 2 + 9] = (20.0, 40.0, 220.0)
    blurred = np.zeros_like(video)
    for dy in range(-2, 3):  # a 5 x 5 box blur
        for dx in range(-2, 3):
            blurred += np.roll(video, (dy, dx), axis=(1, 2)) / 25.0
    noisy = blurred + rng.normal(0.0, 4.0, blurred.shape)
    palette: list[tuple[int, ...]] = [(0, 0, 0), (200, 200, 200), (230, 40, 30), (20, 40, 220)]
    return np.clip(noisy.round(), 0, 255).astype(np.uint8), palette, [(200, 200, 200)]


def same_segmentation(a: Any, b: Any) -> bool:
    """Two `Segmentation`s equal bit for bit: the owner map and every layer's every field."""
    if list(a.layers) != list(b.layers) or not _same(a.owner, b.owner):
        return False
    for c, x in a.layers.items():
        y = b.layers[c]
        for name in vars(x):
            u, v = getattr(x, name), getattr(y, name)
            if isinstance(u, list):
                if len(u) != len(v) or not all(_same(p, r) for p, r in zip(u, v)):
                    return False
            elif not _same(u, v):
                return False
    return True


def _same(u: Any, v: Any) -> bool:
    if isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
        u, v = np.asarray(u), np.asarray(v)
        return u.dtype == v.dtype and u.shape == v.shape and u.tobytes() == v.tobytes()
    return bool(u == v) and type(u) is type(v)

