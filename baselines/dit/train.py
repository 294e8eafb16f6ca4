"""Train the video DiT baseline on a training split, with HF Accelerate.

    python -m phybench_baselines.dit.train --config tiny --train-data SPLIT --out RUN [--resume]
    accelerate launch -m phybench_baselines.dit.train --config paper --train-data SPLIT --out RUN

Clips are rendered from the split's states on the fly.  The data order is a pure function
of the step (a seeded permutation per epoch, sharded by rank), and so is the noise, so a
resumed run repeats an uninterrupted one.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from phybench.data.split import SplitReader, render_row, sample_video

from .clips import build_model, clip_to_tensor, tensor_to_clip  # noqa: F401  re-exported: dit.train.clip_to_tensor
from .conditioning import CONDITIONS, build_vocab, condition_inputs, text_length
from .config import CONFIGS, TrainConfig, apply_overrides, resumed_config
from .diffusion import condition, make_scheduler, training_loss
from .latent import make_codec
from ..training import Counter, StreamSampler, hardware, update_ema  # noqa: F401  re-exported: dit.train.StreamSampler
from ..training import append_log, ema_decay, save_weights


# ------------------------------------------------------------------ helpers
class ClipDataset(torch.utils.data.Dataset):
    """A training split's rows in memory; each clip rendered on access at the model's size.

    States-only rows are rendered straight at `resolution` (exact pixel coverage, what
    area-downsampling the split's frames approximates) and only for the frames needed.
    With `windows`, item j is the window of `frames` consecutive frames starting at
    j % offsets of row j // offsets: a short model that rolls out sees every phase of
    the motion, not only its start.
    """

    def __init__(self, folder, frames: int, resolution: int, windows: bool = False):
        self.reader = SplitReader(folder)
        self.rows = list(self.reader.rows())
        self.frames, self.resolution = frames, resolution
        total = int(self.reader.manifest["frames"])
        if frames > total:
            raise ValueError(f"the model's {frames} frames exceed the split's {total}")
        self.offsets = total - frames + 1 if windows else 1
        self.extra: torch.Tensor | None = None  # per-row state vectors or token ids (`set_condition`)

    def conditions(self) -> tuple[list[dict], list[str]]:
        """(states, prompts) of every row at its last condition frame (`phybench.data.conditions`)."""
        from phybench.data.conditions import condition_state
        from phybench.tasks.family import family_text

        spec = self.reader.spec
        states = []
        for row in self.rows:
            if row.get("positions") is None:
                raise ValueError("a parameter-only training split has no states: it cannot train a state- "
                                 "or text-conditioned DiT")
            states.append(condition_state(spec, row))
        return states, [family_text(spec, s) for s in states]

    def set_condition(self, extra: torch.Tensor) -> None:
        """From now on item j is (clip, extra[row of j]): every window of a clip shares its row's condition."""
        assert len(extra) == len(self.rows)
        self.extra = extra

    def __len__(self):
        return len(self.rows) * self.offsets

    def __getitem__(self, j):
        clip = self._clip(j)
        return clip if self.extra is None else (clip, self.extra[j // self.offsets])

    def _clip(self, j):
        row, o = self.rows[j // self.offsets], j % self.offsets
        if "video" in row:  # an evaluation split: decode, cut, area-downsample
            return clip_to_tensor(self.reader.video(row)[o:], self.frames, self.resolution)
        window = slice(o, o + self.frames)
        if row.get("positions") is None:  # a parameter-only row (combinatorial): simulate, then render
            video = sample_video(self.reader.plan, int(row["index"]), window, self.resolution)
        else:
            video = render_row(row, self.resolution, window)  # uint8 (frames, r, r, 3)
        return torch.from_numpy(video).permute(3, 0, 1, 2).float() / 127.5 - 1  # (3, frames, r, r)


class Clock:
    """Wall time of the training loop: the fixed-time budget (`max_seconds`) and the throughput record.

    The first step (CUDA context, kernel selection, torch.compile, loader start-up) is timed
    apart, so steps/s is the steady rate; the budget counts it.  Every process stops at the
    same step: the first whose clock runs out stops all (a reduce of the flags).
    """

    def __init__(self, budget: float | None, accelerator):
        self.budget, self.accelerator = budget, accelerator
        self.t0 = time.monotonic()
        self.first: float | None = None

    def tick(self) -> bool:
        """Called after each step; True when the budget is spent."""
        now = self.t_last = time.monotonic()
        if self.first is None:
            self.first, self.t1 = now - self.t0, now
        if self.budget is None:
            return False
        over = torch.tensor(float(now - self.t0 > self.budget), device=self.accelerator.device)
        return bool(self.accelerator.reduce(over, reduction="sum").item() > 0)

    def write(self, path: Path, steps: int, batch_size: int) -> None:
        """steps, seconds and clips/s of this process's run (timings: not part of the run's deterministic bytes)."""
        steady = self.t_last - self.t1 if self.first is not None else 0.0  # steps 2..n, no saving or evaluation
        record = {"steps": steps, "batch_size": batch_size, "first_step_s": round(self.first or 0.0, 3),
                  "steady_s": round(steady, 3),
                  "steps_per_s": round((steps - 1) / steady, 4) if steps > 1 and steady > 0 else None,
                  "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
                  "hardware": hardware(self.accelerator.num_processes)}
        path.write_text(json.dumps(record, indent=2) + "\n")


def prepare_condition(cfg: TrainConfig, data: ClipDataset) -> None:
    """Fix a conditioned config's encoder sizes from the training split (state bodies, text
    vocabulary and length) and give the dataset each row's condition input."""
    if cfg.condition is None:
        return
    if cfg.condition not in CONDITIONS:
        raise SystemExit(f"condition must be one of {', '.join(CONDITIONS)} or None, got {cfg.condition!r}")
    states, texts = data.conditions()
    cfg.state_bodies = max(len(s["bodies"]) for s in states)
    cfg.text_vocab = build_vocab(texts) if cfg.condition == "text" else None
    cfg.text_len = text_length(texts) if cfg.condition == "text" else 0
    extra = condition_inputs(cfg, states, texts)  # (rows, S) states or (rows, L) token ids
    assert extra is not None  # a conditioned config has an input per row
    data.set_condition(extra)


def checkpoints(out: Path) -> list[Path]:
    return sorted((out / "checkpoints").glob("step_*"))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", choices=sorted(CONFIGS), default="tiny")
    p.add_argument("--train-data", required=True, help="a training split folder")
    p.add_argument("--out", required=True, help="run folder: checkpoints, weights, logs")
    p.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in --out, with the run's saved config.json "
                   "(--config is not read; --set may change only run-length fields: steps, ckpt_every, ...)")
    p.add_argument("--eval-data", help="an evaluation split: velocity error of the EMA model every eval_every steps")
    p.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override config fields")
    return p.parse_args(argv)


def make_config(name: str, overrides: list[str]) -> TrainConfig:
    return apply_overrides(CONFIGS[name](), overrides)


def run_config(args: argparse.Namespace) -> TrainConfig:
    """The run's config: `--config` + `--set`, or, resuming from a checkpoint, the run folder's saved
    config.json with only run-length fields changed (`resumed_config`) and the same training split."""
    out = Path(args.out)
    if not (args.resume and checkpoints(out)):
        return make_config(args.config, args.set)
    if not (out / "config.json").is_file():
        raise SystemExit(f"{out} has checkpoints but no config.json: it cannot be resumed")
    cfg = resumed_config(json.loads((out / "config.json").read_text()), args.set)
    saved_split = out / "train_split.json"
    if saved_split.is_file():
        was = json.loads(saved_split.read_text()).get("split_hash")
        now = SplitReader(args.train_data).manifest.get("split_hash")
        if was != now:
            raise SystemExit(f"--resume with another training split (split_hash {now}, the run trained on {was})")
    return cfg


# ------------------------------------------------------------------ main and its parts
@dataclass
class Parts:
    """What a training step touches, built once (`build_parts`) and resumed from a checkpoint."""

    accelerator: Any
    model: Any  # the prepared (maybe compiled, maybe DDP-wrapped) DiT
    ema: torch.nn.Module  # float32 EMA of the weights: what is saved and sampled
    opt: torch.optim.Optimizer
    sched_lr: Any
    codec: Any  # pixels <-> the space the model diffuses (`latent.make_codec`)
    counter: Counter


def make_accelerator(cfg: TrainConfig, out: Path) -> tuple[Any, str | None]:
    """(the Accelerator, the tracker it logs to: tensorboard when installed, else none)."""
    from accelerate import Accelerator
    from accelerate.utils import ProjectConfiguration

    try:
        import tensorboard  # noqa: F401
        log_with: str | None = "tensorboard"
    except ImportError:
        log_with = None
    accelerator = Accelerator(
        cpu=not torch.cuda.is_available(),  # so that torchrun / accelerate launch on CPUs goes multi-process (gloo)
        mixed_precision="bf16" if torch.cuda.is_available() else "no",
        gradient_accumulation_steps=cfg.grad_accum, log_with=log_with,
        project_config=ProjectConfiguration(project_dir=str(out), logging_dir=str(out / "logs")))
    return accelerator, log_with


def write_run_files(out: Path, cfg: TrainConfig, args: argparse.Namespace, codec) -> None:
    """The run folder's config.json, training split identity and autoencoder hash (main process),
    refusing a folder with checkpoints unless resuming."""
    out.mkdir(parents=True, exist_ok=True)
    if not args.resume and checkpoints(out):
        raise SystemExit(f"{out} has checkpoints: pass --resume or choose a new --out")
    (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2) + "\n")
    train_manifest = SplitReader(args.train_data).manifest
    (out / "train_split.json").write_text(json.dumps(
        {k: train_manifest[k] for k in ("task", "split", "split_hash", "num_samples") if k in train_manifest},
        indent=2) + "\n")  # the sampler checks the task; the leaderboard plots train_size
    if codec.sha256:  # the sampler refuses a different autoencoder than the one trained with
        (out / "autoencoder.sha256").write_text(codec.sha256 + "\n")


def build_parts(cfg: TrainConfig, codec, accelerator, resume_from: Path | None) -> Parts:
    """The seeded model, its EMA, the optimiser and LR schedule, prepared; loaded from `resume_from`."""
    torch.manual_seed(cfg.seed)
    model = build_model(cfg, codec)
    ema = copy.deepcopy(model).float().requires_grad_(False)
    cuda = accelerator.device.type == "cuda"
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True  # fp32 leftovers of bf16 autocast on tensor cores
        torch.backends.cudnn.allow_tf32 = True
    # fused AdamW: one kernel for the whole update on GPU (the CPU build has no fused path here)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, fused=cuda)
    net: Any = torch.compile(model) if cfg.compile else model  # compiled: a callable wrapping the DiT
    sched_lr = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, cfg.warmup_steps)))
    net, opt, sched_lr = accelerator.prepare(net, opt, sched_lr)
    ema.to(accelerator.device)
    counter = Counter()
    accelerator.register_for_checkpointing(ema, counter)
    if resume_from is not None:
        accelerator.load_state(str(resume_from))
    return Parts(accelerator, net, ema, opt, sched_lr, codec, counter)


def train_step(cfg: TrainConfig, p: Parts, loader, scheduler, gen: torch.Generator, micro: int) -> torch.Tensor:
    """One optimiser step over `grad_accum` micro-batches; this process's mean loss (a 0-d tensor)."""
    accelerator, world, rank = p.accelerator, p.accelerator.num_processes, p.accelerator.process_index
    total = torch.zeros((), device=accelerator.device)
    for a in range(cfg.grad_accum):
        batch = next(loader)
        clip, y = (batch, None) if cfg.condition is None else (batch[0], batch[1].to(accelerator.device))
        clip = clip.to(accelerator.device)  # (n, 3, T, r, r) pixels in [-1, 1]
        padded, mask_px = condition(clip, cfg.condition_frames, cfg.cond_fill)  # padded clip, binary mask
        x0 = p.codec.encode(clip)  # (n, C, T', h, w): what the model diffuses
        cond, mask = p.codec.condition(padded, mask_px)
        # noise and timesteps of the whole global micro-batch, this rank's share taken:
        # a function of (seed, step, accumulation index) only, whatever the process count
        gen.manual_seed((cfg.seed * 1_000_003 + p.counter.step) * cfg.grad_accum + a)
        share = slice(rank * micro, (rank + 1) * micro)
        noise = torch.randn((world * micro, *x0.shape[1:]), generator=gen, device=gen.device)[share]
        u = torch.rand(world * micro, generator=gen, device=gen.device)[share]
        with accelerator.accumulate(p.model), accelerator.autocast():
            loss = training_loss(p.model, x0, cond, mask, cfg.objective, scheduler=scheduler,
                                 noise=noise.to(x0.dtype), u=u, y=y, change_weight=cfg.change_weight,
                                 prediction=cfg.prediction)
            accelerator.backward(loss)
            if accelerator.sync_gradients and cfg.grad_clip:
                accelerator.clip_grad_norm_(p.model.parameters(), cfg.grad_clip)
            p.opt.step()
            p.sched_lr.step()
            p.opt.zero_grad(set_to_none=True)
        total += loss.detach() / cfg.grad_accum
    return total


def save_checkpoint(cfg: TrainConfig, p: Parts, out: Path) -> None:
    """An Accelerate checkpoint (all processes) and the EMA weights; older checkpoints deleted."""
    p.accelerator.wait_for_everyone()
    p.accelerator.save_state(str(out / "checkpoints" / f"step_{p.counter.step:07d}"))
    if p.accelerator.is_main_process:
        save_weights(p.ema, out / "ema.safetensors", p.counter.step)
        for old in checkpoints(out)[:-cfg.keep_checkpoints]:
            shutil.rmtree(old)


def evaluate_now(cfg: TrainConfig, p: Parts, out: Path, eval_data: str, bar) -> None:
    """The EMA model's velocity error on `eval_samples` clips of the evaluation split (main process), logged."""
    if p.accelerator.is_main_process:
        from .sample import evaluate

        metrics = evaluate(p.ema, p.codec, cfg, eval_data, cfg.eval_samples, cfg.sample_steps, p.accelerator.device)
        p.accelerator.log(metrics, step=p.counter.step)
        append_log(out / "log.jsonl", {"step": p.counter.step, **metrics})
        bar.write(f"step {p.counter.step}: velocity error {metrics['eval/velocity_error']:.3f} on "
                  f"{cfg.eval_samples} clips, untrackable {100 * metrics['eval/untrackable']:.0f}%")
    p.accelerator.wait_for_everyone()


def main(argv=None) -> list[tuple[int, float]]:
    args = parse_args(argv)
    cfg = run_config(args)
    out = Path(args.out)
    accelerator, log_with = make_accelerator(cfg, out)
    world, rank = accelerator.num_processes, accelerator.process_index
    micro = cfg.batch_size // (world * cfg.grad_accum)
    if micro * world * cfg.grad_accum != cfg.batch_size:
        raise SystemExit(f"batch_size {cfg.batch_size} is not divisible by processes x grad_accum")
    try:
        codec = make_codec(cfg.vae, accelerator.device)
    except FileNotFoundError as exc:
        raise SystemExit(str(exc)) from None
    data = ClipDataset(args.train_data, cfg.frames, cfg.resolution, windows=cfg.windows)
    prepare_condition(cfg, data)  # a conditioned config's encoder sizes come from the training prompts
    if accelerator.is_main_process:
        write_run_files(out, cfg, args, codec)
    if log_with:
        accelerator.init_trackers("dit", config={k: v for k, v in cfg.to_dict().items() if v is not None})

    p = build_parts(cfg, codec, accelerator, checkpoints(out)[-1] if args.resume and checkpoints(out) else None)
    start = p.counter.step
    sampler = StreamSampler(len(data), micro, rank, world, cfg.seed, start=start * cfg.grad_accum)
    loader = iter(torch.utils.data.DataLoader(data, batch_size=micro, sampler=sampler,
                                              num_workers=cfg.num_workers, drop_last=True))
    scheduler = make_scheduler(cfg.num_train_timesteps)
    gen = torch.Generator(device=accelerator.device)
    history: list[tuple[int, float]] = []
    bar = tqdm(total=cfg.steps, initial=start, disable=not accelerator.is_local_main_process, desc="train")
    p.model.train()
    clock = Clock(cfg.max_seconds, accelerator)
    while p.counter.step < cfg.steps:
        total = train_step(cfg, p, loader, scheduler, gen, micro)
        update_ema(p.ema, accelerator.unwrap_model(p.model), ema_decay(cfg.ema_decay, p.counter.step, cfg.ema_warmup))
        p.counter.step += 1
        step, mean = p.counter.step, accelerator.reduce(total, reduction="mean").item()
        history.append((step, mean))
        bar.update(1)
        bar.set_postfix(loss=f"{mean:.4f}")
        last = clock.tick() or step == cfg.steps  # the time budget ends the run like its last step
        if step % cfg.log_every == 0 or last:
            accelerator.log({"loss": mean, "lr": p.sched_lr.get_last_lr()[0]}, step=step)
            if accelerator.is_main_process:
                append_log(out / "log.jsonl", {"step": step, "loss": mean, "processes": world})
        if step % cfg.ckpt_every == 0 or last:
            save_checkpoint(cfg, p, out)
        if args.eval_data and cfg.eval_every and (step % cfg.eval_every == 0 or last):
            evaluate_now(cfg, p, out, args.eval_data, bar)
        if last:
            break
    bar.close()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        clock.write(out / "throughput.json", p.counter.step - start, cfg.batch_size)
    accelerator.end_training()
    return history


if __name__ == "__main__":
    main()
