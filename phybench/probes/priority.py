"""The priority probe's analysis, summary, text and page section (paper section 5).

Its task family and tasks (data, like `phybench.tasks.uniform`) are in
`phybench.tasks.probe_families.priority`; the names below re-export them.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..tasks.probe_families.priority import (  # noqa: F401  re-exported: the probe's family and constants
    ATTRIBUTES,
    COLOURS,
    CONFLICT_SIZE,
    FULL_RADIUS,
    FULL_VELOCITY,
    MARGIN,
    PRIORITY_TASKS,
    RING_INNER,
    SIZE_SETS,
    SIZE_THRESHOLD,
    TRAIN_SIZE,
    VELOCITY_SETS,
    VELOCITY_THRESHOLD,
    PriorityFamily,
    attribute_of,
    body_shape,
)
from ..data.documents import SplitRow, dof_value
from ..tasks.spec import TaskSpec
from .page import esc, pct
from .reading import MIN_FRAMES, BodyReading, pct_text, read_body, share, split_videos
from .registry import Probe, ProbeError, register_probe

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


def conditioned_classes(row: SplitRow) -> dict[str, str]:
    """The value set of each attribute a split row conditions on."""
    return {"colour": str(dof_value(row, "colour")), "shape": str(dof_value(row, "shape")),
            "size": _threshold_class(float(dof_value(row, "radius")), SIZE_CLASSES, "large"),
            "velocity": _threshold_class(float(dof_value(row, "velocity")), VELOCITY_CLASSES, "fast")}


def verdict(pair: Sequence[str], conditioned: dict[str, str], read: dict[str, str | None]) -> str:
    """"both", "first" (kept only pair[0]), "second", "neither" or "lost"."""
    if read[pair[0]] is None:
        return "lost"
    a, b = (read[p] == conditioned[p] for p in pair)
    return "both" if a and b else "first" if a else "second" if b else "neither"

def _priority_analyse(reader: Any, sub: Any, progress: bool, options: dict[str, Any]) -> dict[str, Any]:
    spec: TaskSpec = reader.spec
    pair = tuple(spec.param("pair"))
    videos: list[dict[str, Any]] = []
    columns = ["sample_id", "level", "radius", "velocity", "colour", "shape"]
    for row, video in split_videos(reader, sub, columns, "priority", progress):
        sample_id = row["sample_id"]
        reading = read_body(video, spec.condition_frames, spec.world_size, spec.frame_interval)
        cond, read = conditioned_classes(row), reading_classes(reading)
        videos.append({
            "sample_id": sample_id, "level": row["level"],
            "conditioned": {p: cond[p] for p in pair}, "read": {p: read[p] for p in pair},
            "frames": reading.frames, "fill": reading.fill, "radius": reading.radius,
            "velocity": reading.velocity, "conditioned_radius": float(dof_value(row, "radius")),
            "conditioned_velocity": float(dof_value(row, "velocity")), "verdict": verdict(pair, cond, read),
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
