"""Train the frame-autoregressive flow-matching model on a training split, with HF Accelerate.

    python -m phybench_baselines.framear.train --train-data SPLIT --out RUN [--set steps=4000 ...]

The model generates one frame from the `context` frames before it (rectified flow, the network
predicting the clean frame, a few Euler steps at sampling); videos roll out frame by frame from
the 3 condition frames.  Training frames are the split's clips rendered at 128 px (the split's
own renderer) and area-downsampled to the model's resolution, as the condition frames of an
evaluation split are at sampling time.  Everything the model sees is pixels: no state enters
the model or the loss.  The last `val_rows` rows of the training split are held out as the
validation set (velocity error and the learned-law fit parsed from pixels, as the scorer
does); evaluation splits are never read.

Data order, noise and noise levels are pure functions of (seed, step), drawn for the global
batch and sliced per rank (as `phybench_baselines.dit.train`), so a fixed seed gives the same
weights; EMA snapshots are saved with safetensors at every evaluation (the learning curve).
"""
from __future__ import annotations

import argparse
import copy
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ..dit.train import Counter, StreamSampler, hardware, update_ema
from .model import FrameNet
from phybench.data.split import SplitReader, render_row


@dataclass
class FrameConfig:
    """Defaults: the CPU recipe for uniform motion (about 45 minutes of wall time on 2 shared cores)."""

    resolution: int = 48  # model frames; 32 px loses the law fit on 9% of exact ID renders, 48 px on none
    context: int = 3  # frames the model sees (the task's 3 condition frames at the first step)
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


def downsample(video: np.ndarray, resolution: int) -> torch.Tensor:
    """uint8 (T, H, W, 3) -> float (T, 3, r, r) in [-1, 1], area-downsampled (how condition frames arrive)."""
    x = torch.from_numpy(np.ascontiguousarray(video)).permute(0, 3, 1, 2).float()
    if x.shape[-1] != resolution:
        x = F.interpolate(x, size=(resolution, resolution), mode="area")
    return x / 127.5 - 1


def upsample(frames: torch.Tensor, size: int) -> np.ndarray:
    """float (T, 3, r, r) in [-1, 1] -> uint8 (T, size, size, 3), bilinear."""
    if frames.shape[-1] != size:
        frames = F.interpolate(frames.float(), size=(size, size), mode="bilinear", align_corners=False)
    return ((frames.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()


def render_clips(rows: list[dict], resolution: int) -> torch.Tensor:
    """uint8 (N, T, 3, r, r): each row rendered at 128 px by the split's renderer, area-downsampled, rounded."""
    out = []
    for row in rows:
        x = downsample(render_row(row, 128), resolution)
        out.append(((x + 1) * 127.5).round().clamp(0, 255).to(torch.uint8))
    return torch.stack(out)


class LazyClips:
    """Stands in for `render_clips(rows, r)` without holding it: indexing with (clip, frame) index tensors
    renders only the frames asked for (per clip, the span between the lowest and highest asked).

    Why: 30K rows at 48 px are 6.6 GB of uint8; a run of S steps reads at most 32 S of them.  The
    pixels are the eager ones (a frame slice renders as the same frames of the whole clip; tested)."""

    def __init__(self, rows: list[dict], resolution: int, frames: int) -> None:
        self.rows, self.resolution = rows, resolution
        self.shape = (len(rows), frames, 3, resolution, resolution)

    def __getitem__(self, key: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        r_i, k = torch.broadcast_tensors(*(torch.as_tensor(x) for x in key))
        out = torch.empty((*r_i.shape, *self.shape[2:]), dtype=torch.uint8)
        flat_r, flat_k, flat_out = r_i.reshape(-1), k.reshape(-1), out.view(-1, *self.shape[2:])
        for row in flat_r.unique().tolist():
            where = (flat_r == row).nonzero().squeeze(1)
            lo, hi = int(flat_k[where].min()), int(flat_k[where].max())
            x = downsample(render_row(self.rows[row], 128, slice(lo, hi + 1)), self.resolution)
            x = ((x + 1) * 127.5).round().clamp(0, 255).to(torch.uint8)  # (hi - lo + 1, 3, r, r)
            flat_out[where] = x[flat_k[where] - lo]
        return out


def split_rows(n: int, train: int, val: int) -> tuple[list[int], list[int]]:
    """Disjoint training and validation row indices, each evenly spread over the split
    (a split's rows are ordered by its parameter grid, so its first rows cover one corner)."""
    if train + val > n:
        raise SystemExit(f"train_rows + val_rows = {train + val} exceeds the split's {n} rows")
    train_idx = np.linspace(0, n - 1, train).round().astype(int).tolist() if train else []
    taken = set(train_idx)
    free = [i for i in range(n) if i not in taken]
    val_idx = [free[j] for j in np.linspace(0, len(free) - 1, val).round().astype(int)] if val else []
    return train_idx, val_idx


def weighted_loss(pred: torch.Tensor, target: torch.Tensor, last: torch.Tensor, change_weight: float) -> torch.Tensor:
    """MSE, pixels that differ from the last context frame by more than 0.05 (a moving rim) weighted up:
    they are about 1% of a frame and all of the motion."""
    changed = ((target - last).abs().amax(dim=1, keepdim=True) > 0.05).float()  # (n, 1, r, r)
    w = 1 + change_weight * changed
    return ((pred - target) ** 2 * w).sum() / (w.sum() * pred.shape[1])


def self_generated_context(ema: FrameNet, cfg: FrameConfig, clips: torch.Tensor, r_i: torch.Tensor,
                           k: torch.Tensor, m: int, gen: torch.Generator) -> torch.Tensor:
    """(n, context, 3, r, r): for target frame k of clip r_i, the context frames k - context .. k - 1 of which
    the last m are the EMA model's own rollout (the sampler, as at test time) from the real frames before them.

    Why: teacher forcing only ever shows the model real context, but a 29-frame rollout feeds it its own
    frames, whose small errors (a shrinking small ball, residue at the border) it was never taught to undo;
    here the loss asks it to map its own drifted frames back onto the real next frame (exposure bias)."""
    from .sample import rollout

    offsets = torch.arange(-cfg.context - m, -m)
    first = clips[r_i[:, None], k[:, None] + offsets].float() / 127.5 - 1
    frames = rollout(ema, cfg, first, cfg.context + m, gen)
    return frames[:, -cfg.context:].clone()


def lr_factor(cfg: FrameConfig, step: int) -> float:
    if step < cfg.warmup_steps:
        return (step + 1) / cfg.warmup_steps
    p = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + np.cos(np.pi * min(1.0, p)))


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


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=config_help(),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train-data", required=True, help="a training split folder")
    p.add_argument("--out", required=True, help="run folder: config, log, EMA weights (safetensors)")
    p.add_argument("--preset", choices=sorted(PRESETS), help="a named config to start from (tiny: about a CPU-minute)")
    p.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override config fields (listed below)")
    return p.parse_args(argv)


def make_config(overrides: list[str], preset: str | None = None) -> FrameConfig:
    """The defaults, then the preset's settings, then `overrides` (KEY=VALUE, JSON values)."""
    overrides = [*PRESETS[preset], *overrides] if preset else list(overrides)
    cfg = FrameConfig()
    for item in overrides:
        key, value = item.split("=", 1)
        if key not in FrameConfig.__dataclass_fields__:
            raise SystemExit(f"unknown config field {key!r}")
        old = getattr(cfg, key)
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            if not isinstance(old, str):
                raise
            parsed = value  # a string field (a path) need not be JSON-quoted
        setattr(cfg, key, float(parsed) if isinstance(old, float) and isinstance(parsed, int) else parsed)
    return cfg


def write_run_files(out: Path, cfg: FrameConfig, manifest: dict) -> None:
    """The run folder's config and the training split's identity (refusing a folder that holds a run)."""
    out.mkdir(parents=True, exist_ok=True)
    if (out / "ema.safetensors").exists():
        raise SystemExit(f"{out} already holds a run: choose a new --out")
    (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2) + "\n")
    m = manifest
    (out / "train_split.json").write_text(json.dumps(
        {**{k: m[k] for k in ("task", "split", "split_hash", "num_samples") if k in m},
         "rows_trained": cfg.train_rows, "rows_validation": cfg.val_rows}, indent=2) + "\n")


def training_batch(cfg: FrameConfig, clips: torch.Tensor, idx: torch.Tensor, step: int, rank: int, world: int,
                   ema: FrameNet) -> tuple[torch.Tensor, ...]:
    """(x_t, context, t, target, last) for the stream indices `idx` of this rank: noise and levels drawn
    for the global batch from (seed, step) and sliced, so a fixed seed gives the same batch on any world size."""
    micro = len(idx)
    per_clip = clips.shape[1] - cfg.context  # targets k = context .. T-1 of every clip
    r_i, k = idx // per_clip, idx % per_clip + cfg.context
    target = clips[r_i, k].float() / 127.5 - 1  # (n, 3, r, r)
    context = clips[r_i[:, None], k[:, None] + torch.arange(-cfg.context, 0)].float() / 127.5 - 1  # (n, c, 3, r, r)
    gen = torch.Generator().manual_seed(cfg.seed * 1_000_003 + step)
    share = slice(rank * micro, (rank + 1) * micro)
    noise = torch.randn((world * micro, *target.shape[1:]), generator=gen)[share]
    t = torch.rand(world * micro, generator=gen)[share]
    ctx_noise = torch.randn((world * micro, *context.shape[1:]), generator=gen)[share]
    if cfg.rollout_frames and step >= cfg.rollout_start:
        n_r, m = round(cfg.rollout_share * micro), int(torch.randint(1, cfg.rollout_frames + 1, (1,), generator=gen))
        k_r = k[:n_r].clamp(min=cfg.context + m)  # a target early in the clip moves later, so m real frames precede
        target[:n_r] = clips[r_i[:n_r], k_r].float() / 127.5 - 1
        context[:n_r] = self_generated_context(ema, cfg, clips, r_i[:n_r], k_r, m, gen)
    last = context[:, -1]  # before the context noise: what the loss weighting compares the target with
    context = context + cfg.context_noise * ctx_noise
    tv = t.view(-1, 1, 1, 1)
    xt = (1 - tv) * target + tv * noise  # rectified flow: data at t = 0, noise at t = 1
    return xt, context, t, target, last


def snapshot(out: Path, ema: FrameNet, step: int) -> None:
    """The EMA weights as a snapshot (the learning curve) and as the run's current weights (safetensors)."""
    from safetensors.torch import save_file

    state = {k: v.contiguous() for k, v in ema.state_dict().items()}
    meta = {"step": str(step)}
    (out / "snapshots").mkdir(exist_ok=True)
    save_file(state, str(out / "snapshots" / f"ema_{step:07d}.safetensors"), metadata=meta)
    save_file(state, str(out / "ema.safetensors"), metadata=meta)


def log(out: Path, history: list[dict], entry: dict) -> None:
    history.append(entry)
    with open(out / "log.jsonl", "a") as f:
        f.write(json.dumps(entry) + "\n")


def _training_clips(cfg: FrameConfig, rows: list[dict], frames: int, say: bool) -> tuple["np.ndarray | LazyClips", float]:
    """(the training clips, rendered now or lazily per batch; the seconds it took), saying so:
    rendering a large training set takes a while and a run should never sit silent."""
    t0 = time.perf_counter()
    if say:
        print(f"rendering {len(rows)} training clips at {cfg.resolution} px"
              f"{' (lazily, per batch)' if cfg.lazy_render else ''} ...", flush=True)
    clips = LazyClips(rows, cfg.resolution, frames) if cfg.lazy_render else render_clips(rows, cfg.resolution)
    if say:
        print(f"training clips ready; training {cfg.steps} steps", flush=True)
    return clips, time.perf_counter() - t0


def _say_progress(step: int, steps: int, loss: float, train_s: float) -> None:
    """Steps per second so far, and when the run will end at that rate."""
    rate = step / train_s
    print(f"step {step}/{steps}: loss {loss:.5f}, {rate:.2f} steps/s, about {(steps - step) / rate / 60:.1f} min left",
          flush=True)


def main(argv=None) -> list[dict]:
    from accelerate import Accelerator
    from safetensors.torch import load_file

    from .sample import validate_rows

    args = parse_args(argv)
    cfg = make_config(args.set, args.preset)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    cfg.threads = torch.get_num_threads()  # recorded: the weights' bytes depend on it (config.json, the card)
    out = Path(args.out)
    accelerator = Accelerator(cpu=not torch.cuda.is_available(), mixed_precision="no")
    world, rank = accelerator.num_processes, accelerator.process_index
    micro = cfg.batch_size // world
    if micro * world != cfg.batch_size:
        raise SystemExit(f"batch_size {cfg.batch_size} is not divisible by {world} processes")
    reader = SplitReader(args.train_data)
    rows = list(reader.rows())
    train_idx, val_idx = split_rows(len(rows), cfg.train_rows, cfg.val_rows)
    val = [rows[i] for i in val_idx]
    clips, render_s = _training_clips(cfg, [rows[i] for i in train_idx], int(reader.manifest["frames"]),
                                      accelerator.is_main_process)  # uint8 (N, T, 3, r, r), seconds
    if accelerator.is_main_process:
        write_run_files(out, cfg, reader.manifest)

    torch.manual_seed(cfg.seed)
    model = make_model(cfg)
    if cfg.init:
        model.load_state_dict(load_file(cfg.init))
    ema = copy.deepcopy(model).requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(cfg, s))
    model, opt, sched = accelerator.prepare(model, opt, sched)
    ema.to(accelerator.device)
    counter = Counter()
    stream = iter(StreamSampler(clips.shape[0] * (clips.shape[1] - cfg.context), micro, rank, world, cfg.seed))
    history: list[dict] = []
    params = sum(p.numel() for p in ema.parameters())
    train_s = 0.0
    model.train()
    while counter.step < cfg.steps:
        tic = time.perf_counter()
        idx = torch.tensor([next(stream) for _ in range(micro)])
        dev = accelerator.device
        xt, context, t, target, last = (x.to(dev) for x in training_batch(cfg, clips, idx, counter.step, rank, world, ema))
        loss = weighted_loss(model(xt, context, t), target, last, cfg.change_weight)
        accelerator.backward(loss)
        if cfg.grad_clip:
            accelerator.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        # EMA with warm-up: min(decay, (1 + step) / (10 + step)), so early snapshots are not the initial weights
        update_ema(ema, accelerator.unwrap_model(model), min(cfg.ema_decay, (1 + counter.step) / (10 + counter.step)))
        counter.step += 1
        train_s += time.perf_counter() - tic
        mean = accelerator.reduce(loss.detach(), reduction="mean").item()
        step = counter.step
        if accelerator.is_main_process and (step in (1, 5, 20) or step % cfg.log_every == 0):
            _say_progress(step, cfg.steps, mean, train_s)
        if accelerator.is_main_process and (step % cfg.log_every == 0 or step == cfg.steps):
            log(out, history, {"step": step, "loss": mean, "lr": sched.get_last_lr()[0], "train_s": round(train_s, 2),
                               "steps_per_s": round(step / train_s, 3)})
        if accelerator.is_main_process and (step % cfg.eval_every == 0 or step == cfg.steps):
            snapshot(out, ema, step)
            entry = {"step": step, "train_s": round(train_s, 2), "render_s": round(render_s, 2), "params": params,
                     "hardware": hardware(world)}  # the card's "trained on" (framear.sample.training_record)
            if val:
                tic = time.perf_counter()
                entry.update(validate_rows(ema, cfg, val, reader.manifest))
                entry["val_s"] = round(time.perf_counter() - tic, 2)
            log(out, history, entry)
            if "val/velocity_error" in entry:
                print(f"step {step}: loss {mean:.5f}, validation velocity error {entry['val/velocity_error']:.3f}, "
                      f"law within 10% {entry['val/law_within_10pct']:.2f}, untrackable {entry['val/untrackable']:.2f}, "
                      f"{step / train_s:.2f} steps/s", flush=True)
        accelerator.wait_for_everyone()
    accelerator.end_training()
    return history


if __name__ == "__main__":
    main()
