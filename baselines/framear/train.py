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
from pathlib import Path

import numpy as np
import torch

from ..training import Counter, StreamSampler, append_log, ema_decay, hardware, save_weights, update_ema
from .config import PRESETS, FrameConfig, config_help, make_config, make_model  # noqa: F401  re-exported
from .frames import LazyClips, downsample, render_clips, upsample  # noqa: F401  re-exported
from .model import FrameNet
from phybench.data.split import SplitReader
from phybench.data.documents import Manifest, SplitRow


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


def self_generated_context(ema: FrameNet, cfg: FrameConfig, clips: torch.Tensor | LazyClips, r_i: torch.Tensor,
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


def first_target(cfg: FrameConfig) -> int:
    """The first frame a clip trains as a target: `context` (a full real context), or 1 with `pad_context`
    (frame 0 repeated before it: a task that gives one condition frame is sampled from such a context)."""
    return 1 if cfg.pad_context else cfg.context


def lr_factor(cfg: FrameConfig, step: int) -> float:
    if step < cfg.warmup_steps:
        return (step + 1) / cfg.warmup_steps
    p = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + np.cos(np.pi * min(1.0, p)))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=config_help(),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train-data", required=True, help="a training split folder")
    p.add_argument("--out", required=True, help="run folder: config, log, EMA weights (safetensors)")
    p.add_argument("--preset", choices=sorted(PRESETS), help="a named config to start from (tiny: about a CPU-minute)")
    p.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override config fields (listed below)")
    return p.parse_args(argv)


def write_run_files(out: Path, cfg: FrameConfig, manifest: Manifest) -> None:
    """The run folder's config and the training split's identity (refusing a folder that holds a run)."""
    out.mkdir(parents=True, exist_ok=True)
    if (out / "ema.safetensors").exists():
        raise SystemExit(f"{out} already holds a run: choose a new --out")
    (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2) + "\n")
    m = manifest
    (out / "train_split.json").write_text(json.dumps(
        {**{k: m[k] for k in ("task", "split", "split_hash", "num_samples") if k in m},
         "rows_trained": cfg.train_rows, "rows_validation": cfg.val_rows}, indent=2) + "\n")


def training_batch(cfg: FrameConfig, clips: torch.Tensor | LazyClips, idx: torch.Tensor, step: int, rank: int, world: int,
                   ema: FrameNet) -> tuple[torch.Tensor, ...]:
    """(x_t, context, t, target, last) for the stream indices `idx` of this rank: noise and levels drawn
    for the global batch from (seed, step) and sliced, so a fixed seed gives the same batch on any world size."""
    micro = len(idx)
    first = first_target(cfg)
    per_clip = clips.shape[1] - first  # targets k = first .. T-1 of every clip
    r_i, k = idx // per_clip, idx % per_clip + first
    target = clips[r_i, k].float() / 127.5 - 1  # (n, 3, r, r)
    before = (k[:, None] + torch.arange(-cfg.context, 0)).clamp(min=0)  # pad_context: frame 0 stands in before it
    context = clips[r_i[:, None], before].float() / 127.5 - 1  # (n, c, 3, r, r)
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
    (out / "snapshots").mkdir(exist_ok=True)
    save_weights(ema, out / "snapshots" / f"ema_{step:07d}.safetensors", step)
    save_weights(ema, out / "ema.safetensors", step)


def log(out: Path, history: list[dict], entry: dict) -> None:
    history.append(entry)
    append_log(out / "log.jsonl", entry)


def _training_clips(cfg: FrameConfig, rows: list[SplitRow], frames: int, say: bool) -> tuple[torch.Tensor | LazyClips, float]:
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


def validate_into(entry: dict, model: torch.nn.Module, cfg: FrameConfig, val: list, manifest: Manifest) -> None:
    """A snapshot's log entry gains its validation (`sample.validate_rows`) and the seconds it took;
    the one place both the training loop and `framear.validate` (after the run) compute it."""
    from .sample import validate_rows

    tic = time.perf_counter()
    entry.update(validate_rows(model, cfg, val, manifest))
    entry["val_s"] = round(time.perf_counter() - tic, 2)


def _say_validation(entry: dict, loss: float, train_s: float) -> None:
    """The validation line of a logged snapshot entry (velocity and law; the outcome where the task has one)."""
    step = entry["step"]
    if "val/velocity_error" in entry:
        print(f"step {step}: loss {loss:.5f}, validation velocity error {entry['val/velocity_error']:.3f}, "
              f"law within 10% {entry['val/law_within_10pct']:.2f}, untrackable {entry['val/untrackable']:.2f}, "
              f"{step / train_s:.2f} steps/s", flush=True)
    if "val/outcome_wrong" in entry:
        print(f"step {step}: loss {loss:.5f}, validation outcome wrong {entry['val/outcome_wrong']:.3f}", flush=True)


def main(argv=None) -> list[dict]:
    from accelerate import Accelerator
    from safetensors.torch import load_file

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
    stream = iter(StreamSampler(clips.shape[0] * (clips.shape[1] - first_target(cfg)), micro, rank, world, cfg.seed))
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
        update_ema(ema, accelerator.unwrap_model(model), ema_decay(cfg.ema_decay, counter.step, warmup=True))
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
                validate_into(entry, ema, cfg, val, reader.manifest)
            log(out, history, entry)
            _say_validation(entry, mean, train_s)
        accelerator.wait_for_everyone()
    accelerator.end_training()
    return history


if __name__ == "__main__":
    main()
