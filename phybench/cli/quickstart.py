"""`phybench quickstart`: the whole loop on a small default: splits, baselines, scores, leaderboard."""
from __future__ import annotations

import argparse
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .._version import __version__
from . import CliError

from .data import canonical_command

if TYPE_CHECKING:
    from ..scoring.run.documents import Results


EXAMPLES = {
    "quickstart": """
        examples:
          phybench quickstart
          phybench quickstart --out /tmp/pb --limit 32 --train-limit 5000
          phybench quickstart --protocol lite --out qs-lite     the shipped board's reference results
          phybench quickstart --metrics velocity_error,ssim,psnr,{network}
    """,
}


def _add_quickstart(add: Callable[..., argparse.ArgumentParser]) -> None:
    from ..scoring.metrics import help_text  # the registry: no heavy imports

    q = add("quickstart", "The whole loop on a small default: splits, baselines, scores, leaderboard.")
    q.add_argument("--out", default="phybench-quickstart", help="folder (default ./phybench-quickstart)")
    qs = q.add_mutually_exclusive_group()
    qs.add_argument("--limit", type=int, help="samples per evaluation split (default 64: a debugging subset)")
    qs.add_argument("--protocol", help="an official evaluation protocol instead of --limit: lite (200 per split) or full")
    q.add_argument("--train-limit", type=int, default=30_000,
                   help="training samples for nearest-neighbour (default 30000: all of train-30k)")
    q.add_argument("--metrics", default="velocity_error,ssim,psnr",
                   help=help_text("metrics to score (default velocity_error,ssim,psnr; add {network} after `phybench weights fetch`)"))
    q.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    q.epilog = help_text(textwrap.dedent(EXAMPLES["quickstart"]))
    q.set_defaults(func=cmd_quickstart)


# `phybench --help` lists the commands in the order they are added (`cli.PARSERS`).
PARSERS = {"quickstart": _add_quickstart}


def quickstart_tasks() -> list[Any]:
    """The tasks whose families ask to be in the quickstart, in the families' order."""
    from ..tasks import TASKS, family_of

    specs = [s for _, s in TASKS.items() if family_of(s).quickstart_order is not None]
    return sorted(specs, key=lambda s: family_of(s).quickstart_order)


QUICKSTART_BASELINES = ("ground-truth", "copy-last", "linear-extrapolation", "physics-oracle", "nearest-neighbour")


def _quickstart_splits(out: Path, args: argparse.Namespace, protocol: Any) -> list[tuple[str, str, int, str, str]]:
    """Step 1: generate (or reuse) every quickstart split and verify the evaluation ones; one summary row each."""
    from ..data.generate import generate
    from ..data.split import make_plan, read_manifest
    from ..data.verify import verify

    summary: list[tuple[str, str, int, str, str]] = []
    for spec in quickstart_tasks():
        task, train = spec.name, spec.train_splits[0]
        for split in spec.eval_splits + (train,):
            if split == train:
                limit = args.train_limit
            else:
                limit = protocol.size(spec, split) if protocol else args.limit
            plan = make_plan(spec, split, None, min(limit, spec.split_size(split)), None)
            folder = out / "data" / f"{task}-{split}"
            t0 = time.perf_counter()
            result = generate(plan, folder, workers=args.workers, progress=True, command=canonical_command(plan))
            dt = time.perf_counter() - t0
            if split != train:
                report = verify(folder)
                if not report.ok:
                    raise CliError(f"{folder} failed verification: {report.problems[0]}")
            m = result.manifest or read_manifest(folder)
            summary.append((task, split, plan.num_samples, "reused" if result.written == 0 else f"{dt:.1f} s",
                            m["split_hash"][:16]))
    return summary


def _quickstart_scores(out: Path, results_dir: Path, metrics: tuple[str, ...], workers: int) -> None:
    """Steps 2 and 3: each reference baseline's submission on each evaluation split, scored (reused when there)."""
    from ..reference import run_baseline
    from ..scoring.run.score import score, write_results

    for spec in quickstart_tasks():
        task = spec.name
        for split in spec.eval_splits:
            data = out / "data" / f"{task}-{split}"
            for name in QUICKSTART_BASELINES:
                results_file = results_dir / f"{task}-{split}-{name}.json"
                if results_file.exists():
                    print(f"  {task}/{split} {name}: reused {results_file}")
                    continue
                sub = out / "submissions" / f"{task}-{split}-{name}"
                if not (sub / "submission.json").exists():
                    train = out / "data" / f"{task}-{spec.train_splits[0]}" if name == "nearest-neighbour" else None
                    run_baseline(name, data, sub, train, progress=True, cache_dir=out / "cache", fmt="npz")
                res = score(sub, data, metrics, workers=workers, progress=True)
                write_results(results_file, res)
                print(f"  {task}/{split} {name}: {_ranked_text(res.results)}")


def _estimate(out: Path, args: argparse.Namespace, protocol: Any, metrics: tuple[str, ...]) -> None:
    """The whole run's cost, measured here on a few samples of each task first (issue 49)."""
    from .estimates import quickstart_estimate

    jobs, train = [], []
    for spec in quickstart_tasks():
        for split in spec.eval_splits:
            n = min(protocol.size(spec, split) if protocol else args.limit, spec.split_size(split))
            jobs.append((spec.name, split, n, (out / "data" / f"{spec.name}-{split}" / "manifest.json").is_file()))
        split = spec.train_splits[0]
        train.append((spec.name, split, min(args.train_limit, spec.split_size(split)),
                      (out / "data" / f"{spec.name}-{split}" / "manifest.json").is_file()))
    print(quickstart_estimate(jobs, train, metrics, len(QUICKSTART_BASELINES)) + "\n", flush=True)


def _ranked_text(results: Results) -> str:
    """The column the board sorts by, rounded as the board shows it: 'ranked velocity error 2.67 [2.5, 2.8]'."""
    from ..leaderboard.common.format import fmt
    from ..leaderboard.site.table import FALLBACK_METRIC, PRIMARY_METRIC

    overall = results["summary"]["overall"]
    metric = PRIMARY_METRIC if PRIMARY_METRIC in overall else FALLBACK_METRIC
    entry = overall.get(metric) or {}
    ci = entry.get("ci95") or [None, None]
    interval = f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci[0] is not None and ci[1] is not None else ""
    words = "ranked velocity error" if metric == PRIMARY_METRIC else "velocity error"
    return f"{words} {fmt(entry.get('mean'))}{interval}"


def cmd_quickstart(args: argparse.Namespace) -> int:
    """The whole loop on a small default: splits -> baselines -> scores -> leaderboard."""
    from ..leaderboard import LeaderboardError, build, check_out_dir
    from ..scoring.run.score import parse_metrics

    out = Path(args.out)
    metrics = parse_metrics(args.metrics)
    t_start = time.perf_counter()
    protocol = None
    if args.protocol:
        from ..tasks.protocols import PROTOCOLS

        protocol = PROTOCOLS.get(args.protocol)  # an unknown name: RegistryError, one line, exit 2
    elif args.limit is None:
        args.limit = 64
    try:  # before an hour of scoring, not after it: a site folder that is not ours is refused
        check_out_dir(out / "results", out / "site")
    except LeaderboardError as exc:
        raise CliError(f"{exc} (quickstart writes its site to {out / 'site'}: move that folder away, "
                       "or give another --out)") from None
    sizes = (f"protocol {protocol.name} ({protocol.description})" if protocol
             else f"{args.limit} samples per evaluation split")
    print(f"phybench {__version__} quickstart into {out}/: {sizes}, "
          f"{args.train_limit} training samples, metrics {','.join(metrics)}\n")

    _estimate(out, args, protocol, metrics)
    print("[1/4] splits: generate and verify (a second run reuses them)")
    summary = _quickstart_splits(out, args, protocol)
    print(f"\n{'task':<10} {'split':<10} {'n':>6}  {'time':>7}  split hash")
    for task, split, n, dt, h in summary:
        print(f"{task:<10} {split:<10} {n:>6}  {dt:>7}  {h}")

    print("\n[2/4] reference baselines -> submissions, [3/4] score them")
    results_dir = out / "results"
    _quickstart_scores(out, results_dir, metrics, args.workers)

    print("\n[4/4] leaderboard")
    # every row links its viewer: the board builds one per results file from its submission (by hash)
    board = build(results_dir, out / "site", splits_dir=out / "data", viewers=out / "submissions",
                  viewer_data=out / "data", log=lambda line: print(f"  {line}", flush=True))
    print(board.to_text())
    print(f"\ndone in {time.perf_counter() - t_start:.0f} s.")
    print(f"  site:           {out / 'site' / 'index.html'}  (open it in a browser; no server needed)")
    print(f"  Markdown table: {out / 'site' / 'leaderboard.md'}")
    print(f"  results files:  {results_dir}/")
    return 0
