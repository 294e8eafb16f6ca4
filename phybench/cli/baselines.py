"""`phybench baseline NAME`: a reference baseline's submission (the DiT through the `dit` extra)."""
from __future__ import annotations

import argparse
import textwrap
from shlex import quote
from typing import Callable

from ..registry import entry_point_table
from . import CliError


EXAMPLES = {
    "baseline": """
        examples:
          phybench baseline physics-oracle --data data/uniform-ood-eval --out subs/oracle-uniform-ood
          phybench baseline nearest-neighbour --data data/uniform-id-eval --train-data data/uniform-train-30k --out subs/nn
          phybench baseline copy-last --data data/parabola-id-eval --out subs/copy-last --format npz
          phybench baseline dit --list-sizes
          phybench baseline dit --checkpoint runs/dit-tiny --data data/uniform-id-eval --out subs/dit-tiny

        dit samples a DiT trained with `python -m phybench_baselines.dit.train` (needs the `dit` extra:
        pip install -e ".[dit]"); see docs/baselines.md, "DiT video-diffusion baselines".
    """,
}


def _add_baseline(add: Callable[..., argparse.ArgumentParser]) -> None:
    bl = add("baseline", "Write a reference baseline's submission for an evaluation split.")
    bl.add_argument("name", help="ground-truth, copy-last, linear-extrapolation, physics-oracle, nearest-neighbour or dit")
    bl.add_argument("--data", metavar="SPLIT_DIR", help="the evaluation split to answer (required)")
    bl.add_argument("--out", metavar="SUB", help="submission folder to write (required; must not exist)")
    bl.add_argument("--checkpoint", metavar="RUN", help="dit: a run folder of phybench_baselines.dit.train")
    bl.add_argument("--list-sizes", action="store_true", help="dit: print the DiT sizes and parameter counts")
    bl.add_argument("--batch-size", type=int, default=16, help="dit: clips sampled at once (default 16)")
    bl.add_argument("--steps", type=int, help="dit: sampler steps (default: the run's config)")
    bl.add_argument("--seed", type=int, default=0, help="dit: sampling seed (default 0)")
    bl.add_argument("--device", help="dit: torch device (default cuda when present, else cpu)")
    bl.add_argument("--train-data", metavar="TRAIN_SPLIT_DIR", help="training split (nearest-neighbour)")
    bl.add_argument("--format", default="npz", choices=["npy", "npz", "png"],
                    help="video files (default npz: lossless and about 1/100 of raw npy bytes for our clips)")
    bl.add_argument("--quiet", action="store_true", help="no progress bar")
    bl.add_argument("--name", dest="model_name", metavar="NAME",
                    help="model name in the submission (default: the baseline's), e.g. nearest-neighbour-6t")
    bl.epilog = textwrap.dedent(EXAMPLES["baseline"])
    bl.set_defaults(func=cmd_baseline)


# `phybench --help` lists the commands in the order they are added (`cli.PARSERS`).
PARSERS = {"baseline": _add_baseline}


def _plugin(name: str):
    """The `phybench.baselines` entry point's module for `name` (the DiT: `phybench_baselines.dit.baseline`),
    or None when `name` is no plug-in (a reference baseline of `phybench.reference`)."""
    ep = entry_point_table("phybench.baselines").get(name)
    if ep is None:
        return None
    try:
        return ep.load()
    except ImportError as exc:
        raise CliError(f"the {name} baseline could not be loaded ({ep.value}): {exc}") from None


def _needs_extra(exc: ImportError) -> CliError:
    return CliError(f"the DiT baseline needs the `dit` extra (pip install -e \".[dit]\", "
                    f"or pip install \"phybench[dit]\"): {exc}")


def cmd_baseline_plugin(plugin, args: argparse.Namespace) -> int:
    """A baseline installed through the `phybench.baselines` entry points (`list_sizes`, `write_submission`)."""
    try:
        if args.list_sizes:
            print(plugin.list_sizes())
            return 0
        path = plugin.write_submission(args)
    except ImportError as exc:
        raise _needs_extra(exc) from None
    except (FileNotFoundError, FileExistsError, ValueError) as exc:
        raise CliError(str(exc)) from None
    print(f"wrote {path}; score it with: phybench score {quote(str(path))} --data {quote(str(args.data))}")
    return 0


def cmd_baseline(args: argparse.Namespace) -> int:
    from ..reference import BaselineError, run_baseline

    plugin = _plugin(args.name)
    if plugin is not None and args.list_sizes:
        return cmd_baseline_plugin(plugin, args)
    if args.list_sizes:
        installed = ", ".join(entry_point_table("phybench.baselines")) or "none"
        raise CliError(f"--list-sizes is for a baseline installed through the phybench.baselines entry points "
                       f"(installed: {installed}); {args.name!r} is not one " + "(pip install -e \".[dit]\"; an install made before the baselines became entry points "
                   "must be installed again to list them)")
    missing = [flag for flag, value in (("--data", args.data), ("--out", args.out)) if not value]
    if missing:
        raise CliError(f"phybench baseline {args.name} needs {' and '.join(missing)}")
    if plugin is not None:
        return cmd_baseline_plugin(plugin, args)
    try:
        path = run_baseline(args.name, args.data, args.out, args.train_data, progress=not args.quiet, fmt=args.format,
                            model_name=args.model_name)
    except BaselineError as exc:
        raise CliError(str(exc)) from None
    print(f"wrote {path}; score it with: phybench score {quote(str(path))} --data {quote(str(args.data))}")
    return 0
