"""Does the law block name the wrong law?  (issue 34 target: at least 90% of planted videos)

For each given evaluation split, every row gets each planted kind its family is meant for
(`phybench.violations`), is scored the way a submission is (`score_sample` with
``velocity_error``: the ``law`` block is its companion, `phybench.scoring.learned.law`), and counted:

- hit: the video's law ``wrong`` list names the expected aspect (restitution kinds ->
  ``restitution``; equal-mass, momentum-1.5 -> ``momentum``; slow-3 -> ``acceleration``);
- no fit: the model's fit had too few frames (counted apart, never as a hit);
- miss: a fit that does not name the aspect (the fitted values are kept for --show-misses).

The share of hits is over the planted videos (skipped rows, where a kind does not apply,
are left out), and over those with a fit; Wilson 95% intervals (`phybench.scoring.run.results.wilson`).
The false-alarm side is the same count on the exact ground truth of every row (it should name
nothing).  A miss with a fit whose aspect error is under `WRONG` is a planted change too small to
be a wrong law (the table's "largest miss").

    PYTHONPATH=. python benchmarks/law_recall.py lite/{collision,uniform,parabola}-{id,ood}-eval \
        --json benchmarks/calibration/law-recall.json

Splits: `phybench generate collision --split id-eval --limit 200 --out lite/collision-id-eval` (a
spread-out subset; docs/results.md used 200 rows per split).
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from phybench.data.split import SplitReader
from phybench.scoring.learned.law import LAW_FITS, WRONG
from phybench.scoring.run.results import wilson  # the one Wilson interval of phybench
from phybench.scoring.run.sample import score_sample
from phybench.tasks import get_task
from phybench.tasks.family import family_of
from phybench.violations import plant

EXPECTED = {"restitution-0": "restitution", "restitution-0.8": "restitution", "equal-mass": "momentum",
            "momentum-1.5": "momentum", "slow-3": "acceleration"}
# the kinds planted on a split, by its family's law fit (`TaskFamily.law_fit`): those whose expected
# aspect that fit can name
KINDS_OF_FIT = {"collision_1d": ("restitution-0", "restitution-0.8", "equal-mass", "momentum-1.5"),
                "free_flight": ("slow-3",)}
TRUTH = "ground truth"


def _no_fit(law: dict[str, Any]) -> bool:
    return not any(math.isfinite(law["fit"].get(n, math.nan)) for n in LAW_FITS[law["law"]].params)


def _verdict(detail: dict[str, Any], aspect: str | None) -> str:
    """hit | miss | no fit | excluded for a planted video; named | clean | no fit | excluded for the truth."""
    law = detail.get("law")
    if detail.get("excluded") or law is None:
        return "excluded"
    if _no_fit(law):
        return "no fit"
    wrong = law.get("wrong") or []
    if aspect is None:
        return "named" if wrong else "clean"
    return "hit" if aspect in wrong else "miss"


def run_split(path: str, show_misses: int) -> dict[str, dict[str, Any]]:
    """{kind: {hit, miss, no fit, excluded, skipped, missed: [...]}} of one split (TRUTH: the ground truth)."""
    reader = SplitReader(path)
    m = reader.manifest
    spec = get_task(m["task"])
    kinds = KINDS_OF_FIT.get(family_of(spec).law_fit or "", ())
    out: dict[str, dict[str, Any]] = {k: {"hit": 0, "miss": 0, "no fit": 0, "excluded": 0, "skipped": 0,
                                          "names_any": 0, "named_aspects": {}, "miss_error_max": 0.0, "missed": []}
                                      for k in kinds}
    out[TRUTH] = {"named": 0, "clean": 0, "no fit": 0, "excluded": 0, "named_aspects": {}}
    res = int(m["resolution"])
    for row in reader.rows():
        gt = reader.video(row)
        detail = score_sample(row, gt, gt, m, ("velocity_error",))
        v = _verdict(detail, None)
        out[TRUTH][v] += 1
        for a in (detail.get("law") or {}).get("wrong") or []:
            out[TRUTH]["named_aspects"][a] = out[TRUTH]["named_aspects"].get(a, 0) + 1
        for kind in kinds:
            video, label = plant(kind, row, spec, res, gt)
            if video is None:
                out[kind]["skipped"] += 1
                continue
            detail = score_sample(row, video, gt, m, ("velocity_error",))
            v = _verdict(detail, EXPECTED[kind])
            out[kind][v] += 1
            if v not in ("hit", "miss"):
                continue
            law = detail["law"]
            named = law.get("wrong") or []
            out[kind]["names_any"] += bool(named)
            for a in named:
                out[kind]["named_aspects"][a] = out[kind]["named_aspects"].get(a, 0) + 1
            if v == "miss":  # how far the fitted aspect is off: below WRONG means the change itself is small
                err = law["errors"].get(EXPECTED[kind], float("nan"))
                out[kind]["miss_error_max"] = max(out[kind]["miss_error_max"], float(err)) if math.isfinite(err) \
                    else out[kind]["miss_error_max"]
            if v in ("miss", "no fit") and len(out[kind]["missed"]) < show_misses:
                law = detail["law"]
                keep = ("restitution", "momentum_change", "mass_ratio", "velocity_before_1", "velocity_before_2",
                        "velocity_after_1", "velocity_after_2", "gravity_x", "gravity_y", "acceleration_along",
                        "speed")
                out[kind]["missed"].append({
                    "sample_id": row["sample_id"], "verdict": v, "wrong": law.get("wrong") or [],
                    "errors": {k: _num(x) for k, x in law["errors"].items()},
                    "fit": {k: _num(law["fit"][k]) for k in keep if k in law["fit"]},
                    "truth": {k: _num(law["truth"][k]) for k in keep if k in law["truth"]},
                    "radii": [round(float(r), 4) for r in row["radii"]] if "radii" in row else None})
    return out


def _num(x: Any) -> float | None:
    return float(f"{x:.4g}") if x is not None and np.isfinite(x) else None


def _share(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k / n:.1%} [{lo:.1%}, {hi:.1%}]" if n else "n/a"


def table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """The markdown table: per group (a split, or a task's splits together) and kind, the videos whose
    law block names the expected aspect, over the planted videos (no fit counted as not naming it)
    and over those with a fit, with Wilson 95% intervals; the exact ground truth's false alarms."""
    lines = ["| group | kind | expected | planted | names it | share [95% CI] | no fit | share of fitted | "
             "names any aspect (of fitted) | largest miss | skipped |",
             "|---|---|---|---:|---:|---|---:|---|---:|---:|---:|"]
    for group, kinds in results.items():
        for kind, c in kinds.items():
            if kind == TRUTH:
                n = c["named"] + c["clean"]
                lines.append(f"| {group} | exact ground truth (false alarm) | none | {n + c['no fit']} | {c['named']} | "
                             f"{_share(c['named'], n + c['no fit'])} | {c['no fit']} | {_share(c['named'], n)} | "
                             f"{c['named']} | | {c['excluded']} excl. |")
                continue
            n = c["hit"] + c["miss"] + c["no fit"]
            fitted = c["hit"] + c["miss"]
            worst = f"{c['miss_error_max']:.3f}" if c["miss"] else ""
            lines.append(f"| {group} | {kind} | {EXPECTED[kind]} | {n} | {c['hit']} | {_share(c['hit'], n)} | "
                         f"{c['no fit']} | {_share(c['hit'], fitted)} | {c['names_any']}/{fitted} | "
                         f"{worst} | "
                         f"{c['skipped']} (+{c['excluded']} excl.) |")
    return "\n".join(lines)


def _merge(into: dict[str, Any], part: dict[str, Any]) -> None:
    for kind, c in part.items():
        tgt = into.setdefault(kind, {k: ([] if isinstance(v, list) else {} if isinstance(v, dict) else 0)
                                     for k, v in c.items()})
        for k, v in c.items():
            if isinstance(v, list):
                tgt[k].extend(v)
            elif isinstance(v, dict):
                for a, n in v.items():
                    tgt[k][a] = tgt[k].get(a, 0) + n
            elif k == "miss_error_max":
                tgt[k] = max(tgt[k], v)
            else:
                tgt[k] += v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("splits", nargs="+", help="evaluation split folders (any size; `--limit`-made splits are fine)")
    ap.add_argument("--json", default=None, help="write the counts here")
    ap.add_argument("--show-misses", type=int, default=5, help="fitted values of up to N missed videos per kind")
    args = ap.parse_args()
    by_task: dict[str, dict[str, Any]] = {}
    by_split: dict[str, dict[str, Any]] = {}
    splits = []
    for path in args.splits:
        m = SplitReader(path).manifest
        part = run_split(path, args.show_misses)
        splits.append({"task": m["task"], "split": m["split"], "rows": m["num_samples"], "split_hash": m["split_hash"],
                       "counts": {k: {kk: vv for kk, vv in v.items() if kk != "missed"} for k, v in part.items()}})
        _merge(by_task.setdefault(f"{m['task']} (all)", {}), part)
        by_split[f"{m['task']}/{m['split']}"] = part
        print(f"{m['task']}/{m['split']} ({m['num_samples']} rows) done", flush=True)
    print(table({**by_split, **{k: v for k, v in by_task.items() if sum(g.startswith(k.split()[0] + "/")
                                                                          for g in by_split) > 1}}))
    for task, kinds in by_task.items():
        for kind, c in kinds.items():
            for miss in c.get("missed", []):
                print(f"  {task} {kind} {miss['verdict']}: {json.dumps(miss, sort_keys=True)}")
    if args.json:
        doc = {"kind": "phybench-law-recall", "expected": EXPECTED, "splits": splits, "wrong_threshold": WRONG,
               "command": "python benchmarks/law_recall.py " + " ".join(args.splits) + f" --show-misses {args.show_misses}",
               "by_task": {t: {k: {kk: vv for kk, vv in v.items()} for k, v in kinds.items()}
                           for t, kinds in by_task.items()}}
        for kinds in doc["by_task"].values():
            for kind, c in kinds.items():
                if kind == TRUTH:
                    n = c["named"] + c["clean"]
                    c["share_named"], c["wilson95"] = (c["named"] / n if n else None), wilson(c["named"], n)
                else:
                    n, fitted = c["hit"] + c["miss"] + c["no fit"], c["hit"] + c["miss"]
                    c["planted"], c["share"], c["wilson95"] = n, (c["hit"] / n if n else None), wilson(c["hit"], n)
                    c["share_of_fitted"] = c["hit"] / fitted if fitted else None
                    c["wilson95_of_fitted"] = wilson(c["hit"], fitted)
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    import _machine  # benchmarks/ is sys.path[0] when run as a script: the CPU line every benchmark prints first
    print(_machine.line(), flush=True)
    main()
