"""HTML helpers the probes' page sections share: escaping, shares with intervals, a velocity
scatter (the paper's Fig. 5 and 7) and a table-with-figures section.

The page itself (`phybench.leaderboard.site.probes_page`) calls each probe's `section`; all text that
comes from results files is escaped here (`esc`).
"""
from __future__ import annotations

import html
from typing import Any, Callable, Sequence


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def pct(entry: dict[str, Any]) -> str:
    lo, hi = entry["ci95"]
    if lo is None:
        return "n/a"
    return f"{100 * entry['share']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def scatter(points: list[list[float | None]], size: int = 220, lo: float = -4.5, hi: float = 4.5,
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
             '<text x="10" y="12" font-size="10">generated v</text>']
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


def rows_section(headers: Sequence[str], summaries: dict[str, dict[str, Any]],
                  cells: Callable[[str, dict[str, Any]], list[str]],
                  figure: Callable[[str, dict[str, Any]], str]) -> list[str]:
    """A table with one line per (model, analysed split), then one figure per line.

    cells and figure return HTML (escaped by the caller); headers are plain text."""
    out = ['<table class="probe-ranking"><thead><tr>' + "".join(f"<th>{esc(h)}</th>" for h in headers)
           + "</tr></thead><tbody>"]
    figures = []
    for model, s in summaries.items():
        for row in s["rows"]:
            out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells(model, row)) + "</tr>")
            figures.append(f'<figure class="probe-figure">{figure(model, row)}</figure>')
    out.append("</tbody></table>")
    return out + figures


def num(x: Any) -> str:
    return "n/a" if x is None else f"{float(x):.3f}"


def mean_text(entry: dict[str, Any]) -> str:
    if not entry["n"] or entry["mean"] is None:
        return "n/a"
    lo, hi = entry["ci95"]
    return f"{entry['mean']:.3f}" + (f" [{lo:.3f}, {hi:.3f}]" if lo is not None else "") + f" (n = {entry['n']})"
