"""Train the (2+1)D video autoencoder on a training split's videos, rendered on the fly.

    python -m phybench_baselines.dit.train_autoencoder --train-data SPLIT --out FOLDER \
        [--config tiny|paper] [--steps N] [--set key=value ...]

Each step draws `batch_size` random (row, window of `frames` frames) pairs, renders the
window at the split's resolution (bit-identical to a stored video) and, with `crop`, cuts
a crop x crop window placed on the ball (jittered; 1 in 8 anywhere): the network is
convolutional, and with norm="none" (tiny) its output on a pixel does not depend on the
frame's size, so crops teach it what full frames need at a fraction of the cost.  Loss:
L1 + L2, with `edge_weight` extra on pixels next to an edge (the parser reads sub-pixel
positions from the anti-aliased rim, a few % of the pixels).  No GAN: the target is clean
and synthetic, with no texture for an adversary to sharpen.  After training, the latent
`scale` (1 / std of the latents of full training clips) is measured and saved with the
weights.  Torch uses OMP_NUM_THREADS threads (default: torch's choice).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from .autoencoder import CONFIGS, AEConfig, VideoAutoencoder, num_params, save_autoencoder
from phybench.data.split import SplitReader, render_row, row_scene  # noqa: F401
from phybench.world.render import render

STATE_COLUMNS = ["positions", "velocities", "radii", "colours"]


def to_tensor(video: np.ndarray) -> torch.Tensor:
    """uint8 (T, H, W, 3) -> float (3, T, H, W) in [-1, 1]."""
    return torch.from_numpy(np.ascontiguousarray(video)).permute(3, 0, 1, 2).float() / 127.5 - 1


def to_uint8(x: torch.Tensor) -> np.ndarray:
    """float (3, T, H, W) about [-1, 1] -> uint8 (T, H, W, 3), rounded."""
    return ((x.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).permute(1, 2, 3, 0).cpu().numpy()


class ClipSampler:
    """Random training clips (and crops) from a split's states; a pure function of the seed."""

    def __init__(self, folder: str | Path, frames: int, crop: int | None, seed: int):
        reader = SplitReader(folder)
        self.rows = list(reader.rows(columns=STATE_COLUMNS))
        self.resolution = int(reader.manifest["resolution"])
        self.world = float(reader.manifest["world_size"])
        self.total = int(reader.manifest["frames"])
        self.frames, self.crop = frames, crop
        if frames > self.total or (crop is not None and crop > self.resolution):
            raise ValueError(f"clips of {frames} frames / crop {crop} do not fit the split's "
                             f"{self.total} frames of {self.resolution} px")
        self.rng = np.random.default_rng(seed)

    def clip(self) -> torch.Tensor:
        """float (3, frames, crop, crop) in [-1, 1]."""
        row = self.rows[self.rng.integers(len(self.rows))]
        t0 = int(self.rng.integers(self.total - self.frames + 1))
        s = row_scene(row).frames(slice(t0, t0 + self.frames))
        video = render(s, self.resolution)  # uint8 (frames, R, R, 3)
        if self.crop is not None:
            R, c = self.resolution, self.crop
            if self.rng.random() < 0.125:  # anywhere: plain background and borders too
                top, left = self.rng.integers(R - c + 1, size=2)
            else:  # on a ball, around its mean position over the window, jittered by c/4
                b = int(self.rng.integers(s.positions.shape[1]))
                x, y = s.positions[:, b].mean(axis=0)
                col, row_ = x * R / self.world, (self.world - y) * R / self.world
                jitter = self.rng.uniform(-c / 4, c / 4, size=2)
                top = int(np.clip(round(row_ - c / 2 + jitter[0]), 0, R - c))
                left = int(np.clip(round(col - c / 2 + jitter[1]), 0, R - c))
            video = video[:, top:top + c, left:left + c]
        return to_tensor(video)

    def batch(self, n: int) -> torch.Tensor:
        return torch.stack([self.clip() for _ in range(n)])  # (n, 3, frames, c, c)

    def full_clips(self, n: int) -> torch.Tensor:
        """n whole training videos (evenly spaced rows): float (n, 3, T, R, R)."""
        idx = np.linspace(0, len(self.rows) - 1, n).round().astype(int)
        return torch.stack([to_tensor(render_row(self.rows[i], self.resolution)) for i in idx])


def edge_mask(x: torch.Tensor) -> torch.Tensor:
    """bool (N, 1, T, H, W): pixels whose 3x3 neighbourhood (in their frame) is not constant."""
    N, C, T, H, W = x.shape
    f = x.transpose(1, 2).reshape(N * T, C, H, W)
    hi = F.max_pool2d(f, 3, 1, 1)
    lo = -F.max_pool2d(-f, 3, 1, 1)
    m = ((hi - lo) > 1e-6).any(dim=1, keepdim=True)  # (N*T, 1, H, W)
    return m.reshape(N, T, 1, H, W).transpose(1, 2)


def loss_fn(y: torch.Tensor, x: torch.Tensor, edge_weight: float) -> torch.Tensor:
    """Mean of |y - x| + (y - x)^2, weighted 1 + edge_weight on edge pixels.

    L1 alone stalls on the "mean image" plateau (its gradient does not grow with the
    error); the squared term pulls the large errors out of it, L1 then sharpens."""
    w = 1 + edge_weight * edge_mask(x).float()
    d = y - x
    return (w * (d.abs() + d * d)).mean()


@torch.no_grad()
def latent_scale(model: VideoAutoencoder, clips: torch.Tensor) -> float:
    """1 / std of the raw latents of `clips`: scaled latents have unit std."""
    z = torch.cat([model.encode_raw(c[None]) for c in clips])  # (n, latent, t, h, w)
    return float(1.0 / z.float().std().clamp_min(1e-8))


def lr_at(step: int, cfg: AEConfig) -> float:
    """Linear warm-up, then cosine decay to 0 (fine edge detail is learnt at small rates)."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    p = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    return cfg.lr * 0.5 * (1 + math.cos(math.pi * min(p, 1.0)))


def make_autoencoder_config(name: str, overrides: list[str], steps: int | None) -> AEConfig:
    cfg = CONFIGS[name]()
    values = cfg.to_dict()
    for item in overrides:
        key, value = item.split("=", 1)
        if key not in values:
            raise SystemExit(f"unknown config field {key!r}")
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = None if value == "None" else value
        values[key] = float(parsed) if isinstance(values[key], float) and isinstance(parsed, int) else parsed
    if steps is not None:
        values["steps"] = steps
    return AEConfig(**values)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--train-data", required=True, help="a training split folder (states only is fine)")
    p.add_argument("--out", required=True, help="folder for autoencoder.json and autoencoder.safetensors")
    p.add_argument("--config", choices=sorted(CONFIGS), default="tiny")
    p.add_argument("--steps", type=int, default=None, help="override the config's steps")
    p.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override config fields")
    p.add_argument("--scale-clips", type=int, default=16, help="full training clips to measure the latent scale")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> list[tuple[int, float]]:
    """Train, measure the scale, save; returns the (step, loss) history."""
    args = parse_args(argv)
    cfg = make_autoencoder_config(args.config, args.set, args.steps)
    if "OMP_NUM_THREADS" in os.environ:
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    if cfg.frames % cfg.temporal or (cfg.crop or cfg.spatial) % cfg.spatial:
        raise SystemExit(f"frames {cfg.frames} must be divisible by temporal {cfg.temporal} and crop {cfg.crop} "
                         f"by spatial {cfg.spatial}")
    out = Path(args.out)
    torch.manual_seed(cfg.seed)
    model = VideoAutoencoder(cfg)
    data = ClipSampler(args.train_data, cfg.frames, cfg.crop, cfg.seed)
    with torch.no_grad():  # start the output at the mean pixel (mostly background): Adam moves a
        # bias by ~lr per step, so learning a white background from 0 would take ~1/lr steps
        head = model.dec_out[-1]  # the output conv
        assert isinstance(head, torch.nn.Conv2d) and head.bias is not None
        head.bias.copy_(data.batch(cfg.batch_size).mean(dim=(0, 2, 3, 4)))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    history: list[tuple[int, float]] = []
    start = time.time()
    bar = tqdm(range(cfg.steps), desc="train autoencoder", disable=not args.progress)
    model.train()
    for step in bar:
        for g in opt.param_groups:
            g["lr"] = lr_at(step, cfg)
        x = data.batch(cfg.batch_size)  # (n, 3, frames, c, c)
        loss = loss_fn(model(x), x, cfg.edge_weight)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        history.append((step + 1, loss.item()))
        bar.set_postfix(loss=f"{loss.item():.5f}")
    bar.close()

    model.eval()
    scale = latent_scale(model, data.full_clips(args.scale_clips))
    model.scale.fill_(scale)
    tail = [loss_value for _, loss_value in history[-100:]]
    info: dict[str, Any] = {
        "train_data": str(args.train_data), "steps": cfg.steps, "final_loss": float(np.mean(tail)) if tail else None,
        "train_seconds": round(time.time() - start, 1), "threads": torch.get_num_threads(),
        "scale_clips": args.scale_clips,
    }
    save_autoencoder(model, out, info)
    with open(out / "log.jsonl", "w") as f:
        for s, loss_value in history:
            f.write(json.dumps({"step": s, "loss": loss_value}) + "\n")
    if args.progress:
        print(json.dumps({"out": str(out), "params": num_params(model), "scale": scale, **info}))
    return history


if __name__ == "__main__":
    main()
