"""Intake through the Hub: `phybench submit` (authors) and `phybench leaderboard sync` (maintainers).

The logic is `phybench.leaderboard.hub.intake`; this module only parses arguments and prints.
huggingface_hub reads HF_ENDPOINT and HF_TOKEN (or the token saved by `hf auth login`)."""
from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any, Callable

from . import CliError

EXAMPLES = {
    "submit": """
        examples:
          phybench card init runs/m/uniform-id-eval/submission   # card.json beside it, prefilled; edit it
          phybench submit runs/m/uniform-id-eval/submission --repo phybench/submissions
          phybench submit sub/ --repo phybench/submissions --card card.json --results results.json --data data/uniform-id-eval
          phybench submit sub/ --repo phybench/submissions --results results.json --eval-results my-model-repo/

        The submission (folder or archive), its card (card.json in or beside SUB, or --card) and
        the optional self-reported results (--results, the file `phybench score --out` wrote) are
        checked here first; nothing is uploaded unless all are valid.  Then one pull request
        adds them to the Hub dataset repo under submissions/<model>/<hash12>/ and its address
        is printed.  The maintainers' `phybench leaderboard sync` re-scores it and answers on the
        pull request.  Log in first (`hf auth login`) or set HF_TOKEN.

        --eval-results DIR (needs --results) also writes DIR/.eval_results/phybench-<task>-<split>.yaml,
        the Hub's Eval Results file for your model repository (as `phybench export --eval-results`,
        benchmark --repo, source the pull request): schema-checked before anything is uploaded,
        written once the pull request is open; commit it to the model repository yourself.

        exit codes: 0 pull request opened (and --eval-results written), 1 pull request opened but
        --eval-results could not be written, 2 refused (nothing uploaded, nothing written) or the Hub said no.
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
    sb.add_argument("--yes", action="store_true", help="submit a split that is no official protocol's (a debugging "
                                                       "subset such as --limit 16) all the same")
    sb.add_argument("--eval-results", metavar="DIR", help="also write DIR/.eval_results/*.yaml from --results, for "
                                                          "your model repository (the Hub's Eval Results format)")
    sb.epilog = textwrap.dedent(EXAMPLES["submit"])
    sb.set_defaults(func=cmd_submit)


def _add_card(add: Callable[..., argparse.ArgumentParser]) -> None:
    cd = add("card", "Write a submission card (card.json) prefilled from the submission, for you to finish.")
    cd.add_argument("action", choices=["init"], help="init: write the template (never overwrites)")
    cd.add_argument("submission", metavar="SUB", help="submission folder or archive")
    cd.add_argument("--out", metavar="CARD", help="where to write it (default: card.json beside SUB, where "
                                                  "`phybench submit` looks; card-<model>.json there when card.json "
                                                  "is another model's)")
    cd.add_argument("--code-url", help="where the code that made the videos lives (http(s))")
    cd.add_argument("--checkpoint-url", help="where the weights can be downloaded (http(s))")
    cd.add_argument("--report-url", help="technical report or paper (http(s))")
    cd.add_argument("--license", metavar="SPDX", help="licence of the videos and model, e.g. Apache-2.0")
    cd.add_argument("--contact", help="how to reach the authors")
    cd.epilog = textwrap.dedent("""
        examples:
          phybench card init runs/m/uniform-id-eval/submission
          phybench card init sub.zip --code-url https://github.com/me/model --license MIT --out card.json

        Model name, condition frames and track, sampler settings and seeds come from the
        submission's submission.json; fields only you know are left as EDIT-ME, which
        `phybench submit` refuses until you fill them in (docs/leaderboard.md, "The card").
    """)
    cd.set_defaults(func=cmd_card)


PARSERS = {"submit": _add_submit, "card": _add_card}


def cmd_card(args: argparse.Namespace) -> int:
    from shlex import quote

    from ..submission.card_template import CardInitError, init_card

    try:
        path, problems = init_card(args.submission, args.out, code_url=args.code_url,
                                   checkpoint_url=args.checkpoint_url, report_url=args.report_url,
                                   license=args.license, contact=args.contact)
    except CardInitError as exc:
        raise CliError(str(exc), exc.code) from None
    print(f"wrote {path}, prefilled from {args.submission}'s submission.json")
    if problems:
        print("fill in before submitting:")
        for p in problems:
            print(f"  [{p.code}] {p.message}")
    else:
        print("it passes the card check; read it over")
    print(f"then: phybench submit {quote(str(args.submission))} --repo OWNER/NAME --card {quote(str(path))}")
    return 0


def cmd_submit(args: argparse.Namespace) -> int:
    from ..leaderboard.hub.intake import IntakeError, prepare_upload, submit
    from ..leaderboard.hub.submit import already_on_the_board, hub_refusal, require_token

    try:
        prepared = prepare_upload(args.submission, args.card, args.results, args.data)
    except IntakeError as exc:
        raise CliError(str(exc)) from None
    warning = _check_protocol(prepared, args.yes)
    checked = _eval_results_before_upload(args)
    try:
        require_token()
    except IntakeError as exc:
        raise CliError(str(exc), "hub_auth") from None
    try:
        duplicate = already_on_the_board(args.repo, prepared.submission_hash, args.revision)
    except Exception as exc:  # noqa: BLE001 - the Hub's answer (no such repo, a bad token, ...) in one line
        raise CliError(hub_refusal(exc, args.repo), "hub") from None
    if duplicate:
        raise CliError(f"{duplicate}. Nothing was uploaded", "duplicate_submission")
    if warning:  # said once every check has passed, so a refusal stays one line
        print(f"warning: {warning}; submitting it as asked (--yes)", file=sys.stderr)
    try:
        url = submit(prepared, args.repo, revision=args.revision)
    except IntakeError as exc:
        raise CliError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - the Hub's answer (no such repo, a bad token, ...) in one line
        raise CliError(hub_refusal(exc, args.repo), "hub") from None
    print(f"opened {url}")
    print(f"  {prepared.folder}/: {', '.join(p.rsplit('/', 1)[1] for p in prepared.files)}")
    print("  the maintainers' `phybench leaderboard sync` re-scores it and comments the outcome there")
    return 0 if checked is None else _write_eval_results(args, checked, url)


def _check_protocol(prepared: Any, yes: bool) -> str | None:
    """A split that is no official protocol's (`run --limit 16`, a debugging subset) is ranked on no
    official board: refused without --yes; with it, the warning to print (issue 49)."""
    protocol = prepared.protocol
    if protocol in ("full", "lite"):
        return None
    what = (f"{prepared.task}/{prepared.split} with {prepared.videos} video(s) is not an official protocol's split "
            f"({protocol}: a debugging subset; the lite protocol is `phybench run --protocol lite`), so no official "
            "board ranks it")
    if not yes:
        raise CliError(f"{what}; pass --yes to submit it all the same. Nothing was uploaded", "split_not_official")
    return what


def _eval_results_before_upload(args: argparse.Namespace) -> dict[str, bytes] | None:
    """`--eval-results`: the files made and schema-checked from the claim before anything is sent,
    so a claim the Hub's format cannot carry refuses the whole submit (nothing uploaded or written)."""
    if not getattr(args, "eval_results", None):
        return None
    from pathlib import Path

    from ..leaderboard.hub.eval_results import EVAL_RESULTS_DIR, HubFormatError, eval_results_files

    if not args.results:
        raise CliError("--eval-results needs --results RESULTS (the results file the .eval_results entries come "
                       "from); nothing uploaded", "eval_results_needs_results")
    out = Path(args.eval_results)
    try:
        files = eval_results_files([args.results], args.repo)
    except HubFormatError as exc:
        raise CliError(f"--eval-results: {str(exc).split('] ', 1)[-1]}; nothing uploaded", exc.code) from None
    inner = out / EVAL_RESULTS_DIR
    blocked = [p for p in (out, inner) if p.exists() and not p.is_dir()] + [inner] * inner.is_symlink()
    blocked += [p for p in map(out.joinpath, files) if p.is_symlink() or (p.exists() and not p.is_file())]
    if blocked:  # found now, not after the pull request is open
        raise CliError(f"--eval-results: {blocked[0]} is in the way (not a folder, a link, or not a plain file); "
                       "nothing uploaded", "eval_results_out")
    return files


def _write_eval_results(args: argparse.Namespace, checked: dict[str, bytes], pr_url: str) -> int:
    """Write the checked files, each entry's source the pull request (where the board answers).

    Exit 1 when they cannot be written: the pull request is open all the same, and
    `phybench export --eval-results` writes the same files later."""
    from ..leaderboard.hub.eval_results import HubFormatError, eval_results_files, write_files

    try:
        files = eval_results_files([args.results], args.repo, source_url=pr_url)
    except HubFormatError:  # an address the schema's source.url would not take: the entries without it
        files = checked
    try:
        written = write_files(files, args.eval_results)
    except (OSError, HubFormatError) as exc:
        print(f"phybench submit: error [eval_results_write]: the pull request is open, but {args.eval_results} was "
              f"not written ({type(exc).__name__}: {str(exc)[:200]}); `phybench export --eval-results` writes it",
              file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path} (for your model repository; the Hub shows it once you commit it there)")
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
    g.add_argument("--publish", action="store_true", help="sync: then write the board's results (--results: files, "
                                                          "Parquet sidecars, signed records, eval.yaml) into --repo "
                                                          "in one commit (leaderboard publish; none if unchanged)")


def cmd_sync(args: argparse.Namespace) -> int:
    """Exit 0: every open PR admitted or refused; 1: one was left open after an error, or the site
    failed to build; 2: nothing done (bad arguments, no such repo, no token)."""
    from ..leaderboard.hub.intake import IntakeError, sync
    from ..scoring.run.score import ScoreError, parse_metrics

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
    except OSError:
        raise  # a file the sync could not write: `error_line` gives its code (read_only, permission_denied, disk_full)
    except Exception as exc:  # noqa: BLE001 - the Hub's answer before any PR was handled
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"phybench leaderboard: error: {first}", file=sys.stderr)
        return 2
    print(report.summary())
    if getattr(args, "publish", False) and report.ok:
        from .hub_results import cmd_publish

        try:  # the sync is done either way: a failed publish is exit 1, retried by the next run
            return 1 if cmd_publish(argparse.Namespace(repo=args.repo, results=args.results, results_dir=None,
                                                       out=None, from_hub=None, revision=None)) else 0
        except CliError as exc:
            print(f"phybench leaderboard: error [{exc.code or 'publish'}]: publish after the sync: {exc}", file=sys.stderr)
            return 1
    return 0 if report.ok else 1
