"""The flip probe's analysis, summary, text and page section (paper section 5).

Its task family and tasks (data, like `phybench.tasks.uniform`) are in
`phybench.tasks.probe_families.flip`; the names below re-export them.
"""
from __future__ import annotations

from typing import Any

from ..tasks.probe_families.flip import (  # noqa: F401  re-exported: the probe's family and constants
    EVAL_SIZE,
    EVAL_VELOCITY,
    FLIP,
    MARGIN,
    RADIUS,
    SET_SIZE,
    TRAIN_VELOCITY,
    FlipFamily,
)
from ..data.documents import dof_value
from ..tasks.spec import TaskSpec
from .page import esc, pct, rows_section, scatter
from .reading import MIN_FRAMES, BodyReading, pct_text, read_body, share, split_videos
from .registry import Probe, register_probe

# ------------------------------------------------------------------ analysis
# ------------------------------------------------------------------ flip memorisation
FLIP_VERDICTS = ("kept", "reversed", "stalled", "lost")
STALL_SPEED = 0.2  # world units / s: a generated speed below this is a stalled ball, not a direction


def flip_verdict(conditioned_velocity: float, reading: BodyReading) -> str:
    """"kept" (same direction), "reversed", "stalled" (|v| < STALL_SPEED) or "lost"."""
    if reading.lost:
        return "lost"
    if abs(reading.velocity) < STALL_SPEED:
        return "stalled"
    return "kept" if reading.velocity * conditioned_velocity > 0 else "reversed"


def _flip_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    spec: TaskSpec = reader.spec
    videos: list[dict[str, Any]] = []
    columns = ["sample_id", "level", "velocity", "direction"]
    for row, video in split_videos(reader, sub, columns, "flip", progress):
        sample_id = row["sample_id"]
        v0 = float(dof_value(row, "velocity")) * (-1.0 if dof_value(row, "direction") == "left" else 1.0)
        reading = read_body(video, spec.condition_frames, spec.world_size, spec.frame_interval)
        videos.append({"sample_id": sample_id, "conditioned_velocity": v0, "velocity": reading.velocity,
                       "frames": reading.frames, "verdict": flip_verdict(v0, reading)})
    videos.sort(key=lambda v: v["sample_id"])
    n = len(videos)
    counts = {v: sum(1 for x in videos if x["verdict"] == v) for v in FLIP_VERDICTS}
    return {"videos_analysed": n, "verdicts": {v: share(counts[v], n) for v in FLIP_VERDICTS},
            "verdict_meaning": {"kept": "moves in the conditioned direction", "reversed": "turns back",
                                "stalled": f"generated speed below {STALL_SPEED} world units / s",
                                "lost": f"ball not found wholly in view in {MIN_FRAMES} generated frames"},
            "videos": videos}


def flip_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One row per results file: the share of videos that reverse, with its interval."""
    rows = []
    for r in sorted(results, key=lambda r: (r["model"], r["task"], r["split"])):
        a = r["analysis"]
        rows.append({"model": r["model"], "task": r["task"], "split": r["split"], "n": a["videos_analysed"],
                     **{v: a["verdicts"][v] for v in FLIP_VERDICTS},
                     "points": [[v["conditioned_velocity"], v["velocity"]] for v in a["videos"]]})
    return {"rows": rows}


def render_flip(summary: dict[str, Any]) -> str:
    lines = []
    for row in summary["rows"]:
        lines.append(f"{row['model']} on {row['task']}/{row['split']}, {row['n']} videos")
        for v in FLIP_VERDICTS:
            lines.append(f"  {v:<9} {pct_text(row[v])}")
    return "\n".join(lines)


# ------------------------------------------------------------------ page section (probes.html)
def _flip_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    return rows_section(
        ["model", "split", "reversed", "kept", "stalled", "lost", "n"], summaries,
        lambda model, row: [esc(model), f"{esc(row['task'])}/{esc(row['split'])}",
                            *(esc(pct(row[v])) for v in ("reversed", "kept", "stalled", "lost")), str(row["n"])],
        lambda model, row: f'{scatter(row["points"])}<figcaption>{esc(model)}: generated vs conditioned velocity '
                           f'(red: reversed)</figcaption>')


register_probe(Probe("flip", "flip memorisation (section 5.2): does a slow ball turn back after the condition frames",
                     _flip_analyse, flip_summary, render_flip,
                     section=_flip_section,
                     help='flip memorisation: does a slow ball turn back; section 5.2'))
