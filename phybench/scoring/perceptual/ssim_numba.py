"""`ssim_fused.frame_sum_numpy`'s loops compiled by numba: the same float32 operations in the same
order, 3-4x less CPU (issue 52).  Imported only by `ssim_fused.compiled_frame_sum`, on first use
(ImportError here, e.g. numba missing or too old for this NumPy, means the NumPy path runs).

No `fastmath`: LLVM must not reassociate the sums nor contract a multiply and an add into an
FMA, or the bits would differ from NumPy's and between CPUs.  The loops over a row's columns
are independent, so LLVM still vectorizes them.  `cache=True` keeps the machine code on disk
(numba's cache directory) so a scoring process pays the ~1 CPU-s compile once per install.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

_JIT: dict[str, Any] = {"cache": True, "nogil": True, "boundscheck": False}


@numba.njit(**_JIT)
def _moments(x: np.ndarray, y: np.ndarray, centre: np.ndarray, i0: int, n: int, m: np.ndarray) -> None:  # pragma: no cover
    for i in range(n):
        for c in range(x.shape[1]):
            a = np.float32(x[i0 + i, c]) - centre[c]
            b = np.float32(y[i0 + i, c]) - centre[c]
            m[0, i, c] = a
            m[1, i, c] = b
            m[2, i, c] = a * a + b * b
            m[3, i, c] = a * b


@numba.njit(**_JIT)
def _filter(m: np.ndarray, r: int, t: np.ndarray, v: np.ndarray, f: np.ndarray) -> None:  # pragma: no cover
    # Each output's taps in registers, in NumPy's order: t5 x5, then + t_k (x_k + x_10-k), k = 0..4.
    cols, valid = m.shape[2], f.shape[2]
    t0, t1, t2, t3, t4, t5 = t[0], t[1], t[2], t[3], t[4], t[5]
    for q in range(4):
        for i in range(r):
            a = m[q, i:i + 11]  # (11, cols): the rows of output row i
            w = v[q, i]
            for c in range(cols):
                s = a[5, c] * t5
                s += (a[0, c] + a[10, c]) * t0
                s += (a[1, c] + a[9, c]) * t1
                s += (a[2, c] + a[8, c]) * t2
                s += (a[3, c] + a[7, c]) * t3
                s += (a[4, c] + a[6, c]) * t4
                w[c] = s
            g = f[q, i]
            for j in range(valid):
                s = w[j + 15] * t5
                s += (w[j] + w[j + 30]) * t0
                s += (w[j + 3] + w[j + 27]) * t1
                s += (w[j + 6] + w[j + 24]) * t2
                s += (w[j + 9] + w[j + 21]) * t3
                s += (w[j + 12] + w[j + 18]) * t4
                g[j] = s


@numba.njit(**_JIT)
def _accumulate(f: np.ndarray, centre: np.ndarray, r: int, c1: np.float32, c2: np.float32,
                colsum: np.ndarray) -> None:  # pragma: no cover
    two = np.float32(2)
    for i in range(r):
        for j in range(f.shape[2]):
            mxc, myc, sq, xy = f[0, i, j], f[1, i, j], f[2, i, j], f[3, i, j]
            mx, my = mxc + centre[j + 15], myc + centre[j + 15]
            num = ((mx * two) * my + c1) * ((xy - mxc * myc) * two + c2)
            den = ((mx * mx + my * my) + c1) * ((sq - (mxc * mxc + myc * myc)) + c2)
            colsum[j] += np.float64(num / den)


@numba.njit(**_JIT)
def _frame_sum(x: np.ndarray, y: np.ndarray, centre: np.ndarray, t: np.ndarray, c1: np.float32, c2: np.float32,
               rows: int, m: np.ndarray, v: np.ndarray, f: np.ndarray, colsum: np.ndarray) -> float:  # pragma: no cover
    colsum[:] = 0.0
    n_out = x.shape[0] - 10
    for i0 in range(0, n_out, rows):
        r = min(rows, n_out - i0)
        _moments(x, y, centre, i0, r + 10, m)
        _filter(m, r, t, v, f)
        _accumulate(f, centre, r, c1, c2, colsum)
    total = colsum[0]
    for j in range(1, colsum.shape[0]):
        total += colsum[j]
    return total


def frame_sum(x: np.ndarray, y: np.ndarray, centre: np.ndarray, t: np.ndarray, c: tuple[np.float32, np.float32],
              band: Any) -> float:
    """`ssim_fused.frame_sum_numpy` compiled, with its centre row given: same bits."""
    return float(_frame_sum(x, y, centre, t, c[0], c[1], band.maps.shape[1] - 10, band.maps, band.vert, band.filt,
                            band.colsum))


@numba.njit(**_JIT)
def _crop_sums(ref: np.ndarray, gen: np.ndarray, frames: np.ndarray, boxes: np.ndarray, t: np.ndarray,
               c1: np.float32, c2: np.float32, band_floats: int, xb: np.ndarray, yb: np.ndarray, fb: np.ndarray,
               sb: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    # Each crop copied to contiguous (h, 3w) rows, its centre row and band buffers carved from the
    # flat buffers given (sized for the largest crop): the per-frame Python path's arrays, the same kernel.
    for k in range(frames.shape[0]):
        s, i0, i1, j0, j1 = frames[k], boxes[k, 0], boxes[k, 1], boxes[k, 2], boxes[k, 3]
        h, w = i1 - i0 + 11, j1 - j0 + 11
        cols = 3 * w
        rows = max(16, band_floats // (4 * cols) - 10)
        x, y = xb[:h * cols].reshape((h, cols)), yb[:h * cols].reshape((h, cols))
        for i in range(h):
            for j in range(w):
                for ch in range(3):
                    x[i, 3 * j + ch] = ref[s, i0 + i, j0 + j, ch]
                    y[i, 3 * j + ch] = gen[s, i0 + i, j0 + j, ch]
        centre = fb[:cols]
        for c in range(cols):
            centre[c] = np.float32(x[0, c % 3])
        n_m, n_v = 4 * (rows + 10) * cols, 4 * rows * cols
        m = fb[cols:cols + n_m].reshape((4, rows + 10, cols))
        v = fb[cols + n_m:cols + n_m + n_v].reshape((4, rows, cols))
        f = fb[cols + n_m + n_v:cols + n_m + n_v + 4 * rows * (cols - 30)].reshape((4, rows, cols - 30))
        out[k] = _frame_sum(x, y, centre, t, c1, c2, rows, m, v, f, sb[:cols - 30])


def crop_floats(h: np.ndarray, cols: np.ndarray, band_floats: int) -> tuple[int, int]:
    """(uint8 values, float32 values) `crop_sums`' buffers need for crops of h rows x cols values."""
    rows = np.maximum(16, band_floats // (4 * cols) - 10)
    return int((h * cols).max()), int((cols + 4 * (rows + 10) * cols + 8 * rows * cols).max())


def crop_sums(reference: np.ndarray, generated: np.ndarray, frames: np.ndarray, boxes: np.ndarray, t: np.ndarray,
              c: tuple[np.float32, np.float32], band_floats: int, buffers: Any) -> np.ndarray:
    """float64 (k,): `ssim_fused.frame_sum_numpy` of each crop `reference[frames[k], i0:i1 + 11, j0:j1 + 11]`
    (boxes[k] = i0, i1, j0, j1: its first and last valid window corners) against `generated`'s, in one
    compiled call instead of one Python call per frame: the same kernel on the same arrays, so the same
    bits.  `buffers(n_uint8, n_float32)` gives flat (x, y, float32, float64) buffers at least that large."""
    out = np.empty(len(frames), np.float64)
    if not len(frames):
        return out
    h, cols = boxes[:, 1] - boxes[:, 0] + 11, 3 * (boxes[:, 3] - boxes[:, 2] + 11)
    xb, yb, fb, sb = buffers(*crop_floats(h, cols, band_floats))
    _crop_sums(reference, generated, frames.astype(np.int64), boxes.astype(np.int64), t, c[0], c[1], band_floats,
               xb, yb, fb, sb, out)
    return out


@numba.njit(**_JIT)
def _differ(ref: np.ndarray, gen: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> None:  # pragma: no cover
    for s in range(ref.shape[0]):
        for i in range(ref.shape[1]):
            a, b = ref[s, i], gen[s, i]  # (W, 3)
            for j in range(ref.shape[2]):
                if a[j, 0] != b[j, 0] or a[j, 1] != b[j, 1] or a[j, 2] != b[j, 2]:
                    rows[s, i] = True
                    cols[s, j] = True


def differ(reference: np.ndarray, generated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """bool (T, H) and (T, W): the rows and the columns of each frame where two uint8 (T, H, W, 3)
    videos differ, in one pass without the (T, H, W, 3) mask NumPy's `!=` allocates and reduces twice."""
    T, H, W, _ = reference.shape
    rows, cols = np.zeros((T, H), np.bool_), np.zeros((T, W), np.bool_)
    _differ(np.ascontiguousarray(reference), np.ascontiguousarray(generated), rows, cols)
    return rows, cols
