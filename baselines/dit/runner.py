"""The DiT baseline as a `phybench run` model: condition frames in, videos out.

    phybench run --model phybench_baselines.dit.runner:DiT --model-args checkpoint=runs/dit-tiny,steps=20 \
        --tasks uniform --protocol lite --out runs/dit

Under `accelerate launch`, each process samples its share on the GPU its LOCAL_RANK names.
Each video's noise is seeded from (seed, its own condition frames) (`phybench_baselines.seeding`),
as `dit.sample` seeds it, so the videos do not depend on how the split was batched, sharded or
resumed (on the CPU not a byte: each video is rolled out alone there).

A DiT trained with a state or text condition (`conditioning`, the modality study) asks
`phybench run` for it: its `generate` then names ``states=`` or ``prompts=``, so the runner
passes them and the submission records the track (frames+state, frames+text).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from .clips import clip_to_tensor, tensor_to_clip
from .conditioning import condition_inputs
from ..seeding import video_generators
from .sample import load_run, rollout_videos


class DiT:
    def __init__(self, checkpoint: str, steps: int | None = None, seed: int = 0, device: str | None = None) -> None:
        if device is None:
            local = int(os.environ.get("LOCAL_RANK", "0"))
            device = f"cuda:{local}" if torch.cuda.is_available() else "cpu"
        self.device = device
        self.run = Path(checkpoint)
        self.cfg, self.model, self.codec = load_run(self.run, device)
        self.steps = int(steps or self.cfg.sample_steps)
        self.seed = int(seed)
        # `phybench run` reads generate's signature to choose what to pass: a conditioned run's
        # generate names its condition, a frames-only run's names none.
        if self.cfg.condition == "state":
            self.generate = self.generate_with_states
        elif self.cfg.condition == "text":
            self.generate = self.generate_with_prompts

    def submission_card(self) -> dict:
        """`phybench run`'s hook: the name, card and sampler `dit.sample` writes for this checkpoint."""
        from .sample import run_model_card, sampler_settings

        return {"model": {"name": f"dit-{self.cfg.size}-{self.cfg.objective}", **run_model_card(self.run, self.cfg, self.model)},
                "sampler": sampler_settings(self.cfg, self.codec, self.steps, self.device), "seeds": [self.seed]}

    def generate_with_states(self, condition: np.ndarray, num_frames: int, states: list[dict] | None = None) -> np.ndarray:
        """`generate` of a state-conditioned run: each video's numeric state (`phybench.data.conditions`)."""
        return self._generate(condition, num_frames, condition_inputs(self.cfg, states=states))

    def generate_with_prompts(self, condition: np.ndarray, num_frames: int, prompts: list[str] | None = None) -> np.ndarray:
        """`generate` of a text-conditioned run: each video's prompt."""
        return self._generate(condition, num_frames, condition_inputs(self.cfg, texts=prompts))

    def generate(self, condition: np.ndarray, num_frames: int) -> np.ndarray:
        """uint8 (B, C, H, W, 3) -> uint8 (B, num_frames, H, W, 3); the condition frames kept as given."""
        return self._generate(condition, num_frames, condition_inputs(self.cfg))

    def _generate(self, condition: np.ndarray, num_frames: int, y: torch.Tensor | None) -> np.ndarray:
        condition = np.asarray(condition)
        B, c, R = condition.shape[:3]
        first = torch.stack([clip_to_tensor(v, c, self.cfg.resolution) for v in condition]).to(self.device)
        kind = torch.device(self.device).type
        with torch.inference_mode(), torch.autocast(kind, dtype=torch.bfloat16, enabled=kind != "cpu"):
            clips = rollout_videos(self.model, self.codec, self.cfg, first, num_frames, self.steps,
                                   video_generators(self.seed, condition), y=None if y is None else y.to(self.device))
        out = np.stack([tensor_to_clip(x, R) for x in clips])  # (B, T, R, R, 3)
        out[:, :c] = condition
        return np.ascontiguousarray(out)
