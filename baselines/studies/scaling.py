"""The scaling study (the paper's Figure 3): DiTs of several sizes trained on nested training
sets of increasing size, each sampled and scored in and out of distribution.

    phybench study scaling --task uniform --sizes XS,S --train-sets 1000,10000,30000 --steps 1500 --out study/
    python -m phybench_baselines.studies.scaling --task uniform ...            # the same

Every cell (size x training set) is one run of the Accelerate trainer
(`phybench_baselines.dit.train`, the tiny pixel-space configuration with the size's depth and
width), pinned by its `config.json` and `train_split.json` (split hash); a cell whose EMA
weights exist is not trained again, and a submission or results file that exists is reused,
so a killed study resumes.  Results files land in OUT/results/ with `model.family = "dit"`,
`size`, `params` and `train_size`, so `phybench leaderboard build OUT/results` draws the
scaling plot (error against training-set size, one line per model size, ID and OOD).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Sequence

# Model sizes of the study (the tiny configuration's family: pixel space, 4x4 patches).
SIZES: dict[str, dict[str, int]] = {
    "XS": {"depth": 2, "width": 64, "heads": 2},
    "S": {"depth": 4, "width": 128, "heads": 4},
    "M": {"depth": 6, "width": 192, "heads": 6},
}


def run_study(task: str, sizes: Sequence[str], train_sets: Sequence[int], steps: int, out: str | Path, *,
              eval_samples: int = 64, sample_steps: int = 20, batch_size: int = 16, seed: int = 0,
              progress: bool = True) -> list[Path]:
    """Train, sample and score every cell; returns the results files (ID and OOD per cell)."""
    from phybench.data.generate import generate
    from phybench.data.split import make_plan
    from phybench.scoring.run.score import score, write_results
    from phybench.tasks import get_task

    from ..dit import sample, train

    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        raise ValueError(f"unknown size(s) {', '.join(unknown)}; known: {', '.join(SIZES)}")
    spec = get_task(task)
    out = Path(out)
    train_split = spec.train_splits[-1]  # the largest grid: the nested sets are its first N rows
    if max(train_sets) > spec.split_size(train_split):
        raise ValueError(f"{task}/{train_split} has {spec.split_size(train_split)} samples; "
                         f"--train-sets asks for {max(train_sets)}")
    data = out / "data"
    evals = {}
    for split in spec.eval_splits:
        evals[split] = data / f"{task}-{split}"
        generate(make_plan(spec, split, limit=min(eval_samples, spec.split_size(split))), evals[split],
                 progress=progress)
    results: list[Path] = []
    log = out / "study.jsonl"
    for n in sorted(train_sets):
        train_dir = data / f"{task}-{train_split}-{n}"
        generate(make_plan(spec, train_split, limit=n), train_dir, progress=progress)
        for size in sizes:
            name = f"dit-{size}-{n}"
            run = out / "runs" / name
            if not (run / "ema.safetensors").is_file():
                t0 = time.perf_counter()
                overrides = [f"{k}={v}" for k, v in SIZES[size].items()]
                overrides += [f"steps={steps}", f"batch_size={batch_size}", f"seed={seed}", f'size="{size}"',
                              f"ckpt_every={max(steps, 1)}", f"eval_every={10 * max(steps, 1)}",
                              f"log_every={max(1, min(50, steps))}", f"sample_steps={sample_steps}"]
                train.main(["--config", "tiny", "--train-data", str(train_dir), "--out", str(run),
                            *(["--resume"] if (run / "checkpoints").is_dir() else []), "--set", *overrides])
                with open(log, "a") as f:
                    f.write(json.dumps({"cell": name, "train_s": round(time.perf_counter() - t0, 1)}) + "\n")
            for split, eval_dir in evals.items():
                path = out / "results" / f"{task}-{split}-{name}.json"
                if path.is_file():
                    results.append(path)
                    continue
                sub = out / "submissions" / f"{name}-{split}"
                if not (sub / "submission.json").is_file():
                    sample.main(["--checkpoint", str(run), "--data", str(eval_dir), "--out", str(sub),
                                 "--steps", str(sample_steps), "--seed", str(seed), "--name", name,
                                 *([] if progress else ["--quiet"])])
                scored = score(sub, eval_dir, ("velocity_error",), progress=progress)
                path.parent.mkdir(parents=True, exist_ok=True)
                write_results(path, scored)
                results.append(path)
    return results


def summary(results: Sequence[Path]) -> str:
    """A Markdown table: velocity error (ranked, the board's column: a lost ball costs by the share of
    frames it is lost) per cell, ID and OOD."""
    cells: dict[tuple[str, int], dict[str, float]] = {}
    for p in results:
        doc = json.loads(Path(p).read_text())
        m = doc["model"]
        key = (str(m.get("size")), int(m.get("train_size", 0)))
        o = doc["summary"]["overall"]
        col = "ID" if doc["split"] == "id-eval" else "OOD"
        cells.setdefault(key, {})[col] = o.get("velocity_error_ranked", {}).get("mean")
        cells[key][f"{col} untrackable"] = o.get("untrackable", {}).get("rate")
        cells[key]["params"] = m.get("params")
    lines = ["| size | params | training set | ID velocity error ↓ | OOD velocity error ↓ | untrackable ID / OOD |",
             "|---|---:|---:|---:|---:|---:|"]
    for (size, n), c in sorted(cells.items()):
        def f(x):
            return "-" if x is None else f"{x:.3g}"
        lines.append(f"| {size} | {c.get('params')} | {n} | {f(c.get('ID'))} | {f(c.get('OOD'))} | "
                     f"{100 * (c.get('ID untrackable') or 0):.0f}% / {100 * (c.get('OOD untrackable') or 0):.0f}% |")
    return "\n".join(lines) + "\n"


# `phybench study scaling`'s line in `phybench study --help` (the `phybench.studies` entry point)
HELP = "trains DiT sizes x training-set sizes, samples, scores (Fig. 3)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", required=True, help="a task with a training grid and ID / OOD splits, e.g. a fundamental one")
    p.add_argument("--sizes", default="XS,S", help=f"model sizes, comma-separated ({', '.join(SIZES)}; default XS,S)")
    p.add_argument("--train-sets", default="1000,10000,30000", help="training-set sizes (nested; default 1000,10000,30000)")
    p.add_argument("--steps", type=int, default=1500, help="training steps per cell (default 1500)")
    p.add_argument("--eval-samples", type=int, default=64, help="samples per evaluation split (default 64)")
    p.add_argument("--sample-steps", type=int, default=20, help="DDPM sampler steps (default 20)")
    p.add_argument("--batch-size", type=int, default=16, help="training batch (default 16)")
    p.add_argument("--out", required=True, help="study folder (re-run to resume)")
    p.add_argument("--quiet", action="store_true")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(p)
    return run_from_args(p.parse_args(argv))


def run_from_args(args: argparse.Namespace) -> int:
    results = run_study(args.task, [s.strip() for s in args.sizes.split(",") if s.strip()],
                        [int(x) for x in args.train_sets.split(",") if x.strip()], args.steps, args.out,
                        eval_samples=args.eval_samples, sample_steps=args.sample_steps,
                        batch_size=args.batch_size, progress=not args.quiet)
    print(summary(results))
    print(f"leaderboard: phybench leaderboard build {Path(args.out) / 'results'} --out SITE")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
