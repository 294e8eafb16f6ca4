"""Data commands: `tasks`, `generate`, `verify` (a split), `publish` and `import` (the Hub, the reference data)."""
from __future__ import annotations

import argparse
import json
import textwrap
import time
from pathlib import Path
from shlex import quote
from typing import Any, Callable

from . import CliError


EXAMPLES = {
    "tasks": """
        examples:
          phybench tasks
          phybench tasks show collision
          phybench tasks show uniform --json
          phybench tasks check sliding-square
          phybench tasks check probe-priority --samples 32

        `tasks check NAME` (a task, or every task of a family) makes samples of every split and
        checks each promise its rows make: every body in view for the frames the row claims,
        positions that follow the family's closed form, the same sample twice from the same key,
        a stable spec hash.  Exit code 1 when one is broken (docs/adding-a-task.md).
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
}


def _add_tasks(add: Callable[..., argparse.ArgumentParser]) -> None:
    t = add("tasks", "List the registered tasks, show one task's spec, or check a family's rows.")
    t.add_argument("action", nargs="?", choices=["show", "check"], help="show one task; check a task or family")
    t.add_argument("name", nargs="?", help="task name (with 'show'); task or family name (with 'check')")
    t.add_argument("--samples", type=int, default=8, metavar="N",
                   help="check: samples per split, spread over it (default 8)")
    t.add_argument("--json", action="store_true", help="machine-readable output")
    t.epilog = textwrap.dedent(EXAMPLES["tasks"])
    t.set_defaults(func=cmd_tasks)


def _add_generate(add: Callable[..., argparse.ArgumentParser]) -> None:
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
    g.epilog = textwrap.dedent(EXAMPLES["generate"])
    g.set_defaults(func=cmd_generate)


def _add_verify(add: Callable[..., argparse.ArgumentParser]) -> None:
    v = add("verify", "Recompute a split's hashes and say what differs.")
    v.add_argument("folder", help="split folder written by `phybench generate`")
    v.add_argument("--regenerate", type=int, default=0, metavar="K", help="also re-simulate K samples and compare")
    v.add_argument("--json", action="store_true", help="machine-readable output")
    v.add_argument("--quiet", action="store_true", help="no progress bar")
    v.epilog = textwrap.dedent(EXAMPLES["verify"])
    v.set_defaults(func=cmd_verify)


def _add_publish(add: Callable[..., argparse.ArgumentParser]) -> None:
    pb = add("publish", "Verify splits of one task and publish them with a dataset card as one Hub revision.")
    pb.add_argument("task", help="task name (see `phybench tasks`)")
    pb.add_argument("repo_id", metavar="REPO_ID", help="Hub dataset repo, e.g. my-org/phybench (created if needed)")
    pb.add_argument("splits", nargs="+", metavar="SPLIT_DIR", help="split folders of that task")
    pb.add_argument("--private", action="store_true", help="create the repo private")
    pb.add_argument("--message", help="commit message (default: names the splits)")
    pb.add_argument("--token", help="Hub token with write access (default: HF_TOKEN or `hf auth login`)")
    pb.add_argument("--quiet", action="store_true", help="no progress bars")
    pb.epilog = textwrap.dedent(EXAMPLES["publish"])
    pb.set_defaults(func=cmd_publish)


def _add_import(add: Callable[..., argparse.ArgumentParser]) -> None:
    im = add("import", "Convert the reference authors' data into a phybench split.")
    im.add_argument("source", choices=["phyworld"], help="phyworld: HDF5 written by github.com/phyworld/phyworld")
    im.add_argument("file", metavar="HDF5", help="one chunk ({i}.hdf5) or a merged file")
    im.add_argument("--task", required=True, help="uniform, parabola or collision")
    im.add_argument("--out", required=True, help="output split folder (must not exist or be empty)")
    im.add_argument("--split", default="phyworld-eval", help="split name (default phyworld-eval)")
    im.add_argument("--limit", type=int, help="only the first N rows")
    im.add_argument("--quiet", action="store_true", help="no progress bar")
    im.epilog = textwrap.dedent(EXAMPLES["import"])
    im.set_defaults(func=cmd_import)


# `phybench --help` lists the commands in the order they are added (`cli.PARSERS`).
PARSERS = {"tasks": _add_tasks, "generate": _add_generate, "verify": _add_verify, "publish": _add_publish, "import": _add_import}


def _fmt_range(r: tuple[float, float]) -> str:
    return f"[{r[0]:g}, {r[1]:g}]"


def cmd_tasks_check(args: argparse.Namespace) -> int:
    """`phybench tasks check NAME`: the family checker on samples of every split (exit 1 on a finding)."""
    from ..tasks.check import check_spec_hashes_elsewhere, check_task, tasks_named

    if not args.name:
        raise CliError("`phybench tasks check` needs a task or family name, e.g. `phybench tasks check uniform`")
    if args.samples < 1:
        raise CliError(f"--samples must be at least 1, got {args.samples}")
    specs = tasks_named(args.name)
    reports = [check_task(spec, per_split=args.samples) for spec in specs]
    elsewhere, unknown = check_spec_hashes_elsewhere(specs)
    for report in reports:
        report.findings += [f for f in elsewhere if f.task == report.task]
        if report.task in unknown:
            report.skipped.append("spec hash in a fresh interpreter: the task is registered in this process only")
    if args.json:
        print(json.dumps([{"task": r.task, "ok": r.ok, "samples": r.samples, "skipped": r.skipped,
                           "findings": [{"check": f.check, "sample_id": f.sample_id, "message": f.message}
                                        for f in r.findings]} for r in reports], indent=2))
        return 0 if all(r.ok for r in reports) else 1
    for spec, r in zip(specs, reports, strict=True):
        print(f"{r.task} v{spec.version} (family {spec.scenario}): {r.samples} samples of {len(spec.split_names)} "
              f"split(s) checked: frames in view, closed form, determinism, spec hash")
        for note in r.skipped:
            print(f"  skipped: {note}")
        print("  OK" if r.ok else f"  FAILED: {len(r.findings)} finding(s)")
        for f in r.findings[:20]:
            print(textwrap.fill(str(f), 100, initial_indent="  - ", subsequent_indent="    "))
        if len(r.findings) > 20:
            print(f"  ... and {len(r.findings) - 20} more (--json lists them all)")
    return 0 if all(r.ok for r in reports) else 1


def cmd_tasks(args: argparse.Namespace) -> int:
    from ..tasks import TASKS, get_task

    if args.action == "check":
        return cmd_tasks_check(args)
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
        from ..data.conditions import example

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


def cmd_verify(args: argparse.Namespace) -> int:
    from ..data.verify import verify

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


def cmd_publish(args: argparse.Namespace) -> int:
    from ..data.hub import publish

    info = publish(args.task, args.repo_id, args.splits, private=args.private, revision_message=args.message,
                   token=args.token, progress=not args.quiet)
    print(f"published {len(args.splits)} split(s) of {args.task} to {args.repo_id}")
    print(f"revision {info.oid}  {info.commit_url}")
    print(f"pin it: phybench score SUB --from-hub {quote(args.repo_id)} --task {args.task} --split SPLIT --revision {info.oid}")
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
