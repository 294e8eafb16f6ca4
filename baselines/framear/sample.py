"""Roll out the frame-autoregressive model and write a submission.

    python -m phybench_baselines.framear.sample --checkpoint RUN --data SPLIT_DIR --out SUB

or, as a `phybench run` model:

    phybench run --model phybench_baselines.framear.sample:FrameAR --model-args checkpoint=RUN \
        --tasks uniform --protocol lite --out runs/framear

Each frame is generated from the last `context` frames (the condition frames first, then the
model's own, kept as floats at the model's resolution) by `sample_steps` Euler steps of the
rectified flow from Gaussian noise; frames are upsampled bilinearly to the split's size and the
condition frames are copied in as given.  Each video's noise comes from its own generator,
seeded from (seed, that video's condition frames) (`phybench_baselines.seeding`), so a video
does not depend on its batch, the batch size, the order or resumption, and `phybench run` with
`FrameAR` gives the same bytes as this command for the same checkpoint and seed.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from ..seeding import SAMPLE_THREADS, batch_noise, sampling_threads, video_generators
from .model import FrameNet
from .config import FrameConfig, make_model
from .frames import downsample, upsample
from phybench.data.split import SplitReader, render_row
from phybench.data.documents import Manifest, SplitRow


def load_run(run: Path, device: str = "cpu") -> tuple[FrameConfig, FrameNet]:
    """The run's config and EMA weights (safetensors: no pickle)."""
    from safetensors.torch import load_file

    run = Path(run)
    weights = run / "ema.safetensors" if run.is_dir() else run
    folder = weights.parent if weights.parent.name != "snapshots" else weights.parent.parent
    for p in (folder / "config.json", weights):
        if not p.is_file():
            raise FileNotFoundError(f"{p} is missing: not a finished framear run")
    cfg = FrameConfig(**json.loads((folder / "config.json").read_text()))
    model = make_model(cfg)
    model.load_state_dict(load_file(str(weights)))
    return cfg, model.to(device).eval()


def padded_context(frames: list[torch.Tensor], context: int) -> list[torch.Tensor]:
    """The last `context` frames, the first repeated in front where fewer exist (`pad_context`: as trained)."""
    last = frames[-context:]
    return [last[0]] * (context - len(last)) + last


@torch.inference_mode()
def rollout(model: FrameNet, cfg: FrameConfig, first: torch.Tensor, total: int,
            generator: torch.Generator | Sequence[torch.Generator], steps: int | None = None) -> torch.Tensor:
    """(N, c, 3, r, r) condition frames in [-1, 1] -> (N, total, 3, r, r): frame by frame.

    `generator`: one per video (sampling: a video's noise is its own) or one for the batch (the
    trainer's rollout training, whose stream is a function of (seed, step))."""
    steps = int(steps or cfg.sample_steps)
    frames = list(first.unbind(1))
    N = first.shape[0]
    grid = torch.linspace(1, 0, steps + 1)
    if len(frames) < cfg.context and not cfg.pad_context:
        raise ValueError(f"{len(frames)} condition frame(s) for a context of {cfg.context}: train with pad_context=true")
    while len(frames) < total:
        context = torch.stack(padded_context(frames, cfg.context), dim=1)
        x = batch_noise(frames[-1].shape, generator)
        for s, s_next in zip(grid[:-1], grid[1:]):
            x0 = model(x, context, s.expand(N))
            x = x0 + (s_next / s) * (x - x0)  # the straight path through (x0, x) at level s_next
        frames.append(x0.clamp(-1, 1))
    return torch.stack(frames[:total], dim=1)


def generate_videos(model, cfg: FrameConfig, condition: np.ndarray, num_frames: int, seed: int = 0,
                    steps: int | None = None) -> np.ndarray:
    """uint8 (B, c, H, W, 3) -> uint8 (B, num_frames, H, W, 3), the condition frames kept as given.

    Each video depends only on (model, seed, its own condition frames, steps): not on the other
    videos of the batch, the batch size or the thread count."""
    condition = np.asarray(condition)
    B, c, R = condition.shape[:3]
    # each video rolled out alone, from its own generator: a convolution's float sums depend on the
    # batch it runs in (1 grey level in a few pixels), so batching would leak into the bytes
    # (on SAMPLE_THREADS threads: the bytes then do not depend on the machine's thread count either)
    with sampling_threads():
        out = np.stack([upsample(rollout(model, cfg, downsample(v, cfg.resolution)[None], num_frames, [g], steps)[0], R)
                        for v, g in zip(condition, video_generators(seed, condition), strict=True)])
    out[:, :c] = condition
    return np.ascontiguousarray(out)


def validate_rows(model, cfg: FrameConfig, rows: list[SplitRow], manifest: Manifest, seed: int = 0,
                  batch: int = 64) -> dict[str, float]:
    """Velocity error, untrackable share and learned-law fit on held-out training rows (pixels parsed as the scorer does)."""
    from phybench.scoring.run.score import score_sample

    was_training = model.training
    model.eval()
    T, c, R = int(manifest["frames"]), int(manifest["condition_frames"]), int(manifest["resolution"])
    errors, ranked, within, untrackable, wrong = [], [], [], 0, []
    for i in range(0, len(rows), batch):
        chunk = rows[i:i + batch]
        cond = np.stack([render_row(row, R, slice(0, c)) for row in chunk])
        videos = generate_videos(model, cfg, cond, T, seed)
        for row, video in zip(chunk, videos, strict=True):
            if "outcome" in row:  # the ambiguity probe's rows: no object reader, the outcome is what counts
                wrong.append(outcome_wrong(row, video, float(manifest["world_size"])))
                continue
            d = score_sample(row, video, None, manifest, ("velocity_error", "law_error", "velocity_error_ranked"))
            if d["excluded"]:
                continue
            if d["velocity_error_ranked"] == d["velocity_error_ranked"]:  # NaN: not parsed at all
                ranked.append(d["velocity_error_ranked"])
            if d["untrackable"]:
                untrackable += 1
                continue
            errors.append(d["velocity_error"])
            within.append(law_within(d.get("law"), 0.1))
    model.train(was_training)
    if wrong:
        return {"val/outcome_wrong": float(np.mean(wrong))}
    return {"val/velocity_error": float(np.mean(errors)) if errors else float("nan"),
            "val/untrackable": untrackable / max(1, len(rows)),
            # the board's ranked column over the same videos: a lost ball costs (what selection reads)
            "val/velocity_error_ranked": float(np.mean(ranked)) if ranked else float("nan"),
            "val/law_within_10pct": float(np.mean(within)) if within else 0.0}


def outcome_wrong(row: SplitRow, video: np.ndarray, world_size: float) -> bool:
    """The outcome read from the video's pixels (the ambiguity probe's reader) is not the simulator's
    (a lost ball is wrong): the validation score of a run trained on an ambiguity split."""
    from phybench.data.documents import dof_value
    from phybench.probes.ambiguity import read_outcome

    truth = "below" if float(dof_value(row, "outcome")) > 0.5 else "above"
    return read_outcome(video, row, world_size)[0] != truth


def fitted_speed(fit: dict | None) -> float:
    """|(velocity_x, velocity_y)| of a free-flight fit; NaN where there is none (a samples sidecar writes null)."""
    fit = fit or {}
    vx, vy = (fit.get(k) for k in ("velocity_x", "velocity_y"))
    return float("nan") if vx is None or vy is None else float(np.hypot(float(vx), float(vy)))


def law_within(law: dict | None, tol: float) -> bool:
    """The fitted speed (free flight: |(velocity_x, velocity_y)| at t = 0) within tol of the truth's own fit."""
    if not law or not law.get("fit") or not law.get("truth"):
        return False
    fs, ts = fitted_speed(law["fit"]), fitted_speed(law["truth"])
    return bool(np.isfinite(fs) and np.isfinite(ts) and ts > 0 and abs(fs / ts - 1) <= tol)


def snapshot_step(weights: Path) -> int | None:
    """The training step a framear EMA snapshot was saved at (its safetensors metadata)."""
    from safetensors import safe_open

    with safe_open(str(weights), "pt") as f:
        step = (f.metadata() or {}).get("step")
    return int(step) if step else None


def run_folder(weights: Path) -> Path:
    """The run folder of a run's weights file (ema.safetensors or snapshots/ema_*.safetensors)."""
    return weights.parent.parent if weights.parent.name == "snapshots" else weights.parent


def training_record(weights: Path, hardware: str | None = None, depth: int = 0) -> dict:
    """The card's training facts for these weights, from their run folder: the training split's
    hash, the config, the steps and training-loop seconds up to the snapshot, and the hardware
    (the trainer's validation log).  A run started from another run's snapshot (`init=`) adds
    that run's steps and seconds, so a fine-tuned model states its whole training.  `hardware`
    stands in where no log entry names it (runs trained before the trainer recorded it)."""
    folder, step = run_folder(weights), snapshot_step(weights)
    cfg = json.loads((folder / "config.json").read_text())
    out: dict = {"train_config": " ".join(f"{k}={v}" for k, v in cfg.items())[:2000]}
    trained_file = folder / "train_split.json"
    trained = json.loads(trained_file.read_text()) if trained_file.is_file() else {}
    if isinstance(trained.get("split_hash"), str):
        out["train_split_hash"] = trained["split_hash"]
    log_file = folder / "log.jsonl"
    entries = [json.loads(line) for line in log_file.read_text().splitlines() if line.strip()] if log_file.is_file() else []
    at = [e for e in entries if e.get("step") == step and "train_s" in e]
    if step is None or not at:
        return out
    steps, seconds = step, float(at[-1]["train_s"])
    logged = at[-1].get("hardware")
    if isinstance(logged, str) or hardware:
        out["hardware"] = (logged if isinstance(logged, str) else str(hardware))[:200]
    init = Path(str(cfg.get("init") or ""))
    if str(cfg.get("init") or "") and init.is_file() and depth < 8:
        before = training_record(init, hardware, depth + 1)
        if "train_steps" not in before:
            return out  # the start's training is unknown: no total is claimed
        steps, seconds = steps + before["train_steps"], seconds + before["train_seconds"]
        if "hardware" not in out and "hardware" in before:
            out["hardware"] = before["hardware"]
    out.update(train_steps=int(steps), train_seconds=round(seconds, 1))
    return out


def sampler_card(weights: Path, cfg: FrameConfig, model: FrameNet, steps: int | None, seed: int,
                 hardware: str | None = None) -> dict:
    """What a submission of these weights says of its model: ``{"model": ..., "sampler": ..., "seeds": ...}``.

    One function for both paths (this module's command and `phybench run` with `FrameAR`), so the
    same checkpoint is described the same way whichever wrote it.  The sampler names the torch
    thread count it samples on (`seeding.SAMPLE_THREADS`): float sums, and so a few pixels, depend on it."""
    from phybench.io import file_sha256

    folder, step = run_folder(weights), snapshot_step(weights)
    trained = json.loads((folder / "train_split.json").read_text()) if (folder / "train_split.json").is_file() else {}
    card: dict = {"family": "framear", "size": f"w{cfg.width}", "params": sum(p.numel() for p in model.parameters()),
                  "checkpoint_sha256": file_sha256(weights)}
    if step:
        card["version"] = f"step {int(step)}"  # the EMA snapshot's training step
    if trained.get("split"):
        card["train_split"] = str(trained["split"])
    if "num_samples" in trained:
        card["train_size"] = int(trained.get("rows_trained", trained["num_samples"]))
    card.update(training_record(weights, hardware=hardware))
    sampler = {"objective": "flow", "steps": int(steps or cfg.sample_steps), "space": f"pixels {cfg.resolution} px",
               "rollout": f"frame by frame, {cfg.context} frames of context"
                          + (" (before frame 0: frame 0 repeated)" if cfg.pad_context else ""),
               "noise": "per video: sha256(seed, its condition frames)", "threads": SAMPLE_THREADS}
    return {"model": card, "sampler": sampler, "seeds": [int(seed)]}


def weights_file(checkpoint: Path) -> Path:
    """The weights a checkpoint argument names: a run folder's ema.safetensors, or the file itself."""
    return checkpoint / "ema.safetensors" if checkpoint.is_dir() else checkpoint


class FrameAR:
    """A `phybench run` model: generate(condition, num_frames), and the card `run` writes.

    Through `phybench run` it is the same model as this module's command: named `name`
    (framear-flow), described by `sampler_card`, and (per-video noise) the same bytes for the same
    checkpoint and seed."""

    def __init__(self, checkpoint: str, steps: int | None = None, seed: int = 0, name: str = "framear-flow") -> None:
        self.weights = weights_file(Path(checkpoint))
        self.cfg, self.model = load_run(Path(checkpoint))
        self.steps, self.seed, self.name = steps, int(seed), str(name)

    def generate(self, condition: np.ndarray, num_frames: int) -> np.ndarray:
        return generate_videos(self.model, self.cfg, condition, num_frames, self.seed, self.steps)

    def submission_card(self) -> dict:
        """`phybench run`'s hook: the model's name and card, its sampler and seeds (`phybench.pipeline.model_card`)."""
        card = sampler_card(self.weights, self.cfg, self.model, self.steps, self.seed)
        card["model"] = {"name": self.name, **card["model"]}
        return card


def main(argv=None) -> Path:
    from phybench.submission import submission_meta, write_submission

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", required=True, help="a run folder of phybench_baselines.framear.train, or a "
                                                        "snapshot's .safetensors in it")
    p.add_argument("--data", required=True, help="an evaluation split folder")
    p.add_argument("--out", required=True, help="the submission folder to write (must not exist)")
    p.add_argument("--batch-size", type=int, default=50)
    p.add_argument("--steps", type=int, default=None, help="sampler steps (default: the config's)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=None, help="only the first N samples")
    p.add_argument("--format", default="npz", choices=["npy", "npz", "png"])
    p.add_argument("--name", default="framear-flow", help="model name in the submission")
    p.add_argument("--hardware", help="what the run trained on, for a run whose log does not say (trained before the "
                                      "trainer recorded it), e.g. 'CPU, 1 process(es) x 2 threads'")
    p.add_argument("--cross-task", action="store_true", help="sample a split of another task than the run's (a "
                                                             "section-5 probe split; the model keeps its train_split)")
    args = p.parse_args(argv)

    path = Path(args.checkpoint)
    cfg, model = load_run(path)
    weights = weights_file(path)
    folder = run_folder(weights)
    reader = SplitReader(args.data)
    trained = json.loads((folder / "train_split.json").read_text()) if (folder / "train_split.json").is_file() else {}
    if trained.get("task") not in (None, reader.manifest["task"]) and not args.cross_task:
        raise ValueError(f"{folder} was trained on {trained['task']!r}, not {reader.manifest['task']!r}")
    rows = list(reader.rows(columns=["sample_id", "video"]))[:args.limit]
    c, T = int(reader.manifest["condition_frames"]), int(reader.manifest["frames"])

    def videos():
        for i in range(0, len(rows), args.batch_size):
            batch = rows[i:i + args.batch_size]
            cond = np.stack([reader.video(row)[:c] for row in batch])
            done = generate_videos(model, cfg, cond, T, args.seed, args.steps)
            yield from ((row["sample_id"], v) for row, v in zip(batch, done, strict=True))

    card = sampler_card(weights, cfg, model, args.steps, args.seed, hardware=args.hardware)
    meta = submission_meta(reader.manifest, args.name, sampler=card["sampler"], seeds=card["seeds"])
    meta["model"].update(card["model"])
    return write_submission(args.out, meta, videos(), fmt=args.format)


if __name__ == "__main__":
    main()
