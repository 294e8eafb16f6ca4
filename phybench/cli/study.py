"""`phybench study NAME`: the studies installed through the `phybench.studies` entry point group.

`phybench_baselines` (pyproject.toml) installs `scaling` (the paper's Figure 3, with our own
DiTs), `modality` (its Fig. 13) and `findings` (its three findings, on a trained framear run);
another package adds a study the same way.  A study's module has `HELP` (one line),
`add_arguments(parser)` and `run_from_args(args) -> int`.  Found by entry point, not by module
name, so `phybench` imports nothing of the baselines by name (the layer checks see every import).
"""
from __future__ import annotations

import argparse
from typing import Callable

from ..registry import entry_point_table
from . import CliError

GROUP = "phybench.studies"


def register(add: Callable[..., argparse.ArgumentParser]) -> None:
    found = entry_point_table(GROUP)
    p = add("study", "Run a study installed through the `phybench.studies` entry points: `scaling` trains DiT sizes "
                     "x training-set sizes, samples, scores (Fig. 3); `modality` compares frames, frames + state and "
                     "frames + text conditioning (Fig. 13); `findings` prints the paper's three findings measured "
                     "on a trained framear run." + ("" if found else " (none is installed: pip install -e .)"))
    if not found:  # say why rather than argparse's empty "choose from"
        p.add_argument("name", nargs="?", metavar="STUDY")
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=cmd_study)
        return
    studies = p.add_subparsers(dest="name", metavar="STUDY", required=True)
    for name, ep in found.items():
        try:
            module = ep.load()
        except ImportError as exc:  # the baselines are part of the wheel; torch/accelerate come with the `dit` extra
            q = studies.add_parser(name, help=f"(cannot load {ep.value}: {exc})")
            q.add_argument("rest", nargs=argparse.REMAINDER)
            continue
        help = getattr(module, "HELP", None) or (module.__doc__ or name).strip().splitlines()[0]
        q = studies.add_parser(name, help=help, description=help)
        module.add_arguments(q)
    p.set_defaults(func=cmd_study)


def cmd_study(args: argparse.Namespace) -> int:
    ep = entry_point_table(GROUP).get(args.name or "")
    if ep is None:
        raise CliError("no study is installed through the phybench.studies entry points (pip install -e \".[dit]\"; "
                       "an install made before the studies became entry points must be installed again)")
    try:
        run_from_args = ep.load().run_from_args
    except ImportError as exc:
        raise CliError(f"the {args.name} study needs the DiT baselines' dependencies: pip install -e \".[dit]\" ({exc})") from None
    try:
        return run_from_args(args)
    except ValueError as exc:
        raise CliError(str(exc)) from None
