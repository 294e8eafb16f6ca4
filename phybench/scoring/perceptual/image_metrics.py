"""PSNR and SSIM of generated videos against the ground truth, fast and exact.

Conventions (stated in every results file, see `SETTINGS`):

- Frames are compared on [0, 1] (uint8 / 255), per frame, then averaged over the scored
  frames of a video, then over videos.  Scored frames are the generated ones
  (index >= condition frames): the condition frames are copies of the ground truth.
- PSNR = 10 log10(1 / MSE) with the MSE over H, W and the three channels of one frame.
  Identical frames have MSE 0; the MSE is floored at 1e-10, so the cap is 100 dB.
- SSIM (Wang et al. 2004) with an 11-tap Gaussian window of sigma 1.5 (scikit-image's
  `gaussian_weights=True, sigma=1.5, use_sample_covariance=False, data_range=1`),
  K1 = 0.01, K2 = 0.03, per RGB channel, averaged over *valid* windows only (the map is
  cropped by 5 px on each side, as scikit-image does; torchmetrics pads instead).

Why not a library: scikit-image's SSIM is the reference (a test compares with it) but runs
at a few clips/s; torchmetrics' pads the borders and runs at ~8 clips/s here.  Most of a
phybench video is identical white background in both videos, and an SSIM window over
identical pixels is exactly 1 in floating point (numerator and denominator are the same
expression), so we filter only a per-frame box around the pixels that differ.  That is
exact, not an approximation; a video that differs everywhere falls back to the full frame.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from phybench.scoring.perceptual import ssim_fused

WINDOW = 11  # Gaussian window taps
SIGMA = 1.5  # Gaussian window sigma, pixels
K1, K2 = 0.01, 0.03
PSNR_MSE_FLOOR = 1e-10  # PSNR cap: 10 log10(1 / 1e-10) = 100 dB

SETTINGS: dict[str, Any] = {
    "range": "[0, 1] (uint8 / 255)",
    "frames": "generated frames only (index >= condition_frames); mean over frames, then videos",
    "psnr": {"mse": "mean over H, W, C of one frame", "cap_db": 100.0},
    "ssim": {
        "window": "gaussian",
        "window_size": WINDOW,
        "sigma": SIGMA,
        "k1": K1,
        "k2": K2,
        "covariance": "population (use_sample_covariance=False)",
        "border": "valid windows only (crop (window-1)/2 px per side, as scikit-image)",
        "channels": "per RGB channel, then averaged",
    },
}


def _gaussian_taps() -> np.ndarray:
    x = np.arange(WINDOW, dtype=np.float64) - WINDOW // 2
    g = np.exp(-(x**2) / (2 * SIGMA**2))
    return g / g.sum()


_TAPS = _gaussian_taps()
_TAPS32 = ssim_fused.float32_taps(_TAPS)


def _check_pair(reference: np.ndarray, generated: np.ndarray) -> None:
    if reference.shape != generated.shape or reference.ndim != 4 or reference.shape[-1] != 3:
        raise ValueError(
            f"expected two uint8 (T, H, W, 3) videos of one shape, got {reference.shape} and {generated.shape}"
        )
    if reference.dtype != np.uint8 or generated.dtype != np.uint8:
        raise ValueError(f"expected uint8 videos, got {reference.dtype} and {generated.dtype}")
    if min(reference.shape[1:3]) < WINDOW:
        raise ValueError(f"frames must be at least {WINDOW}x{WINDOW} for SSIM, got {reference.shape[1:3]}")


def psnr_frames(reference: np.ndarray, generated: np.ndarray) -> np.ndarray:
    """float64 (T,) PSNR in dB of each frame pair of two uint8 (T, H, W, 3) videos."""
    _check_pair(reference, generated)
    # |difference| in uint8, squared in uint16 (<= 65025), summed in int64: integer-exact, so any
    # order gives the same bits; 5x less CPU than int64 products (issue 52: 26 CPU-ms a 256 px clip),
    # a frame at a time in buffers that stay in cache (5.5 -> 3.1 CPU-ms a 256 px clip)
    T = len(reference)
    ref, gen = reference.reshape(T, -1), generated.reshape(T, -1)
    n = ref.shape[1]
    sse = np.zeros(T, np.int64)
    hi, lo, d = np.empty(n, np.uint8), np.empty(n, np.uint8), np.empty(n, np.uint16)
    for t in range(T):
        np.maximum(ref[t], gen[t], out=hi)
        np.subtract(hi, np.minimum(ref[t], gen[t], out=lo), out=hi)
        d[:] = hi
        sse[t] = np.add.reduce(np.multiply(d, d, out=d), dtype=np.int64)
    mse = sse.astype(np.float64) / (n * 255.0**2)
    return 10.0 * np.log10(1.0 / np.maximum(mse, PSNR_MSE_FLOOR))


_LOCAL = threading.local()


def _band(cols: int) -> ssim_fused._Band:
    """This thread's band buffers for frames of `cols` = 3 w values a row, kept across calls so a
    run of clips allocates them once instead of faulting fresh pages in for every batch."""
    cache: dict[int, ssim_fused._Band] = _LOCAL.__dict__.setdefault("bands", {})
    if cols not in cache:
        if len(cache) >= 8:  # crops come in many widths: keep the few full-frame ones
            cache.clear()
        cache[cols] = ssim_fused._Band(cols)
    return cache[cols]


def _ssim_sums(reference: np.ndarray, generated: np.ndarray) -> np.ndarray:
    """float64 (k,): each frame pair's SSIM map summed over its valid windows and channels.

    reference, generated: uint8 (k, h, w, 3) blocks, h, w >= WINDOW.  One frame at a time, in
    float32 bands of rows that stay in cache (`ssim_fused`: a fused, tiled separable filter in
    one fixed operation order, so the bytes depend on neither threads, workers, batching nor
    whether numba is installed).  Values are centred on 0.5 before the second moments so flat
    regions lose less to cancellation; the map is summed in float64.  Against scikit-image's
    float64 SSIM: within 1e-6 (tests/test_image_metrics.py; measured in docs/performance.md).
    """
    k, h, w, _ = reference.shape
    band = _band(3 * w)
    frame_sum = ssim_fused.compiled_frame_sum() or ssim_fused.frame_sum_numpy
    c = (np.float32((K1 * 255) ** 2), np.float32((K2 * 255) ** 2))  # pixel units: moments are about a pixel colour
    out = np.empty(k, dtype=np.float64)
    for t in range(k):
        x = np.ascontiguousarray(reference[t]).reshape(h, 3 * w)  # (h, 3w) interleaved RGB rows
        y = np.ascontiguousarray(generated[t]).reshape(h, 3 * w)
        out[t] = frame_sum(x, y, _TAPS32, c, band)
    return out


def ssim_frames(reference: np.ndarray, generated: np.ndarray) -> np.ndarray:
    """float64 (T,) SSIM of each frame pair of two uint8 (T, H, W, 3) videos.

    Per frame, only the windows whose footprint touches a differing pixel are filtered
    (one crop around them); every other window contributes exactly 1.  Frames whose crop
    is most of the image are filtered together as one batch.
    """
    _check_pair(reference, generated)
    T, H, W, _ = reference.shape
    r = WINDOW - 1
    valid = 3 * (H - r) * (W - r)  # windows per frame, all channels
    rows_any, cols_any = _differing_rows_cols(reference, generated)  # (T, H), (T, W) bool
    out = np.ones(T, dtype=np.float64)
    differ = np.flatnonzero(rows_any.any(axis=1))  # identical frames: every window is exactly 1
    # Window corners whose footprint touches a differing pixel, clipped to the valid corners (each
    # frame's first and last differing row and column); the crop is the union of their footprints.
    first_r, last_r = rows_any[differ].argmax(axis=1), H - 1 - rows_any[differ, ::-1].argmax(axis=1)
    first_c, last_c = cols_any[differ].argmax(axis=1), W - 1 - cols_any[differ, ::-1].argmax(axis=1)
    boxes = np.stack([np.maximum(first_r - r, 0), np.minimum(last_r, H - WINDOW),
                      np.maximum(first_c - r, 0), np.minimum(last_c, W - WINDOW)], axis=1)  # (k, 4) i0 i1 j0 j1
    n = (boxes[:, 1] - boxes[:, 0] + 1) * (boxes[:, 3] - boxes[:, 2] + 1)
    full = n * 2 > (H - r) * (W - r)
    crops, boxes, n = differ[~full], boxes[~full], n[~full]
    out[crops] = (_crop_sums(reference, generated, crops, boxes) + (valid - 3 * n)) / valid
    if full.any():
        out[differ[full]] = _ssim_sums(reference[differ[full]], generated[differ[full]]) / valid
    return out


def _differing_rows_cols(reference: np.ndarray, generated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """bool (T, H), (T, W): where each frame pair differs, by row and by column (compiled: one pass)."""
    compiled = ssim_fused.compiled_differ()
    if compiled is not None:
        return compiled(reference, generated)
    T, H, W, _ = reference.shape
    # Reduce over contiguous axes only: a reduction over the 3-wide channel axis is slow.
    diff = (reference != generated).reshape(T, H, W * 3)  # (T, H, W*3) bool
    return diff.max(axis=2), diff.max(axis=1).reshape(T, W, 3).max(axis=2)


def _crop_sums(reference: np.ndarray, generated: np.ndarray, frames: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """float64 (k,): `_ssim_sums` of each crop (frame, its box i0, i1, j0, j1 of valid window
    corners): one compiled call for them all where numba is used, else one call per crop."""
    c = (np.float32((K1 * 255) ** 2), np.float32((K2 * 255) ** 2))
    compiled = ssim_fused.compiled_crop_sums()
    if compiled is not None and len(frames):
        return compiled(np.ascontiguousarray(reference), np.ascontiguousarray(generated), frames, boxes, _TAPS32, c,
                        ssim_fused.BAND_FLOATS, ssim_fused.flat_buffers)
    out = np.empty(len(frames), np.float64)
    for k, (t, (i0, i1, j0, j1)) in enumerate(zip(frames, boxes)):
        crop = (slice(t, t + 1), slice(i0, i1 + WINDOW), slice(j0, j1 + WINDOW))
        out[k] = _ssim_sums(reference[crop], generated[crop])[0]
    return out


def score_frames(reference: np.ndarray, generated: np.ndarray, start: int) -> dict[str, float]:
    """Per-video PSNR and SSIM means over frames `start:` (the generated frames)."""
    ref, gen = reference[start:], generated[start:]
    if ref.shape[0] == 0:
        raise ValueError("no generated frames to score")
    return {"psnr": float(psnr_frames(ref, gen).mean()), "ssim": float(ssim_frames(ref, gen).mean())}
