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
from typing import Any, Sequence

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
                 ema_decay: float = 0.99, seed: int = 0, sample_seeds: Sequence[int] | None = None,
                 metrics: Sequence[str] = ("velocity_error",), progress: bool = True) -> list[Path]:
    """Train, sample and score every condition; returns the results files (ID and OOD per condition
    and sampling seed).

    `seed` is the training seed (init, data order, diffusion noise); `sample_seeds` the sampler's
    seeds (default: ``[seed]``, the one run the study always made): each trained model is sampled
    once per seed, its card saying ``seeds: [k]``, into ``<task>-<split>-<model>.seed<k>.json``
    (`phybench.scoring.run.layout.seeded_path`; seed 0 keeps the plain name), because the board's
    verified mark needs 3 sampling seeds of a learned row (`phybench.leaderboard.verify.seeds`).
    """
    from phybench.data.generate import generate
    from phybench.data.split import make_plan
    from phybench.tasks import get_task

    from ..dit import train

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
        for k in ([seed] if sample_seeds is None else sample_seeds):
            results += _sample_and_score(out, task, name, ckpt, evals, seed=k, sample_steps=sample_steps,
                                         batch_size=batch_size, metrics=metrics, progress=progress)
    return results


def _sample_and_score(out: Path, task: str, name: str, ckpt: Path, evals: dict[str, Path], *, seed: int,
                      sample_steps: int, batch_size: int, metrics: Sequence[str], progress: bool) -> list[Path]:
    """Sample one trained model with one sampler seed on every evaluation split and score it; the
    results files (seeded names) are copied to OUT/results/, the submissions stay in
    OUT/sampled/<model>[.seed<k>]/ (what `phybench leaderboard verify --submissions OUT/sampled` re-scores).
    A seed whose results files are all there is reused."""
    from phybench.pipeline import run
    from phybench.scoring.run.layout import results_name, samples_path, seed_tag

    from ..dit.runner import DiT

    done = [out / "results" / results_name(task, split, name, [seed]) for split in evals]
    if all(p.is_file() for p in done):
        return done
    t0 = time.perf_counter()
    model = DiT(checkpoint=str(ckpt), steps=sample_steps, seed=seed)
    results = []
    # seed 0 keeps the folder it always had; another seed gets its own (a work folder is claimed by
    # the model's identity, which does not include the sampler seed: a shared one would be reused)
    for path in run(model, name, list(evals.values()), out / "sampled" / (name + seed_tag([seed])),
                    batch_size=batch_size, metrics=tuple(metrics), progress=progress):
        (out / "results").mkdir(parents=True, exist_ok=True)
        for companion in (path, samples_path(path)):
            if companion.is_file():
                shutil.copyfile(companion, out / "results" / companion.name)
        results.append(out / "results" / path.name)
    with open(out / "study.jsonl", "a") as f:
        f.write(json.dumps({"run": name, "sample_seed": seed, "sample_and_score_s": round(time.perf_counter() - t0, 1)}) + "\n")
    return results


def _interval(stat: dict | None) -> str:
    if not isinstance(stat, dict) or stat.get("mean") is None:
        return "-"
    ci = stat.get("ci95") or stat.get("ci")
    return f"{stat['mean']:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{stat['mean']:.2f}"


def _mean(stat: Any) -> float | None:
    return stat.get("mean") if isinstance(stat, dict) and isinstance(stat.get("mean"), (int, float)) else None


def _spread(values: list[float]) -> str:
    """Mean ± standard deviation over seeds (n - 1, as the board's ± of a row's runs)."""
    if not values:
        return "-"
    m = sum(values) / len(values)
    sd = (sum((v - m) ** 2 for v in values) / (len(values) - 1)) ** 0.5 if len(values) > 1 else 0.0
    return f"{m:.2f} ± {sd:.2f}"


SPREAD = ("velocity_error_ranked", "velocity_error_paper", "velocity_error_paper_y")  # the seeds table's metrics


def summary(results: Sequence[Path]) -> str:
    """A Markdown table: velocity error (trackable videos) and its ranked companion, ID and OOD, per
    condition (and sampling seed, when there are several: then a second table of mean ± sd over seeds)."""
    rows: dict[tuple[str, int], dict[str, str]] = {}
    means: dict[tuple[str, str, str], list[float]] = {}
    for p in results:
        doc = json.loads(Path(p).read_text())
        track = (doc["model"].get("conditioning") or {}).get("inputs", "?")
        seed = (doc["model"].get("seeds") or [0])[0]
        o = doc["summary"]["overall"]
        col = "ID" if doc["split"].startswith("id") else "OOD"
        cell = rows.setdefault((track, seed), {})
        cell[col] = _interval(o.get("velocity_error"))
        cell[f"{col} ranked"] = _interval(o.get("velocity_error_ranked"))
        cell[f"{col} untrackable"] = f"{100 * (o.get('untrackable') or {}).get('rate', 0):.0f}%"
        for metric in SPREAD:
            if (m := _mean(o.get(metric))) is not None:
                means.setdefault((track, col, metric), []).append(m)
    several = len({seed for _, seed in rows}) > 1
    lines = ["| condition | ID velocity error ↓ | OOD velocity error ↓ | ID ranked ↓ | OOD ranked ↓ | untrackable ID / OOD |",
             "|---|---:|---:|---:|---:|---:|"]
    for track, seed in sorted(rows, key=lambda r: (len(r[0]), r)):
        c = rows[(track, seed)]
        label = f"{track}, seed {seed}" if several else track
        lines.append(f"| {label} | {c.get('ID', '-')} | {c.get('OOD', '-')} | {c.get('ID ranked', '-')} | "
                     f"{c.get('OOD ranked', '-')} | {c.get('ID untrackable', '-')} / {c.get('OOD untrackable', '-')} |")
    if several:
        lines += ["", "| condition (mean ± sd over seeds) | " + " | ".join(f"{col} {m} ↓" for m in SPREAD for col in ("ID", "OOD")) + " |",
                  "|---|" + "---:|" * (2 * len(SPREAD))]
        for track in sorted({t for t, _ in rows}, key=lambda t: (len(t), t)):
            lines.append(f"| {track} | " + " | ".join(_spread(means.get((track, col, m), [])) for m in SPREAD
                                                       for col in ("ID", "OOD")) + " |")
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
    p.add_argument("--seed", type=int, default=0, help="training seed of every run: init, data order, noise (default 0)")
    p.add_argument("--sample-seeds", default=None,
                   help="sampler seeds, comma-separated, e.g. 0,1,2: each trained model sampled and scored once per "
                        "seed (seed k's results file <task>-<split>-<model>.seed<k>.json; default: --seed, one run)")
    p.add_argument("--metrics", default="velocity_error",
                   help="metrics to score, comma-separated (default velocity_error; e.g. "
                        "velocity_error,velocity_error_paper,velocity_error_paper_y for the paper's convention too)")
    p.add_argument("--out", required=True, help="study folder (re-run to resume)")
    p.add_argument("--quiet", action="store_true")


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _seeds(text: str | None) -> list[int] | None:
    """``"0,1,2"`` -> [0, 1, 2] (distinct, non-negative); None stays None (sample with the training seed)."""
    if text is None:
        return None
    try:
        seeds = [int(t) for t in _names(text)]
    except ValueError:
        raise ValueError(f"--sample-seeds: comma-separated integers, not {text!r}") from None
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise ValueError(f"--sample-seeds: distinct non-negative integers, not {text!r}")
    return seeds


def run_from_args(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    results = run_modality(args.task, args.out, conditions=[c.strip() for c in args.conditions.split(",") if c.strip()],
                           train_size=args.train_size, steps=args.steps, batch_size=args.batch_size,
                           eval_samples=args.eval_samples, sample_steps=args.sample_steps, seed=args.seed,
                           sample_seeds=_seeds(args.sample_seeds), metrics=_names(args.metrics), progress=not args.quiet)
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
