"""LPIPS and FVD against published constants and independent formulas."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from phybench.scoring.perceptual import fvd
from phybench.scoring.perceptual.fvd import FVD, frechet_distance, i3d_logits
from phybench.scoring.perceptual.fvd_reference import max_pool3d_torch, preprocess_before_issue_52
from phybench.scoring.perceptual.lpips import LPIPS, LPIPSVideo, lpips_frames


def _random_videos(n: int, frames: int, size: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, frames, size, size, 3), dtype=np.uint8)


# ---------------------------------------------------------------- LPIPS
def test_lpips_black_vs_white(fetched):
    black = np.zeros((2, 64, 64, 3), np.uint8)
    d = lpips_frames(black, black + 255)
    assert d.shape == (2,) and d.dtype == np.float64
    # the lpips package gives 0.81404 (REFERENCE.md section 3); float64 here gives 0.8139544
    assert d == pytest.approx(0.81404, abs=1e-4)
    assert d == pytest.approx(0.8139544, abs=2e-6)
    np.testing.assert_array_equal(lpips_frames(black, black + 255, model=LPIPS()), d)


def test_lpips_identical_frames_are_zero(fetched):
    video = _random_videos(1, 3, 64, seed=0)[0]
    assert np.all(lpips_frames(video, video.copy()) == 0.0)


def test_lpips_video_metric_accumulates(fetched):
    ref, gen = _random_videos(3, 4, 64, seed=1), _random_videos(3, 4, 64, seed=2)
    expected = np.mean([lpips_frames(r, g).mean() for r, g in zip(ref, gen)])
    single = LPIPSVideo()
    single.update(torch.from_numpy(ref), torch.from_numpy(gen))
    split = LPIPSVideo()
    split.update(ref[:2], gen[:2])
    split.update(ref[2], gen[2])  # one (T, H, W, 3) video
    assert float(single.compute()) == pytest.approx(expected, rel=1e-6)
    assert float(split.compute()) == pytest.approx(expected, rel=1e-6)


# ---------------------------------------------------------------- FVD
@pytest.mark.slow
def test_fvd_black_vs_white(fetched):
    """The TF code gives 151.39244 for 8 black vs 8 white 30-frame videos. All-black videos
    have identical logits, so one video of each kind, repeated 8 times, is that input (checked
    once against the full 8 + 8 path: the same float64 result)."""
    black = np.zeros((30, 64, 64, 3), np.uint8)
    logits = i3d_logits(np.stack([black, black + 255]), batch_size=2)  # (2, 400)
    assert logits.shape == (2, 400) and logits.dtype == np.float64
    real, fake = np.repeat(logits[:1], 8, axis=0), np.repeat(logits[1:], 8, axis=0)
    assert frechet_distance(real, fake) == pytest.approx(151.39244, abs=0.01)
    assert frechet_distance(real, real) == 0.0


@pytest.mark.slow
def test_fvd_metric_accumulates(fetched):
    real, fake = _random_videos(3, 9, 32, seed=3), _random_videos(3, 9, 32, seed=4)
    expected = frechet_distance(i3d_logits(real, batch_size=1), i3d_logits(fake, batch_size=1))
    metric = FVD(batch_size=1)
    metric.update(real[:1], real=True)
    metric.update(torch.from_numpy(real[1:]), real=True)
    metric.update(fake, real=False)
    assert float(metric.compute()) == pytest.approx(expected, rel=1e-9)
    assert expected > 0


def test_frechet_distance_matches_direct_formula():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(300, 6)) @ rng.normal(size=(6, 6))
    b = rng.normal(size=(200, 6)) @ rng.normal(size=(6, 6)) + 0.5
    mu_a, mu_b = a.mean(0), b.mean(0)
    cov_a, cov_b = np.cov(a.T), np.cov(b.T)
    # the eigenvalues of a product of two SPD matrices are real and positive
    trace_sqrt = np.sqrt(np.linalg.eigvals(cov_a @ cov_b).real).sum()
    direct = ((mu_a - mu_b) ** 2).sum() + np.trace(cov_a) + np.trace(cov_b) - 2 * trace_sqrt
    assert frechet_distance(a, b) == pytest.approx(direct, rel=1e-10)
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.slow
def test_frechet_distance_of_identical_rank_deficient_sets_is_zero():
    features = np.random.default_rng(1).normal(size=(20, 400))  # N < D as with few videos
    # sqrtm of a singular product is only accurate to ~1e-4 here: tiny next to FVD values
    assert frechet_distance(features, features.copy()) == pytest.approx(0.0, abs=1e-3)


def test_resize_is_tf1_legacy_bilinear():
    # tf.compat.v1.image.resize_bilinear([[0, 1], [2, 3]], (4, 4)): source = destination / 2
    image = torch.tensor([[0.0, 1.0], [2.0, 3.0]]).view(1, 2, 2, 1)
    expected = torch.tensor([[0.0, 0.5, 1.0, 1.0],
                             [1.0, 1.5, 2.0, 2.0],
                             [2.0, 2.5, 3.0, 3.0],
                             [2.0, 2.5, 3.0, 3.0]])
    assert torch.equal(fvd._resize_tf1(image, 4)[0, :, :, 0], expected)
    frames = torch.rand(2, fvd.RESOLUTION, fvd.RESOLUTION, 3)
    assert torch.equal(fvd._resize_tf1(frames, fvd.RESOLUTION), frames)


def test_same_padding_is_tensorflows():
    assert fvd._same_pads(224, 7, 2) == (2, 3)  # odd total: the extra pixel after
    assert fvd._same_pads(30, 7, 2) == (2, 3)
    assert fvd._same_pads(112, 3, 2) == (0, 1)
    assert fvd._same_pads(15, 2, 2) == (0, 1)
    assert fvd._same_pads(14, 2, 2) == (0, 0)


def test_i3d_input_checks():
    with pytest.raises(ValueError, match="at least 9 frames"):
        i3d_logits(np.zeros((1, 8, 32, 32, 3), np.uint8))
    with pytest.raises(ValueError, match="uint8"):
        i3d_logits(np.zeros((1, 16, 32, 32, 3), np.float32))


@pytest.mark.parametrize("shape,kernel,stride", [
    ((2, 3, 9, 15, 16), (1, 3, 3), (1, 2, 2)),  # MaxPool3d_2a/3a: odd and even sides, 'SAME' (0, 1) pads
    ((1, 4, 9, 14, 15), (3, 3, 3), (2, 2, 2)),  # MaxPool3d_4a
    ((1, 5, 5, 7, 8), (2, 2, 2), (2, 2, 2)),  # MaxPool3d_5a: (0, 1) pads where the side is odd
    ((1, 2, 2, 3, 3), (3, 3, 3), (2, 2, 2)),  # tiny: every window at an edge
])
def test_exact_max_pool_equals_torchs_bit_for_bit(shape, kernel, stride):
    """The separable window maxima that replace F.max_pool3d in I3D (issue 52: 34% of its CPU) give
    the same bytes, so FVD's shipped values cannot move; ties, negatives and infinities included."""
    import math

    import torch.nn.functional as F

    g = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(shape, generator=g).round(decimals=1)  # rounding makes ties
    x.view(-1)[::7] = -math.inf
    expected = F.max_pool3d(fvd._pad_same(x, kernel, stride, -math.inf), kernel, stride)
    assert torch.equal(fvd.max_pool3d_exact(x, kernel, stride), expected)
    inception = F.max_pool3d(x, 3, 1, padding=1)  # the Inception branches' stride-1 pool
    assert torch.equal(fvd.max_pool3d_exact(x, (3, 3, 3), (1, 1, 1), (1, 1, 1)), inception)


@pytest.mark.slow
def test_i3d_logits_are_the_bytes_of_the_code_before_issue_52(fetched, monkeypatch):
    """Whole network: the logits with the exact pooling, the new resize and the kept buffers equal
    those of F.max_pool3d, the old resize and glibc's default allocation at batch sizes 1 and 2
    (they take different convolution kernels)."""
    import contextlib

    videos = _random_videos(2, 10, 48, seed=3)
    new = [i3d_logits(videos, batch_size=b) for b in (1, 2)]

    monkeypatch.setattr(fvd, "max_pool3d_exact", max_pool3d_torch)
    monkeypatch.setattr(fvd, "preprocess", preprocess_before_issue_52)
    monkeypatch.setattr(fvd, "_keep_freed_buffers", contextlib.nullcontext)
    for b, logits in zip((1, 2), new):
        np.testing.assert_array_equal(i3d_logits(videos, batch_size=b), logits)


@pytest.mark.parametrize("shape", [(2, 9, 128, 128, 3), (1, 9, 37, 256, 3), (1, 9, 224, 224, 3)])
def test_preprocess_gives_the_bytes_it_gave_before(shape):
    """The resize lerps each source row once and scales in place (issue 52): same float32 bytes."""
    videos = torch.as_tensor(np.random.default_rng(sum(shape)).integers(0, 256, shape, dtype=np.uint8))
    assert torch.equal(fvd.preprocess(videos), preprocess_before_issue_52(videos))
    as_float = videos.float()
    assert torch.equal(fvd.preprocess(as_float), preprocess_before_issue_52(videos))
    assert torch.equal(as_float, videos.float())  # the caller's float tensor is left as it was
