"""The modality study (the paper's appendix A.6.1, Fig. 13) in miniature: does a DiT predict
better, in and out of distribution, when it is given the numeric initial state or a text
description of it besides the condition frames?

    phybench study modality --task uniform --out modality/
    python -m phybench_baselines.studies.modality --task uniform --out modality/     # the same

Three runs of the Accelerate trainer (`phybench_baselines.dit.train`, the tiny pixel-space
configuration), identical but for the condition: ``frames`` (the baseline), ``frames+state``
(`conditioning.StateEncoder`) and ``frames+text`` (`conditioning.TextEncoder`, a vocabulary
built from the training prompts); the same training set (the first N rows of the task's
first training grid), steps, batch, seed, data order and diffusion noise (a conditioned
model's backbone starts from the frames-only weights).  Each is sampled through
`phybench run` (`phybench.pipeline.run`), which hands a conditioned model its states
or prompts and records the condition track in the submission, on the first
``--eval-samples`` samples of the ID and OOD evaluation splits, and scored with the velocity
error (with its penalised and ranked companions and per-video bootstrap intervals).
Results files land in OUT/results/; a finished run or results file is reused, so a killed
study resumes.
"""
from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Sequence

CONDITIONS = ("frames", "state", "text")
TRACK = {"frames": "frames", "state": "frames+state", "text": "frames+text"}
# The miniature's model: the scaling study's XS size (2 layers of width 64) on 16 px frames with
# 4x4 patches and 8-frame windows: 128 tokens a window, what 2 shared CPU cores train in minutes.
# (8x8 patches on 32 px, the same token count, cannot work at width 64: a token's 192 output
# values would live in a 64-dimensional subspace, too few to predict per-pixel noise.)
MODEL = {"depth": 2, "width": 64, "heads": 2, "patch": 4, "resolution": 16}


def run_name(size: str, condition: str) -> str:
    return f"dit-{size}-{TRACK[condition].replace('+', '-')}"


def run_modality(task: str, out: str | Path, *, conditions: Sequence[str] = CONDITIONS, train_size: int = 1000,
                 steps: int = 1000, batch_size: int = 16, eval_samples: int = 64, sample_steps: int = 20,
                 ema_decay: float = 0.99, seed: int = 0, progress: bool = True) -> list[Path]:
    """Train, sample and score every condition; returns the results files (ID and OOD per condition)."""
    from phybench.data.generate import generate
    from phybench.data.split import make_plan
    from phybench.pipeline import run
    from phybench.tasks import get_task

    from ..dit import train
    from ..dit.runner import DiT

    unknown = [c for c in conditions if c not in CONDITIONS]
    if unknown:
        raise ValueError(f"unknown condition(s) {', '.join(unknown)}; known: {', '.join(CONDITIONS)}")
    spec = get_task(task)
    out = Path(out)
    train_split = spec.train_splits[0]
    if train_size > spec.split_size(train_split):
        raise ValueError(f"{task}/{train_split} has {spec.split_size(train_split)} samples; --train-size asks for {train_size}")
    data = out / "data"
    evals = {split: data / f"{task}-{split}" for split in spec.eval_splits}
    for split, folder in evals.items():
        generate(make_plan(spec, split, limit=min(eval_samples, spec.split_size(split))), folder, progress=progress)
    train_dir = data / f"{task}-{train_split}-{train_size}"
    generate(make_plan(spec, train_split, limit=train_size), train_dir, progress=progress)
    log = out / "study.jsonl"
    results: list[Path] = []
    for condition in conditions:
        name = run_name("XS", condition)
        ckpt = out / "runs" / name
        if not (ckpt / "ema.safetensors").is_file():
            t0 = time.perf_counter()
            overrides = [f"{k}={v}" for k, v in MODEL.items()]
            overrides += [f"steps={steps}", f"batch_size={batch_size}", f"seed={seed}", 'size="XS"',
                          f"ema_decay={ema_decay}", f"ckpt_every={max(steps, 1)}", f"eval_every={10 * max(steps, 1)}",
                          f"log_every={max(1, min(50, steps))}", f"sample_steps={sample_steps}",
                          f"condition={'None' if condition == 'frames' else condition}"]
            train.main(["--config", "tiny", "--train-data", str(train_dir), "--out", str(ckpt),
                        *(["--resume"] if (ckpt / "checkpoints").is_dir() else []), "--set", *overrides])
            with open(log, "a") as f:
                f.write(json.dumps({"run": name, "train_s": round(time.perf_counter() - t0, 1)}) + "\n")
        done = [out / "results" / f"{task}-{split}-{name}.json" for split in evals]
        if all(p.is_file() for p in done):
            results += done
            continue
        t0 = time.perf_counter()
        model = DiT(checkpoint=str(ckpt), steps=sample_steps, seed=seed)
        for path in run(model, name, list(evals.values()), out / "sampled" / name, batch_size=batch_size,
                        metrics=("velocity_error",), progress=progress):
            (out / "results").mkdir(parents=True, exist_ok=True)
            for companion in (path, path.with_name(path.stem + ".samples.json")):
                if companion.is_file():
                    shutil.copyfile(companion, out / "results" / companion.name)
            results.append(out / "results" / path.name)
        with open(log, "a") as f:
            f.write(json.dumps({"run": name, "sample_and_score_s": round(time.perf_counter() - t0, 1)}) + "\n")
    return results


def _interval(stat: dict | None) -> str:
    if not isinstance(stat, dict) or stat.get("mean") is None:
        return "-"
    ci = stat.get("ci95") or stat.get("ci")
    return f"{stat['mean']:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{stat['mean']:.2f}"


def summary(results: Sequence[Path]) -> str:
    """A Markdown table: velocity error (trackable videos) and its ranked companion, ID and OOD, per condition."""
    rows: dict[str, dict[str, str]] = {}
    for p in results:
        doc = json.loads(Path(p).read_text())
        track = (doc["model"].get("conditioning") or {}).get("inputs", "?")
        o = doc["summary"]["overall"]
        col = "ID" if doc["split"].startswith("id") else "OOD"
        cell = rows.setdefault(track, {})
        cell[col] = _interval(o.get("velocity_error"))
        cell[f"{col} ranked"] = _interval(o.get("velocity_error_ranked"))
        cell[f"{col} untrackable"] = f"{100 * (o.get('untrackable') or {}).get('rate', 0):.0f}%"
    lines = ["| condition | ID velocity error ↓ | OOD velocity error ↓ | ID ranked ↓ | OOD ranked ↓ | untrackable ID / OOD |",
             "|---|---:|---:|---:|---:|---:|"]
    for track in sorted(rows, key=lambda t: (len(t), t)):
        c = rows[track]
        lines.append(f"| {track} | {c.get('ID', '-')} | {c.get('OOD', '-')} | {c.get('ID ranked', '-')} | "
                     f"{c.get('OOD ranked', '-')} | {c.get('ID untrackable', '-')} / {c.get('OOD untrackable', '-')} |")
    return "\n".join(lines) + "\n"


# `phybench study modality`'s line in `phybench study --help` (the `phybench.studies` entry point)
HELP = "trains a DiT on frames, frames + numeric state and frames + text with one budget, scores ID / OOD (Fig. 13)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", required=True, help="a task with a training grid and ID / OOD splits, e.g. uniform")
    p.add_argument("--conditions", default=",".join(CONDITIONS),
                   help=f"conditions, comma-separated ({', '.join(CONDITIONS)}; default all three)")
    p.add_argument("--train-size", type=int, default=1000, help="training videos: the first N of the first grid (default 1000)")
    p.add_argument("--steps", type=int, default=1000, help="training steps per condition (default 1000)")
    p.add_argument("--batch-size", type=int, default=16, help="training batch (default 16)")
    p.add_argument("--eval-samples", type=int, default=64, help="samples per evaluation split (default 64)")
    p.add_argument("--sample-steps", type=int, default=20, help="DDPM sampler steps (default 20)")
    p.add_argument("--seed", type=int, default=0, help="seed of every run: init, data order, noise (default 0)")
    p.add_argument("--out", required=True, help="study folder (re-run to resume)")
    p.add_argument("--quiet", action="store_true")


def run_from_args(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    results = run_modality(args.task, args.out, conditions=[c.strip() for c in args.conditions.split(",") if c.strip()],
                           train_size=args.train_size, steps=args.steps, batch_size=args.batch_size,
                           eval_samples=args.eval_samples, sample_steps=args.sample_steps, seed=args.seed,
                           progress=not args.quiet)
    print(summary(results))
    print(f"wall time {time.perf_counter() - t0:.0f} s")
    print(f"leaderboard: phybench leaderboard build {Path(args.out) / 'results'} --out SITE")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(p)
    return run_from_args(p.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
