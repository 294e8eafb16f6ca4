"""The paper's findings read from a scaling grid (model sizes x training-set sizes), beside its Figure 3.

    phybench study findings --grid leaderboard/studies/scaling-framear --train-split W/data/uniform-train-30k \
        --out findings-grid.json [--plot grid.svg]

The grid is a folder of `phybench score` results files (ID and OOD per cell) whose cards carry
`params` and `train_size` (`studies.grid` writes them), each with its per-video details
(`NAME.details.parquet`, from `score --details`) and samples sidecar (`NAME.samples.json`).
Why a second reader beside `studies.findings`: that one reads one run's learning curve (a
training-steps axis); Figure 3's axes are model size and training-set size, and its findings are
statements across cells, so they need intervals on differences between cells, not within one.

Printed, each with 95% bootstrap intervals (2,000 resamples, seed 0) and the paper's direction:
(1) whether ID error falls with data (per size: largest over smallest training set) and with size
    (per training set: largest over smallest model), ratios of mean errors, the same videos
    resampled jointly (every cell answers the same evaluation videos);
(2) whether OOD error stays several times ID (per cell, OOD / ID, the two splits resampled
    independently) and whether it falls with scale (the same ratios as (1), on OOD);
(3) the case-based statistic: per cell, the share of OOD videos with a true speed outside the
    training range whose fitted speed lands inside it, and the median distance to the nearest
    training speed (`studies.findings.landing_stats`).
The error is the board's ranked velocity error (a lost ball costs by the share of frames it is lost
in; an error over trackable videos only would reward losing the hard ones); the trackable-only mean
and the untrackable share are in the table.  Nothing here trains, samples or reads an evaluation
split: selection happened in the cells, on the training split's validation rows.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from phybench.stats import bootstrap_stat_ci

from .findings import RESAMPLES, SEVERAL, _ci, _pct, bootstrap, landing_stats
from .paper_fig3 import FIG3, paper_facts

METRIC = "velocity_error_ranked"
TRACKABLE = "velocity_error"  # the second reading: over the videos that keep a trackable ball only


@dataclass
class Split:
    """One results file's per-video numbers (excluded videos dropped)."""

    ids: list[str]
    errors: np.ndarray  # the metric per video (ranked: every video; trackable-only: the trackable ones)
    trackable_mean: float  # velocity_error over trackable videos (the paper's average)
    untrackable: float  # share of videos
    fits: dict[str, tuple[float, float]] = field(default_factory=dict)  # sample id -> (true, fitted speed)


@dataclass
class Cell:
    size: str
    params: int
    train_size: int
    splits: dict[str, Split] = field(default_factory=dict)  # "id" / "ood"


def _split_of(results: dict[str, Any]) -> str | None:
    name = str(results.get("split", ""))
    return "id" if name.startswith("id") else "ood" if name.startswith("ood") else None


def read_split(path: Path, metric: str = METRIC) -> Split:
    """A results file's details (per-video errors) and samples sidecar (fitted speeds)."""
    import pandas as pd

    stem = str(path)[: -len(".json")]
    details = Path(stem + ".details.parquet")
    if not details.is_file():
        raise ValueError(f"{details} is missing: score with --details (per-video errors give the intervals)")
    d = pd.read_parquet(details)
    d = d[~d["excluded"].fillna(0).astype(bool)]
    lost = d["untrackable"].fillna(0).astype(bool)
    trackable = d.loc[~lost, "velocity_error"].astype(float)
    fits: dict[str, tuple[float, float]] = {}
    sidecar = Path(stem + ".samples.json")
    if sidecar.is_file():
        from .findings import sidecar_fits

        fits = sidecar_fits(str(sidecar))
    kept = d if metric == METRIC else d[~lost & d[metric].notna()]
    return Split(ids=[str(s) for s in kept["sample_id"]], errors=kept[metric].to_numpy(float),
                 trackable_mean=float(trackable.mean()) if len(trackable) else math.nan,
                 untrackable=float(lost.mean()) if len(d) else math.nan, fits=fits)


def load_grid(folder: Path, family: str | None = None, metric: str = METRIC) -> list[Cell]:
    """Every (size, training set) cell of the folder's results files, sorted by params then training set."""
    cells: dict[tuple[int, int], Cell] = {}
    for path in sorted(Path(folder).glob("*.json")):
        if path.name.endswith((".samples.json", ".verified.json")):
            continue
        doc = json.loads(path.read_text())
        model, split = doc.get("model") or {}, _split_of(doc)
        if split is None or (family and model.get("family") != family):
            continue
        if not isinstance(model.get("params"), int) or not isinstance(model.get("train_size"), int):
            raise ValueError(f"{path.name}: its card lacks params or train_size")
        key = (model["params"], model["train_size"])
        cell = cells.setdefault(key, Cell(str(model.get("size", model["params"])), *key))
        if split in cell.splits:
            raise ValueError(f"{path.name}: a second {split} results file for {cell.size} / {cell.train_size}")
        cell.splits[split] = read_split(path, metric)
    if not cells:
        raise ValueError(f"{folder} holds no results files of a grid")
    return [cells[k] for k in sorted(cells)]


# ------------------------------------------------------------------ statistics
def paired_ratio(a: Split, b: Split, seed: int = 0) -> dict[str, Any]:
    """mean(a) / mean(b) over the videos both answer, with a bootstrap interval resampling those videos jointly."""
    ia, ib = {s: i for i, s in enumerate(a.ids)}, {s: i for i, s in enumerate(b.ids)}
    shared = sorted(set(ia) & set(ib))
    x = a.errors[[ia[s] for s in shared]]
    y = b.errors[[ib[s] for s in shared]]
    if not len(shared) or y.mean() <= 0:
        return {"ratio": math.nan, "ci95": [math.nan, math.nan], "videos": len(shared)}
    lo, hi = bootstrap_stat_ci(lambda k: float(x[k].mean() / max(y[k].mean(), 1e-12)), [np.arange(len(shared))],
                               RESAMPLES, seed)  # the videos resampled jointly: their indices
    return {"ratio": float(x.mean() / y.mean()), "ci95": [lo, hi],
            "videos": len(shared), "a_mean": float(x.mean()), "b_mean": float(y.mean())}


def direction(ci: Sequence[float]) -> str:
    lo, hi = ci
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "unknown"
    return "falls" if hi < 1 else "rises" if lo > 1 else "no measurable change"


def along(cells: list[Cell], split: str, axis: str) -> list[dict[str, Any]]:
    """Per value of the other axis: the largest over the smallest cell along `axis` ("data" or "size")."""
    other = "params" if axis == "data" else "train_size"
    own = "train_size" if axis == "data" else "params"
    out = []
    for value in sorted({getattr(c, other) for c in cells}):
        line = sorted((c for c in cells if getattr(c, other) == value and split in c.splits), key=lambda c: getattr(c, own))
        if len(line) < 2:
            continue
        lo, hi = line[0], line[-1]
        r = paired_ratio(hi.splits[split], lo.splits[split])
        out.append({"fixed": lo.size if axis == "data" else lo.train_size, "from": getattr(lo, own), "to": getattr(hi, own),
                    "from_error": r.get("b_mean", math.nan), "to_error": r.get("a_mean", math.nan),  # on the shared videos
                    "from_trackable": lo.splits[split].trackable_mean, "to_trackable": hi.splits[split].trackable_mean,
                    "from_untrackable": lo.splits[split].untrackable, "to_untrackable": hi.splits[split].untrackable,
                    **r, "direction": direction(r["ci95"])})
    return out


def ood_over_id(cells: list[Cell]) -> list[dict[str, Any]]:
    out = []
    for c in cells:
        if {"id", "ood"} <= set(c.splits):
            o, i = c.splits["ood"].errors, c.splits["id"].errors
            ratio = float(o.mean() / i.mean()) if len(i) and i.mean() > 0 else math.nan
            out.append({"size": c.size, "params": c.params, "train_size": c.train_size, "ratio": ratio,
                        "ci95": bootstrap(lambda a, b: float(a.mean() / max(b.mean(), 1e-12)), [o, i])})
    return out


def case_based(cells: list[Cell], task: str, grid: np.ndarray) -> list[dict[str, Any]]:
    """Per cell with an OOD samples sidecar: where the fitted speeds of out-of-range videos land."""
    from .cases import velocity_range

    lo, hi = velocity_range(task)
    out = []
    for c in cells:
        fits = c.splits["ood"].fits if "ood" in c.splits else {}
        if fits:
            out.append({"size": c.size, "params": c.params, "train_size": c.train_size, "training_range": [lo, hi],
                        **landing_stats(fits, sorted(fits), lo, hi, grid)})
    return out


def compute_grid(cells: list[Cell], task: str, grid: np.ndarray | None, metric: str = METRIC) -> dict[str, Any]:
    facts = paper_facts(task) if task in FIG3 else None
    out: dict[str, Any] = {
        "schema": "phybench.framear-grid-findings/1", "task": task, "metric": metric,
        "cells": [{"size": c.size, "params": c.params, "train_size": c.train_size,
                   **{f"{k}_{s}": v for s, sp in c.splits.items() for k, v in
                      (("error", float(sp.errors.mean())), ("ci95", bootstrap(np.mean, [sp.errors])),
                       ("trackable_mean", sp.trackable_mean), ("untrackable", sp.untrackable), ("videos", len(sp.ids)))}}
                  for c in cells],
        "id_with_data": along(cells, "id", "data"), "id_with_size": along(cells, "id", "size"),
        "ood_with_data": along(cells, "ood", "data"), "ood_with_size": along(cells, "ood", "size"),
        "ood_over_id": ood_over_id(cells), "paper": facts}
    if grid is not None:
        out["case_based"] = case_based(cells, task, grid)
    out["sentences"] = sentences(out)
    return out


# ------------------------------------------------------------------ sentences
def _x(r: dict[str, Any]) -> str:
    return f"x{r['ratio']:.2f} {_ci(r['ci95'], 2)}"


def _trend_text(rows: list[dict[str, Any]], axis: str) -> str:
    if not rows:
        return f"not measurable (the grid has one {axis} value)"
    what = "rows" if axis == "data" else "params"
    fixed = "at {} rows" if axis == "size" else "{}"
    return "; ".join(f"{fixed.format(r['fixed'])}: {r['from_error']:.3f} -> {r['to_error']:.3f} ({r['videos']} shared videos) "
                     f"from {r['from']} to "
                     f"{r['to']} {what}, {_x(r)}, {r['direction']} (trackable videos only {r['from_trackable']:.3f} -> "
                     f"{r['to_trackable']:.3f}; untrackable {_pct(r['from_untrackable'])} -> {_pct(r['to_untrackable'])})"
                     for r in rows)


def _count(rows: list[dict[str, Any]], word: str) -> str:
    return f"{sum(r['direction'] == word for r in rows)} of {len(rows)}"


def _paper_range(facts: dict[str, Any] | None, key: str, split: str) -> str:
    if not facts:
        return "n/a"
    vals = [v[split] for v in facts[key].values()]
    return f"x{min(vals):.2f} to x{max(vals):.2f}"


def sentence_1(f: dict[str, Any]) -> str:
    data, size, facts = f["id_with_data"], f["id_with_size"], f["paper"]
    verdicts = []
    for rows, axis in ((data, "data"), (size, "size")):
        if not rows:
            verdicts.append(f"cannot be compared with the paper with {axis} (one {axis} value)")
        elif all(r["direction"] == "falls" for r in rows):
            verdicts.append(f"agrees with the paper with {axis} (falls in {_count(rows, 'falls')})")
        else:
            verdicts.append(f"disagrees with the paper with {axis}: ID error falls in only {_count(rows, 'falls')} "
                            f"(rises in {_count(rows, 'rises')}), where the paper's falls everywhere")
    return (f"(1) ID error ({f['metric']}, largest over smallest cell, the same videos resampled jointly) with "
            f"training-set size: {_trend_text(data, 'data')}.  With model size: {_trend_text(size, 'size')}.  "
            f"Figure 3: ID error falls with data for every DiT ({_paper_range(facts, 'with_data', 'id')}, 30K to 3M) "
            f"and with size at every training set ({_paper_range(facts, 'with_size', 'id')}, DiT-S to DiT-L).  "
            f"The miniature {'; it '.join(verdicts)}.")


def sentence_2(f: dict[str, Any]) -> str:
    rat, facts = f["ood_over_id"], f["paper"]
    several = [r for r in rat if r["ci95"][0] >= SEVERAL]
    cells = "; ".join(f"{r['size']}/{r['train_size']} {r['ratio']:.1f}x {_ci(r['ci95'], 1)}" for r in rat)
    falls = [r for r in f["ood_with_data"] + f["ood_with_size"] if r["direction"] == "falls"]
    scale = (f"OOD error with data: {_trend_text(f['ood_with_data'], 'data')}; with size: "
             f"{_trend_text(f['ood_with_size'], 'size')}")
    paper = (f"Figure 3: OOD / ID {facts['ood_over_id'][0]:.0f}x to {facts['ood_over_id'][1]:.0f}x at every cell, OOD "
             f"error not falling with scale (with data {_paper_range(facts, 'with_data', 'ood')}, with size "
             f"{_paper_range(facts, 'with_size', 'ood')})") if facts else "no paper values for this task"
    agree_ratio = ("stays at least {:g}x ID (lower bound) at every cell, as in the paper".format(SEVERAL)
                   if rat and len(several) == len(rat) else
                   f"is at least {SEVERAL:g}x ID (lower bound) at only {len(several)} of {len(rat)} cells, where the "
                   f"paper's is over 10x everywhere")
    if facts and rat and max(r["ratio"] for r in rat) < facts["ood_over_id"][0]:
        agree_ratio += f" (and below the paper's smallest ratio, {facts['ood_over_id'][0]:.0f}x, at every cell)"
    agree_scale = ("does not fall with scale, as in the paper" if not falls else
                   f"falls with scale in {len(falls)} comparison(s) ({', '.join(str(r['fixed']) for r in falls)}), "
                   f"unlike the paper")
    return (f"(2) OOD / ID error ratio (the two splits resampled independently): {cells}.  {scale}.  {paper}.  "
            f"In the miniature OOD error {agree_ratio}; it {agree_scale}.")


def sentence_3(f: dict[str, Any]) -> str:
    rows = f.get("case_based") or []
    if not rows:
        return "(3) Case-based statistic: not computed (no OOD samples sidecar, or no --train-split)."
    lo, hi = rows[0]["training_range"]
    cells = "; ".join(f"{r['size']}/{r['train_size']} ({r['with_fit']} with a fitted speed) "
                      f"{_pct(r['share_inside_training_range'])} "
                      f"{_ci(r['share_inside_ci95'], pct=True)} inside, median distance to the nearest training speed "
                      f"{r['median_distance_to_nearest_training_speed']:.2f} {_ci(r['median_distance_ci95'], 2)} "
                      f"(truth {r['truth_median_distance_to_nearest_training_speed']:.2f})" for r in rows)
    snaps = [r for r in rows if r["share_inside_ci95"][0] > 0.5]
    pulled = [r for r in rows if r not in snaps and r["median_distance_to_nearest_training_speed"]
              < r["truth_median_distance_to_nearest_training_speed"] / 2]
    verdict = (f"snaps into the training range (lower bound above 50%) in {len(snaps)} of {len(rows)} cells and is "
               f"pulled towards it (median distance under half the truth's) in {len(pulled)} more")
    agree = "as the paper's case-based finding says" if len(snaps) == len(rows) else (
        "weaker than the paper's case-based finding, where OOD fits land in the training data's range")
    return (f"(3) Case-based statistic (OOD videos with a true speed outside the training range [{lo:g}, {hi:g}], "
            f"{rows[0]['videos_out_of_range']} per cell; where their fitted speeds land): {cells}.  The miniature "
            f"{verdict}: {agree}.")


def sentence_levels(f: dict[str, Any]) -> str:
    from .paper_fig3 import GROUND_TRUTH

    task = f["task"]
    if task not in FIG3 or not f["cells"]:
        return ""
    best = min((c for c in f["cells"] if "error_id" in c), key=lambda c: c["error_id"], default=None)
    if best is None:
        return ""
    from .paper_fig3 import PARAMS, TRAIN

    params = [c["params"] for c in f["cells"]]
    rows = [c["train_size"] for c in f["cells"]]
    return (f"(levels) Best ID cell {best['size']}/{best['train_size']} {best['error_id']:.3f} "
            f"{_ci(best['ci95_id'])} against the paper's DiT-S/30K {FIG3[task]['id']['DiT-S'][0]} and DiT-L/3M "
            f"{FIG3[task]['id']['DiT-L'][-1]}: not the same scale (the paper's convention scores its ground truth "
            f"{GROUND_TRUTH[task]}, phybench's about 0.0003), on {min(rows):,}-{max(rows):,} training videos against "
            f"the paper's {TRAIN[0]:,}-{TRAIN[-1]:,} and {min(params):,}-{max(params):,} parameters against "
            f"{min(PARAMS.values()) / 1e6:g}M-{max(PARAMS.values()) / 1e6:g}M; compare directions and ratios, not levels.")


def sentences(f: dict[str, Any]) -> dict[str, str]:
    out = {"1": sentence_1(f), "2": sentence_2(f), "3": sentence_3(f)}
    levels = sentence_levels(f)
    if levels:
        out["levels"] = levels
    return out


def table(f: dict[str, Any]) -> str:
    """Markdown: one row per cell, ID and OOD with intervals, trackable-only means and untrackable shares."""
    lines = [f"| size | params | training rows | ID {f['metric']} | OOD {f['metric']} | ID / OOD trackable-only | "
             "untrackable ID / OOD |", "|---|---:|---:|---:|---:|---:|---:|"]
    for c in f["cells"]:
        def cell(s: str) -> str:
            return f"{c[f'error_{s}']:.3f} {_ci(c[f'ci95_{s}'])}" if f"error_{s}" in c else "-"

        def num(key: str) -> str:
            return f"{c[key]:.3f}" if isinstance(c.get(key), float) and math.isfinite(c[key]) else "-"

        lines.append(f"| {c['size']} | {c['params']:,} | {c['train_size']:,} | {cell('id')} | {cell('ood')} | "
                     f"{num('trackable_mean_id')} / {num('trackable_mean_ood')} | "
                     f"{_pct(c.get('untrackable_id', math.nan))} / {_pct(c.get('untrackable_ood', math.nan))} |")
    return "\n".join(lines) + "\n"


def run_grid(args: Any) -> int:
    """`phybench study findings --grid DIR`: print the table and the findings, write findings JSON (and the plot)."""
    from phybench.io import atomic_write_bytes

    from .findings import findings_bytes, train_velocities

    cells = load_grid(Path(args.grid), args.family)
    tasks = {c for c in _tasks(Path(args.grid))}
    task = args.task or (tasks.pop() if len(tasks) == 1 else None)
    if task is None:
        raise ValueError(f"{args.grid} holds results of several tasks or none: give --task")
    grid = train_velocities(args.train_split) if args.train_split else None
    f = compute_grid(cells, task, grid)
    print(table(f))
    for key in ("1", "2", "3", "levels"):
        if key in f["sentences"]:
            print(f["sentences"][key] + "\n")
    # the same comparisons over trackable videos only: the ranked error charges lost balls (up to 282.8 units/s a
    # video), so where a cell loses balls the ranked ratios are about ball survival, these about the motion
    t = compute_grid(load_grid(Path(args.grid), args.family, TRACKABLE), task, None, TRACKABLE)
    f["trackable_only"] = {k: t[k] for k in ("id_with_data", "id_with_size", "ood_with_data", "ood_with_size",
                                             "ood_over_id")}
    f["trackable_only"]["sentences"] = {k: t["sentences"][k] for k in ("1", "2")}
    print("Over trackable videos only (the comparisons paired on the videos both cells keep a ball in):\n")
    for key in ("1", "2"):
        print(t["sentences"][key].replace("(1) ", "(1t) ").replace("(2) ", "(2t) ") + "\n")
    atomic_write_bytes(args.out, findings_bytes(f))
    print(f"findings: {args.out}")
    if args.plot:
        from .grid_plot import grid_svg

        Path(args.plot).write_text(grid_svg(f))
        print(f"plot: {args.plot}")
    return 0


def _tasks(folder: Path) -> set[str]:
    return {str(json.loads(p.read_text()).get("task")) for p in folder.glob("*.json")
            if not p.name.endswith((".samples.json", ".verified.json"))}
