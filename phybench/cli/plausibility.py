"""`phybench plausibility`: the likelihood-preference test on planted-violation pairs."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

from . import CliError


def register(add: Callable[..., argparse.ArgumentParser]) -> None:
    p = add("plausibility", "Preference error of a model's per-video score on (valid, violated) pairs, per kind.")
    p.add_argument("--model", required=True, metavar="MODULE:NAME",
                   help="a scorer: f(video, condition_frames) -> float, lower = more plausible; or a class built "
                        "with --model-args (e.g. phybench_baselines.dit.plausibility:DenoisingLoss, or the "
                        "model-free phybench.plausibility:smoothness)")
    p.add_argument("--model-args", metavar="K=V,...", help="keyword arguments of the scorer, e.g. checkpoint=runs/dit")
    p.add_argument("--data", required=True, metavar="PAIRS", help="a `phybench violations` folder (labels.json + kinds)")
    p.add_argument("--split", required=True, metavar="SPLIT_DIR", help="the evaluation split the pairs were planted in")
    p.add_argument("--kinds", help="comma-separated (default: every kind in PAIRS)")
    p.add_argument("--out", metavar="FILE", help="write the results (JSON, deterministic bytes)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_plausibility)


def cmd_plausibility(args: argparse.Namespace) -> int:
    from ..plausibility import PlausibilityError, evaluate_pairs, load_scorer, plausibility_markdown, write_plausibility
    from ..pipeline import RunError, parse_model_args

    try:
        model_args = parse_model_args(args.model_args)
        scorer = load_scorer(args.model, model_args)
        kinds = [k.strip() for k in args.kinds.split(",") if k.strip()] if args.kinds else None
        doc = evaluate_pairs(args.data, args.split, scorer, kinds=kinds, scorer_name=args.model, scorer_args=model_args,
                       progress=not args.quiet)
    except (PlausibilityError, RunError, FileNotFoundError, ValueError) as exc:
        raise CliError(str(exc)) from None
    print(plausibility_markdown(doc))
    if args.out:
        write_plausibility(doc, args.out)
        print(f"results: {Path(args.out)}")
    return 0
