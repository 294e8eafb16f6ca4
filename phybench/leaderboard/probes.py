"""The Probes page of the leaderboard site: each probe's verdicts per model, and the ranking.

Probe results files (`phybench.scoring.probes`, schema ``phybench.probe-analysis``) may lie
anywhere under the results folder; the main boards skip them and this page checks them
(`load_results`: schema, version, registered task, spec hash, counts that match the per
video verdicts) and draws them.  A file that fails a check is refused like any other.
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, Callable, Sequence

from ..scoring import probes

PAGE = "probes.html"
VERDICT_COLOURS = {"first": "#1f77b4", "second": "#ff7f0e", "both": "#2ca02c", "neither": "#7f7f7f",
                   "lost": "#d62728"}


def is_probe_file(path: Path) -> bool:
    """True for a JSON file that says it is a probe results file (checked later, in `read`)."""
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(doc, dict) and doc.get("schema") == probes.SCHEMA


def files(results_dir: Path, skip: Path | None = None) -> list[Path]:
    """The probe results files under `results_dir` (hidden folders and a site inside skipped)."""
    return sorted((p for p in results_dir.rglob("*.json")
                   if not any(part.startswith(".") for part in p.relative_to(results_dir).parts)
                   and not (skip is not None and p.resolve().is_relative_to(skip)) and is_probe_file(p)),
                  key=lambda p: p.relative_to(results_dir).as_posix())


def read(results_dir: Path, files: list[Path]) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """(accepted documents, [(file, reason)] refused), in file order."""
    docs, refused = [], []
    for path in files:
        rel = path.relative_to(results_dir).as_posix()
        try:
            doc = probes.load_results(path)
        except probes.ProbeError as exc:
            refused.append((rel, str(exc).replace(str(path), rel)))
            continue
        doc["_file"] = rel
        docs.append(doc)
    return docs, refused


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _bar(pair: dict[str, Any], width: int = 360, height: int = 16) -> str:
    """One stacked bar: the shares of each verdict (kept first only, second only, both, ...)."""
    x, parts = 0.0, []
    for verdict in ("first", "second", "both", "neither", "lost"):
        w = width * float(pair[verdict]["share"] or 0.0)
        if w > 0:
            parts.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" '
                         f'fill="{VERDICT_COLOURS[verdict]}"><title>{_e(verdict)} '
                         f'{100 * pair[verdict]["share"]:.1f}%</title></rect>')
        x += w
    return (f'<svg class="probe-bar" width="{width}" height="{height}" role="img" '
            f'viewBox="0 0 {width} {height}">{"".join(parts)}</svg>')


def _pct(entry: dict[str, Any]) -> str:
    lo, hi = entry["ci95"]
    if lo is None:
        return "n/a"
    return f"{100 * entry['share']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def _priority_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    out = ['<table class="probe-ranking"><thead><tr><th>model</th><th>ranking</th><th>pairs</th>'
           '</tr></thead><tbody>']
    for model, s in summaries.items():
        out.append(f"<tr><td>{_e(model)}</td><td>{_e(s['ranking'] or '-')}</td>"
                   f"<td>{s['pairs_ranked']} of 6</td></tr>")
    out.append("</tbody></table>")
    legend = " ".join(f'<span style="color:{c}">&#9632;</span> {_e(n)}' for n, c in (
        ("kept the first attribute only", VERDICT_COLOURS["first"]),
        ("kept the second only", VERDICT_COLOURS["second"]), ("kept both", VERDICT_COLOURS["both"]),
        ("neither", VERDICT_COLOURS["neither"]), ("lost", VERDICT_COLOURS["lost"])))
    out.append(f'<p class="probe-legend">{legend}</p>')
    tasks = sorted({p["task"] for s in summaries.values() for p in s["pairs"]})
    for task in tasks:
        rows = [(m, p) for m, s in summaries.items() for p in s["pairs"] if p["task"] == task]
        a, b = rows[0][1]["pair"]
        note = "" if rows[0][1]["ranked"] else " (variant, not ranked)"
        out.append(f'<figure class="probe-figure"><figcaption>{_e(task)}: {_e(a)} (first) vs {_e(b)} '
                   f'(second){_e(note)}</figcaption><table><tbody>')
        for model, p in rows:
            out.append(f"<tr><td>{_e(model)}</td><td>{_bar(p)}</td><td>kept {_e(a)} only "
                       f"{_e(_pct(p['first']))}; kept {_e(b)} only {_e(_pct(p['second']))}; both "
                       f"{_e(_pct(p['both']))}; n = {p['n']}</td></tr>")
        out.append("</tbody></table></figure>")
    return out


def _scatter(points: list[list[float | None]], size: int = 220, lo: float = -4.5, hi: float = 4.5,
             bands: list[list[float]] | None = None) -> str:
    """Generated vs conditioned velocity (world units / s), as the paper's Fig. 5 and 7.

    bands: training velocity ranges, shaded on both axes."""
    def px(v: float) -> float:
        return 20 + (v - lo) / (hi - lo) * (size - 30)

    def py(v: float) -> float:
        return size - 20 - (v - lo) / (hi - lo) * (size - 30)

    parts = [f'<line x1="{px(lo):.1f}" y1="{py(0):.1f}" x2="{px(hi):.1f}" y2="{py(0):.1f}" stroke="#999"/>',
             f'<line x1="{px(0):.1f}" y1="{py(lo):.1f}" x2="{px(0):.1f}" y2="{py(hi):.1f}" stroke="#999"/>',
             f'<line x1="{px(lo):.1f}" y1="{py(lo):.1f}" x2="{px(hi):.1f}" y2="{py(hi):.1f}" stroke="#ccc" '
             'stroke-dasharray="3 3"/>',
             f'<text x="{size / 2:.0f}" y="{size - 4}" font-size="10" text-anchor="middle">conditioned v</text>',
             f'<text x="10" y="12" font-size="10">generated v</text>']
    for a, b in bands or []:
        parts.insert(0, f'<rect x="{px(a):.1f}" y="{py(hi):.1f}" width="{px(b) - px(a):.1f}" '
                        f'height="{py(lo) - py(hi):.1f}" fill="#f5e6a8" fill-opacity="0.6"/>')
        parts.insert(0, f'<rect x="{px(lo):.1f}" y="{py(b):.1f}" width="{px(hi) - px(lo):.1f}" '
                        f'height="{py(a) - py(b):.1f}" fill="#f5e6a8" fill-opacity="0.6"/>')
    for x, y in points:
        if x is None or y is None:
            continue
        y = min(max(y, lo), hi)
        colour = "#d62728" if x * y < 0 else "#1f77b4"
        parts.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2" fill="{colour}" fill-opacity="0.6"/>')
    return f'<svg width="{size}" height="{size}" viewBox="0 0 {size} {size}" role="img">{"".join(parts)}</svg>'


def _rows_section(headers: Sequence[str], summaries: dict[str, dict[str, Any]],
                  cells: Callable[[str, dict[str, Any]], list[str]],
                  figure: Callable[[str, dict[str, Any]], str]) -> list[str]:
    """A table with one line per (model, analysed split), then one figure per line.

    cells and figure return HTML (escaped by the caller); headers are plain text."""
    out = ['<table class="probe-ranking"><thead><tr>' + "".join(f"<th>{_e(h)}</th>" for h in headers)
           + "</tr></thead><tbody>"]
    figures = []
    for model, s in summaries.items():
        for row in s["rows"]:
            out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells(model, row)) + "</tr>")
            figures.append(f'<figure class="probe-figure">{figure(model, row)}</figure>')
    out.append("</tbody></table>")
    return out + figures


def _flip_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    return _rows_section(
        ["model", "split", "reversed", "kept", "stalled", "lost", "n"], summaries,
        lambda model, row: [_e(model), f"{_e(row['task'])}/{_e(row['split'])}",
                            *(_e(_pct(row[v])) for v in ("reversed", "kept", "stalled", "lost")), str(row["n"])],
        lambda model, row: f'{_scatter(row["points"])}<figcaption>{_e(model)}: generated vs conditioned velocity '
                           f'(red: reversed)</figcaption>')


def _gaps_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    return _rows_section(
        ["model", "trained on", "snapped (in the gap)", "held", "lost", "|v_gen - v| in gap", "in range", "in gap / n"],
        summaries,
        lambda model, row: [_e(model), _e(row["train_split"]), *(_e(_pct(row[v])) for v in ("snapped", "held", "lost")),
                            _e(_num(row["velocity_error_in_gap"])), _e(_num(row["velocity_error_in_range"])),
                            f"{row['in_gap']} / {row['n']}"],
        lambda model, row: f'{_scatter(row["points"], lo=0.0, hi=4.5, bands=row["train_ranges"])}<figcaption>'
                           f'{_e(model)}, {_e(row["train_split"])}: generated vs conditioned velocity '
                           f'(shaded: training speeds)</figcaption>')


def _num(x: Any) -> str:
    return "n/a" if x is None else f"{float(x):.3f}"


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
                     f'<title>{_e(sq["square"])} ({_e(sq["hull"])}): mean error {_e(label)}, n = {e["n"]}</title></rect>')
        parts.append(f'<text x="{(px(a) + px(b)) / 2:.1f}" y="{(py(c) + py(d)) / 2 + 3:.1f}" font-size="8" '
                     f'text-anchor="middle">{_e(label)}</text>')
    for v in (1, 2, 3, 4):
        parts.append(f'<text x="{px(v):.1f}" y="{size - 16}" font-size="9" text-anchor="middle">{v}</text>')
        parts.append(f'<text x="22" y="{py(v) + 3:.1f}" font-size="9" text-anchor="end">{v}</text>')
    parts.append(f'<text x="{size / 2:.0f}" y="{size - 3}" font-size="10" text-anchor="middle">v1 (red)</text>')
    parts.append('<text x="4" y="12" font-size="10">v2 (blue)</text>')
    return f'<svg class="probe-plane" width="{size}" height="{size}" viewBox="0 0 {size} {size}" role="img">' \
           f'{"".join(parts)}</svg>'


def _holes_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    return _rows_section(
        ["model", "trained on", "trained square", "holes inside the hull", "holes outside the hull", "untrackable / n"],
        summaries,
        lambda model, row: [_e(model), _e(row["train_split"]),
                            *(_e(_mean(row["by_hull"][c])) for c in ("trained", "inside-hull", "outside-hull")),
                            f"{row['untrackable']['count']} / {row['n']}"],
        lambda model, row: f'{_holes_plane(row)}<figcaption>{_e(model)}, {_e(row["train_split"])}: mean '
                           f'post-collision velocity error per square (world units / s; green 0 to red '
                           f'{ERROR_SCALE:g}+; shaded: training region; dashed: a hole outside its convex hull; '
                           f'{_e(_trained_squares(row))})</figcaption>')


def _trained_squares(row: dict[str, Any]) -> str:
    names = [sq["square"] for sq in row["squares"] if sq["hull"] == "trained"]
    return f"trained (ID control): {', '.join(names)}" if names else "no trained square"


def _mean(entry: dict[str, Any]) -> str:
    if not entry["n"] or entry["mean"] is None:
        return "n/a"
    lo, hi = entry["ci95"]
    return f"{entry['mean']:.3f}" + (f" [{lo:.3f}, {hi:.3f}]" if lo is not None else "") + f" (n = {entry['n']})"


COMPOSITION_BARS = (("square", "square's motion correct", "#1f77b4"), ("ball", "ball's bounce correct", "#2ca02c"),
                    ("ball_vanished", "ball vanished after contact", "#d62728"))


def _composition_bars(row: dict[str, Any], width: int = 400, left: int = 200) -> str:
    parts = []
    for i, (key, label, colour) in enumerate(COMPOSITION_BARS):
        share = float(row[key]["share"] or 0.0)
        y = 4 + 18 * i
        parts.append(f'<rect x="{left}" y="{y}" width="{width - left}" height="12" fill="#eee"/>')
        parts.append(f'<rect class="probe-share" x="{left}" y="{y}" width="{(width - left) * share:.1f}" height="12" '
                     f'fill="{colour}"><title>{_e(label)} {100 * share:.1f}%</title></rect>')
        parts.append(f'<text x="{left - 4}" y="{y + 10}" font-size="10" text-anchor="end">{_e(label)} '
                     f'{100 * share:.0f}%</text>')
    height = 4 + 18 * len(COMPOSITION_BARS)
    return f'<svg class="probe-bars" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">' \
           f'{"".join(parts)}</svg>'


def _composition_section(summaries: dict[str, dict[str, Any]]) -> list[str]:
    return _rows_section(
        ["model", "split", "both correct", "square correct", "bounce correct", "ball vanished", "n"], summaries,
        lambda model, row: [_e(model), f"{_e(row['task'])}/{_e(row['split'])}",
                            *(_e(_pct(row[k])) for k in ("both", "square", "ball", "ball_vanished")), str(row["n"])],
        lambda model, row: f'{_composition_bars(row)}<figcaption>{_e(model)}, {_e(row["split"])}: share of videos '
                           f'per sub-event</figcaption>')


SECTIONS = {"priority": _priority_section, "flip": _flip_section, "gaps": _gaps_section,
            "holes": _holes_section, "composition": _composition_section}


def page_html(docs: list[dict[str, Any]]) -> str:
    """The Probes page (standalone HTML, no script)."""
    out = ['<!doctype html><html lang="en"><head><meta charset="utf-8"><title>phybench probes</title>',
           '<link rel="stylesheet" href="style.css"></head><body><main>',
           '<p><a href="index.html">&larr; leaderboard</a></p><h1>Generalisation probes</h1>']
    by_probe: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for d in docs:
        by_probe.setdefault(d["probe"], {}).setdefault(d["model"], []).append(d)
    if not by_probe:
        out.append("<p>No probe results.</p>")
    for probe, models in sorted(by_probe.items()):
        entry = probes.PROBES.get(probe)
        out.append(f'<section id="probe-{_e(probe)}"><h2>{_e(entry.description)}</h2>')
        summaries = {m: entry.summarise(ds) for m, ds in sorted(models.items())}
        if probe in SECTIONS:
            out += SECTIONS[probe](summaries)
        else:  # a probe without a drawing of its own: its text summary
            out += [f"<pre>{_e(entry.render(s))}</pre>" for s in summaries.values()]
        out.append("</section>")
    out.append("</main></body></html>\n")
    return "\n".join(out)
