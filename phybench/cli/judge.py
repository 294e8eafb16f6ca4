"""`phybench judge`, `violations`, `degrade`, `rescore`, `calibrate-judge`: the abnormality judge's commands."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Callable

from . import CliError


def register(add: Callable[..., argparse.ArgumentParser]) -> None:
    j = add("judge", "Judge every video of a submission: abnormal or not, with the rule, colour and frames.")
    j.add_argument("submission", metavar="SUB", help="submission folder or archive")
    j.add_argument("--data", required=True, metavar="SPLIT_DIR", help="the evaluation split it answers")
    j.add_argument("--json", action="store_true", help="one JSON document instead of lines")
    j.add_argument("--quiet", action="store_true", help="no progress bar")
    j.set_defaults(func=cmd_judge)
    _rules_in_help(j)

    v = add("violations", "Plant known violations (vanish, break, teleport, drift, ...) in an evaluation split's "
                          "videos, or degrade them benignly (--kinds benign).")
    v.add_argument("--data", required=True, metavar="SPLIT_DIR", help="an evaluation split")
    v.add_argument("--kinds", help="comma-separated kinds, or the groups 'planted' (default), 'benign', 'all'; see "
                                   "`phybench.violations.KINDS` and `phybench.benign.BENIGN`")
    v.add_argument("--out", required=True, help="new folder: OUT/<kind>/ submissions and OUT/labels.json")
    v.add_argument("--quiet", action="store_true")
    v.set_defaults(func=cmd_violations, default_kinds="planted")

    d = add("degrade", "Correct but degraded submissions (blur, H.264, resampling, noise, colour cast, shifted "
                       "picture): what no judge rule or metric verdict should flip on.")
    d.add_argument("--data", required=True, metavar="SPLIT_DIR", help="an evaluation split")
    d.add_argument("--kinds", help="comma-separated (default: every benign kind); see `phybench.benign.BENIGN`")
    d.add_argument("--out", required=True, help="new folder: OUT/<kind>/ submissions and OUT/labels.json")
    d.add_argument("--quiet", action="store_true")
    d.set_defaults(func=cmd_violations, default_kinds="benign")

    from ..scoring.metrics import help_text  # the registry: no heavy imports

    r = add("rescore", help_text("Recompute cheap per-video metrics (e.g. the judge after its settings changed) in a "
                                 "results file from the same submission, keeping the rest ({NETWORK})."))
    r.add_argument("results", metavar="RESULTS", help="the results file to update")
    r.add_argument("--submission", required=True, metavar="SUB", help="the submission it was scored from")
    r.add_argument("--data", required=True, metavar="SPLIT_DIR", help="the split it answers")
    r.add_argument("--metrics", default="abnormal", help="comma-separated per-video metrics (default: abnormal)")
    r.add_argument("--out", metavar="FILE", help="write here instead of over RESULTS")
    r.add_argument("--quiet", action="store_true")
    r.set_defaults(func=cmd_rescore)

    c = add("calibrate-judge", "The judge's false positives on exact and benignly degraded ground truth, and its "
                               "recall per planted kind, per split (Markdown tables).")
    c.add_argument("--data", required=True, nargs="+", metavar="SPLIT_DIR",
                   help="evaluation splits (any family and resolution; imported reference splits too)")
    c.add_argument("--kinds", help="planted kinds, comma-separated (default: all; 'none' for none)")
    c.add_argument("--benign", help="benign kinds, comma-separated (default: all; 'none' for none)")
    c.add_argument("--limit", type=int, help="only the first N rows of each split")
    c.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    c.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    c.add_argument("--random", type=int, metavar="DRAWS",
                   help="instead: DRAWS random compositions of benign families per row, within the published "
                        "bounds, and one planted kind drawn per row (phybench.randomised; docs/judge.md)")
    c.add_argument("--seed", type=int, default=0, help="--random: the draws' seed (a new seed, new cases)")
    c.add_argument("--quiet", action="store_true")
    c.set_defaults(func=cmd_calibrate)


def _rules_in_help(parser: argparse.ArgumentParser) -> None:
    """`phybench judge --help` ends with the judge's rules, generated from its table
    (`phybench.scoring.judge.rules.RULES`) when the help is shown, so building the parser for any
    other command does not import the judge."""
    plain = parser.format_help

    def format_help() -> str:
        from ..scoring.judge.abnormal import rules_help

        parser.epilog = rules_help()
        return plain()

    setattr(parser, "format_help", format_help)


def _kinds(text: str | None, default: str = "planted") -> list[str]:
    """Kinds from a comma-separated list; the groups 'planted', 'benign' and 'all' expand."""
    from ..benign import BENIGN
    from ..violations import KINDS

    groups = {"planted": list(KINDS), "benign": list(BENIGN), "all": [*KINDS, *BENIGN], "none": []}
    kinds: list[str] = []
    for k in (k.strip() for k in (text or default).split(",")):
        kinds += groups.get(k, [k] if k else [])
    unknown = [k for k in kinds if k not in KINDS and k not in BENIGN]
    if unknown:
        raise CliError(f"unknown violation kind(s) {', '.join(unknown)}; known: {', '.join(KINDS)}; benign: "
                       f"{', '.join(BENIGN)}")
    return list(dict.fromkeys(kinds))


def cmd_judge(args: argparse.Namespace) -> int:
    from ..data.split import SplitReader
    from ..scoring.judge.abnormal import SETTINGS, judge_sample
    from ..scoring.run.sample import scoring_sample
    from ..submission import SubmissionError, open_submission, validate

    reader = SplitReader(args.data)
    m = reader.manifest
    report = validate(args.submission, args.data)
    if not report.ok:
        raise CliError(f"{args.submission} is not a valid submission for {args.data}: {report.problems[0]} "
                       f"(`phybench validate` lists every problem)")
    rows = {row["sample_id"]: row for row in reader.rows()}
    verdicts: dict[str, Any] = {}
    try:
        from tqdm import tqdm

        with open_submission(args.submission, manifest=m) as sub:
            for sid, video in tqdm(sub.iter_videos(list(rows)), total=len(rows), desc="judge", unit="video",
                                   disable=args.quiet or args.json):
                # the scorer's sample: its verdict is the `abnormal` column's, a lost ball's vanish included
                verdicts[sid] = judge_sample(scoring_sample(rows[sid], video, reader.video(rows[sid]), m)).to_dict()
    except SubmissionError as exc:
        raise CliError(str(exc)) from None
    bad = sum(v["abnormal"] for v in verdicts.values())
    if args.json:
        print(json.dumps({"task": m["task"], "split": m["split"], "videos": len(verdicts), "abnormal": bad,
                          "settings": SETTINGS, "verdicts": verdicts}, indent=1, sort_keys=True))
        return 0
    for sid, v in verdicts.items():
        if v["abnormal"]:
            f = v["findings"][0]
            more = f" (+{len(v['findings']) - 1} more)" if len(v["findings"]) > 1 else ""
            print(f"ABNORMAL {sid}: {f['rule']}, colour {f['colour']}, frames {f['frames'][:6]}: {f['detail']}{more}")
    print(f"{bad} of {len(verdicts)} videos abnormal ({100 * bad / max(len(verdicts), 1):.1f}%)")
    return 0


def cmd_violations(args: argparse.Namespace) -> int:
    from ..violations import ViolationError, write_violations

    try:
        doc = write_violations(args.data, args.out, _kinds(args.kinds, args.default_kinds), progress=not args.quiet)
    except ViolationError as exc:
        raise CliError(str(exc)) from None
    for kind, labels in doc["labels"].items():
        used = sum("skipped" not in lab for lab in labels)
        verb = "degraded" if any(lab.get("benign") for lab in labels) else "planted"
        print(f"{kind:<16} {used:>5} {verb}, {len(labels) - used} not applicable  -> {Path(args.out) / kind}")
    print(f"labels: {Path(args.out) / 'labels.json'} (onset frame {doc['onset_frame']})")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from ..benign import BENIGN
    from ..calibration import calibrate, calibration_kinds, calibration_markdown
    from ..violations import KINDS, ViolationError

    planted = [k for k in _kinds(args.kinds, "planted") if k in KINDS]
    if args.kinds is None:  # the default: the kinds the judge's rule table names first
        planted = calibration_kinds()
    benign = [k for k in _kinds(args.benign, "benign") if k in BENIGN]
    for path in args.data:
        if not (Path(path) / "manifest.json").is_file():
            raise CliError(f"{path} is not a split folder (no manifest.json); make one with `phybench generate` or "
                           "`phybench import`")
    if args.random is not None:
        from ..randomised import calibrate_random, random_markdown

        if args.random < 1 or args.kinds or args.benign:
            raise CliError("--random takes a positive number of draws per row, and no --kinds/--benign (it draws them)")
        cal = calibrate_random(args.data, seed=args.seed, draws=args.random, limit=args.limit, workers=args.workers,
                               progress=not args.quiet)
        print(random_markdown(cal))
        if args.json:
            Path(args.json).write_text(json.dumps(cal, indent=1, sort_keys=True) + "\n")
        return 0
    try:
        cal = calibrate(args.data, benign=benign, planted=planted, limit=args.limit, workers=args.workers,
                        progress=not args.quiet)
    except ViolationError as exc:
        raise CliError(str(exc)) from None
    print(calibration_markdown(cal))
    if args.json:
        Path(args.json).write_text(json.dumps(cal, indent=1, sort_keys=True) + "\n")
    return 0


def cmd_rescore(args: argparse.Namespace) -> int:
    from ..io import atomic_write_many
    from ..scoring.run.layout import output_files, read_sidecar, samples_path
    from ..scoring.run.rescore import rescore_with_details, rescored_sidecar
    from ..scoring.run.score import ScoreError

    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    try:
        doc, details = rescore_with_details(args.results, args.submission, args.data, metrics, progress=not args.quiet)
        old_sidecar = samples_path(args.results)
        old = dict(read_sidecar(old_sidecar)) if old_sidecar.is_file() else None
    except (ScoreError, FileNotFoundError, KeyError, ValueError) as exc:
        raise CliError(str(exc)) from None
    out = Path(args.out or args.results)
    # the results file and its sidecar as a unit: the sidecar's per-video law follows a recomputed law
    atomic_write_many(output_files(out, doc, rescored_sidecar(old, doc, details, metrics)))  # type: ignore[arg-type]
    o = doc["summary"]["overall"]
    print(f"{out}: " + ", ".join(f"{m} {o[m]['mean']:.4g}" for m in metrics if m in o))
    return 0
