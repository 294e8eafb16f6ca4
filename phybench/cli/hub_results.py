"""`phybench export`: results in the Hub's Eval Results format (`phybench.leaderboard.hub.eval_results`),
and the board's results on the Hub (`phybench.leaderboard.hub.board`).

    phybench export --eval-results OUT --benchmark OWNER/NAME RESULTS...   .eval_results/*.yaml of a model repo
    phybench export --eval-yaml OUT/eval.yaml RESULTS_DIR                  the board dataset repo's eval.yaml
    phybench export --every-eval-ever OUT RESULTS...                       Every Eval Ever records of board rows
    phybench leaderboard publish --repo OWNER/NAME --results DIR           the board's results onto the Hub
    phybench leaderboard build --from-hub OWNER/NAME --revision REV --out SITE
    phybench leaderboard pull --repo OWNER/NAME --results DIR [--revision REV]   the Hub's admitted rows into DIR/hub/
"""
from __future__ import annotations

import argparse
import textwrap
import sys
from typing import Any, Callable

EPILOG = """
    examples:
      phybench export --eval-results my-model/ --benchmark phybench/leaderboard results/uniform-id-eval-m.json
      phybench export --eval-yaml board/eval.yaml leaderboard/results
      phybench export --every-eval-ever eee/ leaderboard/results/fundamental/lite

    --eval-results writes OUT/.eval_results/phybench-<task>-<split>.yaml, one entry per metric (Hub task id
    <task>/<split>/<metric>); copy the folder into the model repository (or open a pull request with it).
    Every file is checked against the Hub's documented schema before it is written (docs/leaderboard.md).
    --every-eval-ever writes one record per results file in the Every Eval Ever datastore layout, each validated
    against that format's schema (0.3.0) first.
    exit codes: 0 written, 2 refused (one line with its code; nothing written).
"""


def _add_export(add: Callable[..., argparse.ArgumentParser]) -> None:
    ex = add("export", "Write results in the Hugging Face Hub's Eval Results format (.eval_results/, eval.yaml).")
    ex.add_argument("results", nargs="+", metavar="RESULTS", help="results files or folders")
    what = ex.add_mutually_exclusive_group(required=True)
    what.add_argument("--eval-results", metavar="OUT", help="write OUT/.eval_results/*.yaml for a model repository")
    what.add_argument("--eval-yaml", metavar="FILE", help="write the board dataset repository's eval.yaml")
    what.add_argument("--every-eval-ever", metavar="OUT", help="write OUT/data/phybench/<developer>/<model>/<uuid>.json, "
                      "one Every Eval Ever record per results file")
    ex.add_argument("--timestamp", metavar="UNIX_SECONDS", help="--every-eval-ever: when the record was made, for rows "
                    "without a verification record (default: the record's date)")
    ex.add_argument("--benchmark", metavar="OWNER/NAME", help="--eval-results: the board's Hub dataset (the benchmark)")
    ex.add_argument("--revision", metavar="SHA", help="--eval-results: the benchmark dataset's commit (optional)")
    ex.add_argument("--source-url", metavar="URL", help="--eval-results: where the results can be seen (optional)")
    ex.epilog = textwrap.dedent(EPILOG)
    ex.set_defaults(func=cmd_export)


PARSERS = {"export": _add_export}


def cmd_export(args: argparse.Namespace) -> int:
    """Exit 0: written; 2: refused (CliError with the problem code, nothing written)."""
    from ..leaderboard.hub.eval_results import EVAL_YAML, HubFormatError, dump_yaml, eval_results_files, eval_yaml, write_files
    from . import CliError

    try:
        if args.timestamp is not None and (not args.every_eval_ever or not args.timestamp.isdigit()
                                           or len(args.timestamp) > 12):
            raise CliError("--timestamp takes Unix seconds (digits only) and goes with --every-eval-ever")
        if args.every_eval_ever:
            from ..leaderboard.hub.eee import eee_files

            written = write_files(eee_files(args.results, timestamp=args.timestamp), args.every_eval_ever)
        elif args.eval_results:
            if not args.benchmark:
                raise CliError("--eval-results needs --benchmark OWNER/NAME (the board's Hub dataset)")
            files = eval_results_files(args.results, args.benchmark, revision=args.revision,
                                       source_url=args.source_url)
            written = write_files(files, args.eval_results)
        else:
            if args.benchmark or args.revision or args.source_url or len(args.results) != 1:
                raise CliError("--eval-yaml takes one RESULTS_DIR and no --benchmark/--revision/--source-url")
            from pathlib import Path

            out = Path(args.eval_yaml)
            if out.name != EVAL_YAML:
                raise CliError(f"--eval-yaml must name a file called {EVAL_YAML} (the Hub reads it by that name)")
            written = write_files({EVAL_YAML: dump_yaml(eval_yaml(args.results[0]))}, out.parent)
    except HubFormatError as exc:
        raise CliError(str(exc).split("] ", 1)[-1], exc.code) from None
    for path in written:
        print(path)
    return 0


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"{type(exc).__name__}: {text[:300]}"


def cmd_publish(args: argparse.Namespace, log: Any = print) -> int:
    """Exit 0: published in one commit; 2: refused (nothing written to the Hub)."""
    from ..leaderboard import LeaderboardError
    from ..leaderboard.hub.board import HubBoardError, publish_board
    from ..leaderboard.hub.eval_results import HubFormatError
    from . import CliError

    if not args.repo or not args.results or args.results_dir or args.out or args.from_hub or args.revision:
        raise CliError("publish takes --repo OWNER/NAME and --results DIR only")
    try:
        publish_board(args.repo, args.results, log=log)
    except (HubBoardError, HubFormatError) as exc:
        raise CliError(str(exc).split("] ", 1)[-1], exc.code) from None
    except LeaderboardError as exc:
        print(f"phybench leaderboard: error [publish-not-verified]: the board does not build with "
              f"--require-verified, nothing published:\n{exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the Hub's answer (no such repo, no token, main moved)
        raise CliError(_first_line(exc), "hub_error") from None
    return 0


def cmd_pull(args: argparse.Namespace, log: Any = print) -> int:
    """Exit 0: DIR/hub/ holds the Hub's admitted rows (nothing new is 0 too); 2: refused, DIR as it was."""
    from ..leaderboard.hub.board import HubBoardError
    from ..leaderboard.hub.pull import pull
    from ..leaderboard.hub.intake import IntakeError
    from . import CliError

    if not args.repo or not args.results or args.results_dir or args.out or args.from_hub:
        raise CliError("pull takes --repo OWNER/NAME --results DIR and optionally --revision REV")
    try:
        pull(args.repo, args.results, revision=args.revision or "main", log=log)
    except HubBoardError as exc:
        raise CliError(str(exc).split("] ", 1)[-1], exc.code) from None
    except IntakeError as exc:  # a sync of this board holds its lock
        raise CliError(str(exc), getattr(exc, "code", None) or "pull") from None
    except Exception as exc:  # noqa: BLE001 - the Hub's answer (no such repo or revision, no access)
        raise CliError(_first_line(exc), "hub_error") from None
    return 0


def cmd_build_from_hub(args: argparse.Namespace, log: Any = print) -> int:
    """As `leaderboard build --require-verified`, from the Hub: 0 built, 1 built with refusals
    (--allow-partial), 2 refused."""
    from ..leaderboard import LeaderboardError
    from ..leaderboard.hub.board import HubBoardError, build_from_hub
    from . import CliError

    if not args.from_hub or not args.revision or not args.out or args.results_dir or args.action != "build":
        raise CliError("build from the Hub takes --from-hub OWNER/NAME --revision REV --out SITE_DIR (no RESULTS_DIR)")
    try:
        report = build_from_hub(args.from_hub, args.revision, args.out, allow_partial=args.allow_partial,
                                registry_check=not args.no_registry_check, log=log)
    except HubBoardError as exc:
        raise CliError(str(exc).split("] ", 1)[-1], exc.code) from None
    except LeaderboardError as exc:
        print(f"phybench leaderboard: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the Hub's answer (no such repo or revision, no access)
        raise CliError(_first_line(exc), "hub_error") from None
    log(report.to_text())
    return 0 if report.ok else 1
