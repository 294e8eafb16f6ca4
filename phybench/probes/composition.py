"""The composition probe's analysis, summary, text and page section (paper section 5).

Its task family and tasks (data, like `phybench.tasks.uniform`) are in
`phybench.tasks.probe_families.composition`; the names below re-export them.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..tasks.probe_families.composition import (  # noqa: F401  re-exported: the probe's family and constants
    BOUNCE,
    COMPOSITION,
    CONTACT,
    EVAL_SIZE,
    EVENTS,
    MARGIN,
    RADIUS,
    SECOND_CONTACT_AFTER,
    TRAIN_SIZE,
    VELOCITY,
    WALL_X,
    CompositionFamily,
    half_side,
)
from ..data.documents import SplitRow, dof_value
from ..tasks.spec import TaskSpec
from .page import esc, pct, rows_section
from .reading import INK_FLOOR, pct_text, share, split_videos
from .registry import Probe, register_probe

# ------------------------------------------------------------------ analysis
# ------------------------------------------------------------------ spatial / temporal composition
COMPOSITION_VERDICTS = ("both", "square-only", "ball-only", "neither", "vanished")
# world units (3 px at 128; ground truth reads within 0.004): a sub-event is correct when the
# body's mean position error is at most this
POSITION_TOLERANCE = 0.25
PRESENT_SHARE = 0.9  # ... and the body is found in at least this share of the generated frames
PRESENT_AREA = 0.5  # a body is found in a frame when its colour covers >= this share of its true area


def colour_coverage(frame: np.ndarray) -> dict[str, np.ndarray]:
    """Per pixel coverage of the pure red and pure blue bodies on white (black, the wall, is neither).

    A pixel covered c by red (and nothing else) is (255, 255 (1 - c), 255 (1 - c)): red
    coverage is (R - max(G, B)) / 255, blue likewise; grey and black give 0."""
    f = frame.astype(np.float64)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    out = {"red": np.clip((r - np.maximum(g, b)) / 255.0, 0.0, 1.0),
           "blue": np.clip((b - np.maximum(r, g)) / 255.0, 0.0, 1.0)}
    for c in out.values():
        c[c < INK_FLOOR] = 0.0
    return out


def read_tracks(video: np.ndarray, world_size: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"red": (areas (T,), centres (T, 2)), "blue": ...}: each colour's area (world units^2) and
    coverage centroid (world units, y up) per frame; centres NaN where the colour is absent."""
    video = np.asarray(video)
    T, H, W, _ = video.shape
    s = world_size / W
    xs = (np.arange(W) + 0.5) * s
    ys = world_size - (np.arange(H) + 0.5) * s  # image row 0 is the top of the world
    out = {}
    for name in ("red", "blue"):
        areas, centres = np.zeros(T), np.full((T, 2), np.nan)
        for k in range(T):
            c = colour_coverage(video[k])[name]
            total = float(c.sum())
            areas[k] = total * s * s
            if total > 0:
                centres[k] = (float((c.sum(axis=0) * xs).sum() / total), float((c.sum(axis=1) * ys).sum() / total))
        out[name] = (areas, centres)
    return out


def _sub_event(areas: np.ndarray, centres: np.ndarray, truth: np.ndarray, area: float,
               frames: np.ndarray) -> tuple[bool, float, float]:
    """(correct, share of frames found, mean position error) of one body over `frames`."""
    found = areas[frames] >= PRESENT_AREA * area
    if not found.any():
        return False, 0.0, float("nan")
    err = float(np.linalg.norm(centres[frames][found] - truth[frames][found], axis=-1).mean())
    present = float(found.mean())
    return present >= PRESENT_SHARE and err <= POSITION_TOLERANCE, present, err


def composition_verdict(row: SplitRow, video: np.ndarray, condition_frames: int, world_size: float,
                        frame_interval: float) -> dict[str, Any]:
    """Read the square and the ball of one video and judge each sub-event against the row's trajectory.

    square: found in >= 90% of the generated frames, mean position error <= POSITION_TOLERANCE (0.25 world units);
    ball: the same, and after the ground truth's wall bounce it moves away from the wall
    (the slope of its x over the frames after the bounce has the truth's sign);
    vanished: after the ball's first contact it is missing in at least half of the
    generated frames (Fig. 15's failure)."""
    pos = np.asarray(row["positions"], dtype=np.float64)  # (T, 3, 2): wall, square, ball
    T = pos.shape[0]
    tracks = read_tracks(video, world_size)
    r = float(dof_value(row, "radius"))
    area = math.pi * r * r  # the square has the ball's area
    gen = np.arange(condition_frames, T)
    t = np.arange(T) * frame_interval
    square_ok, square_found, square_err = _sub_event(*tracks["blue"], pos[:, 1], area, gen)
    ball_ok, ball_found, ball_err = _sub_event(*tracks["red"], pos[:, 2], area, gen)
    bounce = dof_value(row, "bounce_time", None)
    away = None
    if bounce is not None and math.isfinite(float(bounce)):
        after = gen[t[gen] > float(bounce) + 1e-9]
        areas, centres = tracks["red"]
        seen = after[areas[after] >= PRESENT_AREA * area]
        if len(seen) >= 2:
            slope = float(np.polyfit(t[seen], centres[seen, 0], 1)[0])
            truth = float(np.polyfit(t[after], pos[after, 2, 0], 1)[0])
            away = slope * truth > 0
        else:
            away = False
        ball_ok = ball_ok and away
    contact = dof_value(row, "ball_contact", None)
    vanished = False
    if contact is not None and math.isfinite(float(contact)):
        after = gen[t[gen] > float(contact) + 1e-9]
        if len(after):
            vanished = bool((tracks["red"][0][after] < PRESENT_AREA * area).mean() >= 0.5)
    v = ("vanished" if vanished else "both" if square_ok and ball_ok else "square-only" if square_ok
         else "ball-only" if ball_ok else "neither")
    return {"square_ok": bool(square_ok), "ball_ok": bool(ball_ok), "vanished": vanished,
            "square_found": square_found, "ball_found": ball_found, "square_error": square_err,
            "ball_error": ball_err, "ball_moves_away_after_bounce": away, "verdict": v}


def _composition_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    spec: TaskSpec = reader.spec
    videos: list[dict[str, Any]] = []
    columns = ["sample_id", "level", "radius", "velocity", "ball_contact", "bounce_time", "positions"]
    for row, video in split_videos(reader, sub, columns, "composition", progress):
        sample_id = row["sample_id"]
        got = composition_verdict(row, video, spec.condition_frames, spec.world_size, spec.frame_interval)
        videos.append({"sample_id": sample_id, "event": row["level"], **got})
    videos.sort(key=lambda v: v["sample_id"])
    n = len(videos)
    counts = {v: sum(1 for x in videos if x["verdict"] == v) for v in COMPOSITION_VERDICTS}
    return {"videos_analysed": n, "verdicts": {v: share(counts[v], n) for v in COMPOSITION_VERDICTS},
            "sub_events": {"square": share(sum(x["square_ok"] for x in videos), n),
                           "ball": share(sum(x["ball_ok"] for x in videos), n),
                           "ball_vanished": share(sum(x["vanished"] for x in videos), n)},
            "verdict_meaning": {
                "both": "the square's motion and the ball's bounce are both correct",
                "square-only": "the square's motion is correct, the ball's is not",
                "ball-only": "the ball's bounce is correct, the square's motion is not",
                "neither": "neither sub-event is correct",
                "vanished": "the ball is missing in at least half of the generated frames after its first contact"},
            "tolerance": {"position": POSITION_TOLERANCE, "found_share": PRESENT_SHARE, "found_area": PRESENT_AREA},
            "videos": videos}


def composition_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(results, key=lambda r: (r["model"], r["task"], r["split"])):
        a = r["analysis"]
        rows.append({"model": r["model"], "task": r["task"], "split": r["split"], "n": a["videos_analysed"],
                     **{v: a["verdicts"][v] for v in COMPOSITION_VERDICTS}, **a["sub_events"]})
    return {"rows": rows}


def render_composition(summary: dict[str, Any]) -> str:
    lines = []
    for row in summary["rows"]:
        lines.append(f"{row['model']} on {row['task']}/{row['split']}, {row['n']} videos")
        lines.append(f"  square's motion correct  {pct_text(row['square'])}")
        lines.append(f"  ball's bounce correct    {pct_text(row['ball'])}")
        lines.append(f"  ball vanished            {pct_text(row['ball_vanished'])}")
        for v in COMPOSITION_VERDICTS:
            lines.append(f"  {v:<12} {pct_text(row[v])}")
    return "\n".join(lines)


# ------------------------------------------------------------------ page section (probes.html)
COMPOSITION_BARS = (("square", "square's motion correct", "#1f77b4"), ("ball", "ball's bounce correct", "#2ca02c"),
                    ("ball_vanished", "ball vanished after contact", "#d62728"))


def _composition_bars(row: dict[str, Any], width: int = 400, left: int = 200) -> str:
    parts = []
    for i, (key, label, colour) in enumerate(COMPOSITION_BARS):
        share = float(row[key]["share"] or 0.0)
        y = 4 + 18 * i
        parts.append(f'<rect x="{left}" y="{y}" width="{width - left}" height="12" fill="#eee"/>')
        parts.append(f'<rect class="probe-share" x="{left}" y="{y}" width="{(width - left) * share:.1f}" height="12" '
                     f'fill="{colour}"><title>{esc(label)} {100 * share:.1f}%</title></rect>')
        parts.append(f'<text x="{left - 4}" y="{y + 10}" font-size="10" text-anchor="end">{esc(label)} '
                     f'{100 * share:.0f}%</text>')
    height = 4 + 18 * len(COMPOSITION_BARS)
    return f'<svg class="probe-bars" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">' \
           f'{"".join(parts)}</svg>'


def _composition_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    return rows_section(
        ["model", "split", "both correct", "square correct", "bounce correct", "ball vanished", "n"], summaries,
        lambda model, row: [esc(model), f"{esc(row['task'])}/{esc(row['split'])}",
                            *(esc(pct(row[k])) for k in ("both", "square", "ball", "ball_vanished")), str(row["n"])],
        lambda model, row: f'{_composition_bars(row)}<figcaption>{esc(model)}, {esc(row["split"])}: share of videos '
                           f'per sub-event</figcaption>')


register_probe(Probe("composition", "spatial and temporal composition (Fig. 11, 15): two training events at once "
                                    "or in turn; does each sub-event stay correct, does the ball vanish",
                     _composition_analyse, composition_summary, render_composition,
                     section=_composition_section,
                     help="a square's motion and a ball's wall bounce, at once or in turn; Fig. 11, 15"))
