"""`phybench study scaling`: the paper's Figure 3 with our own DiTs (needs the `dit` extra)."""
from __future__ import annotations

import argparse
from typing import Callable

from . import CliError


def register(add: Callable[..., argparse.ArgumentParser]) -> None:
    p = add("study", "Run a study: `scaling` trains DiT sizes x training-set sizes, samples, scores (Fig. 3).")
    p.add_argument("name", choices=["scaling"], help="the study")
    try:
        from phybench_baselines.dit.study import add_arguments
    except ImportError:  # the baselines are part of the wheel; torch/accelerate come with the `dit` extra
        p.add_argument("rest", nargs=argparse.REMAINDER)
    else:
        add_arguments(p)
    p.set_defaults(func=cmd_study)


def cmd_study(args: argparse.Namespace) -> int:
    try:
        from phybench_baselines.dit.study import run_from_args
    except ImportError as exc:
        raise CliError(f"the scaling study needs the DiT baselines' dependencies: pip install -e \".[dit]\" ({exc})") from None
    try:
        return run_from_args(args)
    except ValueError as exc:
        raise CliError(str(exc)) from None
