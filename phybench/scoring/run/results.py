"""Results files: per-sample details, per-split and per-level summaries, provenance.

A results file is what the leaderboard reads and what a CI job gates on, so it is
versioned (`SCHEMA_VERSION`, documented in docs/results.md), deterministic (sorted keys,
floats rounded to 9 significant digits, no clocks, no absolute paths: the same input gives
the same bytes) and self-describing (every convention of every metric is in
`provenance.metric_settings`).

Intervals are percentile bootstrap 95% intervals of the mean over videos, 10,000
resamples from a fixed seed, so they are reproducible too.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ...stats import bootstrap_mean_ci
from ..metrics import METRICS, companion_metrics, is_set_metric, is_video_metric
from ...data.documents import Manifest
from .documents import Provenance, Results

SCHEMA_VERSION = 1
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20241104  # fixed: intervals are part of the reproducible output
SIGNIFICANT_DIGITS = 9

# Which metrics exist, their kind (per-video, averaged over videos; or per set of videos),
# direction and table format: the metric registry, `phybench.scoring.metrics.METRICS`.
OVERALL = "overall"  # the whole split; in `set_metrics` per-level keys are "level:<name>"


def _round(x: float) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.{SIGNIFICANT_DIGITS}g}")


def bootstrap_ci(values: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean of `values` (1-D, finite): a results file's
    interval, drawn by the one bootstrap (`phybench.stats`) with the results file's stream."""
    n = np.asarray(values).size
    return bootstrap_mean_ci(values, resamples, seed, chunk=max(1, 4_000_000 // max(n, 1)))  # index matrix ~32 MB


Z95 = 1.959963984540054  # two-sided 95% normal quantile (Wilson intervals)


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval (95% by default) of a share k / n: exact at 0 and n, unlike a
    normal interval.  At n = 0 it is (0, 1), the formula's limit and the honest answer (no
    video says nothing about the share); a caller that reports no share then says so itself.
    The one Wilson interval of phybench (the judge's calibration, the probes' shares)."""
    if n == 0:
        return 0.0, 1.0
    p, z2 = k / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def tracking_lists(details: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The results file's `untrackable` and `excluded` lists: each video the velocity parser lost, or
    that the tracking conventions leave out, with its level and reason (a rescore of the tracking
    metric rewrites them too)."""
    return {key: [{"sample_id": d["sample_id"], "level": d["level"], "reason": d[key]} for d in details if d.get(key)]
            for key in ("untrackable", "excluded")}


def summarise(details: Sequence[dict[str, Any]], metrics: Iterable[str]) -> dict[str, Any]:
    """Summary of one group of per-video detail rows: mean, interval and count per metric."""
    n = len(details)
    untrackable = sum(1 for d in details if d.get("untrackable"))
    excluded = sum(1 for d in details if d.get("excluded"))
    out: dict[str, Any] = {
        "videos": n,
        "untrackable": {"count": untrackable, "rate": _round(untrackable / n) if n else None},
        "excluded": {"count": excluded},
    }
    for name in metrics:
        if not is_video_metric(name):
            continue
        vals = np.array([d[name] for d in details if d.get(name) is not None and math.isfinite(d[name])])
        if vals.size == 0:
            continue
        lo, hi = bootstrap_ci(vals)
        out[name] = {"mean": _round(vals.mean()), "ci95": [_round(lo), _round(hi)], "count": int(vals.size)}
    for name in metrics:  # extra blocks a metric computes from the rows (e.g. the fitted law's median / IQR)
        hook = METRICS.get(name).summarise if name in METRICS else None
        if hook is not None:
            out.update(hook(details))
    return out


def level_details(details: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """{level: rows of that level}, levels sorted.  (A level may be called "all": collision
    has an OOD level where all four DoFs are out of range, so the whole split is a separate
    key, `overall`, never a level name.)"""
    return {level: [d for d in details if d["level"] == level] for level in sorted({d["level"] for d in details})}


def build_results(
    *,
    model: dict[str, Any],
    manifest: Manifest,
    provenance: Provenance,
    details: Sequence[dict[str, Any]],
    metrics: Sequence[str],
    set_metrics: dict[str, dict[str, Any]] | None = None,
) -> Results:
    """The results document (see docs/results.md)."""
    set_metrics = set_metrics or {}
    overall = summarise(details, metrics) | set_metrics.get(OVERALL, {})
    levels = {
        name: summarise(rows, metrics) | set_metrics.get(f"level:{name}", {})
        for name, rows in level_details(details).items()
    }
    lost = tracking_lists(details)
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "phybench-results",
        "model": model,
        "task": manifest["task"],
        "task_version": manifest["task_version"],
        "split": manifest["split"],
        "metrics": list(metrics),
        "higher_is_better": {m: METRICS.get(m).higher_is_better for m in metrics if m in METRICS},
        "summary": {"overall": overall, "levels": levels},
        "untrackable": lost["untrackable"],
        "excluded": lost["excluded"],
        "provenance": provenance,
    }


def json_ready(obj: Any) -> Any:
    """Round floats and map non-finite ones to null, recursively (JSON has no NaN)."""
    if isinstance(obj, float):
        return _round(obj)
    if isinstance(obj, dict):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    if isinstance(obj, np.generic):
        return json_ready(obj.item())
    return obj


def results_bytes(results: Mapping[str, Any]) -> bytes:
    """A results file's bytes (and those of the other documents written the same way: sorted keys, indent 2)."""
    return (json.dumps(json_ready(results), sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def write_details(path: str | os.PathLike[str], details: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
    """Per-sample details as Parquet (one row per video), written atomically."""
    from ...io import atomic_write_bytes

    atomic_write_bytes(path, details_bytes(details, columns))


def details_bytes(details: Sequence[dict[str, Any]], columns: Sequence[str]) -> bytes:
    """The bytes of `write_details`' Parquet file (so a caller can write it with other files as a unit)."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    def col(name: str) -> list[Any]:
        return [d.get(name) for d in details]

    arrays: dict[str, Any] = {
        "sample_id": pa.array(col("sample_id"), pa.string()),
        "level": pa.array(col("level"), pa.string()),
        "untrackable": pa.array(col("untrackable"), pa.string()),
        "excluded": pa.array(col("excluded"), pa.string()),
        "scored_pairs": pa.array(col("scored_pairs"), pa.int32()),
    }
    for name in columns:
        if is_video_metric(name):
            arrays[name] = pa.array(
                [None if v is None or not math.isfinite(v) else float(v) for v in col(name)], pa.float64()
            )
    for count in ("bodies_extra", "bodies_missing"):  # the per-body census (phybench.scoring.judge.census), where scored
        if any(count in d for d in details):
            arrays[count] = pa.array([d.get(count) for d in details], pa.int32())
    for flag in ("missing", "partly_out", "split", "colour_changed"):
        arrays[f"frames_{flag}"] = pa.array([d.get("flagged_frames", {}).get(flag, 0) for d in details], pa.int32())
    buf = io.BytesIO()
    pq.write_table(pa.table(arrays), buf, compression="zstd")
    return buf.getvalue()


def _fmt(metric: str, entry: dict[str, Any] | None) -> str:
    if not entry or entry.get("mean") is None:
        return "–"
    spec = METRICS.get(metric).fmt if metric in METRICS else ".3g"
    text = f"{entry['mean']:{spec}}"
    ci = entry.get("ci95")
    if ci and ci[0] is not None:
        text += f" [{ci[0]:{spec}}, {ci[1]:{spec}}]"
    return text


def markdown_table(results: Results) -> str:
    """A GitHub-flavoured Markdown table of a results document (job summaries, READMEs)."""
    metrics = [m for m in results["metrics"] if m in METRICS]
    extra = [m for m in companion_metrics() if m not in metrics]
    summary = results["summary"]
    groups = [("overall", summary["overall"])] + [(f"level {k}", v) for k, v in summary["levels"].items()]
    shown = metrics + [m for m in extra if any(m in g for _, g in groups)]
    arrow = {True: "↑", False: "↓"}
    head = ["group", "videos", "untrackable", "excluded"] + [f"{m} {arrow[METRICS.get(m).higher_is_better]}" for m in shown]
    lines = [
        f"**{results['model'].get('name', '?')}** on `{results['task']}` / `{results['split']}` "
        f"(split hash `{results['provenance']['split_hash'][:12]}`)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join(["---"] * len(head)) + "|",
    ]
    for group, s in groups:
        cells = [group, str(s.get("videos", "")), f"{s.get('untrackable', {}).get('count', 0)}",
                 f"{s.get('excluded', {}).get('count', 0)}"]
        for m in shown:
            entry = s.get(m)
            if is_set_metric(m) and entry:
                cells.append(f"{entry['value']:.1f} (N={entry['videos']}, T={entry['frames']})" if entry.get("value") is not None else "–")
            else:
                cells.append(_fmt(m, entry))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    law = _law_lines(results)
    if law:
        lines += law + [""]
    lines.append(
        "Mean [bootstrap 95% interval] over videos.  Untrackable videos (a ball lost in a scored frame) and "
        "excluded ones (a ball visible in fewer than 2 condition frames: not predictable) are left out of "
        "the means and counted"
        + (", except in velocity_error_penalised, where an untrackable video counts as the worst possible error"
           if "velocity_error_penalised" in shown else "")
        + ("; velocity_error_ranked counts every video that is not excluded, a lost frame costing more the more "
           "frames are lost (docs/results.md)." if "velocity_error_ranked" in shown else ".")
    )
    return "\n".join(lines) + "\n"


def _law_lines(results: Results) -> list[str]:
    """The learned-law table of the whole split (`phybench.scoring.learned.law`), when the results carry one."""
    if "law" not in results["summary"]["overall"]:
        return []
    from ..learned.law import law_lines

    try:
        from ...tasks import family_of, get_task

        headline = family_of(get_task(results["task"])).law_headline
    except Exception:  # a task this phybench does not register: no headline to mark
        headline = None
    return law_lines(results["summary"]["overall"], headline)
