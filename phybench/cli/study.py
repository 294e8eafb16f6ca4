"""`phybench study scaling` (the paper's Figure 3) and `phybench study modality` (its Fig. 13),
with our own DiTs, and `phybench study findings` (its three findings, on a trained framear run);
all need the `dit` extra."""
from __future__ import annotations

import argparse
import importlib
from typing import Callable

from . import CliError

STUDIES = {
    "scaling": ("phybench_baselines.dit.study",
                "trains DiT sizes x training-set sizes, samples, scores (Fig. 3)"),
    "modality": ("phybench_baselines.dit.modality",
                 "trains a DiT on frames, frames + numeric state and frames + text with one budget, scores ID / OOD (Fig. 13)"),
    "findings": ("phybench_baselines.framear.findings_command",
                 "the paper's three findings (learning curve and OOD / ID ratio, case-based landing of OOD fits, "
                 "a section-5 probe) measured on a trained framear run"),
}


def register(add: Callable[..., argparse.ArgumentParser]) -> None:
    p = add("study", "Run a study: `scaling` trains DiT sizes x training-set sizes, samples, scores (Fig. 3); "
                     "`modality` compares frames, frames + state and frames + text conditioning (Fig. 13); "
                     "`findings` prints the paper's three findings measured on a trained framear run.")
    studies = p.add_subparsers(dest="name", metavar="STUDY", required=True)
    for name, (module, help) in STUDIES.items():
        q = studies.add_parser(name, help=help, description=help)
        try:
            add_arguments = importlib.import_module(module).add_arguments
        except ImportError:  # the baselines are part of the wheel; torch/accelerate come with the `dit` extra
            q.add_argument("rest", nargs=argparse.REMAINDER)
        else:
            add_arguments(q)
    p.set_defaults(func=cmd_study)


def cmd_study(args: argparse.Namespace) -> int:
    try:
        run_from_args = importlib.import_module(STUDIES[args.name][0]).run_from_args
    except ImportError as exc:
        raise CliError(f"the {args.name} study needs the DiT baselines' dependencies: pip install -e \".[dit]\" ({exc})") from None
    try:
        return run_from_args(args)
    except ValueError as exc:
        raise CliError(str(exc)) from None
