"""Where the DiT diffuses: pixel space (tiny CPU runs) or a frozen video autoencoder's latents.

Both codecs turn a pixel clip (N, 3, T, H, W) in [-1, 1] into the model's space and back,
and turn the paper's conditioning (the first c frames zero-padded to full length, and a
binary mask video) into that space: the padded clip is encoded like any clip, and the
mask is average-pooled onto the latent grid, so a latent frame that mixes given and
generated frames reads as partly given.  Only latent cells that are given in full
(mask == 1) are copied in at sampling time and left out of the loss.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F


class PixelCodec:
    """The identity: the model works on pixels (the tiny CPU configs)."""

    channels, temporal, spatial = 3, 1, 1
    name = "pixels"
    sha256: str | None = None  # an autoencoder's weights hash (runs pin it); pixels have none

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return x

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return z

    def condition(self, padded: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Zero-padded condition clip (N,3,T,H,W) and binary mask (N,1,T,H,W), in model space."""
        return padded, mask

    def to(self, device) -> "PixelCodec":
        return self


class AutoencoderCodec(PixelCodec):
    """A frozen `VideoAutoencoder` written by `phybench_baselines.dit.train_autoencoder`."""

    def __init__(self, folder: str | Path, device="cpu"):
        from .autoencoder import load_autoencoder

        folder = Path(folder)
        weights = folder / "autoencoder.safetensors"
        if not weights.is_file():
            raise FileNotFoundError(
                f"no autoencoder at {folder} ({weights.name} missing): train one with "
                f"`python -m phybench_baselines.dit.train_autoencoder --train-data SPLIT --out {folder}`, "
                "or train in pixel space with --set vae=None")
        self.model = load_autoencoder(folder, device=device)
        self.sha256 = self.model.weights_sha256
        cfg = self.model.cfg
        self.channels, self.temporal, self.spatial = cfg.latent_channels, cfg.temporal, cfg.spatial
        self.name = str(folder)

    @torch.no_grad()
    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.model.encode(x)  # (N, C, T/temporal, H/spatial, W/spatial)

    @torch.no_grad()
    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return self.model.decode(z)  # (N, 3, T, H, W)

    def condition(self, padded, mask):
        k = (self.temporal, self.spatial, self.spatial)
        return self.encode(padded), F.avg_pool3d(mask, kernel_size=k, stride=k)  # (N,C,t,h,w), (N,1,t,h,w)

    def to(self, device) -> "AutoencoderCodec":
        self.model.to(device)
        return self


def make_codec(vae: str | None, device="cpu") -> PixelCodec:
    return PixelCodec() if vae is None else AutoencoderCodec(vae, device)


def latent_grid(codec: PixelCodec, frames: int, resolution: int) -> tuple[int, int, int, int]:
    """(C, T, H, W) of the model's input for clips of `frames` x `resolution` px."""
    if frames % codec.temporal or resolution % codec.spatial:
        raise ValueError(f"clips of {frames} frames at {resolution} px do not divide by the autoencoder's "
                         f"{codec.temporal}x temporal / {codec.spatial}x spatial compression")
    return codec.channels, frames // codec.temporal, resolution // codec.spatial, resolution // codec.spatial
