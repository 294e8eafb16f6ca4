"""The leaderboard's SVG canvas: a plot frame, axes, ticks, a legend and the palette.

At the bottom of the leaderboard package (it imports only `format`): the board's plots
(`plots`) and the learned-law scatter (`law`) both draw on it, so neither imports the other.
Inline SVG, no plotting library: the same bytes every build.
"""
from __future__ import annotations

import math

from ..common.format import escape, fmt

# Observable 10: distinct, colour-blind friendly enough, calm on white and on dark.
PALETTE = ("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5", "#9c6b4e", "#9498a0")
ID_COLOUR = "#4269d0"
OOD_COLOURS = ("#ff725c", "#efb118", "#a463f2", "#3ca951", "#ff8ab7", "#9c6b4e", "#6cc5b0")


def short_number(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def log_ticks(lo: float, hi: float) -> list[float]:
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    ticks = [10.0**k for k in range(a, b + 1)]
    if b - a <= 2:
        ticks = sorted({t * f for t in ticks for f in (1, 2, 5)})
    return [t for t in ticks if lo * 0.999 <= t <= hi * 1.001]


def lin_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    span = hi - lo
    raw = span / n
    step = 10 ** math.floor(math.log10(raw))
    for f in (1, 2, 2.5, 5, 10):
        if raw <= f * step:
            step *= f
            break
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step + 1e-9) + 1)]


def dots(xy: list[tuple[float, float]], colour: str, radius: float = 2.2, opacity: float = 0.55, extra: str = "") -> str:
    """Many small dots as one path of zero-length strokes with round caps: about 14 bytes a dot
    where a <circle> takes 40 (the board's scatters draw thousands); `data-n` says how many.
    `extra`: further attributes, already escaped (`deep_links.link_attrs`)."""
    d = "".join(f"M{x:.1f} {y:.1f}h0" for x, y in xy)
    return (f'<path class="dots" d="{d}" fill="none" stroke="{colour}" stroke-opacity="{opacity}" '
            f'stroke-width="{2 * radius:g}" stroke-linecap="round" data-n="{len(xy)}"{extra}/>')


def edge_marks(xy: list[tuple[float, float]], colour: str, extra: str = "") -> str:
    """Hollow diamonds for points drawn on an axis edge because they lie beyond it (clipped outliers);
    each diamond's path starts at its top, 4 px above the point."""
    d = "".join(f"M{x:.1f} {y - 4:.1f}l4 4-4 4-4-4z" for x, y in xy)
    return (f'<path class="outliers" d="{d}" fill="none" stroke="{colour}" stroke-width="1.3" '
            f'data-n="{len(xy)}"{extra}/>')


def short(text: str, n: int = 24) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


class Plot:
    """A small SVG canvas with a data rectangle; every text goes through `escape`."""

    def __init__(self, width: int, height: int, left: int, right: int, top: int, bottom: int, label: str) -> None:
        self.w, self.h = width, height
        self.x0, self.x1, self.y0, self.y1 = left, width - right, top, height - bottom
        self.parts = [
            f'<svg class="plot" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
            f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">'
        ]

    def add(self, s: str) -> None:
        self.parts.append(s)

    def text(self, x: float, y: float, s: str, cls: str = "tick", anchor: str = "middle", extra: str = "") -> None:
        self.add(f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(s)}</text>')

    def yaxis(self, ticks: list[float], ymap, label: str) -> None:
        for t in ticks:
            y = ymap(t)
            self.add(f'<line class="grid" x1="{self.x0}" x2="{self.x1}" y1="{y:.1f}" y2="{y:.1f}"/>')
            self.text(self.x0 - 6, y + 4, fmt(t), anchor="end")
        cy = (self.y0 + self.y1) / 2
        self.text(14, cy, label, cls="axis-label", extra=f' transform="rotate(-90 14 {cy:.1f})"')

    def frame(self) -> None:
        self.add(f'<line class="axis" x1="{self.x0}" x2="{self.x0}" y1="{self.y0}" y2="{self.y1}"/>')
        self.add(f'<line class="axis" x1="{self.x0}" x2="{self.x1}" y1="{self.y1}" y2="{self.y1}"/>')

    def legend(self, items: list[tuple[str, str, str]], x: float, y: float) -> None:
        """items: (colour, label, dash) drawn as a short line with a dot."""
        for i, (colour, label, dash) in enumerate(items):
            yy = y + 18 * i
            d = f' stroke-dasharray="{dash}"' if dash else ""
            self.add(f'<g class="legend-item"><title>{escape(label)}</title>'
                     f'<line x1="{x:.1f}" x2="{x + 18:.1f}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="{colour}" stroke-width="2"{d}/>'
                     f'<circle cx="{x + 9:.1f}" cy="{yy:.1f}" r="3.5" fill="{colour}"/>')
            self.add(f'<text class="legend" x="{x + 24:.1f}" y="{yy + 4:.1f}">{escape(short(label, 26))}</text></g>')

    def svg(self) -> str:
        return "".join(self.parts) + "</svg>"


def log_scale(values: list[float], y0: float, y1: float):
    positive = [v for v in values if v > 0]
    lo, hi = (min(positive), max(positive)) if positive else (1e-3, 1.0)
    lo, hi = 10 ** (math.floor(math.log10(lo) * 4) / 4), 10 ** (math.ceil(math.log10(hi) * 4) / 4)
    if hi <= lo:
        hi = lo * 10
    floor = lo

    def ymap(v: float) -> float:
        v = max(v, floor)
        return y1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (y1 - y0)

    return lo, hi, ymap


def axis_scale(values: list[float], y0: float, y1: float):
    """(lo, hi, ymap, ticks, "log" or "linear"): log when every value is positive (errors span
    decades), linear otherwise (SSIM, shares that reach 0)."""
    if values and min(values) > 0:
        lo, hi, ymap = log_scale(values, y0, y1)
        return lo, hi, ymap, log_ticks(lo, hi), "log"
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    ticks = lin_ticks(lo, hi)
    lo, hi = min(lo, ticks[0]), max(hi, ticks[-1])

    def linear(v: float) -> float:
        return y1 - (v - lo) / (hi - lo) * (y1 - y0)

    return lo, hi, linear, ticks, "linear"
