"""`phybench export`: results in the Hub's Eval Results format (`phybench.leaderboard.hub_eval`).

    phybench export --eval-results OUT --benchmark OWNER/NAME RESULTS...   .eval_results/*.yaml of a model repo
    phybench export --eval-yaml OUT/eval.yaml RESULTS_DIR                  the board dataset repo's eval.yaml
"""
from __future__ import annotations

import argparse
import textwrap
from typing import Callable

EPILOG = """
    examples:
      phybench export --eval-results my-model/ --benchmark phybench/leaderboard results/uniform-id-eval-m.json
      phybench export --eval-yaml board/eval.yaml leaderboard/results

    --eval-results writes OUT/.eval_results/phybench-<task>-<split>.yaml, one entry per metric (Hub task id
    <task>/<split>/<metric>); copy the folder into the model repository (or open a pull request with it).
    Every file is checked against the Hub's documented schema before it is written (docs/leaderboard.md).
    exit codes: 0 written, 2 refused (one line with its code; nothing written).
"""


def _add_export(add: Callable[..., argparse.ArgumentParser]) -> None:
    ex = add("export", "Write results in the Hugging Face Hub's Eval Results format (.eval_results/, eval.yaml).")
    ex.add_argument("results", nargs="+", metavar="RESULTS", help="results files or folders")
    what = ex.add_mutually_exclusive_group(required=True)
    what.add_argument("--eval-results", metavar="OUT", help="write OUT/.eval_results/*.yaml for a model repository")
    what.add_argument("--eval-yaml", metavar="FILE", help="write the board dataset repository's eval.yaml")
    ex.add_argument("--benchmark", metavar="OWNER/NAME", help="--eval-results: the board's Hub dataset (the benchmark)")
    ex.add_argument("--revision", metavar="SHA", help="--eval-results: the benchmark dataset's commit (optional)")
    ex.add_argument("--source-url", metavar="URL", help="--eval-results: where the results can be seen (optional)")
    ex.epilog = textwrap.dedent(EPILOG)
    ex.set_defaults(func=cmd_export)


PARSERS = {"export": _add_export}


def cmd_export(args: argparse.Namespace) -> int:
    """Exit 0: written; 2: refused (CliError with the problem code, nothing written)."""
    from ..leaderboard.hub_eval import EVAL_YAML, HubFormatError, dump_yaml, eval_results_files, eval_yaml, write_files
    from . import CliError

    try:
        if args.eval_results:
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
