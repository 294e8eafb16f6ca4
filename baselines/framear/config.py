"""The frame-autoregressive model's training configuration: its fields, presets and --set overrides.

Below both `train` and `sample` (the sampler rebuilds a run's model from its config.json), so
neither imports the other for it.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from ..training import set_fields
from .model import FrameNet


@dataclass
class FrameConfig:
    """Defaults: the CPU recipe for uniform motion (about 45 minutes of wall time on 2 shared cores)."""

    resolution: int = 48  # model frames; 32 px loses the law fit on 9% of exact ID renders, 48 px on none
    context: int = 3  # frames the model sees (the task's 3 condition frames at the first step)
    pad_context: bool = False  # for a task with fewer condition frames than `context` (the ambiguity probe's 1): a context reaching before frame 0 repeats frame 0, in training (targets from frame 1 on) and sampling
    width: int = 32  # channels of every layer
    dilations: list[int] = field(default_factory=lambda: [1, 1, 2, 4, 2, 1, 1])  # receptive field 1 + 2 (2 + sum)
    train_rows: int = 1500  # rows of the training split, evenly spread over it, rendered into memory (uint8)
    lazy_render: bool = False  # render only each drawn target's frames, per batch (same pixels; 30K rows do not fit memory)
    val_rows: int = 32  # other rows of the training split, evenly spread: the validation set (never trained on)
    steps: int = 1800
    batch_size: int = 32
    lr: float = 2e-3
    min_lr_ratio: float = 0.05  # cosine decay to this share of lr
    warmup_steps: int = 100
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    ema_decay: float = 0.998
    change_weight: float = 20.0  # loss weight of pixels that change from the last context frame (the rims), others 1
    context_noise: float = 0.02  # Gaussian noise on the context frames ([-1, 1] units): rollouts feed back their own frames
    sample_steps: int = 4  # Euler steps of the sampler
    # rollout training (off by default): from `rollout_start` on, the first `rollout_share` of each batch gets a
    # context whose last m frames (m drawn from 1..rollout_frames per step) the EMA model generated itself with
    # the sampler (no gradient through it) from the real frames before them; the target stays the real frame
    rollout_frames: int = 0
    rollout_share: float = 0.5
    rollout_start: int = 150
    init: str = ""  # start from these EMA weights (a framear snapshot's .safetensors) instead of the seeded init
    seed: int = 0
    log_every: int = 50
    eval_every: int = 300  # validation and an EMA snapshot this often (and at the last step)
    threads: int = 0  # torch threads (0: leave as is); config.json records the count the run used

    def to_dict(self) -> dict:
        return asdict(self)


def make_model(cfg: FrameConfig) -> FrameNet:
    return FrameNet(context=cfg.context, width=cfg.width, dilations=tuple(cfg.dilations))


# Named starting points; --set overrides apply on top.  `tiny`: a smoke run of about a CPU-minute on
# 2 cores (a training split of >= 56 rows, e.g. `phybench generate uniform --split train-30k --limit 64`),
# enough to go through train -> sample -> score; it does not learn the law.
PRESETS: dict[str, list[str]] = {
    "tiny": ["resolution=24", "width=16", "dilations=[1,2,4,2,1]", "train_rows=48", "val_rows=8", "batch_size=8",
             "steps=80", "warmup_steps=10", "eval_every=40", "log_every=20", "sample_steps=2"],
}


def config_help() -> str:
    """Every --set key with its default and what it means (the comment beside it in `FrameConfig`)."""
    import inspect
    import re

    notes = {m.group(1): m.group(2) for line in inspect.getsource(FrameConfig).splitlines()
             if (m := re.match(r"\s+(\w+): [^=]+=.*?#\s*(.*)$", line))}
    defaults = FrameConfig().to_dict()
    lines = ["--set keys (KEY=VALUE, JSON values; default, meaning):"]
    lines += [f"  {k}={json.dumps(v)}" + (f"  # {notes[k]}" if k in notes else "") for k, v in defaults.items()]
    lines += ["", "--preset NAME applies these first (--set overrides them):"]
    lines += [f"  {name}: {' '.join(items)}" for name, items in PRESETS.items()]
    return "\n".join(lines)


def make_config(overrides: list[str], preset: str | None = None) -> FrameConfig:
    """The defaults, then the preset's settings, then `overrides` (KEY=VALUE, JSON values)."""
    overrides = [*PRESETS[preset], *overrides] if preset else list(overrides)
    return set_fields(FrameConfig(), overrides)
