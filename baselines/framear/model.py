"""The frame model: a small full-resolution convolutional net that generates one frame.

Input: the noisy next frame x_t (3 channels) beside the previous `context` frames (3 each) and
their successive differences (the motion, which a shallow net otherwise struggles to form), all
at the model's resolution, and the noise level t.  Output: the clean next frame, parameterised
as the last context frame plus a residual (a still scene is the zero residual).  Dilated 3x3
convolutions give a receptive field of 1 + 2 * sum(dilations) pixels without downsampling:
motion between frames is a local change at the ball's rim, so every output pixel needs only
its neighbourhood; the noise level enters every layer through a FiLM scale and shift.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding of t in [0, 1], (N,) -> (N, dim)."""
    half = dim // 2
    freqs = torch.exp(-math.log(1000.0) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
    args = 1000.0 * t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=1)


class FrameNet(nn.Module):
    def __init__(self, context: int = 3, width: int = 32, dilations: tuple[int, ...] = (1, 1, 2, 4, 2, 1, 1),
                 temb: int = 64) -> None:
        super().__init__()
        self.context, self.temb_dim = context, temb
        self.inp = nn.Conv2d(3 * (2 * context), width, 3, padding=1)  # x_t, the context and its differences
        self.dilations = tuple(dilations)  # (not in the state dict: the config holds them)
        self.convs = nn.ModuleList(nn.Conv2d(width, width, 3, padding=d, dilation=d) for d in dilations)
        first, last = nn.Linear(temb, 4 * temb), nn.Linear(4 * temb, 2 * width * len(dilations))  # made in this order
        self.temb = nn.Sequential(first, nn.SiLU(), last)
        self.out = nn.Conv2d(width, 3, 3, padding=1)
        for layer in (self.out, last):  # starts as "copy the last frame"
            nn.init.zeros_(layer.weight)
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)

    def receptive_field(self) -> int:
        return 1 + 2 * (2 + sum(self.dilations))

    def forward(self, xt: torch.Tensor, context: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """xt (N, 3, H, W), context (N, context, 3, H, W), t (N,) -> predicted clean frame (N, 3, H, W)."""
        N = xt.shape[0]
        diffs = context[:, 1:] - context[:, :-1]  # (N, context - 1, 3, H, W): the motion, given explicitly
        h = self.inp(torch.cat([xt, context.flatten(1, 2), diffs.flatten(1, 2)], dim=1))
        film = self.temb(timestep_embedding(t, self.temb_dim)).view(N, len(self.convs), 2, -1, 1, 1)
        for i, conv in enumerate(self.convs):
            h = h + conv(F.silu(h)) * (1 + film[:, i, 0]) + film[:, i, 1]
        return context[:, -1] + self.out(F.silu(h))
