"""The `phybench` command: one module per command group, each adding its own subcommands.

`data` (tasks, generate, verify, publish, import), `scoring` (validate, score, weights),
`baselines` (baseline), `submission` (export-inputs, pack, run), `leaderboard`, `quickstart`,
`judge` (judge, violations, calibrate-judge), `probes` (analyze), `study`, `plausibility`,
`submit` (submit; the options of `leaderboard sync`).
A module has `PARSERS` ({command: add_parser(add)}) or `register(add)`; each subparser sets
`func=` through `set_defaults`, so a new command is one file plus one line here.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import textwrap
from typing import Any, Sequence

from .. import __version__


class CliError(Exception):
    """A user error: printed as one line, exit code 2."""


COMMAND_MODULES: tuple[str, ...] = (
    "data",       # phybench tasks / generate / verify / publish / import
    "scoring",    # phybench validate / score / weights
    "baselines",  # phybench baseline
    "submission",  # phybench export-inputs / pack / run
    "leaderboard",  # phybench leaderboard build
    "quickstart",  # phybench quickstart
    "judge",      # phybench judge / violations / calibrate-judge
    "probes",     # phybench analyze
    "study",      # phybench study scaling
    "plausibility",  # phybench plausibility (likelihood preference on planted pairs)
    "submit",     # phybench submit (a Hub pull request); leaderboard sync's options
)
# The order `phybench --help` lists the group modules' commands in (the rest follow).
HELP_ORDER = ("tasks", "generate", "verify", "validate", "score", "weights", "baseline", "export-inputs", "pack",
              "run", "submit", "leaderboard", "publish", "import", "quickstart")


def _command_modules() -> list[Any]:
    return [importlib.import_module(f"{__name__}.{name}") for name in COMMAND_MODULES]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="phybench",
        description="Benchmark whether video generation models learn physical laws.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=textwrap.dedent(
            """
            start here:
              phybench quickstart          the whole loop: splits, baselines, scores, leaderboard
              phybench tasks               list the registered tasks
              phybench export-inputs --data SPLIT_DIR --out IN    condition frames as plain files
              phybench pack GEN --inputs IN --out SUB --name M     generated videos -> a submission
              phybench validate SUB --data SPLIT_DIR    check a submission
              phybench score SUB --data SPLIT_DIR       score it (docs/results.md)
            """
        ),
    )
    p.add_argument("--version", action="version", version=f"phybench {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name, help=help, description=help, epilog="",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    modules = _command_modules()
    parsers = {name: fn for m in modules for name, fn in getattr(m, "PARSERS", {}).items()}
    for name in sorted(parsers, key=lambda n: (HELP_ORDER.index(n) if n in HELP_ORDER else len(HELP_ORDER), n)):
        parsers[name](add)
    for module in modules:
        if hasattr(module, "register"):
            module.register(add)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from ..registry import RegistryError
    from ..data.split import SplitError
    from ..scoring.weights import WeightsError

    parser = _parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (CliError, RegistryError, SplitError, WeightsError) as exc:
        print(f"phybench {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nphybench {args.command}: interrupted; finished shards are kept, run again to resume",
              file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover - `python -m phybench.cli`
    sys.exit(main())
