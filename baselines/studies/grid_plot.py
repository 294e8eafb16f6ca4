"""The scaling grid drawn beside the paper's Figure 3: two panels, error against training videos.

Left: the miniature (one line per model size, ID solid, OOD dashed, 95% intervals as bars);
right: the paper's DiT-S / B / L at 30K / 300K / 3M.  Both panels have log axes of their own:
the two are in different velocity conventions (docs: the paper's ground truth scores 0.0099
against itself, phybench's 0.0003), so what is compared is the shape (slopes, the gap between
ID and OOD), never the height.  Plain SVG strings (the board's `svg` palette and escaping), the
same bytes for the same findings.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from phybench.leaderboard.common.format import escape
from phybench.leaderboard.site.svg import PALETTE

from .paper_fig3 import FIG3, SIZES, TRAIN

W, H, PANEL, TOP, BOTTOM, LEFT, GAP = 1040, 380, 330, 40, 60, 62, 210  # GAP: the legend between panels


def _log_map(lo: float, hi: float, a: float, b: float) -> Callable[[float], float]:
    la, lb = math.log10(lo), math.log10(hi)
    pad = (lb - la) * 0.08 or 0.5
    return lambda v: a + (math.log10(v) - la + pad) / (lb - la + 2 * pad) * (b - a)


def _ticks(lo: float, hi: float) -> list[float]:
    out = []
    for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        out += [m * 10.0**k for m in (1, 2, 5) if lo * 0.999 <= m * 10.0**k <= hi * 1.001]
    return out or [lo, hi]


def _fmt(v: float) -> str:
    for div, suffix in ((1e6, "M"), (1e3, "K")):
        if v >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}"


Series = list[tuple[str, str, str, list[tuple[float, float, Any]]]]  # (label, colour, dash, [(x, y, ci or None)])


def _panel(x0: float, title: str, series: Series) -> list[str]:
    """One panel: series of (label, colour, dash, [(x, y, (lo, hi) or None)])."""
    xs = [p[0] for s in series for p in s[3]]
    ys = [v for s in series for p in s[3] for v in (p[1], *(p[2] or ())) if v and v > 0 and math.isfinite(v)]
    if not xs or not ys:
        return [f'<text x="{x0 + PANEL / 2:.1f}" y="{H / 2}" text-anchor="middle">{escape(title)}: no cells</text>']
    xmap = _log_map(min(xs), max(xs), x0, x0 + PANEL)
    ymap = _log_map(min(ys), max(ys), H - BOTTOM, TOP)
    out = [f'<text class="title" x="{x0 + PANEL / 2:.1f}" y="{TOP - 18}" text-anchor="middle">{escape(title)}</text>',
           f'<rect x="{x0}" y="{TOP}" width="{PANEL}" height="{H - TOP - BOTTOM}" fill="none" stroke="#999"/>']
    for t in _ticks(min(ys), max(ys)):
        out.append(f'<text x="{x0 - 6}" y="{ymap(t) + 4:.1f}" text-anchor="end" font-size="11">{t:g}</text>')
        out.append(f'<line x1="{x0}" x2="{x0 + PANEL}" y1="{ymap(t):.1f}" y2="{ymap(t):.1f}" stroke="#eee"/>')
    for x in sorted(set(xs)):
        out.append(f'<text x="{xmap(x):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle" font-size="11">{_fmt(x)}</text>')
    out.append(f'<text x="{x0 + PANEL / 2:.1f}" y="{H - BOTTOM + 36}" text-anchor="middle" font-size="12">'
               'training videos (log)</text>')
    for label, colour, dash, pts in series:
        pts = sorted(p for p in pts if p[1] and p[1] > 0 and math.isfinite(p[1]))
        d = f' stroke-dasharray="{dash}"' if dash else ""
        path = " ".join(f"{xmap(x):.1f},{ymap(y):.1f}" for x, y, _ in pts)
        out.append(f'<g><title>{escape(label)}</title><polyline points="{path}" fill="none" stroke="{colour}" '
                   f'stroke-width="2"{d}/>')
        for x, y, ci in pts:
            if ci and all(v and v > 0 and math.isfinite(v) for v in ci):
                out.append(f'<line x1="{xmap(x):.1f}" x2="{xmap(x):.1f}" y1="{ymap(ci[0]):.1f}" y2="{ymap(ci[1]):.1f}" '
                           f'stroke="{colour}"/>')
            out.append(f'<circle cx="{xmap(x):.1f}" cy="{ymap(y):.1f}" r="3.5" fill="{colour}"/>')
        out.append("</g>")
    return out


def grid_svg(f: dict[str, Any]) -> str:
    """The findings' grid (left) beside Figure 3 for the same task (right)."""
    sizes = sorted({(c["params"], c["size"]) for c in f["cells"]})
    mine = []
    for i, (params, size) in enumerate(sizes):
        for split, dash in (("id", ""), ("ood", "5 4")):
            pts = [(c["train_size"], c[f"error_{split}"], c[f"ci95_{split}"]) for c in f["cells"]
                   if c["params"] == params and f"error_{split}" in c]
            if pts:
                mine.append((f"{size} ({params:,} params) {split.upper()}", PALETTE[i % len(PALETTE)], dash, pts))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
             f'font-family="sans-serif" font-size="12" role="img" aria-label="scaling grid beside the paper\'s Figure 3">']
    parts += _panel(LEFT, f"phybench framear, {f['task']} lite ({f['metric']})", mine)
    fig = FIG3.get(f["task"])
    if fig:
        paper: Series = [(f"{s} {split.upper()}", PALETTE[i], dash, [(n, y, None) for n, y in zip(TRAIN, fig[split][s])])
                 for i, s in enumerate(SIZES) for split, dash in (("id", ""), ("ood", "5 4"))]
        parts += _panel(LEFT + PANEL + GAP, f"paper Figure 3, {f['task']} (its convention)", paper)
    legend_y = TOP
    for label, colour, dash, _ in mine:
        d = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<line x1="{LEFT + PANEL + 8}" x2="{LEFT + PANEL + 28}" y1="{legend_y}" y2="{legend_y}" '
                     f'stroke="{colour}" stroke-width="2"{d}/>')
        parts.append(f'<text x="{LEFT + PANEL + 32}" y="{legend_y + 4}" font-size="10">{escape(label)}</text>')
        legend_y += 16
    parts.append(f'<text x="{W - 10}" y="{H - 8}" text-anchor="end" font-size="10">solid ID, dashed OOD, bars 95% '
                 f'intervals; paper: DiT-S blue, DiT-B yellow, DiT-L red (the grid\'s sizes in the same colour order)</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
