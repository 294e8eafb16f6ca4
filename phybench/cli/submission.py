"""Submission commands for model authors: `export-inputs`, `pack` and `run`."""
from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from shlex import quote
from typing import Any, Callable

from . import CliError
from .run_report import answer, estimate, views


EXAMPLES = {
    "run": """
        examples:
          phybench run --model phybench.examples.shift:Model --tasks uniform,parabola,collision --protocol lite --out runs/shift --site site/
          phybench run --model my_pkg.model:Model --model-args ckpt=runs/m.pt,steps=50 --data data/uniform-id-eval --out runs/m
          phybench run --model phybench.examples.shift:Model --tasks uniform --out runs/shift --view   # then open the printed viewer
          phybench run --model my_pkg.model:Model --tasks uniform --limit 8 --out runs/smoke   # a smoke test, 8 per split
          phybench run --model baseline:nearest-neighbour --model-args train=data/uniform-train-30k --tasks uniform --out runs/nn
          accelerate launch --num_processes 4 -m phybench.cli run --model my_pkg.model:Model --tasks uniform --out runs/m

        every video is written as soon as it is made: re-run the same command to resume.  A resume is
        keyed on the model (MODULE:CLASS, --model-args, the sha256 of any file they name, --name) and
        the split hash: another model into the same --out is refused; give a new --out, or --restart
        to delete the old videos.  --model also takes a file: --model path/to/model.py:Model.  Under
        accelerate launch / torchrun, process r makes every WORLD_SIZE-th video (the model picks its
        GPU from LOCAL_RANK); process 0 packs and scores.
    """,
}


def _add_export_inputs(add: Callable[..., argparse.ArgumentParser]) -> None:
    ei = add("export-inputs", "Write an evaluation split's condition frames as plain PNG files and one .npz.")
    ei.add_argument("--data", metavar="SPLIT_DIR", required=True, help="the evaluation split")
    ei.add_argument("--out", metavar="DIR", required=True, help="folder to write (must not exist)")
    ei.add_argument("--quiet", action="store_true", help="no progress bar")
    ei.set_defaults(func=cmd_export_inputs)


def _add_pack(add: Callable[..., argparse.ArgumentParser]) -> None:
    pk = add("pack", "Turn a folder of generated videos (by sample id) into a submission.")
    pk.add_argument("generated", help="folder with <sample_id>.npy/.npz/.mp4 or <sample_id>/00000.png ...")
    pk.add_argument("--inputs", metavar="DIR", required=True, help="the folder `phybench export-inputs` wrote")
    pk.add_argument("--out", metavar="SUB", required=True, help="submission folder to write (must not exist)")
    pk.add_argument("--name", required=True, help="the model's name in submission.json")
    pk.add_argument("--quiet", action="store_true", help="no progress bar")
    pk.set_defaults(func=cmd_pack)


def _add_run(add: Callable[..., argparse.ArgumentParser]) -> None:
    rn = add("run", "Run a model (MODULE:CLASS) on evaluation splits, pack and score its videos.")
    rn.add_argument("--model", required=True, metavar="MODULE:CLASS",
                    help="e.g. phybench.examples.shift:Model, or baseline:NAME for a reference baseline")
    rn.add_argument("--model-args", metavar="K=V,...", help="keyword arguments of the model class")
    rn.add_argument("--name", help="model name in the results (default: the name the model's submission_card() "
                    "gives, else the class's; a class called Model or Pipeline: its module's)")
    where = rn.add_mutually_exclusive_group(required=True)
    where.add_argument("--data", metavar="SPLIT_DIR", nargs="+", help="evaluation splits to answer")
    where.add_argument("--tasks", metavar="T1,T2", help="answer these tasks' evaluation splits on --protocol "
                       "(generated under OUT/data/, reused on a re-run)")
    rn.add_argument("--protocol", help="with --tasks: full or lite (default lite)")
    rn.add_argument("--limit", type=int, metavar="N", help="with --tasks, instead of --protocol: only the first N "
                    "samples of each split, a smoke test (a debugging subset: its results say 'limit N' and "
                    "a board labels them so; give it its own --out)")
    rn.add_argument("--site", metavar="DIR", help="then build a leaderboard site into DIR: the model's rows beside the "
                    "reference rows of the same splits (OUT/board), linking every viewer --view built")
    rn.add_argument("--reference", metavar="RESULTS_DIR", help="results folder whose fundamental/lite and learned/lite "
                    "rows the model is printed beside (default: this checkout's leaderboard/results); a split none "
                    "matches gets ground-truth, copy-last and linear-extrapolation scored on it under OUT/reference/")
    rn.add_argument("--no-reference", action="store_true", help="print and board the model's rows alone")
    rn.add_argument("--view", action="store_true", help="then write a viewer of each split's videos "
                                                        "(OUT/<task>-<split>/view/index.html; docs/viewer.md)")
    rn.add_argument("--out", metavar="DIR", required=True, help="work folder (re-run the same model to resume)")
    rn.add_argument("--restart", action="store_true",
                    help="delete what another model (or other --model-args, checkpoint, --name) left in OUT's split "
                         "folders and start again; without it such a folder is refused")
    rn.add_argument("--batch-size", type=int, default=8, help="clips per generate() call (default 8)")
    rn.add_argument("--metrics", help="as for score (default: the default metrics)")
    rn.add_argument("--quiet", action="store_true", help="no progress bars")
    rn.epilog = textwrap.dedent(EXAMPLES["run"])
    rn.set_defaults(func=cmd_run)


# `phybench --help` lists the commands in the order they are added (`cli.PARSERS`).
PARSERS = {"export-inputs": _add_export_inputs, "pack": _add_pack, "run": _add_run}


def cmd_export_inputs(args: argparse.Namespace) -> int:
    from ..submission.inputs import InputsError, export_inputs

    try:
        out = export_inputs(args.data, args.out, progress=not args.quiet)
    except InputsError as exc:
        raise CliError(str(exc), exc.code) from None
    print(f"wrote {out}: condition frames as PNG (frames/) and one .npz, a prompt per sample (prompts.csv) and its "
          f"numeric state (states.jsonl); {out}/manifest.json lists the ids and "
          f"what to write. Then: phybench pack GENERATED --inputs {quote(str(out))} --out SUB --name MODEL")
    return 0


def cmd_pack(args: argparse.Namespace) -> int:
    from ..submission.inputs import InputsError, pack
    from ..submission.archive import SubmissionError

    warnings: list[str] = []
    try:
        out = pack(args.generated, args.inputs, args.out, args.name, progress=not args.quiet, warnings=warnings)
    except InputsError as exc:
        raise CliError(str(exc), exc.code) from None
    except SubmissionError as exc:
        raise CliError(str(exc), exc.problems[0].code if exc.problems else "invalid_submission") from None
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(f"wrote {out}; check it with: phybench validate {quote(str(out))} --data SPLIT_DIR")
    return 0


def _check_limit(args: argparse.Namespace) -> None:
    """`--limit N` makes N-sample splits, so it goes with --tasks and not with an official --protocol."""
    if args.limit is None:
        return
    if args.limit < 1:
        raise CliError(f"--limit must be a positive number of samples, got {args.limit}")
    if args.protocol:
        raise CliError("give --protocol (an official result) or --limit N (a smoke test), not both")
    if not args.tasks:
        raise CliError("--limit goes with --tasks (it generates N-sample splits); for your own split folders make "
                       f"them small instead: phybench generate TASK --split SPLIT --limit {args.limit} --out DIR")


def cmd_run(args: argparse.Namespace) -> int:
    import os
    import sys as _sys

    from ..pipeline import (BASELINE_PREFIX, RunError, check_model_name, default_model_name, load_model, model_identity,
                                  parse_model_args, protocol_splits, run, world)
    from ..scoring.run.score import ScoreError, parse_metrics

    _check_limit(args)
    if "" not in _sys.path and os.getcwd() not in _sys.path:
        _sys.path.insert(0, os.getcwd())  # MODULE:CLASS from the current folder, as `python -m` would
    try:
        metrics = parse_metrics(args.metrics)
        model_args = parse_model_args(args.model_args)
        if args.name is not None:
            check_model_name(args.name)
        if args.model.startswith(BASELINE_PREFIX):
            model: Any = args.model
            name = args.name or args.model[len(BASELINE_PREFIX):]
        else:
            model = load_model(args.model, model_args)
            name = args.name or default_model_name(args.model, model)
        check_model_name(name)
        identity = model_identity(args.model, model_args, name)
        estimate(args, metrics)
        if args.tasks:
            data = protocol_splits([t.strip() for t in args.tasks.split(",") if t.strip()], args.protocol or "lite",
                                   args.out, progress=not args.quiet, limit=args.limit)
        else:
            data = args.data
        files = run(model, name, data, args.out, batch_size=args.batch_size, metrics=metrics,
                    progress=not args.quiet, model_args=model_args, identity=identity, restart=args.restart)
    except RunError as exc:
        raise CliError(str(exc), exc.code) from None
    except ScoreError as exc:
        raise CliError(str(exc), getattr(exc, "code", "score_error")) from None
    if world()[0] != 0:
        return 0
    for f in files:
        print(f"results: {f}")
    if args.limit is not None:
        print(f"note: --limit {args.limit} is a smoke test on the first {args.limit} samples of each split, not an "
              "official protocol: its results say 'limit N' and a board labels them as a debugging subset; "
              f"run --protocol lite (into another --out) for a result to report", file=sys.stderr)
    viewers = views(data, files, Path(args.out), quiet=args.quiet) if args.view else []
    answer(args, data, [Path(f) for f in files], name, metrics, viewers)
    return 0
