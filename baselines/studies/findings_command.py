"""`phybench study findings`: one framear run's three findings (`findings`), or with --grid a
scaling grid's beside Figure 3 (`grid_findings`).

The choice between the two lives here, above both, so that neither module imports the other
(`grid_findings` reads `findings`' statistics; `findings` knows nothing of grids).
"""
from __future__ import annotations

import argparse

from . import findings


# `phybench study findings`'s line in `phybench study --help` (the `phybench.studies` entry point)
HELP = ("the paper's three findings (learning curve and OOD / ID ratio, case-based landing of OOD fits, "
        "a section-5 probe) measured on a trained framear run")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--grid", help="a scaling grid's results folder (studies.grid): print the findings across model "
                                  "sizes x training-set sizes beside Figure 3 instead of one run's (grid_findings)")
    p.add_argument("--family", default="framear", help="with --grid: the model family whose results files to read")
    p.add_argument("--task", help="with --grid: the task (default: the results files' one task)")
    p.add_argument("--plot", help="with --grid: write the grid beside Figure 3 as this SVG")
    findings.add_arguments(p)


def run_from_args(args: argparse.Namespace) -> int:
    if args.grid:
        from .grid_findings import run_grid

        return run_grid(args)
    return findings.run_from_args(args)
