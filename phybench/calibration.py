"""The judge's calibration: false positives on correct videos, recall on planted faults.

A verdict is only worth what it does on videos like a model's: `calibrate` judges, for every
evaluation split given, the exact ground truth and the ground truth degraded by every benign
kind (`phybench.benign`: blur, H.264, resampling, noise, colour cast, shifted pictures), which
must not be flagged, and every planted kind (`phybench.violations`), which should be.  Videos
are made in memory and judged in worker processes; nothing is written but the summary.
Intervals are Wilson 95% score intervals.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Iterator, Sequence

from .benign import BENIGN, degrade
from .scoring.run.results import wilson
from .violations import KINDS, ViolationError, plant
from .data.documents import SplitRow

EXACT = "exact"


def calibration_kinds() -> list[str]:
    """The planted kinds the calibration plants, from the judge's rule table: each rule's
    `planted_kinds` in table order, then the kinds no rule claims (what the velocity error is
    for: a smooth video at the wrong speed), in `phybench.violations.KINDS` order."""
    from .scoring.judge.rules import RULES

    claimed = list(dict.fromkeys(k for rule in RULES for k in rule.planted_kinds))
    return claimed + [k for k in KINDS if k not in claimed]


_READERS: dict[str, tuple[Any, list[SplitRow]]] = {}


def _judge_row(job: tuple[str, int, tuple[str, ...], tuple[str, ...]]) -> dict[str, Any]:
    """Judge one row of one split under every benign and planted kind asked for."""
    from .data.split import SplitReader, row_scene
    from .scoring.judge.abnormal import judge

    split_dir, i, benign, planted = job
    if split_dir not in _READERS:  # one reader and one read of the rows per split and process
        reader = SplitReader(split_dir)
        _READERS[split_dir] = (reader, list(reader.rows()))
    reader, rows = _READERS[split_dir]
    row = rows[i]
    spec, res = reader.spec, int(reader.manifest["resolution"])
    cf = spec.condition_frames
    gt = reader.video(row)
    bodies = row_scene(row).bodies
    colours, static = [b.colour for b in bodies], [not b.dynamic for b in bodies]
    out: dict[str, Any] = {"fp": {}, "hit": {}, "rules": {}}
    for kind in (EXACT, *benign):
        video = gt if kind == EXACT else degrade(kind, gt, cf, row["sample_id"])
        v = judge(video, gt, colours, static, cf)
        out["fp"][kind] = int(v.abnormal)
        out["rules"][kind] = sorted({f.rule for f in v.findings})
    for kind in planted:
        video, label = plant(kind, row, spec, res, gt)
        if video is None:
            continue
        v = judge(video, gt, colours, static, cf)
        out["hit"][kind] = int(v.abnormal)
        out["rules"][kind] = sorted({f.rule for f in v.findings})
    return out


def calibrate(split_dirs: Sequence[str | os.PathLike[str]], *, benign: Sequence[str] = tuple(BENIGN),
              planted: Sequence[str] | None = None, limit: int | None = None, workers: int = 1,
              progress: bool = True) -> dict[str, Any]:
    """{"splits": {name: videos}, "false_positives": {kind: {name: [flagged, videos]}},
    "recall": {kind: {name: [hits, applicable]}}, "rules": {kind: {rule: videos}}}.

    name is "<task>/<split>@<resolution>"; the exact ground truth is the kind "exact"; planted
    defaults to `calibration_kinds()`."""
    from tqdm import tqdm

    from .data.split import SplitReader

    planted = calibration_kinds() if planted is None else list(planted)
    unknown = [k for k in benign if k not in BENIGN] + [k for k in planted if k not in KINDS]
    if unknown:
        raise ViolationError(f"unknown kind(s) {', '.join(unknown)}; planted: {', '.join(KINDS)}; "
                             f"benign: {', '.join(BENIGN)}")
    jobs, names = [], {}
    out: dict[str, Any] = {"splits": {}, "false_positives": {k: {} for k in (EXACT, *benign)},
                           "recall": {k: {} for k in planted}, "rules": {k: {} for k in (EXACT, *benign, *planted)}}
    for split_dir in map(str, split_dirs):
        reader = SplitReader(split_dir)
        m = reader.manifest
        if reader.spec.is_training(m["split"]):
            raise ViolationError(f"{split_dir} is a training split; calibrate on evaluation splits")
        name = f"{m['task']}/{m['split']}@{m['resolution']}"
        n = int(m["num_samples"]) if "num_samples" in m else sum(1 for _ in reader.rows())
        n = min(n, limit) if limit is not None else n
        names[split_dir] = name
        out["splits"][name] = n
        for kind in out["false_positives"]:
            out["false_positives"][kind][name] = [0, 0]
        jobs += [(split_dir, i, tuple(benign), tuple(planted)) for i in range(n)]

    def results() -> Iterator[tuple[tuple[str, int, tuple[str, ...], tuple[str, ...]], dict[str, Any]]]:
        if workers <= 1:
            for job in jobs:
                yield job, _judge_row(job)
        else:
            with ProcessPoolExecutor(workers) as pool:
                yield from zip(jobs, pool.map(_judge_row, jobs, chunksize=4), strict=True)

    for job, r in tqdm(results(), total=len(jobs), desc="calibrate-judge", unit="row", disable=not progress):
        name = names[job[0]]
        for kind, flagged in r["fp"].items():
            cell = out["false_positives"][kind][name]
            cell[0] += flagged
            cell[1] += 1
        for kind, hit in r["hit"].items():
            cell = out["recall"][kind].setdefault(name, [0, 0])
            cell[0] += hit
            cell[1] += 1
        for kind, rules in r["rules"].items():
            for rule in rules:
                out["rules"][kind][rule] = out["rules"][kind].get(rule, 0) + 1
    return out


def _pct(h: int, n: int) -> str:
    return f"{100 * h / n:.1f}%" if n else "n/a"


def calibration_markdown(cal: dict[str, Any]) -> str:
    """The false-positive and recall tables (docs/judge.md)."""
    names = list(cal["splits"])
    head = "| " + " | ".join(names) + " |"
    lines = ["False positives (videos judged abnormal among correct ones):", "",
             "| kind " + head + " worst | all [95% interval] |", "|---|" + "---:|" * (len(names) + 2)]
    for kind, per in cal["false_positives"].items():
        cells, hits, total, worst = [], 0, 0, 0.0
        for name in names:
            h, n = per.get(name, [0, 0])
            cells.append(f"{h}/{n}" if n else "n/a")
            hits, total = hits + h, total + n
            worst = max(worst, h / n if n else 0.0)
        lo, hi = wilson(hits, total)
        lines.append(f"| {kind} | " + " | ".join(cells) + f" | {100 * worst:.1f}% | {_pct(hits, total)} "
                                                            f"[{100 * lo:.1f}, {100 * hi:.1f}] |")
    lines += ["", "Recall (planted faults judged abnormal):", "",
              "| planted kind " + head + " all [95% interval] | rules that fired |", "|---|" + "---:|" * (len(names) + 1)
              + "---|"]
    for kind, per in cal["recall"].items():
        cells, hits, total = [], 0, 0
        for name in names:
            h, n = per.get(name, [0, 0])
            cells.append(f"{h}/{n}" if n else "n/a")
            hits, total = hits + h, total + n
        lo, hi = wilson(hits, total)
        rules = ", ".join(f"{r} {c}" for r, c in sorted(cal["rules"][kind].items(), key=lambda kv: (-kv[1], kv[0])))
        interval = f"{_pct(hits, total)} [{100 * lo:.0f}, {100 * hi:.0f}]" if total else "n/a"
        lines.append(f"| {kind} | " + " | ".join(cells) + f" | {interval} | {rules or '-'} |")
    return "\n".join(lines) + "\n"
