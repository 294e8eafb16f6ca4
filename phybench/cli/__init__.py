"""The `phybench` command: one module per command group, each adding its own subcommands.

`data` (tasks, generate, verify, publish, import), `scoring` (validate, score, weights),
`baselines` (baseline), `submission` (export-inputs, pack, run), `leaderboard`, `quickstart`,
`judge` (judge, violations, calibrate-judge), `probes` (analyze), `study`, `plausibility`,
`submit` (submit, card init; the options of `leaderboard sync`), `viewer` (view).
A module has `PARSERS` ({command: add_parser(add)}) or `register(add)`; each subparser sets
`func=` through `set_defaults`, so a new command is one file plus one line here.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import textwrap
from typing import Any, Sequence

from .._version import __version__


class CliError(Exception):
    """A user error: printed as one line with its stable `code` (docs/submission.md), exit code 2."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code  # None: the code of the error it was raised from (`error_line`), else "usage"


# Control characters and bidi overrides in an error line (a hostile file or model name) are shown
# escaped: they would otherwise move the cursor, ring, or reorder what the terminal shows.
_UNPRINTABLE = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7f, 0xa0)]}
_UNPRINTABLE.update({c: f"\\u{c:04x}" for c in [*range(0x200b, 0x2010), *range(0x202a, 0x202f),
                                                  *range(0x2066, 0x206a)]})
_TYPE_CODES = {"RegistryError": "unknown_name", "WeightsError": "weights_missing", "WeightsMissing": "weights_missing",
               "HubError": "hub", "DatasetCardError": "hub_card", "PhyworldImportError": "import_refused",
               "BaselineError": "baseline", "LeaderboardError": "leaderboard"}
_OS_CODES = {"ENOSPC": "disk_full", "EDQUOT": "disk_full", "EROFS": "read_only", "EACCES": "permission_denied",
             "EPERM": "permission_denied"}


def error_line(command: str, exc: BaseException) -> str:
    """`phybench COMMAND: error [code]: message`, on one line whatever the message holds."""
    import errno

    code = getattr(exc, "code", None)
    if code is None and isinstance(exc, CliError):  # `raise CliError(str(e)) from None` keeps e as __context__
        inner = exc.__context__
        code = getattr(inner, "code", None) if inner is not None else None
        if not isinstance(code, str) and inner is not None:
            code = _TYPE_CODES.get(type(inner).__name__)
        code = code if isinstance(code, str) else "usage"
    if isinstance(exc, OSError):
        name = errno.errorcode.get(exc.errno or 0, "")
        code = _OS_CODES.get(name, "os_error")
        where = exc.filename if exc.filename is not None else ""
        message = f"{where}: {exc.strerror or exc}" if where else str(exc.strerror or exc)
        if code == "disk_full":
            message += "; nothing half-written was kept: free some space and run it again"
        elif code in ("read_only", "permission_denied"):
            message += "; write somewhere else (a writable folder)"
    else:
        message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        if not isinstance(code, str):
            code = _TYPE_CODES.get(type(exc).__name__, "error")
    message = " ".join(message.split("\n")).translate(_UNPRINTABLE)
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate, shown escaped
    return f"phybench {command}: error [{code}]: {message}"


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
    "viewer",     # phybench view (a static per-submission viewer)
    "hub_results",  # phybench export (the Hub's Eval Results format)
)
# The order `phybench --help` lists the group modules' commands in (the rest follow).
HELP_ORDER = ("tasks", "generate", "verify", "validate", "score", "weights", "baseline", "export-inputs", "pack",
              "run", "submit", "card", "leaderboard", "view", "publish", "import", "quickstart")


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
    from ..scoring.perceptual.weights import WeightsError

    parser = _parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (CliError, RegistryError, SplitError, WeightsError, OSError) as exc:
        print(error_line(args.command, exc), file=sys.stderr)
        return 2
    except RecursionError:  # a JSON file nested past Python's limit, read where no caller expected it
        print(f"phybench {args.command}: error [nested_too_deeply]: an input file is nested too deeply to read "
              "(a JSON document thousands of levels deep?); check the files it reads", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nphybench {args.command}: interrupted; finished shards are kept, run again to resume",
              file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover - `python -m phybench.cli`
    sys.exit(main())
