"""`phybench analyze PROBE`: a generalisation probe's automatic analysis (paper section 5).

Two uses, one command:

    phybench analyze priority SUB --data SPLIT_DIR --out RESULTS.json
        reads every generated body of a submission on a probe's evaluation split and
        writes the probe's results file (per video verdicts, shares with intervals);
    phybench analyze priority RESULTS.json ...
        combines results files of one model (one per pair) into the probe's summary,
        e.g. the attribute ranking ``colour > size > velocity > shape``.
"""
from __future__ import annotations

import argparse
import textwrap
from typing import Any, Callable

from . import CliError

EXAMPLES = """
    examples:
      phybench generate priority-colour-shape --split conflict-eval --out data/cs --limit 200
      phybench baseline physics-oracle --data data/cs --out subs/oracle-cs
      phybench analyze priority subs/oracle-cs --data data/cs --out results/priority-colour-shape-oracle.json
      phybench analyze priority results/priority-*-oracle.json
      phybench analyze priority results/priority-*-oracle.json --json
"""


def epilog() -> str:
    """The examples, then one line per registered probe (each probe module gives its own `help`)."""
    from .. import probes

    lines = [f"{name:<8} ({probes.PROBES.get(name).help})" for name in probes.PROBES]
    block = "\n".join(("    probes: " if i == 0 else " " * 12) + line for i, line in enumerate(lines))
    return textwrap.dedent(EXAMPLES) + "\n" + textwrap.dedent(block) + "\n"


def cmd_analyze(args: argparse.Namespace) -> int:
    from ..registry import RegistryError
    from .. import probes

    try:
        probes.PROBES.get(args.probe)
    except RegistryError as exc:
        raise CliError(str(exc)) from None
    try:
        if args.data is not None:
            if len(args.paths) != 1:
                raise CliError("with --data, give exactly one submission (folder or archive)")
            results = probes.analyse(args.paths[0], args.data, progress=not args.json,
                                     train_split=args.train_split)
            if results["probe"] != args.probe:
                raise CliError(f"{args.data} is a {results['probe']} probe split, not {args.probe}")
            if args.out:
                probes.write_probe_results(args.out, results)
            summary = probes.PROBES.get(args.probe).summarise([results])
        else:
            if args.out:
                raise CliError("--out writes an analysis: give one submission and --data SPLIT_DIR")
            summary = probes.summarise_probe(args.probe, args.paths)
    except probes.ProbeError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print(probes.probe_results_bytes(summary).decode(), end="")
    else:
        print(probes.PROBES.get(args.probe).render(summary))
        if args.data is not None and args.out:
            print(f"results: {args.out}")
    return 0


def register(add: Callable[..., argparse.ArgumentParser]) -> None:
    p = add("analyze", "A generalisation probe's analysis: a submission -> verdicts; results files -> the "
                       "probe's summary (e.g. the attribute ranking).")
    p.epilog = epilog()
    p.add_argument("probe", help="the probe, e.g. priority")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="with --data: one submission; without: the probe's results files")
    p.add_argument("--data", help="the probe's evaluation split the submission answers")
    p.add_argument("--out", help="write the analysis results file here (with --data)")
    p.add_argument("--train-split", help="the training split the model learnt from (gaps, holes; default: the one its "
                                         "submission names, as nearest-neighbour's does)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")
    p.set_defaults(func=cmd_analyze)


__all__: list[Any] = ["register", "cmd_analyze"]
