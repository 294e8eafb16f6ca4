"""Attribute priority probe (paper section 5.3, Fig. 8, 9 and 14): which attribute a model keeps.

Uniform motion of one body.  Four attributes, each with two disjoint value sets:

    colour    red | blue
    shape     disc | square (half-side = r)   (the ring variant: disc | ring)
    size      small r in [0.7, 0.98] | large r in [1.12, 1.4]      world units
    velocity  slow v in [1.0, 2.25] | fast v in [2.75, 4.0]         world units / s

Each task compares one pair of attributes.  Of the pair's four value combinations two
form the training split (``train``) and the other two the ``conflict-eval`` split: a
conflict video's body matches one training combination in the first attribute and the
other in the second, so a model that retrieves the closest training case must give one
attribute up.  The analysis below reads every generated body back (colour by
hue, shape by a measured fill descriptor, size by area, velocity by tracking) and says
which attribute was kept.  Attributes outside the pair are fixed (red, disc) or drawn
over their whole range (r in [0.7, 1.4], v in [1, 4]).

Where we differ from the reference code (REFERENCE.md section 1: red r in [0.7, 1.05],
blue r in [1.05, 1.4]; v split at 2.5): the value sets leave a gap (0.98-1.12 and
2.25-2.75) so that a body read back from pixels falls unambiguously in one set; the
ground-truth test (every ground-truth video "kept both") depends on it.
"""
from __future__ import annotations

from typing import Any, Sequence


import numpy as np

from ..world import laws
from ..world.scene import BLUE, RED, Body, Disc, Rect, Ring, Scene
from ..tasks.family import Placement, TaskFamily, frames_possible, register_family, register_task
from ..tasks.spec import CategoricalDof, Dof, SimulatorSettings, SplitDecl, TaskSpec
from .page import esc, pct
from .reading import (
    MIN_FRAMES,
    BodyReading,
    pct_text,
    read_body,
    share,
    split_videos,
)
from .registry import Probe, ProbeError, register_probe

# The attributes' value sets: name -> (value name, range or None for a categorical value).
SIZE_SETS = {"small": (0.7, 0.98), "large": (1.12, 1.4)}  # world units (radius / half-side)
VELOCITY_SETS = {"slow": (1.0, 2.25), "fast": (2.75, 4.0)}  # world units / s
SIZE_THRESHOLD = 1.05  # world units: the midpoint of the gap, used by the reader
VELOCITY_THRESHOLD = 2.5  # world units / s
FULL_RADIUS = (0.7, 1.4)
FULL_VELOCITY = (1.0, 4.0)
COLOURS = {"red": RED, "blue": BLUE}
MARGIN = 0.1  # world units between a body and the image border (1.3 px at 128 px) while in view
RING_INNER = 0.5  # inner radius / outer radius of a ring
ATTRIBUTES = ("colour", "size", "velocity", "shape")  # the paper's order: colour > size > velocity > shape

TRAIN_SIZE = 40_000  # states only; the paper does not give the probe training size
CONFLICT_SIZE = 1400  # the paper's 1,400 test cases


def attribute_of(value: str) -> str:
    """Which attribute a value name belongs to ("red" -> "colour", "fast" -> "velocity")."""
    if value in COLOURS:
        return "colour"
    if value in SIZE_SETS:
        return "size"
    if value in VELOCITY_SETS:
        return "velocity"
    if value in ("disc", "square", "ring"):
        return "shape"
    raise KeyError(f"unknown attribute value {value!r}")


def body_shape(shape: str, r: float) -> Disc | Rect | Ring:
    """The shape of a body of size r (a disc's radius, a square's half-side, a ring's outer radius)."""
    if shape == "disc":
        return Disc(r)
    if shape == "square":
        return Rect(2 * r, 2 * r)
    if shape == "ring":
        return Ring(r, RING_INNER * r)
    raise KeyError(f"unknown shape {shape!r}")


@register_family
class PriorityFamily(TaskFamily):
    """One body in uniform motion whose attributes put two training cases in conflict."""

    name = "probe-priority"
    probe = "priority"  # the analysis below (`register_probe` at the end of this module)
    metrics = ("velocity_error", "velocity_error_penalised", "position_error", "trajectory_error", "colour_kept",
               "ssim", "psnr", "lpips", "fvd")
    plot_dof = "velocity"
    object_reader = "centroids"  # squares and rings: the coverage centroid
    stores_bodies = True
    board_layout = "splits"
    lite_size = 200
    frames_in_view_doc = ("at least this many frames have the body fully in view: min(24, the most its size and "
                          "speed allow)")

    def draw(self, spec: TaskSpec, decl: Any, index: int, u: np.ndarray) -> tuple[str, dict[str, Any]]:
        if decl.draw != "combinations":
            return super().draw(spec, decl, index, u)
        combos = spec.param(decl.option("combinations"))
        combo = combos[index % len(combos)]
        values = {attribute_of(v): v for v in combo}
        params: dict[str, Any] = {
            "radius": _uniform(SIZE_SETS[values["size"]] if "size" in values else FULL_RADIUS, u[1]),
            "velocity": _uniform(VELOCITY_SETS[values["velocity"]] if "velocity" in values else FULL_VELOCITY,
                                 u[2]),
            "colour": values.get("colour", "red"),
            "shape": values.get("shape", "disc"),
        }
        return "+".join(combo), params

    def place(self, spec: TaskSpec, params: dict[str, Any], u: np.ndarray) -> Placement:
        v, L, dt = params["velocity"], spec.world_size, spec.frame_interval
        # every shape here is axis-aligned and spans [-r, r] around its centre; `MARGIN`
        # keeps it off the border pixels, so that the reader can tell "in view" from "cut"
        r = params["radius"] + MARGIN
        n = min(spec.min_frames_in_view, frames_possible(v * dt, L - 2 * r, spec.frames))
        x_hi = max(r, L - r - v * dt * (n - 1))
        x0 = r + u[0] * (x_hi - r)
        y0 = r + u[1] * (L - 2 * r)
        r = params["radius"]
        shape, colour = params["shape"], params["colour"]
        body = Body(body_shape(shape, r), COLOURS[colour], name=f"{colour} {shape}",
                    attrs=(("colour", colour), ("shape", shape)))
        initial = Scene((body,), np.array([[[x0, y0, 0.0]]]), L, np.array([[[v, 0.0]]]))
        return Placement(initial, n)

    def closed_form(self, spec: TaskSpec, initial: Scene) -> tuple[np.ndarray, np.ndarray]:
        t = laws.frame_times(spec.frames, spec.frame_interval)
        pos, vel = laws.ballistic(initial.positions[0, 0], initial.velocities[0, 0], 0.0, t)
        return pos[:, None, :], vel[:, None, :]

    def describe(self, spec: TaskSpec) -> list[str]:
        pair = spec.param("pair")
        return [f"pair: {pair[0]} vs {pair[1]}",
                "training combinations: " + ", ".join("+".join(c) for c in spec.param("train")),
                "conflict combinations: " + ", ".join("+".join(c) for c in spec.param("conflict"))]


def _uniform(interval: tuple[float, float], u: float) -> float:
    lo, hi = interval
    return float(lo + (hi - lo) * u)


def _spec(name: str, train: tuple[tuple[str, str], ...], figure: str, ranked: bool = True) -> TaskSpec:
    pair = tuple(attribute_of(v) for v in train[0])
    conflict = ((train[0][0], train[1][1]), (train[1][0], train[0][1]))
    shapes = tuple(sorted({c[pair.index("shape")] for c in train})) if "shape" in pair else ("disc",)
    return TaskSpec(
        name=name,
        version=1,
        scenario="probe-priority",
        description=(f"Attribute priority, {pair[0]} vs {pair[1]} ({figure}): trained on "
                     f"{' and '.join(' '.join(c) for c in train)}; evaluated on "
                     f"{' and '.join(' '.join(c) for c in conflict)}."),
        dofs=(Dof("radius", "world units", FULL_RADIUS, (), "radius / half-side / outer radius of the body"),
              Dof("velocity", "world units / s", FULL_VELOCITY, (), "initial horizontal speed")),
        ood_levels=(),
        training_sets=(),
        id_eval_size=0,
        simulator=SimulatorSettings(steps_per_frame=1, time_scale=1000.0, length_scale=1.0, gravity=0.0),
        base_seed=2024_11_14,
        declared_splits=(
            SplitDecl("train", "train", TRAIN_SIZE, "combinations", (("combinations", "train"),),
                      "the two training combinations, alternating"),
            SplitDecl("conflict-eval", "eval", CONFLICT_SIZE, "combinations", (("combinations", "conflict"),),
                      "the two held-out combinations, alternating"),
        ),
        categorical=(CategoricalDof("colour", ("red", "blue")), CategoricalDof("shape", shapes)),
        family_params=(("pair", pair), ("train", train), ("conflict", conflict), ("ranked", ranked)),
        notes=("Value sets leave a gap (r 0.98-1.12, v 2.25-2.75) where the reference code splits at one "
               "value, so that a body read back from pixels falls in one set unambiguously.",),
    )


# The paper's pairs; train combinations as in Fig. 8, 9, 14 where the paper names them.
# The ring variant is reported beside the ranking, not in it (the paper's Fig. 14 is a test
# of the pixel-distance explanation, not a seventh pair).
PRIORITY_TASKS = tuple(register_task(_spec(name, train, fig, name != "priority-colour-ring"))
                       for name, train, fig in (
    ("priority-colour-shape", (("red", "disc"), ("blue", "square")), "Fig. 8 (1)"),
    ("priority-size-shape", (("small", "disc"), ("large", "square")), "Fig. 8 (2)"),
    ("priority-velocity-shape", (("slow", "disc"), ("fast", "square")), "Fig. 8 (3)"),
    ("priority-velocity-size", (("slow", "small"), ("fast", "large")), "Fig. 9 (1)"),
    ("priority-colour-size", (("red", "small"), ("blue", "large")), "Fig. 9 (2)"),
    ("priority-colour-velocity", (("red", "slow"), ("blue", "fast")), "Fig. 9 (3)"),
    ("priority-colour-ring", (("red", "ring"), ("blue", "disc")), "Fig. 14"),
))


# ------------------------------------------------------------------ analysis
SIZE_CLASSES = (("small", 1.05),)  # r below 1.05: small, else large (the gap's midpoint)
VELOCITY_CLASSES = (("slow", 2.5),)  # v below 2.5: slow, else fast
VERDICTS = ("both", "first", "second", "neither", "lost")  # which of the pair's attributes were kept
def _threshold_class(value: float, classes: tuple[tuple[str, float], ...], last: str) -> str:
    for name, upper in classes:
        if value < upper:
            return name
    return last


def reading_classes(reading: BodyReading) -> dict[str, str | None]:
    """The value set each attribute of a reading falls in (None when lost)."""
    if reading.lost:
        return {"colour": None, "shape": None, "size": None, "velocity": None}
    return {"colour": reading.colour, "shape": reading.shape,
            "size": _threshold_class(reading.radius, SIZE_CLASSES, "large"),
            "velocity": _threshold_class(reading.velocity, VELOCITY_CLASSES, "fast")}


def conditioned_classes(row: dict[str, Any]) -> dict[str, str]:
    """The value set of each attribute a split row conditions on."""
    return {"colour": str(row["colour"]), "shape": str(row["shape"]),
            "size": _threshold_class(float(row["radius"]), SIZE_CLASSES, "large"),
            "velocity": _threshold_class(float(row["velocity"]), VELOCITY_CLASSES, "fast")}


def verdict(pair: Sequence[str], conditioned: dict[str, str], read: dict[str, str | None]) -> str:
    """"both", "first" (kept only pair[0]), "second", "neither" or "lost"."""
    if read[pair[0]] is None:
        return "lost"
    a, b = (read[p] == conditioned[p] for p in pair)
    return "both" if a and b else "first" if a else "second" if b else "neither"

def _priority_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    spec: TaskSpec = reader.spec
    pair = tuple(spec.param("pair"))
    videos = []
    columns = ["sample_id", "level", "radius", "velocity", "colour", "shape"]
    for row, video in split_videos(reader, sub, columns, "priority", progress):
        sample_id = row["sample_id"]
        reading = read_body(video, spec.condition_frames, spec.world_size, spec.frame_interval)
        cond, read = conditioned_classes(row), reading_classes(reading)
        videos.append({
            "sample_id": sample_id, "level": row["level"],
            "conditioned": {p: cond[p] for p in pair}, "read": {p: read[p] for p in pair},
            "frames": reading.frames, "fill": reading.fill, "radius": reading.radius,
            "velocity": reading.velocity, "conditioned_radius": float(row["radius"]),
            "conditioned_velocity": float(row["velocity"]), "verdict": verdict(pair, cond, read),
        })
    videos.sort(key=lambda v: v["sample_id"])
    n = len(videos)
    counts = {v: sum(1 for x in videos if x["verdict"] == v) for v in VERDICTS}
    return {
        "pair": list(pair),
        "ranked": bool(spec.param("ranked", True)),
        "train_combinations": [list(c) for c in spec.param("train")],
        "videos_analysed": n,
        "verdicts": {v: share(counts[v], n) for v in VERDICTS},
        "verdict_meaning": {"both": "kept both attributes", "first": f"kept {pair[0]} only",
                            "second": f"kept {pair[1]} only", "neither": "kept neither",
                            "lost": f"body not found wholly in view in {MIN_FRAMES} generated frames"},
        "videos": videos,
    }


def priority_ranking(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Rank the attributes from pairwise outcomes (one results file per pair, one model).

    Per pair, the decisive videos are those that kept exactly one attribute; the first
    attribute wins the pair when it was the one kept in more than half of them (a Wilson
    interval says how sure), and the pair is a tie when no video is decisive or the shares
    are equal.  An attribute's score is its wins (ties count one half); the order is by
    score, equal scores are shown as equal ("=").
    """
    pairs, models = [], sorted({r["model"] for r in results})
    if len(models) > 1:
        raise ProbeError(f"results of several models ({', '.join(models)}): rank one model at a time")
    seen: set[tuple[str, ...]] = set()
    scores: dict[str, float] = {}
    for r in sorted(results, key=lambda r: r["task"]):
        a = r["analysis"]
        first, second = a["pair"]
        entry = {"task": r["task"], "pair": [first, second], "ranked": a["ranked"], "n": a["videos_analysed"],
                 **{v: a["verdicts"][v] for v in VERDICTS}}
        k1, k2 = a["verdicts"]["first"]["count"], a["verdicts"]["second"]["count"]
        entry["decisive"] = k1 + k2
        entry["first_preferred"] = share(k1, k1 + k2)
        entry["winner"] = first if k1 > k2 else second if k2 > k1 else None
        pairs.append(entry)
        if not a["ranked"]:
            continue
        key = tuple(sorted((first, second)))
        if key in seen:
            raise ProbeError(f"two results files for the pair {first} vs {second}")
        seen.add(key)
        for attr in (first, second):
            scores.setdefault(attr, 0.0)
        if entry["winner"] is None:
            scores[first] += 0.5
            scores[second] += 0.5
        else:
            scores[entry["winner"]] += 1.0
    levels = sorted(set(scores.values()), reverse=True)
    groups = [sorted(a for a in scores if scores[a] == s) for s in levels]
    order = " > ".join(" = ".join(g) for g in groups)
    return {"model": models[0] if models else None, "ranking": order, "scores": scores,
            "pairs_ranked": len(seen), "complete": len(seen) == 6, "pairs": pairs}


def render_priority(summary: dict[str, Any]) -> str:
    lines = [f"model: {summary['model']}",
             f"ranking: {summary['ranking'] or '(no ranked pair)'}"
             + ("" if summary["complete"] else f"   (from {summary['pairs_ranked']} of 6 pairs)")]
    for p in summary["pairs"]:
        a, b = p["pair"]
        tag = "" if p["ranked"] else "  (variant, not ranked)"
        lines.append(f"{p['task']}: {a} vs {b}, {p['n']} videos{tag}")
        lines.append(f"  kept {a} only   {pct_text(p['first'])}")
        lines.append(f"  kept {b} only   {pct_text(p['second'])}")
        lines.append(f"  kept both       {pct_text(p['both'])}")
        lines.append(f"  kept neither    {pct_text(p['neither'])}")
        lines.append(f"  lost            {pct_text(p['lost'])}")
        winner = p["winner"] or "tie"
        lines.append(f"  preferred: {winner}"
                     + (f" in {pct_text(p['first_preferred']).strip()} of {p['decisive']} decisive videos (share of "
                        f"{a})" if p["decisive"] else " (no decisive video)"))
    return "\n".join(lines)


# ------------------------------------------------------------------ page section (probes.html)
VERDICT_COLOURS = {"first": "#1f77b4", "second": "#ff7f0e", "both": "#2ca02c", "neither": "#7f7f7f",
                   "lost": "#d62728"}


def _bar(pair: dict[str, Any], width: int = 360, height: int = 16) -> str:
    """One stacked bar: the shares of each verdict (kept first only, second only, both, ...)."""
    x, parts = 0.0, []
    for verdict in ("first", "second", "both", "neither", "lost"):
        w = width * float(pair[verdict]["share"] or 0.0)
        if w > 0:
            parts.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" '
                         f'fill="{VERDICT_COLOURS[verdict]}"><title>{esc(verdict)} '
                         f'{100 * pair[verdict]["share"]:.1f}%</title></rect>')
        x += w
    return (f'<svg class="probe-bar" width="{width}" height="{height}" role="img" '
            f'viewBox="0 0 {width} {height}">{"".join(parts)}</svg>')


def _priority_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    out = ['<table class="probe-ranking"><thead><tr><th>model</th><th>ranking</th><th>pairs</th>'
           '</tr></thead><tbody>']
    for model, s in summaries.items():
        out.append(f"<tr><td>{esc(model)}</td><td>{esc(s['ranking'] or '-')}</td>"
                   f"<td>{s['pairs_ranked']} of 6</td></tr>")
    out.append("</tbody></table>")
    legend = " ".join(f'<span style="color:{c}">&#9632;</span> {esc(n)}' for n, c in (
        ("kept the first attribute only", VERDICT_COLOURS["first"]),
        ("kept the second only", VERDICT_COLOURS["second"]), ("kept both", VERDICT_COLOURS["both"]),
        ("neither", VERDICT_COLOURS["neither"]), ("lost", VERDICT_COLOURS["lost"])))
    out.append(f'<p class="probe-legend">{legend}</p>')
    tasks = sorted({p["task"] for s in summaries.values() for p in s["pairs"]})
    for task in tasks:
        rows = [(m, p) for m, s in summaries.items() for p in s["pairs"] if p["task"] == task]
        a, b = rows[0][1]["pair"]
        note = "" if rows[0][1]["ranked"] else " (variant, not ranked)"
        out.append(f'<figure class="probe-figure"><figcaption>{esc(task)}: {esc(a)} (first) vs {esc(b)} '
                   f'(second){esc(note)}</figcaption><table><tbody>')
        for model, p in rows:
            out.append(f"<tr><td>{esc(model)}</td><td>{_bar(p)}</td><td>kept {esc(a)} only "
                       f"{esc(pct(p['first']))}; kept {esc(b)} only {esc(pct(p['second']))}; both "
                       f"{esc(pct(p['both']))}; n = {p['n']}</td></tr>")
        out.append("</tbody></table></figure>")
    return out


register_probe(Probe("priority", "attribute priority (section 5.3): which of two conflicting attributes is kept",
                     _priority_analyse, priority_ranking, render_priority,
                     section=_priority_section,
                     help='attribute priority: colour, size, velocity, shape; section 5.3'))
