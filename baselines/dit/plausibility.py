"""The DiT's per-video plausibility score for `phybench plausibility`: its denoising loss.

    phybench plausibility --model phybench_baselines.dit.plausibility:DenoisingLoss \
        --model-args "checkpoint=runs/dit-S,seeds=2,levels=100;500;900" --data pairs/ --split data/uniform-id-eval

(levels are separated by ';' on the command line, where ',' separates the arguments.)

A diffusion model's training loss at a noise level bounds the clip's negative log-likelihood
(the ELBO is a weighted sum of them), so the loss averaged over fixed noise levels and fixed
noise draws ranks videos by how likely the model finds them, as LikePhys does.  The video is
cut into the model's windows the way sampling rolls out (each conditioned on the `frames -
condition_frames` frames before it, the first on the split's first frames), resized to the
model's resolution, and scored only on the cells the model generates.  The noise of every
(window, level, seed) is drawn from a generator seeded by those three numbers alone, so a
valid video and its violated twin meet the same noise: the comparison is paired.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from .clips import clip_to_tensor
from .diffusion import condition, make_scheduler, training_loss
from .sample import load_run


class DenoisingLoss:
    """Mean denoising loss of a trained DiT run over `levels` timesteps and `seeds` noise draws."""

    def __init__(self, checkpoint: str, levels: str | int = "100;300;500;700;900", seeds: int = 2,
                 device: str | None = None, batch: int = 64) -> None:
        if device is None:
            device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}" if torch.cuda.is_available() else "cpu"
        self.device = device
        self.cfg, self.model, self.codec = load_run(Path(checkpoint), device)
        self.levels = [int(x) for x in str(levels).split(";" if ";" in str(levels) else ",") if str(x).strip()]
        if not self.levels or any(not 0 <= t < self.cfg.num_train_timesteps for t in self.levels):
            raise ValueError(f"levels must be timesteps in [0, {self.cfg.num_train_timesteps}), got {levels!r}")
        self.seeds = int(seeds)
        self.batch = int(batch)  # items per forward pass
        self.scheduler = make_scheduler(self.cfg.num_train_timesteps)

    def windows(self, video: np.ndarray) -> list[int]:
        """Start frames of the model's windows over a video, as sampling would roll out."""
        T, F, c = len(video), self.cfg.frames, self.cfg.condition_frames
        if T <= F:
            return [0]
        starts = list(range(0, T - F + 1, F - c))
        if starts[-1] != T - F:
            starts.append(T - F)  # the last window ends with the video
        return starts

    @torch.inference_mode()
    def __call__(self, video: np.ndarray, condition_frames: int) -> float:
        F, T = self.cfg.frames, self.cfg.num_train_timesteps
        starts = self.windows(video)
        clips = torch.stack([clip_to_tensor(video[s:s + F], F, self.cfg.resolution) for s in starts]).to(self.device)
        # exactly what the trainer feeds the model (phybench_baselines.dit.train)
        padded, mask_px = condition(clips, self.cfg.condition_frames, self.cfg.cond_fill)  # padded clips, binary mask
        x0 = self.codec.encode(clips)  # (W, C, F', h, w): what the model diffuses
        cond, mask = self.codec.condition(padded, mask_px)
        # every (window, level, seed) is one item of a batch; items share the mask, so the
        # batch's loss is the mean of the items' losses
        items = [(w, level, seed) for w in range(len(starts)) for level in self.levels for seed in range(self.seeds)]
        losses, counts = [], []
        for a in range(0, len(items), self.batch):
            chunk = items[a:a + self.batch]
            idx = torch.tensor([w for w, _, _ in chunk], device=self.device)
            noise = torch.cat([torch.randn(x0[:1].shape, generator=torch.Generator(device="cpu").manual_seed(
                (w * 1_000_003 + level) * 101 + seed)) for w, level, seed in chunk]).to(self.device)
            u = torch.tensor([(level + 0.5) / T for _, level, _ in chunk], device=self.device)
            loss = training_loss(self.model, x0[idx], cond[idx], mask[idx], self.cfg.objective, noise=noise, u=u,
                                 scheduler=self.scheduler, prediction=self.cfg.prediction)
            losses.append(float(loss) * len(chunk))
            counts.append(len(chunk))
        return float(np.sum(losses) / np.sum(counts))
