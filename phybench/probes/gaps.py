"""The gaps probe's analysis, summary, text and page section (paper section 5).

Its task family and tasks (data, like `phybench.tasks.uniform`) are in
`phybench.tasks.probe_families.gaps`; the names below re-export them.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..tasks.probe_families.gaps import (  # noqa: F401  re-exported: the probe's family and constants
    EVAL_SIZE,
    GAP_SETS,
    GAPS,
    MARGIN,
    RADIUS,
    TRAIN_SIZE,
    VELOCITY,
    GapsFamily,
)
from ..data.documents import dof_value
from ..tasks.spec import TaskSpec
from .page import esc, num, pct, rows_section, scatter
from .reading import MIN_FRAMES, BodyReading, pct_text, read_body, share, split_videos
from .registry import Probe, ProbeError, register_probe

# ------------------------------------------------------------------ analysis
# ------------------------------------------------------------------ interpolation gaps
GAP_VERDICTS = ("snapped", "held", "lost")
# world units / s: a move toward the training ranges smaller than this is reading noise (the
# reader's speed is within 0.02 of the truth on ground truth), not a snap
SNAP_TOLERANCE = 0.05  # for the videos whose speed lies in the training set's gap


def distance_to(ranges: Sequence[Sequence[float]], v: float) -> float:
    """World units / s from v to the nearest training range (0 inside one)."""
    return min(0.0 if a <= v <= b else min(abs(v - a), abs(v - b)) for a, b in ranges)


def gap_verdict(ranges: Sequence[Sequence[float]], v0: float, reading: BodyReading) -> str | None:
    """None for a conditioned speed inside a training range; else "snapped" (the generated
    speed is less than half as far from the training ranges as the conditioned one, and
    at least `SNAP_TOLERANCE` nearer), "held" or "lost"."""
    d0 = distance_to(ranges, v0)
    if d0 == 0.0:
        return None
    if reading.lost:
        return "lost"
    d = distance_to(ranges, reading.velocity)
    return "snapped" if d < 0.5 * d0 and d0 - d > SNAP_TOLERANCE else "held"


def _gaps_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    spec: TaskSpec = reader.spec
    sets = {name: ranges for name, ranges in spec.param("gap_sets")}
    train = options.get("train_split")
    if train not in sets:
        raise ProbeError(f"say which training set the model learnt from: --train-split one of {', '.join(sets)} "
                         f"(the submission names {train!r})")
    ranges = [list(r) for r in sets[train]]
    videos: list[dict[str, Any]] = []
    columns = ["sample_id", "velocity"]
    for row, video in split_videos(reader, sub, columns, "gaps", progress):
        sample_id = row["sample_id"]
        v0 = float(dof_value(row, "velocity"))
        reading = read_body(video, spec.condition_frames, spec.world_size, spec.frame_interval)
        videos.append({"sample_id": sample_id, "conditioned_velocity": v0, "velocity": reading.velocity,
                       "in_gap": distance_to(ranges, v0) > 0.0, "verdict": gap_verdict(ranges, v0, reading)})
    videos.sort(key=lambda v: v["sample_id"])
    gap = [v for v in videos if v["in_gap"]]
    counts = {v: sum(1 for x in gap if x["verdict"] == v) for v in GAP_VERDICTS}

    def error(vs: list[dict[str, Any]]) -> float:
        errs = [abs(v["velocity"] - v["conditioned_velocity"]) for v in vs if np.isfinite(v["velocity"])]
        return float(np.mean(errs)) if errs else float("nan")

    return {"train_split": train, "train_ranges": ranges, "videos_analysed": len(videos), "in_gap": len(gap),
            "verdicts": {v: share(counts[v], len(gap)) for v in GAP_VERDICTS},
            "velocity_error_in_gap": error(gap), "velocity_error_in_range": error([v for v in videos
                                                                                   if not v["in_gap"]]),
            "verdict_meaning": {"snapped": "in the gap, the generated speed is less than half as far from a "
                                           f"training range as the conditioned one (and {SNAP_TOLERANCE} nearer)",
                                "held": "in the gap, the generated speed did not move (that much) toward a "
                                        "training range",
                                "lost": f"ball not found wholly in view in {MIN_FRAMES} generated frames"},
            "videos": videos}


def gaps_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(results, key=lambda r: (r["model"], r["analysis"]["train_split"])):
        a = r["analysis"]
        rows.append({"model": r["model"], "task": r["task"], "split": r["split"], "train_split": a["train_split"],
                     "train_ranges": a["train_ranges"], "n": a["videos_analysed"], "in_gap": a["in_gap"],
                     **{v: a["verdicts"][v] for v in GAP_VERDICTS},
                     "velocity_error_in_gap": a["velocity_error_in_gap"],
                     "velocity_error_in_range": a["velocity_error_in_range"],
                     "points": [[v["conditioned_velocity"], v["velocity"]] for v in a["videos"]]})
    return {"rows": rows}


def render_gaps(summary: dict[str, Any]) -> str:
    lines = []
    for row in summary["rows"]:
        ranges = " U ".join(f"[{a:g}, {b:g}]" for a, b in row["train_ranges"])
        lines.append(f"{row['model']} trained on {row['train_split']} (v in {ranges}): {row['n']} videos, "
                     f"{row['in_gap']} in the gap")
        for v in GAP_VERDICTS:
            lines.append(f"  {v:<8} {pct_text(row[v])}")
        lines.append(f"  mean |v_gen - v| in the gap {row['velocity_error_in_gap']:.3f}, in range "
                     f"{row['velocity_error_in_range']:.3f} world units / s")
    return "\n".join(lines)


# ------------------------------------------------------------------ page section (probes.html)
def _gaps_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    return rows_section(
        ["model", "trained on", "snapped (in the gap)", "held", "lost", "|v_gen - v| in gap", "in range", "in gap / n"],
        summaries,
        lambda model, row: [esc(model), esc(row["train_split"]), *(esc(pct(row[v])) for v in ("snapped", "held", "lost")),
                            esc(num(row["velocity_error_in_gap"])), esc(num(row["velocity_error_in_range"])),
                            f"{row['in_gap']} / {row['n']}"],
        lambda model, row: f'{scatter(row["points"], lo=0.0, hi=4.5, bands=row["train_ranges"])}<figcaption>'
                           f'{esc(model)}, {esc(row["train_split"])}: generated vs conditioned velocity '
                           f'(shaded: training speeds)</figcaption>')


register_probe(Probe("gaps", "interpolation gaps (section 5.1): does an unseen speed snap to a seen one",
                     _gaps_analyse, gaps_summary, render_gaps,
                     section=_gaps_section,
                     help='interpolation gaps: does an unseen speed snap to a seen one; section 5.1'))
