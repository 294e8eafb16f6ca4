"""The training pieces both baseline families share (`dit.train`, `framear.train`).

The data stream, the step counter, the EMA, the log and the weights file are the parts of a
run that make it deterministic and resumable; one copy of each means the two trainers cannot
drift apart (framear borrowed them from `dit.train` before, which tied a family to the other's
trainer).  Nothing here knows a model.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import torch


class StreamSampler(torch.utils.data.Sampler):
    """Indices of one process from micro-step `start` on: a seeded permutation per epoch.

    The stream is one global sequence (process-count independent): micro-step s of rank r takes
    positions (s * world + r) * micro_batch ..., so a run on 2 processes sees the 1-process run's
    data, and a resumed run (`start`) the uninterrupted one's."""

    def __init__(self, n: int, micro_batch: int, rank: int, world: int, seed: int, start: int = 0):
        self.n, self.mb, self.rank, self.world, self.seed, self.start = n, micro_batch, rank, world, seed, start

    def __iter__(self):
        per_step = self.mb * self.world
        pos = self.start * per_step + self.rank * self.mb  # position in the global stream
        perm_epoch, perm = -1, None
        while True:
            for j in range(pos, pos + self.mb):
                epoch = j // self.n
                if epoch != perm_epoch:
                    perm = torch.randperm(self.n, generator=torch.Generator().manual_seed(self.seed * 100_003 + epoch))
                    perm_epoch = epoch
                yield int(perm[j % self.n])
            pos += per_step


class Counter:
    """The step counter, checkpointed with the rest (Accelerate does not restore it)."""

    def __init__(self):
        self.step = 0

    def state_dict(self):
        return {"step": self.step}

    def load_state_dict(self, state):
        self.step = int(state["step"])


def hardware(processes: int) -> str:
    """What the run trained on, for the submission's card: "1x NVIDIA H100 80GB HBM3" or "CPU, 1 process(es) x 2 threads"."""
    if torch.cuda.is_available():
        return f"{processes}x {torch.cuda.get_device_name()}"
    return f"CPU, {processes} process(es) x {torch.get_num_threads()} threads"


@torch.no_grad()
def update_ema(ema: torch.nn.Module, model: torch.nn.Module, decay: float) -> None:
    """ema <- decay * ema + (1 - decay) * model, in float32 whatever the model's precision."""
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach().float(), alpha=1 - decay)


def ema_decay(decay: float, step: int, warmup: bool) -> float:
    """The EMA's decay after step `step` (0-based): `decay`, or with warm-up
    min(decay, (1 + step) / (10 + step)), so that a short run's EMA does not keep a visible
    share of the initial weights (0.995 without warm-up keeps 7% after 538 steps)."""
    return min(decay, (1 + step) / (10 + step)) if warmup else decay


def set_fields(cfg: Any, overrides: list[str]) -> Any:
    """`cfg` (a dataclass) with KEY=VALUE items set in place and returned.

    Values are JSON (`lr=1e-3`, `dilations=[1,2]`, `ema_warmup=true`); a value that is not JSON
    is taken as a string where the field can hold one (`vae=runs/ae`), `None` as None where it
    can be None; an int given for a float field is stored as a float (config.json stays typed)."""
    fields = {f.name: str(f.type) for f in dataclasses.fields(cfg)}
    for item in overrides:
        key, value = item.split("=", 1)
        if key not in fields:
            raise SystemExit(f"unknown config field {key!r}")
        old = getattr(cfg, key)
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            if value == "None" and "None" in fields[key]:
                parsed = None
            elif "str" in fields[key]:
                parsed = value
            else:
                raise SystemExit(f"{key}={value}: not a JSON value (a {fields[key]})") from None
        setattr(cfg, key, float(parsed) if isinstance(old, float) and isinstance(parsed, int) else parsed)
    return cfg


def append_log(path: Path, entry: dict) -> None:
    """One line of the run's log.jsonl (appended: a resumed run continues the file)."""
    with open(path, "a") as f:
        f.write(json.dumps(entry) + "\n")


def save_weights(ema: torch.nn.Module, path: Path, step: int) -> None:
    """The EMA weights as safetensors, the step in the metadata (what the samplers read)."""
    from safetensors.torch import save_file

    save_file({k: v.contiguous() for k, v in ema.state_dict().items()}, str(path), metadata={"step": str(step)})
