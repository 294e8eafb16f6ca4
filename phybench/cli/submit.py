"""Intake through the Hub: `phybench submit` (authors) and `phybench leaderboard sync` (maintainers).

The logic is `phybench.leaderboard.intake`; this module only parses arguments and prints.
huggingface_hub reads HF_ENDPOINT and HF_TOKEN (or the token saved by `hf auth login`)."""
from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Callable

from . import CliError

EXAMPLES = {
    "submit": """
        examples:
          phybench submit runs/m/submissions/uniform-id-eval --repo phybench/submissions
          phybench submit sub/ --repo phybench/submissions --card card.json --results results.json --data data/uniform-id-eval

        The submission (folder or archive), its card (card.json in or beside SUB, or --card) and
        the optional self-reported results (--results, the file `phybench score --out` wrote) are
        checked here first; nothing is uploaded unless all are valid.  Then one pull request
        adds them to the Hub dataset repo under submissions/<model>/<hash12>/ and its address
        is printed.  The maintainers' `phybench leaderboard sync` re-scores it and answers on the
        pull request.  Log in first (`hf auth login`) or set HF_TOKEN.

        exit codes: 0 pull request opened, 2 refused (nothing uploaded) or the Hub said no.
    """,
}


def _add_submit(add: Callable[..., argparse.ArgumentParser]) -> None:
    sb = add("submit", "Check a submission and its card, then open a pull request on the board's Hub repo.")
    sb.add_argument("submission", metavar="SUB", help="submission folder or archive (.zip, .tar, .tar.gz, ...)")
    sb.add_argument("--repo", required=True, metavar="OWNER/NAME", help="the board's Hub dataset repo")
    sb.add_argument("--card", metavar="CARD", help="the submission card (default: card.json in or beside SUB)")
    sb.add_argument("--results", metavar="RESULTS", help="your own results file for it (compared by the sync)")
    sb.add_argument("--data", metavar="SPLIT_DIR", help="validate against this split too (recommended)")
    sb.add_argument("--revision", default="main", help="the branch the pull request targets (default main)")
    sb.epilog = textwrap.dedent(EXAMPLES["submit"])
    sb.set_defaults(func=cmd_submit)


PARSERS = {"submit": _add_submit}


def cmd_submit(args: argparse.Namespace) -> int:
    from ..leaderboard.intake import IntakeError, prepare_upload, submit

    try:
        prepared = prepare_upload(args.submission, args.card, args.results, args.data)
    except IntakeError as exc:
        raise CliError(str(exc)) from None
    try:
        url = submit(prepared, args.repo, revision=args.revision)
    except IntakeError as exc:
        raise CliError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - the Hub's answer (no such repo, no token, ...) in one line
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CliError(f"the Hub refused the pull request: {first}") from None
    print(f"opened {url}")
    print(f"  {prepared.folder}/: {', '.join(p.rsplit('/', 1)[1] for p in prepared.files)}")
    print("  the maintainers' `phybench leaderboard sync` re-scores it and comments the outcome there")
    return 0


# ------------------------------------------------------------------ leaderboard sync
def add_sync_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `phybench leaderboard sync` (--splits is shared with build)."""
    g = parser.add_argument_group("sync (Hub intake)")
    g.add_argument("--repo", metavar="OWNER/NAME", help="sync: the Hub dataset repo submissions come to")
    g.add_argument("--results", metavar="DIR", help="sync: the board's results folder (admitted ones go to DIR/hub/)")
    g.add_argument("--site", metavar="SITE_DIR", help="sync: the site to rebuild when something was admitted")
    g.add_argument("--metrics", help="sync: as for score (default: score's default metrics)")
    g.add_argument("--verified-by", metavar="WHO", help="sync: the verifier named in the records "
                                                        "(default: phybench leaderboard sync (<Hub user>))")


def cmd_sync(args: argparse.Namespace) -> int:
    """Exit 0: every open PR admitted or refused; 1: one was left open after an error, or the site
    failed to build; 2: nothing done (bad arguments, no such repo, no token)."""
    from ..leaderboard.intake import IntakeError, sync
    from ..scoring.score import ScoreError, parse_metrics

    missing = [flag for flag, value in (("--repo", args.repo), ("--splits", args.splits), ("--results", args.results),
                                        ("--site", args.site)) if not value]
    if missing:
        raise CliError(f"sync needs {', '.join(missing)}: phybench leaderboard sync --repo OWNER/NAME "
                       "--splits DIR --results DIR --site SITE_DIR")
    if args.results_dir or args.out:
        raise CliError("sync takes --results DIR and --site SITE_DIR (RESULTS_DIR and --out are build's)")
    try:
        metrics = parse_metrics(args.metrics) if args.metrics else None
    except ScoreError as exc:
        raise CliError(str(exc)) from None
    try:
        report = sync(args.repo, args.splits, args.results, args.site, metrics=metrics,
                      verified_by=args.verified_by, log=print)
    except IntakeError as exc:
        raise CliError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - the Hub's answer before any PR was handled
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"phybench leaderboard: error: {first}", file=sys.stderr)
        return 2
    print(report.summary())
    return 0 if report.ok else 1
