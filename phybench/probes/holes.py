"""Collision holes probe (paper section 5.1, Fig. 6): is an unseen (v1, v2) inside the training hull easier?

Elastic head-on collisions of two balls (the `collision` family's scenes, placement and
law).  Training sets of equal size (200K, states only) draw (v1, v2) uniformly over a
region of the velocity plane with square holes (0.5 x 0.5 world units / s) left out;
r1, r2 uniform over [0.7, 1.5].  The paper gives the layout only as a figure (holes
"within the convex hull of the training set" and in its "exterior space"), so ours is:

    h1 [1.5, 2.0] x [2.5, 3.0]   h2 [2.5, 3.0] x [1.5, 2.0]   (interior holes)
    h3 [3.5, 4.0] x [2.0, 2.5]   h4 [2.0, 2.5] x [3.5, 4.0]   (edge holes)
    id [2.5, 3.0] x [2.5, 3.0]   (a trained square: the ID control)

    train-set1: (v1, v2) in [1, 3.5]^2 minus h1, h2: h1 and h2 are inside the convex
                hull, h3 and h4 outside it (beyond the edge v = 3.5);
    train-set2: (v1, v2) in [1, 4]^2 minus h1..h4: all four holes are inside the hull
                (h3 and h4 are notches in its edge).

The same holes h3, h4 are outside the hull of set 1 and inside that of set 2: the
contrast the paper draws, with the velocities held fixed.  One evaluation split
(``eval``) draws its samples from the holes and the control square in round-robin order
(level = the square's name), uniformly inside each; every set is evaluated on it.  The
analysis (below, probe ``holes``) is told the training set, parses
both balls and reports the post-collision velocity error per square and per hull class.
"""
from __future__ import annotations

import math
from typing import Any


import numpy as np

from ..tasks.collision import CollisionFamily
from ..tasks.family import family_of, register_family, register_task
from ..tasks.fundamental import ID_RADIUS
from ..tasks.spec import Dof, SimulatorSettings, SplitDecl, TaskSpec
from .page import esc, mean_text, rows_section
from .reading import (
    mean_ci,
    share,
    split_videos,
)
from .registry import Probe, ProbeError, register_probe

# (name, (v1_lo, v1_hi, v2_lo, v2_hi)), world units / s
SQUARES = (
    ("h1", (1.5, 2.0, 2.5, 3.0)),
    ("h2", (2.5, 3.0, 1.5, 2.0)),
    ("h3", (3.5, 4.0, 2.0, 2.5)),
    ("h4", (2.0, 2.5, 3.5, 4.0)),
    ("id", (2.5, 3.0, 2.5, 3.0)),
)
# (split, training rectangle, holes removed from it, text)
HOLE_SETS = (
    ("train-set1", (1.0, 3.5, 1.0, 3.5), ("h1", "h2"),
     "(v1, v2) in [1, 3.5]^2 minus h1, h2: h1, h2 inside the convex hull, h3, h4 outside"),
    ("train-set2", (1.0, 4.0, 1.0, 4.0), ("h1", "h2", "h3", "h4"),
     "(v1, v2) in [1, 4]^2 minus h1-h4: every hole inside the convex hull"),
)
TRAIN_SIZE = 200_000  # equal for every set (the gaps probe's size; the paper gives none here)
EVAL_SIZE = 1000  # 200 per square
_TRIES = 20  # rejection draws of (v1, v2) per sample (acceptance >= 0.9: failure below 1e-20)


def _inside(box: tuple[float, float, float, float], v1: float, v2: float) -> bool:
    return box[0] <= v1 <= box[1] and box[2] <= v2 <= box[3]


def hull_class(hole_set: tuple[tuple[float, ...], tuple[str, ...]], square: str) -> str:
    """"trained", "inside-hull" or "outside-hull": where a square lies for one training set.

    The training region is a rectangle with holes that never touch its corners, so its
    convex hull is the rectangle (checked at import for every set)."""
    rect, holes = hole_set
    box = dict(SQUARES)[square]
    if square in holes:
        return "inside-hull"
    if rect[0] <= box[0] and box[1] <= rect[1] and rect[2] <= box[2] and box[3] <= rect[3]:
        return "trained"
    return "outside-hull"


def _check_layout() -> None:
    squares = dict(SQUARES)
    for name, rect, holes, _ in HOLE_SETS:
        corners = [(rect[0], rect[2]), (rect[0], rect[3]), (rect[1], rect[2]), (rect[1], rect[3])]
        for h in holes:
            box = squares[h]
            if any(_inside(box, *c) for c in corners):
                raise AssertionError(f"{name}: hole {h} touches a corner of the training rectangle")
            if not (rect[0] <= box[0] and box[1] <= rect[1] and rect[2] <= box[2] and box[3] <= rect[3]):
                raise AssertionError(f"{name}: hole {h} is not inside the training rectangle")
        for s, box in SQUARES:  # a square is wholly trained, wholly a hole or wholly outside
            if s not in holes and hull_class((rect, holes), s) == "outside-hull":
                assert box[1] <= rect[0] or box[0] >= rect[1] or box[3] <= rect[2] or box[2] >= rect[3], (name, s)


_check_layout()


@register_family
class HolesFamily(CollisionFamily):
    """The collision family with (v1, v2) drawn from a region of the plane (training) or a square (eval)."""

    name = "probe-holes"
    probe = "holes"
    quickstart_order = None
    phyworld_id_ranges = None
    board_layout = "splits"

    def draw(self, spec: TaskSpec, decl: Any, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
        r = {"radius_1": ID_RADIUS[0] + (ID_RADIUS[1] - ID_RADIUS[0]) * float(u[1]),
             "radius_2": ID_RADIUS[0] + (ID_RADIUS[1] - ID_RADIUS[0]) * float(u[2])}
        if decl.draw == "hole-squares":
            names = decl.option("squares")
            name = names[index % len(names)]
            box = dict(SQUARES)[name]
            return name, {**r, "velocity_1": box[0] + (box[1] - box[0]) * float(u[3]),
                          "velocity_2": box[2] + (box[3] - box[2]) * float(u[4])}
        if decl.draw != "holed-region":
            return super().draw(spec, decl, index, u)
        rect = decl.option("rect")
        holes = [dict(SQUARES)[h] for h in decl.option("holes")]
        for k in range(_TRIES):
            v1 = rect[0] + (rect[1] - rect[0]) * float(u[5 + 2 * k])
            v2 = rect[2] + (rect[3] - rect[2]) * float(u[6 + 2 * k])
            if not any(box[0] < v1 < box[1] and box[2] < v2 < box[3] for box in holes):
                return "id", {**r, "velocity_1": v1, "velocity_2": v2}
        raise RuntimeError(f"{spec.name}/{decl.name}/{index}: {_TRIES} draws fell in holes")  # pragma: no cover

    def square_classes(self, spec: TaskSpec, train_split: str) -> dict[str, str]:
        """Each evaluation square's place for one training set (the analysis asks)."""
        sets = dict(spec.param("hole_sets"))
        return {name: hull_class(sets[train_split], name) for name, _ in spec.param("squares")}

    def describe(self, spec: TaskSpec) -> list[str]:
        lines = [f"{name}: v1 in [{b[0]:g}, {b[1]:g}], v2 in [{b[2]:g}, {b[3]:g}]" for name, b in SQUARES]
        for name, rect, holes, text in HOLE_SETS:
            lines.append(f"{name}: {text}; " + ", ".join(f"{s} {hull_class((rect, holes), s)}" for s, _ in SQUARES))
        return lines


HOLES = register_task(TaskSpec(
    name="collision-holes",
    version=1,
    scenario="probe-holes",
    description=("Collision holes (Fig. 6): elastic head-on collisions; two training sets of equal size leave "
                 "square regions of (v1, v2) out, inside and outside the training set's convex hull; one "
                 "evaluation split inside each hole and a trained control square."),
    dofs=(Dof("radius_1", "world units", ID_RADIUS, (), "radius of the red (left) ball"),
          Dof("radius_2", "world units", ID_RADIUS, (), "radius of the blue (right) ball"),
          Dof("velocity_1", "world units / s", (1.0, 4.0), (), "speed of the red ball, moving +x"),
          Dof("velocity_2", "world units / s", (1.0, 4.0), (), "speed of the blue ball, moving -x")),
    ood_levels=(),
    training_sets=(),
    id_eval_size=0,
    simulator=SimulatorSettings(steps_per_frame=10, time_scale=1000.0, length_scale=10.0, gravity=0.0),
    base_seed=2024_11_17,
    declared_splits=tuple(SplitDecl(name, "train", TRAIN_SIZE, "holed-region",
                                    (("rect", rect), ("holes", holes)), text)
                          for name, rect, holes, text in HOLE_SETS) + (
        SplitDecl("eval", "eval", EVAL_SIZE, "hole-squares", (("squares", tuple(s for s, _ in SQUARES)),),
                  "round-robin over h1-h4 and the trained control square id, uniform inside each"),
    ),
    family_params=(("squares", SQUARES),
                   ("hole_sets", tuple((name, (rect, holes)) for name, rect, holes, _ in HOLE_SETS))),
    notes=("The paper draws its holes in a figure without coordinates; the layout (0.5-wide squares, two sets "
           "that put the same edge holes outside and inside the hull) is ours.",
           "Training (v1, v2) are uniform over the region, not a grid, so that sets of different regions have "
           "equal sizes; radii are uniform over [0.7, 1.5] (the paper: a grid of radii per velocity point).",),
))


# ------------------------------------------------------------------ analysis
# ------------------------------------------------------------------ collision holes
HOLE_VERDICTS = ("scored", "untrackable", "excluded")
HULL_CLASSES = ("trained", "inside-hull", "outside-hull")


def _holes_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    from ..scoring.parse import parse_video
    from ..scoring.sample import pixel_mapping
    from ..scoring.velocity import video_errors

    spec: TaskSpec = reader.spec
    family = family_of(spec)
    sets = {name: value for name, value in spec.param("hole_sets")}
    train = options.get("train_split")
    if train not in sets:
        raise ProbeError(f"say which training set the model learnt from: --train-split one of {', '.join(sets)} "
                         f"(the submission names {train!r})")
    classes = family.square_classes(spec, train)
    manifest = reader.manifest
    videos = []
    columns = ["sample_id", "level", "velocity_1", "velocity_2", "contact_time", "positions", "radii", "colours"]
    for row, video in split_videos(reader, sub, columns, "holes", progress):
        sample_id = row["sample_id"]
        colours = [tuple(int(c) for c in rgb) for rgb in np.asarray(row["colours"])]
        parsed = parse_video(np.asarray(video), colours, pixel_mapping(manifest))
        err = video_errors(parsed, row["positions"], row["radii"], world_size=spec.world_size,
                           frame_interval=spec.frame_interval, condition_frames=spec.condition_frames,
                           contact_time=family.contact_time(row), colour_names=("red ball", "blue ball"))
        verdict = "excluded" if err.excluded else "untrackable" if err.untrackable else "scored"
        videos.append({"sample_id": sample_id, "square": row["level"], "hull": classes[row["level"]],
                       "velocity_1": float(row["velocity_1"]), "velocity_2": float(row["velocity_2"]),
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
