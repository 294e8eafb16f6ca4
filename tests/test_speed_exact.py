"""Issue 52's cheaper equals: each shortcut gives the bits of the code it replaced.

SSIM's crops in one compiled call and its differing rows and columns in one pass; the colours
read from a video labelling each pixel once (it was once per neighbourhood) and read once for
the parser and the judge; a results file's bootstrap drawing its one index matrix once.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter

from phybench import stats
from phybench.scoring.perceptual import image_metrics, ssim_fused
from phybench.scoring.physics import photometry


def _scene(rng: np.random.Generator, shared: bool = True, T: int = 4,
           size: int = 64) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """White frames with a few blurred discs of three colours (one shared by two discs, if `shared`)."""
    colours = [(230, 40, 40), (40, 40, 230), (40, 40, 230) if shared else (40, 200, 40), (20, 20, 20)]
    video = np.full((T, size, size, 3), 255.0)
    yy, xx = np.mgrid[:size, :size]
    for t in range(T):
        for k, colour in enumerate(colours):
            cy, cx = 12 + 13 * k + 2 * t, 10 + 11 * k + 3 * t
            video[t][(yy - cy) ** 2 + (xx - cx) ** 2 <= 30] = colour
    video = gaussian_filter(video, (0, 0.8, 0.8, 0))
    return np.clip(video.round(), 0, 255).astype(np.uint8), colours


def _labels_per_neighbourhood(video: np.ndarray, scene: list[tuple[int, int, int]], frames: int) -> np.ndarray:
    """The labelling before issue 52's change: every ink pixel's own label, then each of its four
    neighbours' labels computed again (the same formula), kept where all five agree."""
    clip = video[:frames]
    palette = np.asarray([(255, 255, 255)] + scene, np.float32)
    ink = np.flatnonzero(np.minimum(np.minimum(clip[..., 0], clip[..., 1]), clip[..., 2]) < 231)
    T, H, W, _ = clip.shape
    t, rest = np.divmod(ink, H * W)
    r, c = np.divmod(rest, W)
    inner = (r > 0) & (r < H - 1) & (c > 0) & (c < W - 1)
    t, r, c = t[inner], r[inner], c[inner]
    reach = 0.5 * np.linalg.norm(palette[1:] - palette[0], axis=1)

    def label(rr: np.ndarray, cc: np.ndarray) -> np.ndarray:
        dist = np.linalg.norm(clip[t, rr, cc].astype(np.float32)[:, None, :] - palette[None], axis=2)
        best = dist.argmin(axis=1)
        return np.where(dist[np.arange(len(best)), best] < np.concatenate([[np.inf], reach])[best], best, 0)

    own = label(r, c)
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        own = np.where(label(r + dr, c + dc) == own, own, 0)
    return own


def test_colours_read_labelling_each_pixel_once_equal_the_per_neighbourhood_labels():
    rng = np.random.default_rng(52)
    for shift in (0, 14, -25):  # exact, a tint the parser reads and the judge keeps, a darker one
        video, scene = _scene(rng)
        video = np.clip(video.astype(np.int16) + np.array([shift, -shift // 2, 0]), 0, 255).astype(np.uint8)
        own = _labels_per_neighbourhood(video, scene, 3)
        medians = photometry._solid_medians(video, scene, 3, photometry.BACKGROUND)
        assert medians is not None
        clip = video[:3]
        ink = np.flatnonzero(np.minimum(np.minimum(clip[..., 0], clip[..., 1]), clip[..., 2]) < 231)
        t, rest = np.divmod(ink, 64 * 64)
        r, c = np.divmod(rest, 64)
        inner = (r > 0) & (r < 63) & (c > 0) & (c < 63)
        t, r, c = t[inner], r[inner], c[inner]
        for k, got in enumerate(medians, start=1):
            solid = own == k
            if solid.sum() < 6:
                assert got is None
                continue
            median = np.median(clip[t[solid], r[solid], c[solid]].astype(np.float64), axis=0)
            assert got == tuple(int(round(v)) for v in median)


def test_the_parser_and_the_judge_read_a_video_once_with_their_own_keep():
    video, scene = _scene(np.random.default_rng(1), shared=False)
    video = np.clip(video.astype(np.int16) + np.array([12, -6, 0]), 0, 255).astype(np.uint8)
    fresh = {}
    for keep in (photometry.COLOUR_KEEP, photometry.JUDGE_KEEP):
        photometry._LAST[:] = [None, None, None]
        fresh[keep] = photometry.observed_colours(video, scene, 3, keep=keep)
    assert fresh[photometry.COLOUR_KEEP] != fresh[photometry.JUDGE_KEEP]  # the two keeps choose differently here
    photometry._LAST[:] = [None, None, None]
    assert photometry.observed_colours(video, scene, 3) == fresh[photometry.COLOUR_KEEP]
    read_once = photometry._LAST[2]
    assert photometry.observed_colours(video, scene, 3, keep=photometry.JUDGE_KEEP) == fresh[photometry.JUDGE_KEEP]
    assert photometry._LAST[2] is read_once  # the judge's call reused the parser's read
    assert photometry.observed_colours(video.copy(), scene, 3) == fresh[photometry.COLOUR_KEEP]  # another array: read again


def test_ssim_crops_in_one_compiled_call_equal_one_call_per_crop():
    pytest.importorskip("numba")
    if ssim_fused.compiled_crop_sums() is None:
        pytest.fail("numba is installed but the compiled crop loop did not give the per-frame bits at load")
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (5, 70, 90, 3), dtype=np.uint8)
    b = np.clip(a.astype(np.int16) + rng.integers(-20, 21, a.shape), 0, 255).astype(np.uint8)
    frames = np.array([0, 1, 2, 3, 4, 0])
    boxes = np.array([[0, 0, 0, 0], [0, 59, 0, 79], [3, 40, 70, 79], [59, 59, 10, 30], [10, 20, 30, 35], [5, 6, 7, 8]])
    one_call = image_metrics._crop_sums(a, b, frames, boxes)
    c = (np.float32((image_metrics.K1 * 255) ** 2), np.float32((image_metrics.K2 * 255) ** 2))
    for k, (s, (i0, i1, j0, j1)) in enumerate(zip(frames, boxes)):
        x = np.ascontiguousarray(a[s, i0:i1 + 11, j0:j1 + 11]).reshape(i1 - i0 + 11, -1)
        y = np.ascontiguousarray(b[s, i0:i1 + 11, j0:j1 + 11]).reshape(x.shape)
        assert one_call[k] == ssim_fused.frame_sum_numpy(x, y, image_metrics._TAPS32, c, ssim_fused._Band(x.shape[1]))
    compiled = ssim_fused.compiled_differ()
    assert compiled is not None
    b[:] = a
    b[1, 7, 9, 2] ^= 1
    b[3, 69, 0, 0] ^= 1
    rows, cols = compiled(a, b)
    diff = a != b
    assert (rows == diff.any(axis=(2, 3))).all() and (cols == diff.any(axis=(1, 3))).all() and rows.sum() == 2


@pytest.mark.parametrize("n", [2, 7, 48, 300])
def test_a_kept_bootstrap_index_matrix_draws_the_old_stream(n):
    values = np.random.default_rng(n).random(n)
    for chunk in (None, 4_000_000 // n, 999):
        rng, step = np.random.default_rng(3), 10_000 if chunk is None else chunk
        old = np.empty(10_000)
        for start in range(0, 10_000, step):
            stop = min(start + step, 10_000)
            old[start:stop] = values[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
        for _ in range(2):  # drawn, then kept
            assert stats.resampled_means(values, 10_000, 3, chunk).tobytes() == old.tobytes()
