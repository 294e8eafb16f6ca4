"""A spatio-temporal (2+1)D video autoencoder for the DiT baselines, in pure torch.

The paper (section 2.2, appendix A.3.1) trains its DiT in the latent space of a (2+1)D
VAE: the SD1.5-VAE's 2D ResNet encoder/decoder applied per frame, "inflated" with
causal 1D temporal convolutions and causal strided temporal downsampling in the last
stages, 8x spatial and 4x temporal compression to 4 latent channels.  Its decoder
replaces nearest-neighbour interpolation by a conv + channel-to-space (pixel shuffle)
initialised to behave exactly like it.  We build that structure at any width, and
train it from scratch on the benchmark's own videos (the paper's weights are not
public; ours are a few MB and cost minutes), see `train_autoencoder.py`.

Choices, and why:

* **Deterministic autoencoder, no KL, no GAN.**  The latents are consumed by a DiT
  that needs unit-scale inputs, which we get from a `scale` measured on training data
  after training (as SD does with its 0.18215).  The KL term of SD's VAE (weight 1e-6)
  mostly bounds the latent scale, and posterior sampling adds noise to every
  reconstruction: on these videos the metric reads sub-pixel ball positions from
  anti-aliased edges, so reconstruction precision matters more than a smooth
  posterior.  A GAN sharpens textures of natural images; here plain L1/L2 on a clean
  synthetic target already converges to sharp edges.
* **Causal in time.**  Temporal convs are padded only at the front, by repeating the
  first frame, and strided downsampling keeps frames in groups of `temporal`:
  latent group g depends only on frames < (g + 1) * temporal, decoded frame t only on
  latent groups <= t // temporal.  A model conditioned on the first frames sees
  latents that do not leak the future.
* **Per-frame normalisation, or none.**  Spatial norms are applied to each frame alone
  (a 5D GroupNorm would mix frames and break causality).  `norm="group"` is SD's; its
  statistics depend on what the frame holds, so a model trained on small crops around
  the ball sees different statistics on full frames.  `norm="none"` (the tiny CPU
  config, trained on crops) has none: every ResNet block's last conv starts at zero, so
  the block starts as its skip and the deep stack trains without norms.  (`"channel"`,
  a LayerNorm over channels per pixel, is also size-independent but trained slowest.)
* **Replicate padding.**  The background is uniform and the training crops are small:
  replicate padding makes a crop's border look like more background, as it does in
  the middle of a full frame (zero padding would look like a grey wall).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import nn

from phybench.io import file_sha256

WEIGHTS, META = "autoencoder.safetensors", "autoencoder.json"


@dataclass
class AEConfig:
    """Defaults are the paper's VAE shape (SD1.5-VAE widths); each field says why."""

    spatial: int = 8  # spatial down-sampling factor (paper: 8, as SD's VAE); a power of 2
    temporal: int = 4  # temporal down-sampling factor (paper: 4); a power of 2, <= spatial
    latent_channels: int = 4  # latent channels (paper / SD: 4); the DiT's in/out channels
    channels: tuple[int, ...] = (128, 256, 512, 512)  # widths per stage (SD1.5); log2(spatial)+1 stages
    blocks: int = 2  # ResNet blocks per encoder stage (SD: 2); the decoder has blocks + 1 (SD: 3)
    norm: str = "group"  # "group" (SD's GroupNorm, per frame), "channel" (per-pixel LayerNorm) or "none"
    groups: int = 32  # GroupNorm groups (SD: 32)
    temporal_layers: bool = True  # a causal 1D conv after every ResNet block of the temporal stages
    # training (read by train_autoencoder.py, stored with the weights)
    crop: int | None = None  # train on crop x crop pixel windows around the ball (None: full frames)
    frames: int = 16  # frames per training clip (a multiple of `temporal`)
    steps: int = 100_000  # optimiser steps
    batch_size: int = 16  # clips per step
    lr: float = 2e-4  # AdamW peak rate; linear warm-up, then cosine decay to 0 (edges are refined late)
    warmup_steps: int = 500  # linear warm-up
    weight_decay: float = 0.0  # none: the model is small next to the data
    edge_weight: float = 10.0  # extra loss weight on pixels next to an edge: the rim the parser reads
    grad_clip: float = 1.0  # guards against rare spikes
    seed: int = 0  # init, data order and crop placement

    def __post_init__(self) -> None:
        self.channels = tuple(int(c) for c in self.channels)
        ns, nt = int(math.log2(self.spatial)), int(math.log2(max(self.temporal, 1)))
        if 2**ns != self.spatial or 2**nt != self.temporal or nt > ns:
            raise ValueError(f"spatial {self.spatial} and temporal {self.temporal} must be powers of 2, temporal <= spatial")
        if len(self.channels) != ns + 1:
            raise ValueError(f"spatial {self.spatial} needs {ns + 1} stages, got channels {self.channels}")
        if self.blocks < 1:
            raise ValueError(f"blocks must be >= 1 (the first block of a stage changes its width), got {self.blocks}")
        if self.norm not in ("group", "channel", "none"):
            raise ValueError(f"norm must be 'group', 'channel' or 'none', got {self.norm!r}")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["channels"] = list(self.channels)
        return d


def tiny_autoencoder(**overrides: Any) -> AEConfig:
    """A CPU config: 8x/4x at widths 16-64, no norms, trained on 48 px crops of 8 frames."""
    cfg = AEConfig(channels=(16, 32, 64, 64), blocks=1, norm="none", crop=48, frames=8,
                   steps=1500, batch_size=4, lr=1e-3, warmup_steps=100)
    return replace(cfg, **overrides)


CONFIGS: dict[str, Callable[..., AEConfig]] = {"paper": AEConfig, "tiny": tiny_autoencoder}


# ------------------------------------------------------------------ layers
def per_frame(fn: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Apply a 2D module to every frame: (N, C, T, H, W) -> (N, C', T, H', W')."""
    N, C, T, H, W = x.shape
    y = fn(x.transpose(1, 2).reshape(N * T, C, H, W))  # (N*T, C', H', W')
    return y.reshape(N, T, *y.shape[1:]).transpose(1, 2)


class ChannelNorm(nn.Module):
    """LayerNorm over channels at each pixel of (M, C, H, W): no spatial statistics."""

    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.LayerNorm(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def make_norm(cfg: AEConfig, channels: int) -> nn.Module:
    if cfg.norm == "channel":
        return ChannelNorm(channels)
    if cfg.norm == "none":
        return nn.Identity()
    return nn.GroupNorm(math.gcd(cfg.groups, channels), channels, eps=1e-6)


def conv3x3(cin: int, cout: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, 3, stride, padding=1, padding_mode="replicate")


def zero_init(layer: nn.Module) -> None:
    """A conv or linear layer's weight and bias set to zero (a block that starts as the identity)."""
    assert isinstance(layer, (nn.Conv2d, nn.Conv3d, nn.Linear)), layer
    with torch.no_grad():
        layer.weight.zero_()
        if layer.bias is not None:
            layer.bias.zero_()


class ResBlock2D(nn.Module):
    """SD's ResnetBlock2D on each frame: norm, SiLU, conv3x3, twice, plus a skip."""

    def __init__(self, cfg: AEConfig, cin: int, cout: int):
        super().__init__()
        self.body = nn.Sequential(make_norm(cfg, cin), nn.SiLU(), conv3x3(cin, cout),
                                  make_norm(cfg, cout), nn.SiLU(), conv3x3(cout, cout))
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()
        zero_init(self.body[-1])  # the block starts as its skip: a deep stack trains
        # without norms (norm="none") and escapes the mean-image plateau

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (M, C, H, W)
        return self.skip(x) + self.body(x)


def causal_pad(x: torch.Tensor, frames: int) -> torch.Tensor:
    """Repeat the first frame `frames` times in front: (N, C, T, H, W) -> (N, C, T+frames, H, W)."""
    return torch.cat([x[:, :, :1]] * frames + [x], dim=2) if frames else x


class CausalTemporalConv(nn.Module):
    """A 1D conv over time at every pixel (kernel 3), padded at the front only.

    stride 1: output frame t sees input frames t-2..t.  stride 2 (downsampling): one
    front frame of padding, so output j sees input frames 2j-1..2j+1 and the pairs
    (2j, 2j+1) stay together: output j never sees frame 2j+2.
    """

    def __init__(self, cin: int, cout: int, stride: int = 1):
        super().__init__()
        self.stride = stride
        self.conv = nn.Conv3d(cin, cout, (3, 1, 1), (stride, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (N, C, T, H, W) -> (N, C', T/stride, H, W)
        return self.conv(causal_pad(x, 2 if self.stride == 1 else 1))


class TemporalBlock(nn.Module):
    """x + causal conv(SiLU(norm(x))); the conv starts at zero, so the block starts as the
    identity, as inflating a pretrained 2D network requires (and harmless from scratch)."""

    def __init__(self, cfg: AEConfig, channels: int):
        super().__init__()
        self.norm = make_norm(cfg, channels)
        self.conv = CausalTemporalConv(channels, channels)
        zero_init(self.conv.conv)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (N, C, T, H, W)
        return x + self.conv(F.silu(per_frame(self.norm, x)))


class Stage(nn.Module):
    """ResNet blocks on each frame, each followed by a temporal block where `temporal`."""

    def __init__(self, cfg: AEConfig, cin: int, cout: int, n: int, temporal: bool):
        super().__init__()
        self.res = nn.ModuleList(ResBlock2D(cfg, cin if i == 0 else cout, cout) for i in range(n))
        self.temp = nn.ModuleList(TemporalBlock(cfg, cout) for _ in range(n)) if temporal else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (N, C, T, H, W) -> (N, C', T, H, W)
        for i, block in enumerate(self.res):
            x = per_frame(block, x)
            if self.temp is not None:
                x = self.temp[i](x)
        return x


class Downsample(nn.Module):
    """Strided 3x3 conv on each frame (2x space); optionally a causal strided conv (2x time)."""

    def __init__(self, channels: int, temporal: bool):
        super().__init__()
        self.space = conv3x3(channels, channels, stride=2)
        self.time = CausalTemporalConv(channels, channels, stride=2) if temporal else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (N, C, T, H, W) -> (N, C, T/2?, H/2, W/2)
        x = per_frame(self.space, x)
        return self.time(x) if self.time is not None else x


class PixelShuffleUpsample(nn.Module):
    """conv3x3 to 4C channels + channel-to-space, then SD's conv3x3.

    The first conv starts as a copy of each channel into its 4 sub-pixels, so before
    training the pair is exactly nearest-neighbour interpolation (paper, A.3.1); the
    network can then learn sub-pixel detail that interpolation cannot express.
    """

    def __init__(self, channels: int):
        super().__init__()
        self.expand = conv3x3(channels, 4 * channels)
        self.conv = conv3x3(channels, channels)
        with torch.no_grad():
            zero_init(self.expand)
            for c in range(channels):  # pixel_shuffle maps channel 4c + k to sub-pixel k of channel c
                self.expand.weight[4 * c:4 * c + 4, c, 1, 1] = 1.0

    def nearest(self, x: torch.Tensor) -> torch.Tensor:
        """(M, C, H, W) -> (M, C, 2H, 2W): the interpolation part alone."""
        return F.pixel_shuffle(self.expand(x), 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(self.nearest(x))


class Upsample(nn.Module):
    """Optionally 2x in time (repeat each frame, then a causal conv), then 2x in space."""

    def __init__(self, channels: int, temporal: bool):
        super().__init__()
        self.time = CausalTemporalConv(channels, channels) if temporal else None
        self.space = PixelShuffleUpsample(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (N, C, T, H, W) -> (N, C, 2T?, 2H, 2W)
        if self.time is not None:
            x = self.time(x.repeat_interleave(2, dim=2))  # frames 2g, 2g+1 come from latent g (and before)
        return per_frame(self.space, x)


# ------------------------------------------------------------------ model
class VideoAutoencoder(nn.Module):
    """(2+1)D encoder/decoder.  encode: (N, 3, T, H, W) in [-1, 1] -> (N, latent, T/t, H/s, W/s),
    multiplied by `scale`; decode: the inverse, output about [-1, 1]."""

    scale: torch.Tensor  # a registered buffer (0-d): typed here, as nn.Module's attributes are not
    weights_sha256: str | None = None  # set by `load_autoencoder` after checking the file

    def __init__(self, cfg: AEConfig):
        super().__init__()
        self.cfg = cfg
        ch, n = cfg.channels, len(cfg.channels)
        ns, nt = n - 1, int(math.log2(cfg.temporal))
        down_t = [i >= ns - nt for i in range(ns)]  # temporal downsampling in the last nt downsamples
        # stages with temporal layers: those from the first temporal downsample on
        temp_stage = [cfg.temporal_layers and nt > 0 and i >= ns - nt for i in range(n)]

        self.enc_in = conv3x3(3, ch[0])
        self.enc_stages = nn.ModuleList(
            Stage(cfg, ch[max(i - 1, 0)], ch[i], cfg.blocks, temp_stage[i]) for i in range(n))
        self.enc_down = nn.ModuleList(Downsample(ch[i], down_t[i]) for i in range(ns))
        self.enc_mid = Stage(cfg, ch[-1], ch[-1], 2, cfg.temporal_layers and nt > 0)
        self.enc_out = nn.Sequential(make_norm(cfg, ch[-1]), nn.SiLU(), conv3x3(ch[-1], cfg.latent_channels))

        self.dec_in = conv3x3(cfg.latent_channels, ch[-1])
        self.dec_mid = Stage(cfg, ch[-1], ch[-1], 2, cfg.temporal_layers and nt > 0)
        rev = list(range(n))[::-1]  # decoder stage k works at encoder stage rev[k]'s size
        self.dec_stages = nn.ModuleList(
            Stage(cfg, ch[min(i + 1, n - 1)], ch[i], cfg.blocks + 1, temp_stage[i]) for i in rev)
        self.dec_up = nn.ModuleList(Upsample(ch[i], down_t[i - 1]) for i in rev[:-1])
        self.dec_out = nn.Sequential(make_norm(cfg, ch[0]), nn.SiLU(), conv3x3(ch[0], 3))
        self.register_buffer("scale", torch.ones(()))  # latent multiplier, set after training

    def check_input(self, shape: torch.Size, factor_t: int, factor_s: int, what: str) -> None:
        if len(shape) != 5 or shape[2] % factor_t or shape[3] % factor_s or shape[4] % factor_s:
            raise ValueError(f"{what} must be (N, C, T, H, W) with T divisible by {factor_t} and H, W by "
                             f"{factor_s}; got {tuple(shape)}")

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """(N, 3, T, H, W) in [-1, 1] -> scaled latents (N, latent, T/temporal, H/spatial, W/spatial)."""
        self.check_input(x.shape, self.cfg.temporal, self.cfg.spatial, "video")
        return self.encode_raw(x) * self.scale

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """Scaled latents (N, latent, t, h, w) -> video (N, 3, t*temporal, h*spatial, w*spatial)."""
        self.check_input(z.shape, 1, 1, "latents")
        return self.decode_raw(z / self.scale)

    def encode_raw(self, x: torch.Tensor) -> torch.Tensor:
        h = per_frame(self.enc_in, x)  # (N, c0, T, H, W)
        for i, stage in enumerate(self.enc_stages):
            h = stage(h)
            if i < len(self.enc_down):
                h = self.enc_down[i](h)  # halves H, W (and T in the last stages)
        h = self.enc_mid(h)  # (N, c_last, T/t, H/s, W/s)
        return per_frame(self.enc_out, h)  # (N, latent, T/t, H/s, W/s)

    def decode_raw(self, z: torch.Tensor) -> torch.Tensor:
        h = self.dec_mid(per_frame(self.dec_in, z))  # (N, c_last, t, h, w)
        for k, stage in enumerate(self.dec_stages):
            h = stage(h)
            if k < len(self.dec_up):
                h = self.dec_up[k](h)  # doubles H, W (and T in the first stages)
        return per_frame(self.dec_out, h)  # (N, 3, T, H, W)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Reconstruction of x, unscaled path (the scale cancels)."""
        return self.decode_raw(self.encode_raw(x))


def num_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


# ------------------------------------------------------------------ save / load
def save_autoencoder(model: VideoAutoencoder, folder: str | Path, info: dict[str, Any] | None = None) -> Path:
    """Write folder/autoencoder.safetensors and folder/autoencoder.json (config, scale,
    training info and the weights' sha256, which `load_autoencoder` checks)."""
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    weights = folder / WEIGHTS
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(weights), metadata={"format": "phybench-video-autoencoder"})
    meta = {"kind": "phybench-video-autoencoder", "format_version": 1, "config": model.cfg.to_dict(),
            "scale": float(model.scale), "params": num_params(model), "info": info or {},
            "weights_sha256": file_sha256(weights)}
    (folder / META).write_text(json.dumps(meta, indent=2) + "\n")
    return folder


def load_autoencoder(folder: str | Path, device: str | torch.device = "cpu") -> VideoAutoencoder:
    """The frozen autoencoder saved in `folder`: eval mode, requires_grad False.

    Raises ValueError when the weights do not match the sha256 recorded beside them
    (a tampered or truncated file) or do not fit the config.
    """
    from safetensors.torch import load_file

    folder = Path(folder)
    meta = json.loads((folder / META).read_text())
    if meta.get("kind") != "phybench-video-autoencoder":
        raise ValueError(f"{folder / META} is not a phybench video autoencoder")
    weights = folder / WEIGHTS
    found = file_sha256(weights)
    if found != meta["weights_sha256"]:
        raise ValueError(f"{weights} does not match its sha256 in {META} ({found[:12]} != "
                         f"{meta['weights_sha256'][:12]}): the file was changed or truncated; re-train or re-copy it")
    unknown = sorted(set(meta["config"]) - set(AEConfig.__dataclass_fields__))
    if unknown:
        raise ValueError(f"{folder / META} has config fields this code does not know: {', '.join(unknown)}")
    model = VideoAutoencoder(AEConfig(**meta["config"]))
    try:
        model.load_state_dict(load_file(str(weights)), strict=True)
    except RuntimeError as exc:
        raise ValueError(f"{weights} does not fit the config in {META}: {exc}") from None
    if not math.isclose(float(model.scale), float(meta["scale"]), rel_tol=1e-6):
        raise ValueError(f"{weights} holds scale {float(model.scale)} but {META} says {meta['scale']}")
    model.weights_sha256 = found  # verified above; codecs pin runs to it
    return model.to(device).eval().requires_grad_(False)
