"""The leaderboard's plots, drawn as inline SVG (no plotting library, same bytes every build)."""
from __future__ import annotations

import math
import re
from typing import Any, Callable

from ...scoring.metrics import METRICS
from .deep_links import by_viewer, hrefs_of, link_attrs
from .order import cell_mean
from .paper import figure3_series
from ..common.format import escape, fmt
from .load import is_number
from .scatter import ROW_CAP
from .svg import ID_COLOUR, OOD_COLOURS, PALETTE, Plot, axis_scale, dots, lin_ticks, short_number
from .table import FALLBACK_METRIC, ID_LEVEL, OOD_ALL, task_velocity_range, train_size

REF_COLOURS = ("#9aa0a6", "#6b7280", "#374151")  # the paper's quoted lines: greys, hollow markers
SIZE_ORDER = ("XS", "S", "M", "B", "L", "XL", "XXL", "H", "G")  # DiT / ViT size letters


def _size_rank(row: dict[str, Any]) -> tuple:
    meta = row["meta"]
    if is_number(meta.get("params")):
        return (0, float(meta["params"]), "")
    size = str(meta.get("size", ""))
    letters = re.split(r"[-_/ ]", size)[-1].upper()
    return (1, float(SIZE_ORDER.index(letters)) if letters in SIZE_ORDER else float(len(SIZE_ORDER)), size)


def _size_label(row: dict[str, Any]) -> str | None:
    meta = row["meta"]
    if meta.get("size") is not None:
        return str(meta["size"])
    if is_number(meta.get("params")):
        return _params_text(meta["params"])
    return None


def _params_text(p: float) -> str:
    for div, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if p >= div:
            return f"{p / div:.3g}{suffix}"
    return f"{p:g}"


def plot_scaling(board: dict[str, Any], family: str, rows: list[dict[str, Any]], axis: str,
                 metric: str = FALLBACK_METRIC) -> str | None:  # plots: the paper's metric
    """Error against training-set size (or model size) for one family, ID solid and OOD dashed."""
    xs: dict[str, float]  # each plotted row's x
    group_of: Callable[[dict[str, Any]], str | None]
    if axis == "train_size":
        sizes = {r["model"]: train_size(r["meta"].get("train_size")) for r in rows}
        rows = [r for r in rows if sizes[r["model"]] is not None]
        xs = {model: size for model, size in sizes.items() if size is not None}
        group_of = _size_label
        categorical = False
    else:
        rows = [r for r in rows if _size_label(r) is not None]
        numeric = all(is_number(r["meta"].get("params")) for r in rows)
        ranked = sorted({(_size_rank(r), _size_label(r)) for r in rows})
        position = {label: i for i, (_, label) in enumerate(ranked)}
        xs = {r["model"]: float(r["meta"]["params"]) if numeric else float(position[_size_label(r)]) for r in rows}
        group_of = lambda r: None if r["meta"].get("train_size") is None else str(r["meta"]["train_size"])  # noqa: E731
        categorical = not numeric
    if len({xs[r["model"]] for r in rows}) < 2:
        return None
    groups: dict[str | None, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(group_of(r), []).append(r)
    series = []  # (label, colour, dash, points)
    ordered = sorted(groups.items(), key=lambda kv: (_size_rank(kv[1][0]) if axis == "train_size" else (0, train_size(kv[0]) or 0, ""), str(kv[0])))
    for gi, (group, members) in enumerate(ordered):
        colour = PALETTE[gi % len(PALETTE)]
        for key, name, dash in ((ID_LEVEL, "ID", ""), (OOD_ALL, "OOD", "5 4")):
            pts = sorted(
                (xs[r["model"]], y, r["model"]) for r in members
                if (y := cell_mean(r["cells"].get(key), metric)) is not None
            )
            if pts:
                if group is None:
                    head = family
                elif axis == "train_size":
                    head = f"{family} {group}" if len(f"{family} {group}") <= 14 else str(group)
                else:
                    head = f"{_params_text(train_size(group) or 0)} videos"
                series.append((f"{head} · {name}", colour, dash, pts))
    if not any(len(s[3]) >= 2 for s in series):
        return None
    refs = _paper_series(board, metric) if axis == "train_size" else []
    series += refs
    label, unit = METRICS.get(metric).label, METRICS.get(metric).unit
    axis_name = "training videos" if axis == "train_size" else "model size"
    plot = Plot(560, max(300, 70 + 18 * len(series)), 64, 170, 16, 44, f"{label} against {axis_name}, {family}")
    lo, hi, ymap, ticks, scale = axis_scale([p[1] for s in series for p in s[3]], plot.y0, plot.y1)
    plot.yaxis(ticks, ymap, f"{label} ({unit + ', ' if unit else ''}{scale})")
    all_x = sorted({x for s in series for x, _, _ in s[3]})
    if categorical:
        labels = {xs[r["model"]]: _size_label(r) for r in rows}
        band = (plot.x1 - plot.x0) / len(all_x)
        xmap = {x: plot.x0 + band * (i + 0.5) for i, x in enumerate(all_x)}.__getitem__
        ticks = [(x, str(labels[x])) for x in all_x]
    else:
        a, b = math.log10(all_x[0]), math.log10(all_x[-1])
        pad = (b - a) * 0.08

        def xmap(x: float) -> float:
            return plot.x0 + (math.log10(x) - a + pad) / (b - a + 2 * pad) * (plot.x1 - plot.x0)

        ticks = [(x, _params_text(x)) for x in all_x]
    for x, text in ticks:
        plot.add(f'<line class="grid" x1="{xmap(x):.1f}" x2="{xmap(x):.1f}" y1="{plot.y0}" y2="{plot.y1}"/>')
        plot.text(xmap(x), plot.y1 + 18, text)
    plot.text((plot.x0 + plot.x1) / 2, plot.y1 + 38, axis_name + ("" if categorical else " (log)"), cls="axis-label")
    plot.frame()
    for name, colour, dash, pts in series:
        d = f' stroke-dasharray="{dash}"' if dash else ""
        path = " ".join(f"{xmap(x):.1f},{ymap(y):.1f}" for x, y, _ in pts)
        plot.add(f'<g class="series"><title>{escape(name)}</title>')
        plot.add(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{d}/>')
        fill = f'fill="white" stroke="{colour}"' if (name, colour, dash, pts) in refs else f'fill="{colour}"'
        for x, y, model in pts:
            plot.add(f'<circle cx="{xmap(x):.1f}" cy="{ymap(y):.1f}" r="4" {fill}><title>{escape(f"{model}: {fmt(y)}")}</title></circle>')
        plot.add("</g>")
    plot.legend([(c, n, d) for n, c, d, _ in series], plot.x1 + 18, plot.y0 + 8)
    return plot.svg()


def _paper_series(board: dict[str, Any], metric: str) -> list[tuple[str, str, str, list[tuple[float, float, str]]]]:
    """The paper's Figure 3 as reference lines (`leaderboard.paper`), on the board that quotes it for `metric`."""
    ref = board.get("paper")
    if not ref or ref.get("metric") != metric:
        return []
    out = []
    for i, (model, ids, oods) in enumerate(figure3_series(board["task"])):
        colour = REF_COLOURS[i % len(REF_COLOURS)]
        for name, dash, pts in (("ID", "", ids), ("OOD", "5 4", oods)):
            out.append((f"paper {model} · {name}", colour, dash,
                        [(x, y, f"{model} at {_params_text(x)} videos, quoted from the paper") for x, y in pts]))
    return out


def plot_velocity_scatter(board: dict[str, Any], row: dict[str, Any], cap: int = ROW_CAP) -> str | None:
    """Generated against conditioned velocity per video (paper figure 5), training range shaded:
    the first `cap` videos of the row's sample (`scatter`), never every video."""
    sample = row.get("scatter") or {}
    sampled = (sample.get("points") or [])[:cap]
    pts = [(p["level"], p["true_velocity"], p["generated_velocity"]) for p in sampled]
    if not pts:
        return None
    levels = [c["key"] for c in board["levels"] if c["key"] != OOD_ALL]
    levels += sorted({level for level, _, _ in pts} - set(levels))
    shown = [lv for lv in levels if any(level == lv for level, _, _ in pts)]
    # Legend entries wrap into rows within the card (collision has 7); the top margin grows with them.
    legend, x, line = [], 56.0, 0
    for level in shown:
        name = "ID" if level == ID_LEVEL else f"OOD {level}"
        width = 24 + 7.0 * len(name)
        if x + width > 380 - 4 and x > 56:
            x, line = 56.0, line + 1
        legend.append((level, name, x, line))
        x += width
    top = 34 + 16 * line
    plot = Plot(380, 380 + 16 * line, 56, 16, top, 44, f"generated against conditioned velocity, {row['model']}")
    values = [v for _, a, b in pts for v in (a, b)]
    dof_range = task_velocity_range(board["task"], sample.get("dof"))
    if dof_range:
        values += list(dof_range[1])
    lo, hi = min(0.0, min(values)), max(values)
    hi = hi + 0.05 * (hi - lo or 1)
    ticks = lin_ticks(lo, hi)
    sx = lambda v: plot.x0 + (v - lo) / (hi - lo) * (plot.x1 - plot.x0)  # noqa: E731
    sy = lambda v: plot.y1 - (v - lo) / (hi - lo) * (plot.y1 - plot.y0)  # noqa: E731
    if dof_range:
        a, b = dof_range[1]
        plot.add(f'<rect class="id-band" x="{sx(a):.1f}" y="{plot.y0}" width="{sx(b) - sx(a):.1f}" height="{plot.y1 - plot.y0}">'
                 f'<title>{escape(f"training range of {dof_range[0]}: [{short_number(a)}, {short_number(b)}]")}</title></rect>')
        plot.text((sx(a) + sx(b)) / 2, plot.y0 + 12, "training range", cls="band-label")
    for t in ticks:
        plot.add(f'<line class="grid" x1="{plot.x0}" x2="{plot.x1}" y1="{sy(t):.1f}" y2="{sy(t):.1f}"/>')
        plot.add(f'<line class="grid" x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{plot.y0}" y2="{plot.y1}"/>')
        plot.text(plot.x0 - 6, sy(t) + 4, short_number(t), anchor="end")
        plot.text(sx(t), plot.y1 + 16, short_number(t))
    plot.text((plot.x0 + plot.x1) / 2, plot.y1 + 36, "conditioned velocity (world units / s)", cls="axis-label")
    cy = (plot.y0 + plot.y1) / 2
    plot.text(14, cy, "generated velocity", cls="axis-label", extra=f' transform="rotate(-90 14 {cy:.1f})"')
    plot.frame()
    plot.add(f'<line class="diagonal" x1="{sx(lo):.1f}" y1="{sy(lo):.1f}" x2="{sx(hi):.1f}" y2="{sy(hi):.1f}"/>')
    colour = {ID_LEVEL: ID_COLOUR}
    for i, level in enumerate(k for k in levels if k != ID_LEVEL):
        colour[level] = OOD_COLOURS[i % len(OOD_COLOURS)]
    hrefs = hrefs_of(row)  # a dot of a file with a viewer opens its video there (`deep_links`)
    for level in levels:
        mine = [(sx(p["true_velocity"]), sy(p["generated_velocity"]), p["sample_id"], p.get("file", ""))
                for p in sampled if p["level"] == level]
        if mine:
            paths = "".join(dots(xy, colour[level], extra=link_attrs(href, ids)) for href, xy, ids in by_viewer(mine, hrefs))
            plot.add(f'<g class="points"><title>{escape(level)}: {len(mine)} videos</title>{paths}</g>')
    for level, name, x, line in legend:
        y = 16 + 16 * line  # rows from the top, above the data area
        plot.add(f'<circle cx="{x + 5:.1f}" cy="{y:.1f}" r="4" fill="{colour[level]}"/>')
        plot.text(x + 12, y + 4, name, cls="legend", anchor="start")
    return plot.svg()
