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
          phybench leaderboard build leaderboard/results --out site/ --prebuilt-viewers leaderboard/viewers
          phybench leaderboard build results/ --out site/ --viewers subs/ --viewer-data data/
          phybench leaderboard sync --repo my-org/phybench-submissions --splits data/ --results results/ --site site/
          phybench leaderboard publish --repo my-org/phybench-board --results leaderboard/results
          phybench leaderboard build --from-hub my-org/phybench-board --revision 0123abc... --out site/
          phybench leaderboard pull --repo my-org/phybench-board --results leaderboard/results

        exit codes: 0 built, 1 built but some results were refused (--allow-partial),
        2 refused (nothing built; every refused file is listed with its reason).
        sync: 0 every open pull request admitted or refused, 1 one left open after an error
        (retried next time) or the site not built, 2 nothing done (docs/leaderboard.md).
    """,
    "verify": """
        verify: re-score each results file from its submission (found by hash under
        --submissions) against its split (by hash under --splits), compare every number,
        and write <stem>.verified.json beside each file that matches:
          phybench leaderboard verify leaderboard/results/fundamental/lite --submissions subs/ --splits data/
          phybench leaderboard verify r.json --submissions subs/ --splits data/ --skip {network} --by ci --date 2026-11-25

        verify exit codes: 0 every file verified, 1 some differ (each differing field is
        listed; no record for them), 2 some could not be checked (one line each with its
        code, see docs/results.md "Verification codes"; nothing written).

        reproduce: does a re-made submission have a verified file's videos (its videos-only
        hash against the record's; training time and hardware are card facts, not verified)?
          phybench leaderboard reproduce r.json --submissions remade-sub/ [--require-verified]
        exit 0 reproduced, 1 other videos, 2 cannot check (no record with a videos hash).
    """,
}


def _add_leaderboard(add: Callable[..., argparse.ArgumentParser]) -> None:
    from ..scoring.metrics import help_text  # the registry: no heavy imports

    lb = add("leaderboard", "Build the static leaderboard site from verified results files; sync Hub submissions.")
    add_arguments(lb)
    lb.epilog = textwrap.dedent(EXAMPLES["leaderboard"]) + help_text(textwrap.dedent(EXAMPLES["verify"]))
    lb.set_defaults(func=cmd_leaderboard)


# `phybench --help` lists the commands in the order they are added (`cli.PARSERS`).
PARSERS = {"leaderboard": _add_leaderboard}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`phybench leaderboard build RESULTS_DIR --out SITE_DIR`."""
    from .submit import add_sync_arguments

    parser.add_argument("action", choices=["build", "verify", "reproduce", "sync", "publish", "pull"],
                        help="build: write the static site; verify: re-score results files from their submissions; "
                             "reproduce: does a re-made submission (--submissions SUB) have a verified file's videos; "
                             "sync: admit the Hub's submission pull requests; publish: write the board's results "
                             "into its Hub dataset repository; pull: its admitted rows into --results DIR/hub/ "
                             "(docs/leaderboard.md)")
    parser.add_argument("results_dir", metavar="RESULTS_DIR", nargs="?",
                        help="folder of results files (*.json, searched recursively)")
    parser.add_argument("--out", metavar="SITE_DIR", help="build: where index.html and the exports go (required)")
    parser.add_argument("--splits", metavar="DIR", help="folder of split folders: each split hash must equal its manifest's "
                                                          "(verify, sync: the splits to re-score against, found by hash)")
    parser.add_argument("--allow-partial", action="store_true", help="build from the accepted files; list the refused ones on the page")
    parser.add_argument("--no-registry-check", action="store_true", help="skip the spec, settings and weight checks (previews only)")
    parser.add_argument("--require-verified", action="store_true",
                        help="refuse every results file without a valid verification record beside it (the shipped board)")
    add_viewer_arguments(parser)
    parser.add_argument("--from-hub", metavar="OWNER/NAME", help="build: read the results from the board's Hub dataset "
                                                                  "repository (always --require-verified)")
    parser.add_argument("--revision", metavar="REV", help="build --from-hub: the commit to build from (pinned); pull: "
                                                           "the revision to pull (default main)")
    add_verify_arguments(parser)
    add_sync_arguments(parser)


def cmd_leaderboard(args: argparse.Namespace, log: Any = print) -> int:
    """Exit code 0: built, nothing refused; 1: built with --allow-partial, some refused; 2: refused, nothing built."""
    from ..leaderboard import LeaderboardError, build

    if args.action == "sync":
        from .submit import cmd_sync

        return cmd_sync(args)
    if args.action == "pull":
        from .hub_results import cmd_pull

        return cmd_pull(args, log)
    if args.action == "publish" or args.from_hub or args.revision:
        from .hub_results import cmd_build_from_hub, cmd_publish

        return cmd_publish(args, log) if args.action == "publish" else cmd_build_from_hub(args, log)
    if args.action == "reproduce":
        return cmd_reproduce(args, log)
    if args.action == "verify":
        if not args.results_dir:
            print("phybench leaderboard verify: error [verify-usage]: give RESULTS (files or folders)", file=sys.stderr)
            return 2
        return cmd_verify(args, log)
    misplaced = verify_only_flags(args)
    if misplaced:
        print(f"phybench leaderboard: error: {', '.join(misplaced)}: only with verify, not build", file=sys.stderr)
        return 2
    if not args.results_dir or not args.out:
        print("phybench leaderboard: error: build needs RESULTS_DIR and --out SITE_DIR", file=sys.stderr)
        return 2
    if args.viewers and not (args.viewer_data or args.splits):
        print("phybench leaderboard: error: --viewers needs --viewer-data DIR (or --splits DIR): the splits the "
              "submissions answer, found by hash", file=sys.stderr)
        return 2
    try:
        report = build(args.results_dir, args.out, registry_check=not args.no_registry_check,
                       splits_dir=args.splits, allow_partial=args.allow_partial,
                       require_verified=getattr(args, "require_verified", False), **viewer_options(args, log))
    except LeaderboardError as exc:
        print(f"phybench leaderboard: error: {exc}", file=sys.stderr)
        return 2
    log(report.to_text())
    return 0 if report.ok else 1


# ---------------------------------------------------------------- viewers
def add_viewer_arguments(parser: argparse.ArgumentParser) -> None:
    """build: a `phybench view` folder per row, linked from it (`phybench.leaderboard.viewer.board_viewers`)."""
    from ..leaderboard.viewer.board_viewers import MAX_MB, MAX_VIDEOS

    parser.add_argument("--viewers", metavar="SUBS_DIR", help="build: a viewer per results file whose submission is "
                                                             "under SUBS_DIR (found by content hash), linked from its row")
    parser.add_argument("--viewer-data", metavar="DIR", help="build: the splits those submissions answer, found by "
                                                            "hash (default: --splits)")
    parser.add_argument("--prebuilt-viewers", metavar="DIR", action="append", default=[],
                        help="build: viewers built before (e.g. leaderboard/viewers), each copied in and linked when "
                             "its record names a results file's exact bytes (repeatable)")
    parser.add_argument("--viewer-max-videos", type=int, default=MAX_VIDEOS,
                        help=f"build: videos with media per built viewer (default {MAX_VIDEOS})")
    parser.add_argument("--viewer-max-mb", type=float, default=MAX_MB,
                        help=f"build: media budget per built viewer in MB (default {MAX_MB:g})")


def viewer_options(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    """build()'s viewer arguments from the command line."""
    return {"viewers": args.viewers, "viewer_data": args.viewer_data or args.splits,
            "prebuilt_viewers": args.prebuilt_viewers, "viewer_budget": (args.viewer_max_videos, args.viewer_max_mb),
            "log": (lambda line: print(line, file=sys.stderr)) if args.viewers else None}


# ---------------------------------------------------------------- verify
def add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    """`phybench leaderboard verify RESULTS... --submissions DIR --splits DIR`: its own flags.

    RESULTS is the same positional as build's RESULTS_DIR plus any further files or folders
    (`more_results`); --splits is shared with build (there it checks split hashes)."""
    from ..scoring.metrics import help_text  # the registry: no heavy imports

    parser.add_argument("more_results", nargs="*", metavar="RESULTS", help="verify: more results files or folders")
    parser.add_argument("--submissions", metavar="DIR", help="verify: folder of submissions (folders or archives), "
                                                             "found by content hash")
    parser.add_argument("--skip", metavar="METRICS", default="", help=help_text("verify: metrics not recomputed (e.g. {network}); "
                                                                               "listed as skipped in the record"))
    parser.add_argument("--by", metavar="NAME", help="verify: who verifies, for the record (default: the login name)")
    parser.add_argument("--date", metavar="YYYY-MM-DD", help="verify: the record's date (default: today, UTC)")
    parser.add_argument("--workers", type=int, default=1, help="verify: processes for the cheap metrics (default 1)")
    parser.add_argument("--batch-size", type=int, default=16, help=help_text("verify: videos per batch of {NETWORK} (default 16, "
                                                                            "as `phybench score`: the features depend on it)"))
    parser.add_argument("--device", default="cpu", help=help_text("verify: torch device for {NETWORK} (default cpu)"))
    parser.add_argument("--signing-key", metavar="PEM", help="verify: sign the records with this private key (default: "
                                                              "$PHYBENCH_SIGNING_KEY; neither: unsigned records, which "
                                                              "--require-verified refuses)")


VERIFY_ONLY = {"more_results": "more RESULTS", "submissions": "--submissions", "skip": "--skip", "by": "--by",
               "date": "--date", "workers": "--workers", "batch_size": "--batch-size", "device": "--device",
               "signing_key": "--signing-key"}


def verify_only_flags(args: argparse.Namespace) -> list[str]:
    """The verify flags given to another action (a mistake, said rather than ignored)."""
    defaults = {"more_results": [], "skip": "", "workers": 1, "batch_size": 16, "device": "cpu"}
    return [flag for key, flag in VERIFY_ONLY.items() if getattr(args, key, None) not in (None, defaults.get(key))]


def cmd_verify(args: argparse.Namespace, log: Any = print) -> int:
    """Exit 0: every file verified; 1: some differ; 2: some could not be checked (nothing written)."""
    from ..leaderboard.verify.rescore import verify_many

    missing = [flag for flag, value in (("--submissions", args.submissions), ("--splits", args.splits)) if not value]
    if missing:
        print(f"phybench leaderboard verify: error [verify-usage]: give {' and '.join(missing)}", file=sys.stderr)
        return 2
    if args.out or args.allow_partial or args.no_registry_check:
        print("phybench leaderboard verify: error [verify-usage]: --out, --allow-partial and --no-registry-check "
              "go with build", file=sys.stderr)
        return 2
    report = verify_many([args.results_dir, *args.more_results], args.submissions, args.splits,
                         skip=args.skip.split(","), by=args.by, date=args.date, workers=args.workers,
                         batch_size=args.batch_size, device=args.device,
                         log=lambda line: print(line, file=sys.stderr), signing_key=args.signing_key)
    for line in report.lines():
        if report.refused:
            print(line, file=sys.stderr)
        else:
            log(line)
    return report.exit_code


def cmd_reproduce(args: argparse.Namespace, log: Any = print) -> int:
    """Exit 0: the re-made submission has the verified file's videos; 1: it does not; 2: cannot check."""
    from ..leaderboard.verify.reproduce import ReproduceError, reproduce

    if not args.results_dir or not args.submissions or args.more_results:
        print("phybench leaderboard reproduce: error [reproduce-usage]: give one RESULTS file and --submissions SUB "
              "(the re-made submission: a folder or an archive)", file=sys.stderr)
        return 2
    keyring = None
    if args.require_verified:
        from ..leaderboard.verify.signing import load_keyring

        keyring = load_keyring()
    try:
        found = reproduce(args.results_dir, args.submissions, keyring=keyring)
    except ReproduceError as exc:
        print(f"phybench leaderboard reproduce: error: {exc}", file=sys.stderr)
        return 2
    for line in found.lines():
        log(line)
    return 0 if found.reproduced else 1


def main(argv: Sequence[str] | None = None) -> int:
    """`phybench leaderboard ...` alone (the tests call it with a list of arguments)."""
    parser = argparse.ArgumentParser(prog="phybench leaderboard",
                                     description="Build the static leaderboard site from verified results files.",
                                     epilog=textwrap.dedent(EXAMPLES["leaderboard"]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return cmd_leaderboard(parser.parse_args(argv))
