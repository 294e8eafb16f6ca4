"""`phybench leaderboard build RESULTS_DIR --out SITE_DIR`: the static site from verified results files.

`phybench leaderboard sync --repo OWNER/NAME ...` (Hub intake) lives in `cli/submit.py`."""
from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any, Callable, Sequence


EXAMPLES = {
    "leaderboard": """
        examples:
          phybench leaderboard build leaderboard/results --out site/
          phybench leaderboard build results/ --out site/ --splits data/ --allow-partial
          phybench leaderboard build leaderboard/results --out site/ --require-verified
          phybench leaderboard sync --repo my-org/phybench-submissions --splits data/ --results results/ --site site/

        exit codes: 0 built, 1 built but some results were refused (--allow-partial),
        2 refused (nothing built; every refused file is listed with its reason).
        sync: 0 every open pull request admitted or refused, 1 one left open after an error
        (retried next time) or the site not built, 2 nothing done (docs/leaderboard.md).
    """,
}


def _add_leaderboard(add: Callable[..., argparse.ArgumentParser]) -> None:
    lb = add("leaderboard", "Build the static leaderboard site from verified results files; sync Hub submissions.")
    add_arguments(lb)
    lb.epilog = textwrap.dedent(EXAMPLES["leaderboard"])
    lb.set_defaults(func=cmd_leaderboard)


# `phybench --help` lists the commands in the order they are added (`cli.PARSERS`).
PARSERS = {"leaderboard": _add_leaderboard}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`phybench leaderboard build RESULTS_DIR --out SITE_DIR`."""
    from .submit import add_sync_arguments

    parser.add_argument("action", choices=["build", "sync"],
                        help="build: write the static site; sync: admit the Hub's submission pull requests")
    parser.add_argument("results_dir", metavar="RESULTS_DIR", nargs="?",
                        help="folder of results files (*.json, searched recursively)")
    parser.add_argument("--out", metavar="SITE_DIR", help="where index.html and the exports go")
    parser.add_argument("--splits", metavar="DIR", help="folder of split folders: each split hash must equal its manifest's")
    parser.add_argument("--allow-partial", action="store_true", help="build from the accepted files; list the refused ones on the page")
    parser.add_argument("--no-registry-check", action="store_true", help="skip the spec, settings and weight checks (previews only)")
    parser.add_argument("--require-verified", action="store_true",
                        help="refuse every results file without a valid verification record beside it (the shipped board)")
    add_sync_arguments(parser)


def cmd_leaderboard(args: argparse.Namespace, log: Any = print) -> int:
    """Exit code 0: built, nothing refused; 1: built with --allow-partial, some refused; 2: refused, nothing built."""
    from ..leaderboard import LeaderboardError, build

    if args.action == "sync":
        from .submit import cmd_sync

        return cmd_sync(args)
    if not args.results_dir or not args.out:
        print("phybench leaderboard: error: build needs RESULTS_DIR and --out SITE_DIR", file=sys.stderr)
        return 2
    try:
        report = build(args.results_dir, args.out, registry_check=not args.no_registry_check,
                       splits_dir=args.splits, allow_partial=args.allow_partial,
                       require_verified=getattr(args, "require_verified", False))
    except LeaderboardError as exc:
        print(f"phybench leaderboard: error: {exc}", file=sys.stderr)
        return 2
    log(report.to_text())
    return 0 if report.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    """`phybench leaderboard ...` alone (the tests call it with a list of arguments)."""
    parser = argparse.ArgumentParser(prog="phybench leaderboard",
                                     description="Build the static leaderboard site from verified results files.",
                                     epilog=textwrap.dedent(EXAMPLES["leaderboard"]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return cmd_leaderboard(parser.parse_args(argv))
