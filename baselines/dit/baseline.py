"""The DiT as `phybench baseline dit`: the command line finds this module through the
`phybench.baselines` entry point (pyproject.toml), not by its name, so `phybench` names no
module of `phybench_baselines` (tests/test_cli_entry_points.py).

A baseline plug-in module has `list_sizes() -> str` (for `--list-sizes`) and
`write_submission(args) -> Path` (the `phybench baseline` arguments: --checkpoint, --data, --out,
--batch-size, --steps, --seed, --device, --quiet); torch and accelerate are imported only when
called (the `dit` extra), so the command lists the baseline without them.
"""
from __future__ import annotations

import argparse
from pathlib import Path


def list_sizes() -> str:
    """The DiT sizes and their parameter counts (a Markdown table)."""
    from .models import size_table

    return size_table()


def write_submission(args: argparse.Namespace) -> Path:
    """Sample a trained run (`--checkpoint RUN`) on `--data` into the submission folder `--out`."""
    if not args.checkpoint:
        raise ValueError("phybench baseline dit needs --checkpoint RUN (a run folder of phybench_baselines.dit.train), "
                         "or --list-sizes")
    from .sample import main

    argv = ["--checkpoint", args.checkpoint, "--data", args.data, "--out", args.out,
            "--batch-size", str(args.batch_size), "--seed", str(args.seed)]
    argv += ["--steps", str(args.steps)] if args.steps else []
    argv += ["--device", args.device] if args.device else []
    argv += ["--quiet"] if args.quiet else []
    return main(argv)
