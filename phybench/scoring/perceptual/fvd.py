"""Frechet Video Distance as the original TensorFlow code computes it, in plain torch.

Pipeline (google-research ``frechet_video_distance.py``, REFERENCE.md section 3):
uint8 video -> ``tf.image.resize_bilinear`` to 224 x 224 (TF1 default: align_corners=False
*without* half-pixel centres, i.e. source = destination * in/out; squash, no crop) ->
``2 * x / 255 - 1`` -> I3D Kinetics-400 (TF-Hub ``deepmind/i3d-kinetics-400``) -> the
400 logits averaged over time -> Frechet distance of Gaussian fits.

The I3D below is the kinetics-i3d (Sonnet) InceptionV1-inflated network with TF's "SAME"
padding (asymmetric where the total is odd: the extra row goes after, which matters for the
stride-2 layers) and Sonnet's BatchNorm: eps 1e-3, no scale, offset and moving statistics from
the checkpoint. Weights: ``phybench.scoring.perceptual.weights.load("i3d")``.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.linalg
import torch
import torch.nn.functional as F
from torch import nn
from torchmetrics import Metric

from . import weights

RESOLUTION = 224  # I3D input side, pixels
MIN_FRAMES = 9  # fewer frames leave nothing for the final 2 x 7 x 7 VALID average pool
BATCHNORM_EPS = 1e-3  # Sonnet's default (PyTorch ports that use 1e-5 are ~0.25% off)

# what a results file records about how FVD was computed
SETTINGS = {
    "network": "i3d-kinetics-400 (TF-Hub deepmind/i3d-kinetics-400)", "weights": "i3d",
    "resize": f"tf1 resize_bilinear to {RESOLUTION}x{RESOLUTION} (no half-pixel centres, squash)",
    "input": "2 * x / 255 - 1", "features": "400 logits averaged over time",
    "batchnorm_eps": BATCHNORM_EPS, "covariance": "unbiased (N - 1)", "sqrtm": "scipy.linalg.sqrtm, real part",
}


# ---------------------------------------------------------------- TF "SAME" helpers
def _same_pads(size: int, kernel: int, stride: int) -> tuple[int, int]:
    """TF 'SAME': output ceil(size / stride); the odd padding pixel goes after."""
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def _pad_same(x: torch.Tensor, kernel: tuple[int, ...], stride: tuple[int, ...], value: float) -> torch.Tensor:
    """Pad the last len(kernel) dims of x as TF 'SAME' would (F.pad takes the last dim first)."""
    pads: list[int] = []
    for size, k, s in reversed(list(zip(x.shape[-len(kernel):], kernel, stride))):
        pads.extend(_same_pads(size, k, s))
    return F.pad(x, pads, value=value) if any(pads) else x


def _window_max(x: torch.Tensor, dim: int, kernel: int, stride: int, pads: tuple[int, int]) -> torch.Tensor:
    """Max over windows of `kernel` along `dim`, every `stride`-th, with `pads` of -inf before/after.

    A chain of elementwise `torch.maximum` over strided views: a maximum is exact in any order,
    so this equals `F.max_pool3d` bit for bit, but it streams through memory where max_pool3d on
    one CPU thread (NCDHW) walks each window and records indices it does not need: 34% of I3D's
    CPU before (issue 52, docs/performance.md).  The -inf padding is never materialised: a padded
    element never wins a window that holds a real one, and 'SAME' leaves none without."""
    size, (before, after) = x.shape[dim], pads
    out_len = (size + before + after - kernel) // stride + 1

    def span(j: int) -> tuple[int, int]:  # outputs [lo, hi] whose tap j lands inside x
        return max(0, -((j - before) // stride)), min(out_len - 1, (size - 1 + before - j) // stride)

    def view(j: int, lo: int, hi: int) -> torch.Tensor:
        index: list[slice] = [slice(None)] * x.ndim
        index[dim] = slice(lo * stride + j - before, hi * stride + j - before + 1, stride)
        return x[tuple(index)]

    last = out_len - 1
    full = next((j for j in range(kernel) if span(j) == (0, last)), None)
    if full is None:
        raise ValueError(f"no tap covers every window (kernel {kernel}, stride {stride}, pads {pads})")
    # the first pass reads two taps over the widest span the second covers (no copy of a whole tap)
    second = max((j for j in range(kernel) if j != full), key=lambda j: span(j)[1] - span(j)[0])
    lo, hi = span(second)
    shape = list(x.shape)
    shape[dim] = out_len
    out = x.new_empty(shape)  # (N, C, ...) with `dim` pooled
    torch.maximum(view(full, lo, hi), view(second, lo, hi), out=out.narrow(dim, lo, hi - lo + 1))
    if lo > 0:
        out.narrow(dim, 0, lo).copy_(view(full, 0, lo - 1))
    if hi < last:
        out.narrow(dim, hi + 1, last - hi).copy_(view(full, hi + 1, last))
    for j in range(kernel):
        lo, hi = span(j)
        if j not in (full, second) and hi >= lo:
            part = out.narrow(dim, lo, hi - lo + 1)
            torch.maximum(part, view(j, lo, hi), out=part)
    return out


def max_pool3d_exact(x: torch.Tensor, kernel: tuple[int, int, int], stride: tuple[int, int, int],
                     padding: tuple[int, int, int] | None = None) -> torch.Tensor:
    """`F.max_pool3d` of (N, C, T, H, W) as separable window maxima (T, then H, then W), bit-identical
    to it: with `padding` None, TF 'SAME' padding with -inf (`_pad_same`'s); else symmetric -inf
    padding as max_pool3d's own `padding` argument."""
    for dim, k, s in zip((2, 3, 4), kernel, stride):
        pads = _same_pads(x.shape[dim], k, s) if padding is None else (padding[dim - 2],) * 2
        if (k, s) != (1, 1):
            x = _window_max(x, dim, k, s, pads)
    return x


class _MaxPoolSame(nn.Module):
    def __init__(self, kernel: tuple[int, int, int], stride: tuple[int, int, int]) -> None:
        super().__init__()
        self.kernel, self.stride = kernel, stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return max_pool3d_exact(x, self.kernel, self.stride)


# ---------------------------------------------------------------- I3D
class _FrozenBatchNorm(nn.Module):
    """Sonnet BatchNorm at inference: (x - mean) / sqrt(var + eps) + offset; no scale."""

    bias: torch.Tensor  # buffers (register_buffer): tensors, not the Module that __getattr__ is typed as
    running_mean: torch.Tensor
    running_var: torch.Tensor

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.register_buffer("bias", torch.zeros(channels))
        self.register_buffer("running_mean", torch.zeros(channels))
        self.register_buffer("running_var", torch.ones(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(x, self.running_mean, self.running_var, None, self.bias, False, 0.0, BATCHNORM_EPS)


class Unit3D(nn.Module):
    """Conv3d ('SAME') -> BatchNorm -> ReLU, as kinetics-i3d's Unit3D."""

    def __init__(self, in_channels: int, out_channels: int, kernel: tuple[int, int, int] = (1, 1, 1),
                 stride: tuple[int, int, int] = (1, 1, 1), batch_norm: bool = True, activation: bool = True,
                 bias: bool = False) -> None:
        super().__init__()
        self.kernel, self.stride = kernel, stride
        # stride 1 with odd kernels pads symmetrically: let the convolution do it
        self.pad_inside = stride == (1, 1, 1) and all(k % 2 == 1 for k in kernel)
        padding = (kernel[0] // 2, kernel[1] // 2, kernel[2] // 2) if self.pad_inside else 0
        self.conv = nn.Conv3d(in_channels, out_channels, kernel, stride, padding=padding, bias=bias)
        self.bn = _FrozenBatchNorm(out_channels) if batch_norm else None
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.pad_inside:
            x = _pad_same(x, self.kernel, self.stride, 0.0)
        x = self.conv(x)
        if self.bn is not None:
            x = self.bn(x)
        return F.relu(x, inplace=True) if self.activation else x  # x is this unit's own output: in place is exact


class InceptionModule(nn.Module):
    """Four branches (1x1; 1x1 -> 3x3x3; 1x1 -> 3x3x3; 3x3x3 max pool -> 1x1), concatenated."""

    def __init__(self, in_channels: int, out: tuple[int, int, int, int, int, int]) -> None:
        super().__init__()
        # ModuleDicts keep the TF scope names in the state-dict keys: Mixed_3b.Branch_1.Conv3d_0b_3x3...
        self.Branch_0 = nn.ModuleDict({"Conv3d_0a_1x1": Unit3D(in_channels, out[0])})
        self.Branch_1 = nn.ModuleDict({"Conv3d_0a_1x1": Unit3D(in_channels, out[1]),
                                       "Conv3d_0b_3x3": Unit3D(out[1], out[2], (3, 3, 3))})
        self.Branch_2 = nn.ModuleDict({"Conv3d_0a_1x1": Unit3D(in_channels, out[3]),
                                       "Conv3d_0b_3x3": Unit3D(out[3], out[4], (3, 3, 3))})
        self.Branch_3 = nn.ModuleDict({"Conv3d_0b_1x1": Unit3D(in_channels, out[5])})
        self.out_channels = out[0] + out[2] + out[4] + out[5]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b0 = self.Branch_0["Conv3d_0a_1x1"](x)  # (N, c0, T, H, W)
        b1 = self.Branch_1["Conv3d_0b_3x3"](self.Branch_1["Conv3d_0a_1x1"](x))  # (N, c2, T, H, W)
        b2 = self.Branch_2["Conv3d_0b_3x3"](self.Branch_2["Conv3d_0a_1x1"](x))  # (N, c4, T, H, W)
        pooled = max_pool3d_exact(x, (3, 3, 3), (1, 1, 1), (1, 1, 1))  # stride-1 'SAME' is symmetric
        b3 = self.Branch_3["Conv3d_0b_1x1"](pooled)  # (N, c5, T, H, W)
        return torch.cat([b0, b1, b2, b3], dim=1)


# (name, in_channels, branch widths) of each Inception block, in order
_MIXED = {
    "Mixed_3b": (192, (64, 96, 128, 16, 32, 32)),
    "Mixed_3c": (256, (128, 128, 192, 32, 96, 64)),
    "Mixed_4b": (480, (192, 96, 208, 16, 48, 64)),
    "Mixed_4c": (512, (160, 112, 224, 24, 64, 64)),
    "Mixed_4d": (512, (128, 128, 256, 24, 64, 64)),
    "Mixed_4e": (512, (112, 144, 288, 32, 64, 64)),
    "Mixed_4f": (528, (256, 160, 320, 32, 128, 128)),
    "Mixed_5b": (832, (256, 160, 320, 32, 128, 128)),
    "Mixed_5c": (832, (384, 192, 384, 48, 128, 128)),
}


class I3D(nn.Module):
    """Inflated Inception-V1 (Kinetics-400): (N, 3, T, 224, 224) in [-1, 1] -> (N, 400) logits."""

    def __init__(self, state_dict: dict[str, torch.Tensor] | None = None, num_classes: int = 400) -> None:
        super().__init__()
        self.Conv3d_1a_7x7 = Unit3D(3, 64, (7, 7, 7), (2, 2, 2))
        self.MaxPool3d_2a_3x3 = _MaxPoolSame((1, 3, 3), (1, 2, 2))
        self.Conv3d_2b_1x1 = Unit3D(64, 64)
        self.Conv3d_2c_3x3 = Unit3D(64, 192, (3, 3, 3))
        self.MaxPool3d_3a_3x3 = _MaxPoolSame((1, 3, 3), (1, 2, 2))
        self.Mixed_3b = InceptionModule(*_MIXED["Mixed_3b"])
        self.Mixed_3c = InceptionModule(*_MIXED["Mixed_3c"])
        self.MaxPool3d_4a_3x3 = _MaxPoolSame((3, 3, 3), (2, 2, 2))
        self.Mixed_4b = InceptionModule(*_MIXED["Mixed_4b"])
        self.Mixed_4c = InceptionModule(*_MIXED["Mixed_4c"])
        self.Mixed_4d = InceptionModule(*_MIXED["Mixed_4d"])
        self.Mixed_4e = InceptionModule(*_MIXED["Mixed_4e"])
        self.Mixed_4f = InceptionModule(*_MIXED["Mixed_4f"])
        self.MaxPool3d_5a_2x2 = _MaxPoolSame((2, 2, 2), (2, 2, 2))
        self.Mixed_5b = InceptionModule(*_MIXED["Mixed_5b"])
        self.Mixed_5c = InceptionModule(*_MIXED["Mixed_5c"])
        self.Logits = nn.ModuleDict({"Conv3d_0c_1x1": Unit3D(1024, num_classes, batch_norm=False,
                                                             activation=False, bias=True)})
        self.load_state_dict(weights.load("i3d") if state_dict is None else state_dict)
        self.eval().requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.Conv3d_1a_7x7(x)  # (N, 64, T/2, 112, 112)
        x = self.MaxPool3d_2a_3x3(x)  # (N, 64, T/2, 56, 56)
        x = self.Conv3d_2c_3x3(self.Conv3d_2b_1x1(x))  # (N, 192, T/2, 56, 56)
        x = self.MaxPool3d_3a_3x3(x)  # (N, 192, T/2, 28, 28)
        x = self.Mixed_3c(self.Mixed_3b(x))  # (N, 480, T/2, 28, 28)
        x = self.MaxPool3d_4a_3x3(x)  # (N, 480, T/4, 14, 14)
        for block in (self.Mixed_4b, self.Mixed_4c, self.Mixed_4d, self.Mixed_4e, self.Mixed_4f):
            x = block(x)  # (N, 832, T/4, 14, 14) after Mixed_4f
        x = self.MaxPool3d_5a_2x2(x)  # (N, 832, T/8, 7, 7)
        x = self.Mixed_5c(self.Mixed_5b(x))  # (N, 1024, T/8, 7, 7)
        x = F.avg_pool3d(x, (2, 7, 7), stride=1)  # (N, 1024, T/8 - 1, 1, 1): 'VALID'
        logits = self.Logits["Conv3d_0c_1x1"](x)  # (N, 400, T/8 - 1, 1, 1)
        return logits.flatten(2).mean(dim=2)  # (N, 400): averaged over time


# ---------------------------------------------------------------- preprocessing
def _tf1_bilinear_taps(size_in: int, size_out: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    """Source indices and weights of TF1 resize_bilinear (align_corners=False, no half-pixel
    centres): src = dst * (in / out) in float32, lower = floor(src), upper = min(lower + 1, in - 1)."""
    scale = torch.tensor(size_in / size_out, dtype=torch.float32)  # TF: (float)in / out
    src = torch.arange(size_out, dtype=torch.float32) * scale
    lower = src.floor().long()
    upper = torch.clamp(lower + 1, max=size_in - 1)
    frac = src - lower.float()
    return lower.to(device), upper.to(device), frac.to(device)


def _lerp(a: torch.Tensor, b: torch.Tensor, frac: torch.Tensor) -> torch.Tensor:
    """a + (b - a) * frac in float32, in TF's order of operations, into one new buffer."""
    out = torch.sub(b, a)
    return out.mul_(frac).add_(a)  # IEEE + and * commute exactly: (b - a) * f + a == a + (b - a) * f


def _resize_tf1(frames: torch.Tensor, size: int) -> torch.Tensor:
    """(B, H, W, C) float32 -> (B, size, size, C), exactly as TF1 tf.image.resize_bilinear.

    torch's interpolate cannot do this: its align_corners=False samples at half-pixel centres
    (the TF2 behaviour), which shifts the image by half a source pixel.  TF lerps along x in each
    of the two source rows of an output row, then along y; a row's x-lerp does not depend on the
    output row that reads it, so it is done once per source row (H rows, not 2 x size) and the
    rows are gathered after: the same float32 operations on the same operands, bit for bit, at
    about half the passes over memory (issue 52: the resize was ~15% of I3D's CPU)."""
    _, h, w, _ = frames.shape
    if (h, w) == (size, size):
        return frames  # TF's scale is 1 and every weight 0: the identity
    y0, y1, fy = _tf1_bilinear_taps(h, size, frames.device)
    x0, x1, fx = _tf1_bilinear_taps(w, size, frames.device)
    rows = _lerp(frames.index_select(2, x0), frames.index_select(2, x1), fx.view(1, 1, -1, 1))  # (B, H, size, C)
    return _lerp(rows.index_select(1, y0), rows.index_select(1, y1), fy.view(1, -1, 1, 1))  # (B, size, size, C)


def preprocess(videos: torch.Tensor) -> torch.Tensor:
    """(N, T, H, W, 3) uint8 (or 0..255 floats) -> (N, 3, T, 224, 224) float32 in [-1, 1]."""
    n, t, h, w, c = videos.shape
    frames = _resize_tf1(videos.reshape(n * t, h, w, c).float(), RESOLUTION)  # (N*T, 224, 224, 3)
    if frames.data_ptr() == videos.data_ptr():
        frames = frames.clone()  # already float32 at 224 px: scale a copy, not the caller's tensor
    scaled = frames.mul_(2.0).div_(255.0).sub_(1.0)  # the TF code's 2 * x / 255 - 1, in its float32 rounding
    return scaled.reshape(n, t, RESOLUTION, RESOLUTION, c).permute(0, 4, 1, 2, 3).contiguous()


# ---------------------------------------------------------------- features and distance
@functools.lru_cache(maxsize=4)
def cached_model(device: str) -> I3D:
    """The I3D network on `device`, built once per process (the scorer warms it before a run)."""
    return I3D().to(device)


def _as_videos(videos: Any) -> torch.Tensor:
    t = videos if isinstance(videos, torch.Tensor) else torch.as_tensor(np.asarray(videos))
    if t.ndim != 5 or t.shape[-1] != 3 or t.dtype != torch.uint8:
        raise ValueError(f"expected (N, T, H, W, 3) uint8 videos, got {tuple(t.shape)} {t.dtype}")
    if t.shape[1] < MIN_FRAMES:
        raise ValueError(f"I3D needs at least {MIN_FRAMES} frames per video, got {t.shape[1]}")
    return t


@contextlib.contextmanager
def _keep_freed_buffers() -> Iterator[None]:
    """While I3D runs on the CPU, glibc keeps the buffers it frees instead of unmapping them.

    Each layer allocates its output afresh (51 MB per clip for the stem's) and glibc serves
    blocks that large with mmap, so every layer page-faults its whole output in again: about a
    quarter of I3D's CPU was system time (issue 52, docs/performance.md).  Where the heap is
    used instead (`M_MMAP_MAX` 0, trimmed above 1 GiB only) the next batch reuses the pages.
    Where it is placed changes no value (torch aligns every buffer to 64 bytes either way; the
    logits are compared byte for byte in `tests/test_lpips_fvd.py`).  Afterwards glibc's defaults
    come back and the kept memory is returned (`malloc_trim`).  Not glibc: does nothing."""
    try:
        libc = ctypes.CDLL(None)
        mallopt, trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError, TypeError):  # no C library by that name (Windows), or not glibc
        yield
        return
    mallopt(_M_MMAP_MAX, 0)
    mallopt(_M_TRIM_THRESHOLD, 2**30)
    try:
        yield
    finally:
        mallopt(_M_MMAP_MAX, 65536)  # glibc's defaults (DEFAULT_MMAP_MAX, DEFAULT_TRIM_THRESHOLD)
        mallopt(_M_TRIM_THRESHOLD, 128 * 1024)
        trim(0)


_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4  # mallopt parameters (malloc.h)


def _logits(model: I3D, videos: torch.Tensor, batch_size: int) -> torch.Tensor:
    device = next(model.parameters()).device
    out = []
    with torch.inference_mode(), _keep_freed_buffers() if device.type == "cpu" else contextlib.nullcontext():
        for start in range(0, videos.shape[0], batch_size):
            batch = preprocess(videos[start:start + batch_size].to(device))  # (B, 3, T, 224, 224)
            out.append(model(batch).double().cpu())  # (B, 400)
    return torch.cat(out) if out else torch.zeros(0, 400, dtype=torch.float64)


def i3d_logits(videos_uint8: Any, batch_size: int = 4, device: str = "cpu") -> np.ndarray:
    """I3D Kinetics-400 logits (averaged over time) of (N, T, H, W, 3) uint8 videos -> (N, 400) float64."""
    videos = _as_videos(videos_uint8)
    return _logits(cached_model(str(torch.device(device))), videos, batch_size).numpy()


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Frechet distance between Gaussians fitted to two (N, D) feature sets.

    |mu_a - mu_b|^2 + tr(S_a + S_b - 2 (S_a S_b)^(1/2)), means and (N - 1)-normalised
    covariances in float64, the square root by scipy.linalg.sqrtm (its tiny imaginary part,
    from round-off, dropped).

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(500, 4))
    >>> round(frechet_distance(x, x), 6)
    0.0
    >>> round(frechet_distance(x, x + 1.0), 6)  # a shift of 1 in each of 4 dimensions
    4.0
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or min(len(a), len(b)) < 2:
        raise ValueError(f"need two (N >= 2, D) feature sets of equal D, got {a.shape} and {b.shape}")
    mu_a, mu_b = a.mean(axis=0), b.mean(axis=0)
    cov_a, cov_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    with warnings.catch_warnings():  # "singular matrix": expected whenever N <= D (see FVD)
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        covmean = scipy.linalg.sqrtm(cov_a @ cov_b)
    if np.iscomplexobj(covmean):
        covmean = covmean.real
    diff = mu_a - mu_b
    return float(diff @ diff + np.trace(cov_a) + np.trace(cov_b) - 2.0 * np.trace(covmean))


# ---------------------------------------------------------------- torchmetrics
class FVD(Metric):
    """Frechet Video Distance between real and generated (N, T, H, W, 3) uint8 videos.

    ``update(videos, real=True)`` for reference videos, ``real=False`` for generated ones;
    features (400 I3D logits per video) are kept, so compare only at equal N: with fewer than
    ~400 videos per side the covariances are rank-deficient.

    >>> metric = FVD()  # doctest: +SKIP
    >>> black = torch.zeros(2, 16, 64, 64, 3, dtype=torch.uint8)
    >>> metric.update(black, real=True); metric.update(black + 255, real=False)  # doctest: +SKIP
    >>> float(metric.compute())  # doctest: +SKIP
    """

    higher_is_better = False
    is_differentiable = False
    full_state_update = False
    # list states (add_state): lists of (N, 400) tensors; torchmetrics makes each one tensor only while
    # synced across processes, which `features` handles
    real_features: list[torch.Tensor]
    fake_features: list[torch.Tensor]

    def __init__(self, batch_size: int = 4, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.batch_size = batch_size
        self.i3d = I3D()
        self.add_state("real_features", [], dist_reduce_fx="cat")
        self.add_state("fake_features", [], dist_reduce_fx="cat")

    def update(self, videos: Any, real: bool) -> None:
        features = _logits(self.i3d, _as_videos(videos), self.batch_size).to(self.device)  # (N, 400)
        (self.real_features if real else self.fake_features).append(features)

    def features(self, real: bool) -> np.ndarray:
        """float64 (N, 400): the I3D features of one side, in update order."""
        x: Any = self.real_features if real else self.fake_features
        if isinstance(x, list):
            return torch.cat(x).double().cpu().numpy() if x else np.zeros((0, 400))
        return x.double().cpu().numpy()

    def compute(self) -> torch.Tensor:
        return torch.tensor(frechet_distance(self.features(real=True), self.features(real=False)), dtype=torch.float64)
