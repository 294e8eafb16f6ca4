"""PSNR and SSIM against scikit-image (the independent reference), and the bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

from phybench.scoring.perceptual.image_metrics import PSNR_MSE_FLOOR, psnr_frames, score_frames, ssim_frames
from phybench.scoring.run.results import bootstrap_ci
from phybench.data.split import generate_sample, make_plan
from phybench.tasks import get_task


def _skimage_ssim(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array(
        [
            structural_similarity(
                a[i] / 255.0,
                b[i] / 255.0,
                gaussian_weights=True,
                sigma=1.5,
                use_sample_covariance=False,
                data_range=1.0,
                channel_axis=-1,
            )
            for i in range(len(a))
        ]
    )


@pytest.fixture(scope="module")
def gt_videos() -> list[np.ndarray]:
    plan = make_plan(get_task("collision"), "id-eval", None, 4, None)
    return [generate_sample(plan, i)[1] for i in range(4)]


def _pairs(gt_videos: list[np.ndarray]):
    rng = np.random.default_rng(1)
    a = gt_videos[0]
    yield "copy-last", a, np.repeat(a[2:3], len(a), axis=0)
    yield "other sample", a, gt_videos[1]
    noisy = np.clip(a.astype(int) + rng.integers(-20, 21, a.shape), 0, 255).astype(np.uint8)
    yield "noise everywhere", a, noisy
    local = a.copy()
    local[:, 60:64, 3:7] = 0  # a small blemish near the left border
    yield "local blemish", a, local
    corner = a.copy()
    corner[:, -1, -1] = (0, 255, 0)  # one pixel in the corner: only border windows see it
    yield "corner pixel", a, corner
    rand = rng.integers(0, 256, (3, 40, 23, 3), dtype=np.uint8)
    yield "random non-square", rand, rng.integers(0, 256, rand.shape, dtype=np.uint8)


def test_ssim_matches_scikit_image(gt_videos):
    for name, a, b in _pairs(gt_videos):
        ours, ref = ssim_frames(a, b), _skimage_ssim(a, b)
        assert np.abs(ours - ref).max() < 1e-4, name
        # and, in practice, far closer than the required 1e-4
        assert np.abs(ours - ref).max() < 1e-6, name


def test_ssim_identical_is_one_and_differences_lower_it(gt_videos):
    a = gt_videos[0]
    assert np.array_equal(ssim_frames(a, a), np.ones(len(a)))
    b = a.copy()
    b[10, 50, 50] = 0
    s = ssim_frames(a, b)
    assert s[10] < 1.0 and np.all(np.delete(s, 10) == 1.0)


def test_psnr_matches_scikit_image_and_is_capped(gt_videos):
    for name, a, b in _pairs(gt_videos):
        ref = np.array([peak_signal_noise_ratio(a[i], b[i], data_range=255) if not np.array_equal(a[i], b[i])
                        else np.inf for i in range(len(a))])
        ours = psnr_frames(a, b)
        finite = np.isfinite(ref)
        np.testing.assert_allclose(ours[finite], ref[finite], rtol=1e-12, err_msg=name)
        assert np.all(ours[~finite] == pytest.approx(-10 * np.log10(PSNR_MSE_FLOOR)))


def test_score_frames_uses_generated_frames_only(gt_videos):
    a = gt_videos[0]
    b = a.copy()
    b[:3] = 0  # damage only the condition frames: they are not scored
    assert score_frames(a, b, start=3) == {"psnr": 100.0, "ssim": 1.0}
    b = a.copy()
    b[3:] = 0
    assert score_frames(a, b, start=3)["psnr"] < 10


def test_bad_inputs_raise_clear_errors(gt_videos):
    a = gt_videos[0]
    with pytest.raises(ValueError, match="uint8"):
        ssim_frames(a, a.astype(np.float32))
    with pytest.raises(ValueError, match="one shape"):
        psnr_frames(a, a[:-1])
    with pytest.raises(ValueError, match="at least 11"):
        ssim_frames(a[:, :8, :8], a[:, :8, :8])


def test_bootstrap_interval_is_reproducible_and_covers_the_mean():
    rng = np.random.default_rng(0)
    x = rng.exponential(1.0, 400)
    lo, hi = bootstrap_ci(x)
    assert (lo, hi) == bootstrap_ci(x)
    assert lo < x.mean() < hi
    # width close to the normal approximation 2 * 1.96 * sd / sqrt(n)
    assert (hi - lo) == pytest.approx(2 * 1.96 * x.std() / np.sqrt(x.size), rel=0.15)
    assert bootstrap_ci(np.array([2.0])) == (2.0, 2.0)


_THREADS_SCRIPT = """
import numpy as np
from phybench.scoring.perceptual.image_metrics import ssim_frames
rng = np.random.default_rng(7)
a = rng.integers(0, 256, (4, 128, 128, 3), dtype=np.uint8)
b = np.clip(a.astype(int) + rng.integers(-30, 31, a.shape), 0, 255).astype(np.uint8)
print(",".join(float(s).hex() for s in ssim_frames(a, b)))
"""


def test_ssim_bytes_do_not_depend_on_thread_count():
    """The band-matrix SSIM summed in a BLAS-blocking order: a 2-thread parent and a 1-thread
    worker disagreed in the 9th digit.  The separable filter must give the same bits."""
    import os
    import subprocess
    import sys

    outs = set()
    for threads in ("1", "2"):
        env = {**os.environ, "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
        run = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], env=env, capture_output=True, text=True, check=True)
        outs.add(run.stdout.strip())
    assert len(outs) == 1, outs


def test_float32_ssim_is_within_1e6_of_scikit_image_and_its_bits_do_not_depend_on_batching():
    """Issue 52: SSIM runs in float32, one frame at a time on buffers kept across calls.  It must
    stay within 1e-6 of scikit-image's float64 SSIM where every pixel differs (the worst case, at
    the combinatorial tasks' 256 px), and a frame's value must not depend on which frames, or which
    earlier calls of another shape, share its buffers (the bytes of a results file do not depend
    on --workers)."""
    rng = np.random.default_rng(52)
    a = rng.integers(0, 256, (3, 256, 256, 3), dtype=np.uint8)
    b = np.clip(a.astype(int) + rng.integers(-25, 26, a.shape), 0, 255).astype(np.uint8)
    ours = ssim_frames(a, b)
    assert np.abs(ours - _skimage_ssim(a, b)).max() < 1e-6
    ssim_frames(a[:, :64, :40], b[:, :64, :40])  # another shape in between
    alone = np.array([ssim_frames(a[t:t + 1], b[t:t + 1])[0] for t in (2, 0, 1)])
    assert alone.tobytes() == ours[[2, 0, 1]].tobytes()


def _ssim_both_paths(monkeypatch, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from phybench.scoring.perceptual import ssim_fused

    monkeypatch.setenv("PHYBENCH_NUMBA", "0")
    assert ssim_fused.compiled_frame_sum() is None
    plain = ssim_frames(a, b)
    monkeypatch.delenv("PHYBENCH_NUMBA")
    assert ssim_fused.compiled_frame_sum() is not None
    return plain, ssim_frames(a, b)


def test_numba_and_numpy_ssim_give_the_same_bits(monkeypatch, gt_videos):
    """Issue 52: numba is optional, so a results file scored with it must be byte-identical to one
    scored without it (`leaderboard verify` re-scores and compares exactly).  Both run one float32
    operation order; numba compiles without fastmath (no FMA contraction, no reordered sums).
    Shapes: 128 px full frames, crops (per-frame boxes), a height whose valid rows are not a
    whole number of bands, and a narrow odd frame."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(52)
    for name, a, b in _pairs(gt_videos):
        plain, compiled = _ssim_both_paths(monkeypatch, a, b)
        assert plain.tobytes() == compiled.tobytes(), name
    a = rng.integers(0, 256, (2, 75, 41, 3), dtype=np.uint8)
    plain, compiled = _ssim_both_paths(monkeypatch, a, np.clip(a.astype(int) + 9, 0, 255).astype(np.uint8))
    assert plain.tobytes() == compiled.tobytes()


def test_identical_windows_are_exactly_one_and_flat_white_loses_nothing(monkeypatch, gt_videos):
    """The fused filter's formula is arranged so that a window whose two sides are identical gives
    num == den bit for bit (SSIM exactly 1, as in exact arithmetic), whatever the texture; and the
    moments are taken about the frame's first pixel (white here), so noise over a flat white
    background stays within 2e-7 of scikit-image (float32 about 0.5 was 1.6e-6 off)."""
    from phybench.scoring.perceptual import image_metrics, ssim_fused

    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (40, 3 * 37), dtype=np.uint8)
    c = (np.float32((0.01 * 255) ** 2), np.float32((0.03 * 255) ** 2))
    total = ssim_fused.frame_sum_numpy(x, x, image_metrics._TAPS32, c, ssim_fused._Band(x.shape[1]))
    assert total == 3 * 30 * 27  # every valid window exactly 1
    monkeypatch.setenv("PHYBENCH_NUMBA", "0")
    _, a, noisy = next(p for p in _pairs(gt_videos) if p[0] == "noise everywhere")
    assert np.abs(ssim_frames(a, noisy) - _skimage_ssim(a, noisy)).max() < 2e-7  # measured 5.2e-8


def test_ssim_bits_do_not_depend_on_the_band_height(monkeypatch, gt_videos):
    """The fused filter works a band of rows at a time, its height chosen for the cache; each
    column is still summed down the rows in order, so the height cannot move a bit."""
    from phybench.scoring.perceptual import image_metrics, ssim_fused

    _, a, b = next(p for p in _pairs(gt_videos) if p[0] == "other sample")
    want = ssim_frames(a, b)
    monkeypatch.setattr(ssim_fused, "BAND_FLOATS", 4 * 3 * 128 * 20)  # bands of 16 rows, not 42
    monkeypatch.setattr(image_metrics, "_LOCAL", __import__("threading").local())
    assert image_metrics._band(3 * 128).rows == 16
    assert ssim_frames(a, b).tobytes() == want.tobytes()
