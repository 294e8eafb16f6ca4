"""The paper's three findings from one command, measured on the frame-autoregressive model (issue 33).

    python -m phybench_baselines.studies.findings --run RUN --data ID_SPLIT OOD_SPLIT --train-split TRAIN \\
        --nn-results NN_ID.samples.json NN_OOD.samples.json [--curve curve.jsonl] [--limit 64] \\
        [--snapshots 300 900 1800] [--probe flip --probe-limit 32] --out findings.json

or `phybench study findings ...` with the same arguments; `--grid DIR` reads a scaling grid
(model sizes x training-set sizes, `studies.grid`) instead of one run: `studies.grid_findings`.  Why one command: the three findings of
the paper (ID error falls with training while OOD error stays far above it; OOD generalisation is
case-based; the section-5 probes) had never been reproduced with a phybench model; each is printed
as one sentence with its numbers, 95% intervals and a clause saying where this miniature agrees or
disagrees with the paper, and written to findings.json (sorted keys, no timings: the same bytes for
the same inputs).

(a) From the learning curve (`studies.curve` JSON lines: reused when --curve names an existing
    file, else computed on the first --limit samples for --snapshots and written there): the ID
    velocity error per snapshot, the change from the first to the last snapshot and the OOD / ID
    ratio of mean errors, each with a bootstrap interval over videos (2,000 resamples, seed 0; ID
    and OOD videos resampled independently).  The axis is training steps: the data axis would need
    one 40-minute run per size on these cores.
(b) Where OOD fitted speeds land: for the videos whose true speed lies outside the task's training
    range, the share of fitted speeds inside it and the median distance of the fitted speed to the
    nearest speed of --train-split, for the selected snapshot (its curve rows, or --learned-results,
    a `phybench score` samples sidecar) beside nearest-neighbour's on the same videos
    (`studies.cases` computes the same landing statistics against the range); and, as a control, the
    share of the selected snapshot's first --limit ID videos fitted within 10% of the true speed beside
    nearest-neighbour's on the same videos (its ID sidecar).
(c) A section-5 probe on the selected snapshot: the probe's evaluation split (its first
    --probe-limit samples) is generated, sampled and analysed as `phybench analyze` does.

The selected snapshot is the one with the lowest validation velocity error in the run's log.jsonl
(validation: held-out training rows; no evaluation split is read to select it), or --select.
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from phybench.stats import bootstrap_stat_ci

RESAMPLES = 2000
PAPER_OOD_RATIO = 10.0  # the paper: OOD error "an order of magnitude" above ID
SEVERAL = 3.0  # issue 33: OOD error "at least several times" ID


# ------------------------------------------------------------------ intervals
def bootstrap(stat: Callable[..., float], samples: Sequence[np.ndarray], seed: int = 0) -> list[float]:
    """The 95% percentile interval of stat(*samples), each sample resampled independently with replacement
    (`phybench.stats.bootstrap_stat_ci`, the studies' `RESAMPLES`), as a JSON list."""
    return list(bootstrap_stat_ci(stat, samples, RESAMPLES, seed))


def _ratio(a: np.ndarray, b: np.ndarray) -> float:
    return float(a.mean() / b.mean())


def _diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(a.mean() - b.mean())


# ------------------------------------------------------------------ the run and its curve
RANKED_KEY = "val/velocity_error_ranked"


def selected_step(run: Path, key: str | None = None) -> int:
    """The snapshot step with the lowest validation `key` in the run's log (the earliest on a tie).

    By default the ranked validation error (`val/velocity_error_ranked`, the board's ranked column:
    a lost ball costs), so a snapshot that keeps its error low by losing balls is not chosen; logs
    written before that key existed fall back to `val/velocity_error` (the trackable-only mean), which
    keeps every shipped run's selection as it was made.  ``val/outcome_wrong`` for a run on an
    ambiguity split (no velocity to read there)."""
    entries = [json.loads(line) for line in (Path(run) / "log.jsonl").read_text().splitlines() if line.strip()]
    if key is None:
        key = RANKED_KEY if any(RANKED_KEY in e for e in entries) else "val/velocity_error"
    evals = []
    for entry in entries:
        err = entry.get(key)
        if err is not None and math.isfinite(err):
            evals.append((float(err), int(entry["step"])))
    if not evals:
        raise ValueError(f"{run}/log.jsonl has no {key}: give --select STEP")
    return min(evals)[1]


def snapshot_path(run: Path, step: int) -> Path:
    path = Path(run) / "snapshots" / f"ema_{step:07d}.safetensors"
    if not path.is_file():
        raise ValueError(f"{path} is missing: the run has no snapshot at step {step}")
    return path


def load_curve(curve: str | None, run: Path, splits: Sequence[str], steps: Sequence[int], limit: int,
               progress: bool = True) -> list[dict[str, Any]]:
    """The curve's rows: read from `curve` when it exists, else computed (and written there when named)."""
    if curve and Path(curve).is_file():
        rows = [json.loads(line) for line in Path(curve).read_text().splitlines() if line.strip()]
        if any("velocity_errors" not in r or "sample_ids" not in r for r in rows):
            raise ValueError(f"{curve} was written by an older studies.curve (no per-video errors): recompute it")
        return rows
    from .curve import score_split
    from ..framear.sample import load_run

    rows = []
    for step in sorted(set(steps)):
        cfg, model = load_run(snapshot_path(run, step))
        for split in splits:
            row = {"step": step, **score_split(model, cfg, split, limit)}
            rows.append(row)
            if progress:
                print(f"curve: step {step} {row['split']}: velocity error {row['velocity_error']:.3f}", flush=True)
    if curve:
        Path(curve).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


# ------------------------------------------------------------------ (a) the learning curve
def finding_a(rows: list[dict[str, Any]], id_split: str, ood_split: str) -> dict[str, Any]:
    """ID error per step, first-to-last change and OOD / ID ratios, with bootstrap intervals over videos."""
    by = {(r["step"], r["split"]): r for r in rows}
    steps = sorted({s for s, split in by if split == id_split and (s, ood_split) in by})
    if not steps:
        raise ValueError(f"the curve has no step with both {id_split} and {ood_split}")
    points = []
    for step in steps:
        i = np.asarray(by[step, id_split]["velocity_errors"], float)
        o = np.asarray(by[step, ood_split]["velocity_errors"], float)
        points.append({"step": step, "id_videos": int(by[step, id_split]["videos"]),
                       "ood_videos": int(by[step, ood_split]["videos"]),
                       "id_error": float(i.mean()) if len(i) else math.nan, "id_ci95": bootstrap(np.mean, [i]),
                       "ood_error": float(o.mean()) if len(o) else math.nan, "ood_ci95": bootstrap(np.mean, [o]),
                       "id_untrackable": by[step, id_split]["untrackable"],
                       "ood_untrackable": by[step, ood_split]["untrackable"],
                       "ood_over_id": _ratio(o, i) if len(i) and len(o) else math.nan,
                       "ood_over_id_ci95": bootstrap(_ratio, [o, i])})
    first, last = (np.asarray(by[s, id_split]["velocity_errors"], float) for s in (steps[0], steps[-1]))
    change = {"from_step": steps[0], "to_step": steps[-1],
              "id_error_change": _diff(last, first) if len(first) and len(last) else math.nan,
              "ci95": bootstrap(_diff, [last, first])}
    return {"axis": "training steps", "id_split": id_split, "ood_split": ood_split, "points": points,
            "id_change": change}


def sentence_a(a: dict[str, Any]) -> str:
    pts, ch = a["points"], a["id_change"]
    per_step = "; ".join(f"step {p['step']} {p['id_error']:.3f} {_ci(p['id_ci95'])} ({_pct(p['id_untrackable'])} "
                         f"untrackable, OOD {_pct(p['ood_untrackable'])})" for p in pts)
    lo, hi = ch["ci95"]
    trend = ("falls" if hi < 0 else "rises" if lo > 0 else "does not change measurably")
    ratios = ", ".join(f"{p['ood_over_id']:.1f}x {_ci(p['ood_over_id_ci95'], 1)} at step {p['step']}" for p in pts)
    paper = ("agrees with the paper that ID error falls with training" if trend == "falls" else
             f"disagrees with the paper, whose ID error falls with training: here it {trend} over these snapshots")
    lost = pts[-1]["id_untrackable"] - pts[0]["id_untrackable"]
    if trend == "falls" and lost > 0.05:
        paper += (f", but only over the videos that keep a trackable ball: the ID untrackable share rises from "
                  f"{_pct(pts[0]['id_untrackable'])} to {_pct(pts[-1]['id_untrackable'])}")
    several = [p["step"] for p in pts if p["ood_over_id_ci95"][0] >= SEVERAL]
    if len(several) == len(pts):
        paper += f"; OOD error stays at least {SEVERAL:g}x ID (the ratio's lower bound) at every snapshot"
    else:
        paper += (f"; OOD error is at least {SEVERAL:g}x ID (the ratio's lower bound) only at "
                  f"{_steps(several)} of {_steps([p['step'] for p in pts])}")
    paper += (", an order of magnitude as in the paper" if all(p["ood_over_id"] >= PAPER_OOD_RATIO for p in pts) else
              ", below the paper's order of magnitude")
    return (f"(a) Learning curve ({a['axis']}, first {pts[0]['id_videos']} ID / {pts[0]['ood_videos']} OOD videos): "
            f"ID velocity error over trackable videos {per_step}; from step {ch['from_step']} to {ch['to_step']} it "
            f"{trend} ({ch['id_error_change']:+.3f} {_ci(ch['ci95'])}); OOD / ID error ratio {ratios}.  "
            f"The miniature {paper}.")


def _steps(steps: Sequence[int]) -> str:
    return ("step " if len(steps) == 1 else "steps ") + ", ".join(str(s) for s in steps) if steps else "none"


# ------------------------------------------------------------------ (b) where OOD fits land
def train_velocities(train_split: str) -> np.ndarray:
    """The sorted distinct speeds of a training split (its rows' velocity column; no video is decoded)."""
    from phybench.data.documents import dof_value
    from phybench.data.split import SplitReader

    v = np.unique(np.asarray([float(dof_value(r, "velocity")) for r in SplitReader(train_split).rows(columns=["velocity"])]))
    if not len(v):
        raise ValueError(f"{train_split} has no rows")
    return v


def nearest_distance(x: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """|x - the nearest value of the sorted grid|, elementwise."""
    i = np.clip(np.searchsorted(grid, x), 1, len(grid) - 1) if len(grid) > 1 else np.zeros(len(x), int)
    return np.minimum(np.abs(x - grid[i - 1 if len(grid) > 1 else 0]), np.abs(x - grid[i]))


def sidecar_fits(path: str) -> dict[str, tuple[float, float]]:
    """sample id -> (true speed, fitted speed; NaN without a fit) from a `phybench score` samples sidecar."""
    from ..framear.sample import fitted_speed  # torch: imported when run, not when the CLI lists the studies

    return {str(s["sample_id"]): (float(s["true_velocity"]), fitted_speed((s.get("law") or {}).get("fit")))
            for s in json.loads(Path(path).read_text())["samples"]}


def curve_fits(row: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """sample id -> (true speed, fitted speed) from one curve row."""
    return {sid: (float(t), float(f)) for sid, (t, f) in zip(row["sample_ids"], row["true_vs_fitted_speed"], strict=True)}


def landing_stats(fits: dict[str, tuple[float, float]], ids: Sequence[str], lo: float, hi: float,
                  grid: np.ndarray) -> dict[str, Any]:
    """For the videos in `ids` whose true speed lies outside [lo, hi]: where their fitted speeds land."""
    from .cases import landing

    out_ids = [i for i in ids if not lo <= fits[i][0] <= hi]
    true = np.asarray([fits[i][0] for i in out_ids], float)
    fit = np.asarray([fits[i][1] for i in out_ids], float)
    ok = np.isfinite(fit)
    t, f = true[ok], fit[ok]
    inside = ((f >= lo) & (f <= hi)).astype(float)
    dist, tdist = nearest_distance(f, grid), nearest_distance(t, grid)
    samples = [{"sample_id": sid, "true_velocity": fits[sid][0],
                "law": {"fit": {"velocity_x": fits[sid][1] if math.isfinite(fits[sid][1]) else None,
                                "velocity_y": 0.0}}} for sid in out_ids]
    ranged = landing(samples, lo, hi)  # studies.cases: distances to the range (0 inside it)
    return {"videos_out_of_range": int(len(true)), "with_fit": int(ok.sum()),
            "share_inside_training_range": float(inside.mean()) if len(f) else math.nan,
            "share_inside_ci95": bootstrap(np.mean, [inside]),
            "median_distance_to_nearest_training_speed": float(np.median(dist)) if len(f) else math.nan,
            "median_distance_ci95": bootstrap(np.median, [dist]),
            "truth_median_distance_to_nearest_training_speed": float(np.median(tdist)) if len(t) else math.nan,
            "median_abs_error": float(np.median(np.abs(f - t))) if len(f) else math.nan,
            "median_abs_error_ci95": bootstrap(np.median, [np.abs(f - t)]),
            "median_distance_fit_to_range": ranged["median_distance_fit_to_range"]}


def within_10pct(fits: dict[str, tuple[float, float]], ids: Sequence[str]) -> dict[str, Any]:
    """The share of videos whose fitted speed lies within 10% of the true speed (no fit: a miss), with its interval."""
    hit = np.asarray([math.isfinite(fits[i][1]) and abs(fits[i][1] - fits[i][0]) <= 0.1 * abs(fits[i][0])
                      for i in ids], float)
    return {"videos": len(ids), "share": float(hit.mean()) if len(hit) else math.nan, "ci95": bootstrap(np.mean, [hit])}


def finding_b(learned: dict[str, tuple[float, float]], nn: dict[str, tuple[float, float]], task: str,
              grid: np.ndarray, source: str, learned_id: dict[str, tuple[float, float]] | None = None,
              nn_id: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
    """The learned model's and nearest-neighbour's landing statistics on the same OOD videos; with their ID
    fits, the share of ID videos fitted within 10% (the control: fits are accurate where the truth is seen)."""
    ids = sorted(set(learned) & set(nn))
    if not ids:
        raise ValueError("the learned model's OOD samples and nearest-neighbour's share no sample id")
    from .cases import velocity_range

    lo, hi = velocity_range(task)
    out = {"training_range": [lo, hi], "training_speeds": int(len(grid)), "videos": len(ids), "learned_source": source,
           "learned": landing_stats(learned, ids, lo, hi, grid), "nearest_neighbour": landing_stats(nn, ids, lo, hi, grid)}
    if learned_id and nn_id and set(learned_id) & set(nn_id):
        shared = sorted(set(learned_id) & set(nn_id))
        out["id_control"] = {"learned": within_10pct(learned_id, shared), "nearest_neighbour": within_10pct(nn_id, shared)}
    return out


def sentence_b(b: dict[str, Any]) -> str:
    m, n = b["learned"], b["nearest_neighbour"]
    lo, hi = b["training_range"]

    def stats(s: dict[str, Any]) -> str:
        return (f"{_pct(s['share_inside_training_range'])} {_ci(s['share_inside_ci95'], pct=True)} land inside "
                f"[{lo:g}, {hi:g}], median distance to the nearest training speed "
                f"{s['median_distance_to_nearest_training_speed']:.2f} {_ci(s['median_distance_ci95'], 2)}, "
                f"median |fit - truth| {s['median_abs_error']:.2f} {_ci(s['median_abs_error_ci95'], 2)}")

    share, nn_share = m["share_inside_training_range"], n["share_inside_training_range"]
    near, truth = m["median_distance_to_nearest_training_speed"], m["truth_median_distance_to_nearest_training_speed"]
    if m["share_inside_ci95"][0] > 0.5:
        paper = "snaps into the training range as the paper's case-based finding says"
    elif m["share_inside_ci95"][1] >= n["share_inside_ci95"][0]:
        paper = "snaps about as often as nearest-neighbour, as the paper's case-based finding says"
    elif near < truth / 2:
        paper = (f"lands inside the training range less often than nearest-neighbour, yet its fits are pulled "
                 f"towards it (median distance {near:.2f} against the truth's {truth:.2f}): partial snapping, "
                 f"weaker than the paper's case-based finding")
    else:
        paper = "does not snap towards the training range: unlike the paper's case-based finding"
    return (f"(b) Case-based generalisation ({b['learned_source']}; {m['videos_out_of_range']} OOD videos with a true speed outside the "
            f"training range, {m['with_fit']} / {n['with_fit']} with a fitted speed; the truth's median distance to "
            f"the nearest training speed {m['truth_median_distance_to_nearest_training_speed']:.2f}): the learned "
            f"model's fitted speeds: {stats(m)}; nearest-neighbour's: {stats(n)}.  The miniature {paper}"
            f" ({_pct(share)} against nearest-neighbour's {_pct(nn_share)}){_control(b)}.")


def _control(b: dict[str, Any]) -> str:
    c = b.get("id_control")
    if not c:
        return ""
    m, n = c["learned"], c["nearest_neighbour"]
    return (f"; on {m['videos']} ID videos the fitted speed is within 10% of the truth for {_pct(m['share'])} "
            f"{_ci(m['ci95'], pct=True)} (nearest-neighbour {_pct(n['share'])} {_ci(n['ci95'], pct=True)})")


# ------------------------------------------------------------------ (c) a section-5 probe
PROBE_TASKS = {"flip": ("flip-memorisation", "eval")}


def finding_c(probe: str, snapshot: Path, work: Path, limit: int, progress: bool = True) -> dict[str, Any]:
    """Generate the probe's evaluation split (its first `limit` samples), sample the snapshot on it, analyse it."""
    from phybench import probes
    from phybench.data.generate import generate
    from phybench.data.split import make_plan
    from phybench.tasks import get_task
    from ..framear.sample import main as sample_main

    task, split = PROBE_TASKS[probe]
    data, sub = work / f"{task}-{split}-{limit}", work / f"{task}-{split}-{limit}-sub"
    if not (data / "manifest.json").is_file():
        generate(make_plan(get_task(task), split, None, limit, None), data, progress=False)
    if not sub.exists():
        sample_main(["--checkpoint", str(snapshot), "--data", str(data), "--out", str(sub), "--batch-size", "32",
                     "--cross-task"])
    results = probes.analyse(sub, data, progress=False)
    verdicts = results["analysis"]["verdicts"]
    return {"probe": probe, "task": task, "split": split, "videos": results["analysis"]["videos_analysed"],
            "verdicts": {k: {"count": v["count"], "share": v["share"], "ci95": v["ci95"]} for k, v in verdicts.items()}}


def sentence_c(c: dict[str, Any], train_task: str) -> str:
    v = c["verdicts"]
    text = ", ".join(f"{k} {_pct(x['share'])} {_ci(x['ci95'], pct=True)}" for k, x in v.items())
    rev = v["reversed"]
    if rev["count"] == 0:
        paper = ("agrees with the paper's premise: a model that has seen motion in one direction only (as its "
                 "Set-1) keeps a slow ball's direction; reversals need mirrored training videos (Set-2)")
    else:
        paper = (f"disagrees with the paper's premise: this model saw left-to-right motion only, as the paper's "
                 f"Set-1, yet reverses {rev['count']} of {c['videos']} slow balls")
    return (f"(c) Probe {c['probe']} (section 5.2, {c['videos']} videos of {c['task']}/{c['split']}, the selected "
            f"snapshot): {text}.  The model learned from {train_task}'s training split (speeds that cover the "
            f"probe's slow balls), not from the probe's Set-1 or Set-2, so this asks only whether it keeps a slow "
            f"ball's direction; the miniature {paper}.")


# ------------------------------------------------------------------ output
def _ci(ci: Sequence[float], digits: int = 3, pct: bool = False) -> str:
    lo, hi = ci
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "[n/a]"
    return f"[{_pct(lo)}, {_pct(hi)}]" if pct else f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%" if math.isfinite(x) else "n/a"


def json_clean(x: Any) -> Any:
    """NaN -> null, floats rounded to 6 significant digits (stable bytes), containers recursed."""
    if isinstance(x, float):
        return float(f"{x:.6g}") if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): json_clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_clean(v) for v in x]
    if isinstance(x, np.generic):
        return json_clean(x.item())
    return x


def findings_bytes(findings: dict[str, Any]) -> bytes:
    return (json.dumps(json_clean(findings), sort_keys=True, indent=1, allow_nan=False) + "\n").encode()


# ------------------------------------------------------------------ command
RUN_ONLY = ("run", "data", "nn_results")  # required without --grid


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--run", help="a finished framear run folder (config.json, log.jsonl, snapshots/)")
    p.add_argument("--data", nargs=2, metavar=("ID_SPLIT", "OOD_SPLIT"), help="evaluation split folders")
    p.add_argument("--train-split", help="the training split folder (its speeds: finding b; with --grid, finding 3)")
    p.add_argument("--nn-results", nargs=2, metavar=("NN_ID", "NN_OOD"),
                   help="nearest-neighbour's `phybench score` samples sidecars on the ID and OOD splits")
    p.add_argument("--curve", help="studies.curve JSON lines: reused if the file exists, else computed and written")
    p.add_argument("--limit", type=int, default=64, help="curve: the first N samples of each split (default 64)")
    p.add_argument("--snapshots", nargs="*", type=int, help="curve: these steps (default: every snapshot)")
    p.add_argument("--select", type=int, help="the selected snapshot's step (default: lowest validation error)")
    p.add_argument("--learned-results", help="the selected snapshot's OOD samples sidecar for finding b "
                                             "(default: its curve rows)")
    p.add_argument("--probe", default="flip", choices=[*PROBE_TASKS, "none"], help="finding c's probe (default flip)")
    p.add_argument("--probe-limit", type=int, default=32, help="probe videos (default 32)")
    p.add_argument("--work", help="folder for the probe's split and submission (default: OUT's name + .work)")
    p.add_argument("--out", required=True, help="findings.json to write")
    p.add_argument("--quiet", action="store_true")


def run_from_args(args: argparse.Namespace) -> int:
    """One run's findings (`phybench study findings` without --grid: `findings_command`)."""
    missing = [f"--{k.replace('_', '-')}" for k in (*RUN_ONLY, "train_split") if not getattr(args, k, None)]
    if missing:
        raise ValueError(f"without --grid, {', '.join(missing)} are required")
    findings = compute(args)
    for key in ("a", "b", "c"):
        if key in findings["sentences"]:
            print(findings["sentences"][key])
    print(f"findings: {args.out}")
    return 0


def compute(args: argparse.Namespace) -> dict[str, Any]:
    from phybench.data.split import SplitReader
    from phybench.io import atomic_write_bytes

    run = Path(args.run)
    id_split, ood_split = (SplitReader(d).manifest for d in args.data)
    task = str(id_split["task"])
    step = args.select if args.select is not None else selected_step(run)
    steps = args.snapshots or sorted(int(p.stem.split("_")[1]) for p in (run / "snapshots").glob("ema_*.safetensors"))
    need = sorted({*steps, step}) if not args.learned_results else steps
    rows = load_curve(args.curve, run, args.data, need, args.limit, not args.quiet)
    a = finding_a(rows, id_split["split"], ood_split["split"])
    at_step = {r["split"]: r for r in rows if r["step"] == step}
    if args.learned_results:
        learned, source = sidecar_fits(args.learned_results), Path(args.learned_results).name
    elif ood_split["split"] in at_step:
        learned, source = curve_fits(at_step[ood_split["split"]]), f"curve step {step}"
    else:
        raise ValueError(f"the curve has no {ood_split['split']} row at the selected step {step}")
    learned_id = curve_fits(at_step[id_split["split"]]) if id_split["split"] in at_step else None
    b = finding_b(learned, sidecar_fits(args.nn_results[1]), task, train_velocities(args.train_split), source,
                  learned_id, sidecar_fits(args.nn_results[0]))
    findings: dict[str, Any] = {"schema": "phybench.framear-findings/1", "task": task, "selected_step": step,
                                "a_learning_curve": a, "b_case_based": b,
                                "sentences": {"a": sentence_a(a), "b": sentence_b(b)}}
    if args.probe != "none":
        work = Path(args.work) if args.work else Path(str(args.out) + ".work")
        work.mkdir(parents=True, exist_ok=True)
        c = finding_c(args.probe, snapshot_path(run, step), work, args.probe_limit, not args.quiet)
        findings["c_probe"] = c
        findings["sentences"]["c"] = sentence_c(c, task)
    atomic_write_bytes(args.out, findings_bytes(findings))
    return findings


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(p)
    args = p.parse_args(argv)
    run_from_args(args)
    return json.loads(Path(args.out).read_text())


if __name__ == "__main__":
    main()
