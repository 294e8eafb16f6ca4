"""Validate a framear snapshot the trainer saved but did not validate, and log it as the trainer would.

Why: a run stopped right after a snapshot (the recipes stop the default 1,800-step schedule at
step 900, so the learning-rate schedule stays the defaults') can be killed between writing the
snapshot and logging its validation.  Checkpoint selection (`studies.findings.selected_step`)
reads only logged validation, so that snapshot could never be chosen.  This computes the same
entry the trainer writes (the same held-out training rows, `split_rows`; the same
`validate_rows`; the training-loop seconds of the step's loss entry) and appends it to the
run's log.jsonl.  No evaluation split is read.

    python -m phybench_baselines.framear.validate RUN --train-data SPLIT --step 900
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from ..training import append_log
from .sample import load_run
from .train import split_rows, validate_into
from phybench.data.split import SplitReader


def validation_entry(run: Path, train_data: Path, step: int) -> dict:
    """The trainer's log entry for `step` (validation included), computed from the saved snapshot."""
    weights = run / "snapshots" / f"ema_{step:07d}.safetensors"
    cfg, model = load_run(weights)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    entries = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines() if line.strip()]
    if any(e.get("step") == step and "val/velocity_error" in e for e in entries):
        raise SystemExit(f"{run}: step {step} is validated already")
    at = [e for e in entries if e.get("step") == step and "train_s" in e]
    if not at:
        raise SystemExit(f"{run}: no log entry for step {step} (its training-loop seconds are unknown)")
    first: dict = next((e for e in entries if "hardware" in e), {})
    reader = SplitReader(train_data)
    rows = list(reader.rows())
    _, val_idx = split_rows(len(rows), cfg.train_rows, cfg.val_rows)
    entry = {"step": step, "train_s": at[-1]["train_s"], "render_s": first.get("render_s", 0.0),
             "params": sum(p.numel() for p in model.parameters()), "hardware": first.get("hardware", "")}
    validate_into(entry, model, cfg, [rows[i] for i in val_idx], reader.manifest)
    entry["validated_after"] = True  # written by this command, not by the training loop
    return entry


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", type=Path, help="a framear run folder")
    p.add_argument("--train-data", required=True, type=Path, help="the run's training split (its validation rows)")
    p.add_argument("--step", required=True, type=int, help="the snapshot's step")
    args = p.parse_args(argv)
    trained = json.loads((args.run / "train_split.json").read_text())
    if trained.get("split_hash") != SplitReader(args.train_data).manifest["split_hash"]:
        raise SystemExit(f"{args.train_data} is not the split {args.run} trained on")
    entry = validation_entry(args.run, args.train_data, args.step)
    append_log(args.run / "log.jsonl", entry)
    print(f"step {args.step}: validation velocity error {entry['val/velocity_error']:.3f}, "
          f"law within 10% {entry['val/law_within_10pct']:.2f}, untrackable {entry['val/untrackable']:.2f}")
    return entry


if __name__ == "__main__":
    main()
