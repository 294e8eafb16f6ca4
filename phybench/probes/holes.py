"""The holes probe's analysis, summary, text and page section (paper section 5).

Its task family and tasks (data, like `phybench.tasks.uniform`) are in
`phybench.tasks.probe_families.holes`; the names below re-export them.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..tasks.family import family_of
from ..tasks.probe_families.holes import (  # noqa: F401  re-exported: the probe's family and constants
    EVAL_SIZE,
    HOLE_SETS,
    HOLES,
    SQUARES,
    TRAIN_SIZE,
    HolesFamily,
    hull_class,
)
from ..data.documents import dof_value
from ..tasks.spec import TaskSpec
from ..world.scene import rgb
from .page import esc, mean_text, rows_section
from .reading import mean_ci, share, split_videos
from .registry import Probe, ProbeError, register_probe

# ------------------------------------------------------------------ analysis
# ------------------------------------------------------------------ collision holes
HOLE_VERDICTS = ("scored", "untrackable", "excluded")
HULL_CLASSES = ("trained", "inside-hull", "outside-hull")


def _holes_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    from ..scoring.physics.parse import parse_video
    from ..scoring.run.sample import pixel_mapping
    from ..scoring.physics.velocity import video_errors

    spec: TaskSpec = reader.spec
    family = family_of(spec)
    assert isinstance(family, HolesFamily)  # the probe runs on probe-holes tasks only
    sets = {name: value for name, value in spec.param("hole_sets")}
    train = options.get("train_split")
    if not isinstance(train, str) or train not in sets:
        raise ProbeError(f"say which training set the model learnt from: --train-split one of {', '.join(sets)} "
                         f"(the submission names {train!r})")
    classes = family.square_classes(spec, train)
    manifest = reader.manifest
    videos: list[dict[str, Any]] = []
    columns = ["sample_id", "level", "velocity_1", "velocity_2", "contact_time", "positions", "radii", "colours"]
    for row, video in split_videos(reader, sub, columns, "holes", progress):
        sample_id = row["sample_id"]
        colours = [rgb(c) for c in np.asarray(row["colours"])]
        parsed = parse_video(np.asarray(video), colours, pixel_mapping(manifest))
        err = video_errors(parsed, row["positions"], row["radii"], world_size=spec.world_size,
                           frame_interval=spec.frame_interval, condition_frames=spec.condition_frames,
                           contact_time=family.contact_time(row), colour_names=("red ball", "blue ball"))
        verdict = "excluded" if err.excluded else "untrackable" if err.untrackable else "scored"
        videos.append({"sample_id": sample_id, "square": row["level"], "hull": classes[row["level"]],
                       "velocity_1": float(dof_value(row, "velocity_1")), "velocity_2": float(dof_value(row, "velocity_2")),
                       "velocity_error": err.velocity_error if verdict == "scored" else None,
                       "reason": err.excluded or err.untrackable, "verdict": verdict})
    videos.sort(key=lambda v: v["sample_id"])
    n = len(videos)
    counts = {v: sum(1 for x in videos if x["verdict"] == v) for v in HOLE_VERDICTS}
    squares = []
    for name, box in spec.param("squares"):
        vs = [v for v in videos if v["square"] == name]
        squares.append({"square": name, "box": list(box), "hull": classes[name], "videos": len(vs),
                        "untrackable": sum(1 for v in vs if v["verdict"] == "untrackable"),
                        "velocity_error": mean_ci([v["velocity_error"] for v in vs if v["verdict"] == "scored"])})
    by_hull = {c: mean_ci([v["velocity_error"] for v in videos if v["hull"] == c and v["verdict"] == "scored"])
               for c in HULL_CLASSES}
    rect, holes = sets[train]
    return {"train_split": train, "train_rect": list(rect), "train_holes": list(holes),
            "videos_analysed": n, "verdicts": {v: share(counts[v], n) for v in HOLE_VERDICTS},
            "squares": squares, "by_hull": by_hull,
            "verdict_meaning": {"scored": "both balls parsed in every scored frame after the collision",
                                "untrackable": "a ball not found in a scored frame (no error)",
                                "excluded": "a ball seen in fewer than 2 condition frames (no model could "
                                            "predict it)"},
            "error": "mean over frame pairs after the contact of |v_gen - v| of both balls, world units / s "
                     "(phybench.scoring.velocity)",
            "videos": videos}


def holes_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(results, key=lambda r: (r["model"], r["analysis"]["train_split"])):
        a = r["analysis"]
        rows.append({"model": r["model"], "task": r["task"], "split": r["split"], "train_split": a["train_split"],
                     "train_rect": a["train_rect"], "train_holes": a["train_holes"], "n": a["videos_analysed"],
                     **{v: a["verdicts"][v] for v in HOLE_VERDICTS}, "squares": a["squares"],
                     "by_hull": a["by_hull"]})
    return {"rows": rows}


def _err(entry: dict[str, Any]) -> str:
    if not entry["n"] or entry["mean"] is None or not math.isfinite(entry["mean"]):
        return "n/a"
    lo, hi = entry["ci95"]
    ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and math.isfinite(lo) else ""
    return f"{entry['mean']:.3f}{ci} (n = {entry['n']})"


def render_holes(summary: dict[str, Any]) -> str:
    lines = []
    for row in summary["rows"]:
        lines.append(f"{row['model']} trained on {row['train_split']}: {row['n']} videos, "
                     f"{row['untrackable']['count']} untrackable, {row['excluded']['count']} excluded")
        for sq in row["squares"]:
            lines.append(f"  {sq['square']:<3} {sq['hull']:<13} velocity error {_err(sq['velocity_error'])}")
        for c in HULL_CLASSES:
            lines.append(f"  {c:<17} velocity error {_err(row['by_hull'][c])}")
    return "\n".join(lines)


# ------------------------------------------------------------------ page section (probes.html)
ERROR_SCALE = 2.0  # world units / s: the holes figure's colour scale saturates here


def _error_colour(err: Any) -> str:
    """Green (0) to red (ERROR_SCALE and above); grey when no error."""
    if err is None:
        return "#bbbbbb"
    f = min(max(float(err) / ERROR_SCALE, 0.0), 1.0)
    return f"rgb({int(40 + 200 * f)},{int(170 - 130 * f)},60)"


def _holes_plane(row: dict[str, Any], size: int = 260, lo: float = 0.75, hi: float = 4.25) -> str:
    """The (v1, v2) plane as the paper's Fig. 6: the training region shaded, each square coloured by
    its mean post-collision velocity error."""
    def px(v: float) -> float:
        return 30 + (v - lo) / (hi - lo) * (size - 40)

    def py(v: float) -> float:
        return size - 30 - (v - lo) / (hi - lo) * (size - 40)

    x0, x1, y0, y1 = row["train_rect"]
    parts = [f'<rect x="{px(x0):.1f}" y="{py(y1):.1f}" width="{px(x1) - px(x0):.1f}" height="{py(y0) - py(y1):.1f}" '
             'fill="#f5e6a8"><title>training region</title></rect>']
    for sq in row["squares"]:
        a, b, c, d = sq["box"]
        e = sq["velocity_error"]
        mean = e["mean"] if e["n"] else None
        label = "n/a" if mean is None else f"{mean:.2f}"
        dash = ' stroke-dasharray="3 2"' if sq["hull"] == "outside-hull" else ""
        parts.append(f'<rect class="probe-square" x="{px(a):.1f}" y="{py(d):.1f}" width="{px(b) - px(a):.1f}" '
                     f'height="{py(c) - py(d):.1f}" fill="{_error_colour(mean)}" stroke="#333"{dash}>'
                     f'<title>{esc(sq["square"])} ({esc(sq["hull"])}): mean error {esc(label)}, n = {e["n"]}</title></rect>')
        parts.append(f'<text x="{(px(a) + px(b)) / 2:.1f}" y="{(py(c) + py(d)) / 2 + 3:.1f}" font-size="8" '
                     f'text-anchor="middle">{esc(label)}</text>')
    for v in (1, 2, 3, 4):
        parts.append(f'<text x="{px(v):.1f}" y="{size - 16}" font-size="9" text-anchor="middle">{v}</text>')
        parts.append(f'<text x="22" y="{py(v) + 3:.1f}" font-size="9" text-anchor="end">{v}</text>')
    parts.append(f'<text x="{size / 2:.0f}" y="{size - 3}" font-size="10" text-anchor="middle">v1 (red)</text>')
    parts.append('<text x="4" y="12" font-size="10">v2 (blue)</text>')
    return f'<svg class="probe-plane" width="{size}" height="{size}" viewBox="0 0 {size} {size}" role="img">' \
           f'{"".join(parts)}</svg>'


def _holes_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    return rows_section(
        ["model", "trained on", "trained square", "holes inside the hull", "holes outside the hull", "untrackable / n"],
        summaries,
        lambda model, row: [esc(model), esc(row["train_split"]),
                            *(esc(mean_text(row["by_hull"][c])) for c in ("trained", "inside-hull", "outside-hull")),
                            f"{row['untrackable']['count']} / {row['n']}"],
        lambda model, row: f'{_holes_plane(row)}<figcaption>{esc(model)}, {esc(row["train_split"])}: mean '
                           f'post-collision velocity error per square (world units / s; green 0 to red '
                           f'{ERROR_SCALE:g}+; shaded: training region; dashed: a hole outside its convex hull; '
                           f'{esc(_trained_squares(row))})</figcaption>')


def _trained_squares(row: dict[str, Any]) -> str:
    names = [sq["square"] for sq in row["squares"] if sq["hull"] == "trained"]
    return f"trained (ID control): {', '.join(names)}" if names else "no trained square"


register_probe(Probe("holes", "collision holes (section 5.1): post-collision error in unseen (v1, v2) squares, "
                              "inside and outside the training set's convex hull",
                     _holes_analyse, holes_summary, render_holes,
                     section=_holes_section,
                     help='collision holes: error in unseen (v1, v2) squares inside / outside the hull; 5.1'))
