"""What training and sampling of the DiT share: clips <-> tensors, and the model a config builds.

`train` (which evaluates with `sample`) and `sample` (which loads what `train` wrote) both
need these; here, below both, so that neither imports the other at module level for them.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from .conditioning import state_dim
from .config import TrainConfig
from .latent import PixelCodec, latent_grid
from .models import DiT


def clip_to_tensor(video: np.ndarray, frames: int, resolution: int) -> torch.Tensor:
    """uint8 (T, H, W, 3) to float (3, frames, r, r) in [-1, 1]: first frames, area-downsampled."""
    x = torch.from_numpy(np.ascontiguousarray(video[:frames])).permute(3, 0, 1, 2).float()  # (3, T, H, W)
    if x.shape[-1] != resolution:
        x = F.interpolate(x, size=(resolution, resolution), mode="area")  # (3, T, r, r)
    return x / 127.5 - 1


def tensor_to_clip(x: torch.Tensor, resolution: int) -> np.ndarray:
    """float (3, T, r, r) in [-1, 1] to uint8 (T, R, R, 3), nearest-upsampled."""
    if x.shape[-1] != resolution:
        x = F.interpolate(x.float(), size=(resolution, resolution), mode="nearest")
    x = ((x.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8)
    return x.permute(1, 2, 3, 0).cpu().numpy()


def build_model(cfg: TrainConfig, codec: PixelCodec) -> DiT:
    """The DiT over the codec's grid: in = noisy latent + condition latent + mask channels."""
    C, T, H, W = latent_grid(codec, cfg.frames, cfg.resolution)
    extra: dict[str, Any] = {} if cfg.condition is None else dict(
        condition=cfg.condition, state_dim=state_dim(cfg.state_bodies), vocab_size=len(cfg.text_vocab or ()),
        text_len=cfg.text_len)
    return DiT(cfg.model_size(), in_channels=2 * C + 1, out_channels=C, patch=cfg.patch,
               frames=T, height=H, width=W, **extra)
