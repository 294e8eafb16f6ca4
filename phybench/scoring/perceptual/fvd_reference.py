"""I3D's pooling and resize as they were before issue 52, kept as the one reference the fast
kernels of `fvd` are tested (tests/test_lpips_fvd.py) and benchmarked (benchmarks/bench_i3d.py)
against.  Never used for scoring: `fvd.max_pool3d_exact` and `fvd.preprocess` give the same
bytes faster, and these are what "the same bytes" means.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from . import fvd


def max_pool3d_torch(x: torch.Tensor, kernel: tuple[int, int, int], stride: tuple[int, int, int],
                     padding: tuple[int, int, int] | None = None) -> torch.Tensor:
    """torch's max_pool3d, as I3D pooled before issue 52: SAME padding with -inf, or symmetric."""
    if padding is None:
        return F.max_pool3d(fvd._pad_same(x, kernel, stride, -math.inf), kernel, stride)
    return F.max_pool3d(x, kernel, stride, padding=padding)


def preprocess_before_issue_52(videos: torch.Tensor) -> torch.Tensor:
    """uint8 (N, T, H, W, 3) -> float32 (N, 3, T, 224, 224) on [-1, 1], as `fvd.preprocess` was:
    both gathered rows lerped along x, then along y, out of place."""
    n, t, h, w, c = videos.shape
    frames = videos.reshape(n * t, h, w, c).float()
    y0, y1, fy = fvd._tf1_bilinear_taps(h, fvd.RESOLUTION, frames.device)
    x0, x1, fx = fvd._tf1_bilinear_taps(w, fvd.RESOLUTION, frames.device)
    top, bottom = frames[:, y0], frames[:, y1]
    fx = fx.view(1, 1, -1, 1)
    top = top[:, :, x0] + (top[:, :, x1] - top[:, :, x0]) * fx
    bottom = bottom[:, :, x0] + (bottom[:, :, x1] - bottom[:, :, x0]) * fx
    frames = top + (bottom - top) * fy.view(1, -1, 1, 1)
    scaled = 2.0 * frames / 255.0 - 1.0
    return scaled.reshape(n, t, fvd.RESOLUTION, fvd.RESOLUTION, c).permute(0, 4, 1, 2, 3).contiguous()
