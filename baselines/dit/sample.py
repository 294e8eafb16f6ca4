"""Sample an evaluation split with a trained DiT and write a submission.

    python -m phybench_baselines.dit.sample --checkpoint RUN --data SPLIT_DIR --out SUB

The model's clips are generated at its own length and resolution; shorter models roll
out autoregressively (each window conditioned on the last frames generated), and clips
are upsampled to the split's resolution.  The condition frames are copied from the split.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from phybench.data.documents import SplitRow
from phybench.data.split import SplitReader
from phybench.io import file_sha256
from phybench.submission import submission_meta, write_submission

from .clips import build_model, clip_to_tensor, tensor_to_clip
from .conditioning import condition_inputs
from .config import TrainConfig
from .diffusion import condition, make_scheduler, sample
from .latent import PixelCodec, make_codec
from ..seeding import SAMPLE_THREADS, sampling_threads, video_generators


def load_run(run: Path, device) -> tuple[TrainConfig, torch.nn.Module, PixelCodec]:
    """The run's config, its EMA weights (safetensors) and the codec it was trained with."""
    from safetensors.torch import load_file

    for name in ("config.json", "ema.safetensors"):
        if not (run / name).is_file():
            raise FileNotFoundError(f"{run} is not a finished DiT run: {name} is missing "
                                    "(train with `python -m phybench_baselines.dit.train ... --out RUN`)")
    cfg = TrainConfig(**json.loads((run / "config.json").read_text()))
    codec = make_codec(cfg.vae, device)
    pinned = run / "autoencoder.sha256"
    if codec.sha256 and pinned.is_file() and pinned.read_text().strip() != codec.sha256:
        raise ValueError(f"the autoencoder at {cfg.vae} is not the one {run} was trained with "
                         f"(sha256 {codec.sha256[:12]}, expected {pinned.read_text().strip()[:12]})")
    model = build_model(cfg, codec)
    model.load_state_dict(load_file(str(run / "ema.safetensors")))
    return cfg, model.to(device).eval(), codec


def rollout(model, codec: PixelCodec, cfg: TrainConfig, first: torch.Tensor, total: int, steps: int,
            generator, y: torch.Tensor | None = None) -> torch.Tensor:
    """(N, 3, c, r, r) condition frames to (N, 3, total, r, r) pixels, by windows of cfg.frames.

    Each window is conditioned on the last c frames so far (zero-padded, with the mask),
    generated in the codec's space and decoded; a full-length model needs one window.
    y (a state- or text-conditioned model's input, `conditioning.condition_inputs`) is the
    same for every window, as in training.
    """
    N, _, c, r, _ = first.shape
    clip = first
    scheduler = make_scheduler(cfg.num_train_timesteps)
    while clip.shape[2] < total:
        given = torch.zeros(N, 3, cfg.frames, r, r, device=first.device)
        given[:, :, :c] = clip[:, :, -c:]
        padded, mask = condition(given, c, cfg.cond_fill)  # as in training: zeros or the last given frame
        cond, mask_z = codec.condition(padded, mask)  # in model space
        z = sample(model, cond, mask_z, steps, cfg.objective, generator, scheduler, y=y,
                   prediction=cfg.prediction)  # (N, C, T', h, w)
        window = codec.decode(z).float()  # (N, 3, F, r, r)
        clip = torch.cat([clip, window[:, :, c:]], dim=2)
    return clip[:, :, :total]


def rollout_videos(model, codec: PixelCodec, cfg: TrainConfig, first: torch.Tensor, total: int, steps: int,
                   generators: list[torch.Generator], y: torch.Tensor | None = None) -> torch.Tensor:
    """`rollout` with one generator per video (`phybench_baselines.seeding`).  On the CPU each video is
    rolled out alone: a layer's float sums depend on the batch it runs in, so batching would leak into
    the bytes; on an accelerator the batch runs together (throughput), and only the noise is the video's own."""
    if first.device.type != "cpu":
        return rollout(model, codec, cfg, first, total, steps, generators, y=y)
    with sampling_threads():  # one video is too little work for more (`seeding.SAMPLE_THREADS`)
        return torch.cat([rollout(model, codec, cfg, first[i:i + 1], total, steps, [generators[i]],
                                  y=None if y is None else y[i:i + 1]) for i in range(first.shape[0])])


def complete_clips(model, codec: PixelCodec, cfg: TrainConfig, reader: SplitReader, rows: list[SplitRow],
                   steps: int, seed: int, device, bf16: bool = True) -> list[np.ndarray]:
    """uint8 (T, R, R, 3) videos of `rows`: each row's condition frames, as given, then the model's.

    Each video's noise is seeded from (seed, its condition frames): not from its batch."""
    m = reader.manifest
    T, R, c = int(m["frames"]), int(m["resolution"]), int(m["condition_frames"])
    given = [reader.video(row)[:c] for row in rows]  # uint8 (c, R, R, 3) each
    first = torch.stack([clip_to_tensor(v, c, cfg.resolution) for v in given]).to(device)
    y = row_conditions(cfg, reader, rows)
    kind = torch.device(device).type
    with torch.autocast(kind, dtype=torch.bfloat16, enabled=bf16 and kind != "cpu"):  # bf16 on accelerators only
        clips = rollout_videos(model, codec, cfg, first, T, steps, video_generators(seed, np.stack(given)),
                               y=y)  # (n, 3, T, r, r)
    videos = []
    for frames, x in zip(given, clips, strict=True):
        video = tensor_to_clip(x, R)  # (T, R, R, 3)
        video[:c] = frames  # the condition frames as given
        videos.append(np.ascontiguousarray(video))
    return videos


def row_conditions(cfg: TrainConfig, reader: SplitReader, rows: list[SplitRow]) -> torch.Tensor | None:
    """A conditioned model's input for split rows (their state or prompt); None for frames only."""
    if cfg.condition is None:
        return None
    from phybench.data.conditions import condition_state
    from phybench.tasks.family import family_text

    states = [condition_state(reader.spec, row) for row in rows]
    return condition_inputs(cfg, states, [family_text(reader.spec, s) for s in states])


def evaluate(model, codec: PixelCodec, cfg: TrainConfig, split_dir, n: int, steps: int, device,
             seed: int = 0) -> dict[str, float]:
    """Velocity error (parsed from pixels, as `phybench score` does) on the first n clips of a split.

    The trainer's periodic evaluation: its own generators (one per video), so training's random
    streams and hence exact resume are untouched.
    """
    from phybench.scoring.run.score import score_sample

    reader = SplitReader(split_dir)
    rows = list(itertools.islice(reader.rows(), n))
    videos = complete_clips(model, codec, cfg, reader, rows, steps, seed, device)
    errors, untrackable = [], 0
    for row, video in zip(rows, videos, strict=True):
        detail = score_sample(row, video, None, reader.manifest, ("velocity_error",))
        if detail["excluded"]:
            continue
        if detail["untrackable"]:
            untrackable += 1
        else:
            errors.append(detail["velocity_error"])
    return {"eval/velocity_error": float(np.mean(errors)) if errors else float("nan"),
            "eval/untrackable": untrackable / max(1, len(rows))}


def sampler_settings(cfg: TrainConfig, codec: PixelCodec, steps: int, device, precision: str = "bf16") -> dict:
    """The submission's sampler: what the videos' bytes depend on besides the weights and the seed
    (the same for this module's command and `phybench run` with `runner.DiT`)."""
    out = {"objective": cfg.objective, "steps": int(steps), "space": codec.name,
           "noise": "per video: sha256(seed, its condition frames)",
           "threads": SAMPLE_THREADS if torch.device(device).type == "cpu" else torch.get_num_threads()}
    if precision == "fp32":
        out["precision"] = "fp32"
    return out


def training_record(run: Path, cfg: TrainConfig, trained: dict) -> dict:
    """The card's training facts from the run folder: split hash, config, and (from the
    trainer's throughput.json) steps, training-loop seconds and hardware."""
    out: dict = {"train_config": " ".join(f"{k}={v}" for k, v in cfg.to_dict().items() if v is not None)[:2000]}
    if isinstance(trained.get("split_hash"), str):
        out["train_split_hash"] = trained["split_hash"]
    timing_file = run / "throughput.json"
    if timing_file.is_file():
        timing = json.loads(timing_file.read_text())
        out.update(train_steps=int(timing["steps"]),
                   train_seconds=round(float(timing["first_step_s"]) + float(timing["steady_s"]), 1))
        if isinstance(timing.get("hardware"), str):
            out["hardware"] = timing["hardware"][:200]
    return out


def run_model_card(run: Path, cfg: TrainConfig, model) -> dict:
    """submission.json's model fields for a run (family, size, parameters, checkpoint hash, training facts)."""
    trained = json.loads((run / "train_split.json").read_text()) if (run / "train_split.json").is_file() else {}
    card: dict = {"family": "dit", "size": str(cfg.size), "params": sum(p.numel() for p in model.parameters()),
                  "checkpoint_sha256": file_sha256(run / "ema.safetensors")}
    if "num_samples" in trained:
        card["train_size"] = int(trained["num_samples"])
    card.update(training_record(run, cfg, trained))
    return card


def main(argv=None) -> Path:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", required=True, help="a run folder of phybench_baselines.dit.train")
    p.add_argument("--data", required=True, help="an evaluation split folder")
    p.add_argument("--out", required=True, help="the submission folder to write (must not exist)")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--steps", type=int, default=None, help="sampler steps (default: the config's)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--precision", default="bf16", choices=["bf16", "fp32"],
                   help="on a GPU: sample under bf16 autocast (default) or in fp32 (the CPU always samples in fp32)")
    p.add_argument("--format", default="npz", choices=["npy", "npz", "png"], help="video files (default npz)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--name", help="model name in the submission (default dit-<size>-<objective>)")
    args = p.parse_args(argv)

    run = Path(args.checkpoint)
    cfg, model, codec = load_run(run, args.device)
    steps = args.steps or cfg.sample_steps
    reader = SplitReader(args.data)
    trained = json.loads((run / "train_split.json").read_text()) if (run / "train_split.json").is_file() else {}
    if trained.get("task") not in (None, reader.manifest["task"]):
        raise ValueError(f"{run} was trained on {trained['task']!r}, but {args.data} is a "
                         f"{reader.manifest['task']!r} split")
    rows = list(reader.rows(columns=None if cfg.condition else ["sample_id", "video"]))  # conditions read the states

    def videos():
        with tqdm(total=len(rows), desc="sample", disable=args.quiet) as bar:
            for i in range(0, len(rows), args.batch_size):
                batch = rows[i:i + args.batch_size]
                done = complete_clips(model, codec, cfg, reader, batch, steps, args.seed, args.device,
                                      bf16=args.precision == "bf16")
                yield from ((row["sample_id"], video) for row, video in zip(batch, done, strict=True))
                bar.update(len(batch))

    meta = submission_meta(reader.manifest, args.name or f"dit-{cfg.size}-{cfg.objective}",
                           sampler=sampler_settings(cfg, codec, steps, args.device, args.precision),
                           seeds=[args.seed])
    if cfg.condition is not None:  # the condition track, as `phybench run` records it (`phybench.conditioning`)
        meta["conditioning"] = {"inputs": f"frames+{cfg.condition}", "condition_frames_used": int(reader.manifest["condition_frames"])}
    meta["model"].update(run_model_card(run, cfg, model))
    return write_submission(args.out, meta, videos(), fmt=args.format)


if __name__ == "__main__":
    main()
