"""SSIM's separable Gaussian filter, fused and tiled, in float32 with one fixed operation order.

Why a module of its own: the filter is where SSIM's cost is (issue 52).  A frame is filtered a
band of output rows at a time, straight from the interleaved uint8 (h, w, 3) layout: the
four moment maps of the band's rows + 10 are made, filtered down the rows (slices of whole rows,
contiguous), then along the row with a stride of 3 values (the channels stay interleaved, no
transpose), turned into the SSIM map and summed.  A band's working set is a few hundred KB, so it
stays in the core's L2 where a frame at a time spilled to memory; scipy's `correlate1d` ran a
scalar double loop per line and a strided gather for the vertical pass.

Exactness: every step is an IEEE float32 add, multiply or divide (each exactly rounded) in an
order this module fixes, and the sums are float64 in a fixed order: per column down the rows,
then along the columns.  So the bytes depend on neither the CPU's vector width, nor BLAS or
OpenMP threads, nor --workers, nor how frames are batched.  The Gaussian is symmetric, so each
pass adds the two pixels that share a tap before multiplying: 11 taps in 16 operations.

Two implementations of that one order: NumPy (always there), and the same loops compiled by
numba (a dependency since issue 52; 3-4x less CPU; about 1 CPU-s to compile once, cached on disk,
then 0.2 s to import numba and 0.4 s to load the cached code, once per process).  Where numba does
not import (no wheel, a NumPy it does not support) the NumPy path runs.  numba compiles without `fastmath`, so LLVM neither reorders the sums nor fuses
a multiply and an add into an FMA: its bits equal NumPy's (a test checks it where numba is
installed), so a results file does not depend on which path scored it.  `PHYBENCH_NUMBA=0` turns the compiled path off.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable

import numpy as np

BAND_FLOATS = 4 * 26 * 768  # a band's moment maps, 320 KB: 16 output rows of a 256 px frame, more of narrower ones
TAPS = 11
HALF = TAPS // 2


def float32_taps(taps: np.ndarray) -> np.ndarray:
    """The float64 Gaussian taps rounded to float32 (sum 1 within 1 ulp)."""
    assert taps.shape == (TAPS,) and np.allclose(taps, taps[::-1])  # symmetric
    return taps.astype(np.float32)


class _Band:
    """A band's float32 buffers for a frame width of `cols` = 3 w values, kept per thread/shape."""

    def __init__(self, cols: int) -> None:
        valid = cols - 3 * (TAPS - 1)
        self.rows = rows = max(16, BAND_FLOATS // (4 * cols) - (TAPS - 1))  # fewer NumPy calls on small crops
        self.maps = np.empty((4, rows + TAPS - 1, cols), np.float32)  # xc, yc, xc^2 + yc^2, xc yc
        self.vert = np.empty((4, rows, cols), np.float32)  # after the pass down the rows
        self.vtmp = np.empty_like(self.vert)
        self.filt = np.empty((4, rows, valid), np.float32)  # after the pass along the rows
        self.ftmp = np.empty_like(self.filt)
        self.colsum = np.empty(valid, np.float64)


def _moments(x: np.ndarray, y: np.ndarray, centre: np.ndarray, m: np.ndarray) -> None:
    """uint8 rows (n, 3w) -> m[0..3] = xc, yc, xc^2 + yc^2, xc yc with xc = x - centre, in pixel
    units (float32).  All four are exact: integers below 2^17."""
    np.subtract(x, centre, out=m[0])
    np.subtract(y, centre, out=m[1])
    np.multiply(m[0], m[0], out=m[2])
    np.multiply(m[1], m[1], out=m[3])
    m[2] += m[3]
    np.multiply(m[0], m[1], out=m[3])


def _pass(src: Callable[[int], np.ndarray], t: np.ndarray, out: np.ndarray, tmp: np.ndarray) -> None:
    """out = t[5] src(5) + sum_k t[k] (src(k) + src(10 - k)), k = 0..4, in that order."""
    np.multiply(src(HALF), t[HALF], out=out)
    for k in range(HALF):
        np.add(src(k), src(TAPS - 1 - k), out=tmp)
        tmp *= t[k]
        out += tmp


def _ssim_map(f: np.ndarray, centre: np.ndarray, g: np.ndarray, tmp: np.ndarray, c1: np.float32, c2: np.float32) -> None:
    """g = the SSIM of each window from its filtered moments f = (mxc, myc, sq, xy) and the
    centre of its column, float32; tmp (4, ...) is scratch.  Same order as `ssim_numba`."""
    mxc, myc, sq, xy = f
    mx, my, a, b = tmp
    np.add(mxc, centre, out=mx)
    np.add(myc, centre, out=my)
    np.multiply(mx, np.float32(2), out=a)
    a *= my
    a += c1  # 2 mx my + c1
    np.multiply(mxc, myc, out=b)
    np.subtract(xy, b, out=b)
    b *= np.float32(2)
    b += c2  # 2 cov + c2
    a *= b  # numerator
    np.multiply(mx, mx, out=mx)
    np.multiply(my, my, out=my)
    mx += my
    mx += c1  # mx^2 + my^2 + c1
    np.multiply(mxc, mxc, out=b)
    np.multiply(myc, myc, out=my)
    b += my
    np.subtract(sq, b, out=b)  # var_x + var_y = sq - (mxc^2 + myc^2): = 2 cov bit for bit where x == y
    b += c2
    mx *= b  # denominator
    np.divide(a, mx, out=g)


def centre_row(x: np.ndarray) -> np.ndarray:
    """float32 (3w,): the first pixel's colour, repeated along the row.  Moments are taken about
    it: a window of that colour is then exactly 0, so a flat background (phybench's white) loses
    nothing to float32 cancellation in var = E[x^2] - E[x]^2 (about 0.5 centred it gave 1.6e-6
    off scikit-image on noise over white; see tests/test_image_metrics.py)."""
    return np.tile(x[0, :3].astype(np.float32), x.shape[1] // 3)


def frame_sum_numpy(x: np.ndarray, y: np.ndarray, t: np.ndarray, c: tuple[np.float32, np.float32], band: _Band) -> float:
    """float64 sum of one frame pair's SSIM map over its valid windows and channels.

    x, y: uint8 (h, 3 w) rows of interleaved RGB, h, w >= 11.  t: float32 taps."""
    h, cols = x.shape
    valid = cols - 3 * (TAPS - 1)
    centre, colsum = centre_row(x), band.colsum
    colsum[:] = 0.0
    for i0 in range(0, h - TAPS + 1, band.rows):  # the bits do not depend on the band's height
        r = min(band.rows, h - TAPS + 1 - i0)
        m, v, vt = band.maps[:, : r + TAPS - 1], band.vert[:, :r], band.vtmp[:, :r]
        _moments(x[i0 : i0 + r + TAPS - 1], y[i0 : i0 + r + TAPS - 1], centre, m)
        _pass(lambda k: m[:, k : k + r], t, v, vt)  # down the rows: (4, r, 3w)
        f, ft = band.filt[:, :r], band.ftmp[:, :r]
        _pass(lambda k: v[..., 3 * k : 3 * k + valid], t, f, ft)  # along the rows: (4, r, 3(w-10))
        g = vt[0, :, :valid]
        _ssim_map(f, centre[3 * HALF : 3 * HALF + valid], g, ft, *c)
        for row in g:  # float64, down each column in row order
            colsum += row
    return float(np.cumsum(colsum)[-1])  # along the columns, in order


_COMPILED: dict[str, Any] = {}


def compiled_frame_sum() -> Callable[..., float] | None:
    """The numba-compiled `frame_sum`, or None without numba (or with PHYBENCH_NUMBA=0).
    Imported and compiled on first use only: `import phybench` stays free of numba.  It is used
    only if it imports, compiles and gives NumPy's bits on a random frame pair here (a numba that
    cannot cache, fails to compile or fused an FMA falls back to NumPy: the bytes never depend on
    which path ran)."""
    if os.environ.get("PHYBENCH_NUMBA", "1") == "0":
        return None
    if "fn" not in _COMPILED:
        _COMPILED["fn"] = _load_compiled()
    return _COMPILED["fn"]


def _load_compiled() -> Callable[..., float] | None:
    try:
        from phybench.scoring.perceptual import ssim_numba

        def frame_sum(x: np.ndarray, y: np.ndarray, t: np.ndarray, c: tuple[np.float32, np.float32],
                      band: _Band) -> float:
            return ssim_numba.frame_sum(x, y, centre_row(x), t, c, band)

        rng = np.random.default_rng(52)
        x = rng.integers(0, 256, (40, 3 * 23), dtype=np.uint8)
        y = np.clip(x.astype(np.int16) + rng.integers(-40, 41, x.shape), 0, 255).astype(np.uint8)
        t = np.array([1, 2, 4, 7, 9, 10, 9, 7, 4, 2, 1], np.float32) / np.float32(56)
        c = (np.float32(6.5025), np.float32(58.5225))
        same = frame_sum(x, y, t, c, _Band(x.shape[1])) == frame_sum_numpy(x, y, t, c, _Band(x.shape[1]))
    except Exception:  # noqa: BLE001 - any failure of the optional compiled path means the NumPy one
        return None
    return frame_sum if same else None


def compiled_crop_sums() -> Callable[..., np.ndarray] | None:
    """`ssim_numba.crop_sums` (every crop of a video in one compiled call), or None where the
    compiled `frame_sum` is not used or the crop loop does not give its bits on a random video here."""
    if compiled_frame_sum() is None:
        return None
    if "crops" not in _COMPILED:
        _COMPILED["crops"] = _load_crops()
    return _COMPILED["crops"]


def compiled_differ() -> Callable[..., tuple[np.ndarray, np.ndarray]] | None:
    """`ssim_numba.differ` (boolean: no bits to check) wherever the compiled crop loop is used."""
    if compiled_crop_sums() is None:
        return None
    from phybench.scoring.perceptual import ssim_numba

    return ssim_numba.differ


def _load_crops() -> Callable[..., np.ndarray] | None:
    try:
        from phybench.scoring.perceptual import ssim_numba

        rng = np.random.default_rng(52)
        x = rng.integers(0, 256, (3, 40, 37, 3), dtype=np.uint8)
        y = np.clip(x.astype(np.int16) + rng.integers(-40, 41, x.shape), 0, 255).astype(np.uint8)
        t = np.array([1, 2, 4, 7, 9, 10, 9, 7, 4, 2, 1], np.float32) / np.float32(56)
        c = (np.float32(6.5025), np.float32(58.5225))
        boxes = np.array([[0, 29, 0, 26], [3, 20, 5, 9], [7, 7, 20, 26]])
        got = ssim_numba.crop_sums(x, y, np.array([0, 1, 2]), boxes, t, c, BAND_FLOATS, flat_buffers)
        for k, (i0, i1, j0, j1) in enumerate(boxes):
            a = np.ascontiguousarray(x[k, i0:i1 + 11, j0:j1 + 11]).reshape(i1 - i0 + 11, -1)
            b = np.ascontiguousarray(y[k, i0:i1 + 11, j0:j1 + 11]).reshape(a.shape)
            if got[k] != frame_sum_numpy(a, b, t, c, _Band(a.shape[1])):
                return None
    except Exception:  # noqa: BLE001 - any failure of the optional compiled path means the per-frame one
        return None
    return ssim_numba.crop_sums


def flat_buffers(n_uint8: int, n_float32: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flat scratch buffers for `ssim_numba.crop_sums`, kept per thread and grown, never shrunk:
    a run of clips faults their pages in once (issue 52: per-batch buffers were a third of the time)."""
    have = getattr(_SCRATCH, "bufs", None)
    if have is None or have[0].size < n_uint8 or have[2].size < n_float32:
        n8, n32 = max(n_uint8, have[0].size if have else 0), max(n_float32, have[2].size if have else 0)
        have = (np.empty(n8, np.uint8), np.empty(n8, np.uint8), np.empty(n32, np.float32), np.empty(n8, np.float64))
        _SCRATCH.bufs = have
    return have


_SCRATCH = threading.local()
