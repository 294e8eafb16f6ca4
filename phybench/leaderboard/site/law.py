"""The board's "learned law": which law each model's videos follow, against the ground truth's.

Results files of a family with a law fit carry `summary.<group>.law` (median and IQR of each
fitted parameter, the model's and the ground truth's: `phybench.scoring.learned.law`), and their
samples sidecars the per-video fits.  Here they become one table per board (the family's
headline parameter per level, model against ground truth) and one scatter per board (each
video's fitted headline parameter against the ground truth's: on the diagonal, the model
learned the law; a model that mimics its data pulls OOD points towards the training range).
Every number is read from untrusted files: anything that is not a finite number is dropped.
"""
from __future__ import annotations

from typing import Any

from .deep_links import by_viewer, hrefs_of, link_attrs
from ..common.format import escape, markdown_escape
from .law_cell import law_cell  # noqa: F401  (re-exported: table, tests)
from .order import board_order
from .scatter import PLOTTED_ROWS, ROW_CAP, sample_caption
from .svg import PALETTE, Plot, dots, edge_marks, lin_ticks

def headline(task: str) -> str | None:
    """The family's headline law parameter (`TaskFamily.law_headline`), None for a task not installed."""
    from ...tasks import family_of, get_task

    try:
        return getattr(family_of(get_task(task)), "law_headline", None)
    except KeyError:
        return None


def _num(x: float) -> str:
    """4 significant digits (a fitted gravity of 2.297 is not 2.3), no negative zero."""
    text = f"{x:.4g}" if abs(x) >= 1e-9 else "0"  # a fit of nothing reads 1e-16, not a law
    return "0" if text in ("-0", "0") else text


def _text(stats: dict[str, Any] | None) -> str:
    if not stats:
        return "–"
    iqr = stats.get("iqr")
    return _num(stats["median"]) + (f" [{_num(iqr[0])}, {_num(iqr[1])}]" if iqr else "")


# Parameters shown beside the headline (issue 34 item 3): a collision's momentum exchange beside
# its restitution (an unequal-mass collision answered with the equal-mass outcome keeps
# restitution 1), a uniform ball's acceleration along its motion beside its speed (slowing
# down is a wrong law, not a speed a few percent off), gravity's signed vertical component
# beside its size (reversed gravity has the same size).
COMPANIONS: dict[str, tuple[str, ...]] = {
    "restitution": ("momentum_change", "mass_ratio"),
    "velocity_x": ("acceleration_along",),
    "gravity": ("gravity_y",),
}


def shown_params(board: dict[str, Any]) -> list[str]:
    """The headline and its companions that some row of the board carries, headline first."""
    name = headline(board["task"])
    if name is None:
        return []
    present = {p for r in board["rows"] for cell in r["cells"].values() if isinstance(cell, dict)
               for p in ((cell.get("law") or {}).get("params") or {})}
    return [name] + [p for p in COMPANIONS.get(name, ()) if p in present]


def law_rows(board: dict[str, Any], name: str | None = None) -> tuple[str | None, list[str], list[tuple[str, list[str]]]]:
    """(parameter, column labels, [(model, cells)]) of the board's learned-law table of one
    parameter (default: the headline), the ground truth's fit first, then the models in the board's
    order; empty when no row carries it."""
    name = name or headline(board["task"])
    levels = [c for c in board["levels"] if any(c["key"] in r["cells"] and r["cells"][c["key"]].get("law")
                                              for r in board["rows"])]
    if name is None or not levels:
        return name, [], []
    truth: list[str] = []
    for c in levels:
        found = next((r["cells"][c["key"]]["law"]["params"].get(name, {}).get("truth") for r in board["rows"]
                      if c["key"] in r["cells"] and r["cells"][c["key"]].get("law")), None)
        truth.append(_text(found))
    rows = [("ground truth (fitted to the split's own videos)", truth)]
    for r in board_order(board):  # sorted like the board (`order`), not by name
        cells = [_text(((r["cells"].get(c["key"]) or {}).get("law") or {}).get("params", {}).get(name, {}).get("model"))
                 for c in levels]
        if any(x != "–" for x in cells):
            rows.append((r["model"], cells))
    return name, [c["label"] for c in levels], rows


def law_table_html(board: dict[str, Any]) -> str:
    """The learned-law tables: the headline parameter's, then each companion's (`COMPANIONS`)."""
    return "".join(_law_table_html(board, name) for name in shown_params(board))


def _law_table_html(board: dict[str, Any], param: str) -> str:
    name, labels, rows = law_rows(board, param)
    if not rows or name is None:
        return ""
    def cell(text: str) -> str:
        """The median on the first line, its interquartile range under it (as the main table)."""
        value, sep, iqr = text.partition(" [")
        return (f'<td class="num"><span class="v">{escape(value)}</span>'
                + (f'<span class="ci">[{escape(iqr)}</span>' if sep else "") + "</td>")

    head = "".join(f"<th>{escape(label)}</th>" for label in labels)
    # data-model: the page's script keeps these rows in the main table's order when it is re-sorted
    body = "".join((f'<tr data-model="{escape(model)}">' if i else '<tr class="truth">') + f'<td class="who">{escape(model)}</td>'
                   + "".join(cell(c) for c in cells) + "</tr>" for i, (model, cells) in enumerate(rows))
    return (f'<h3>Learned law: {escape(name)}</h3><p class="note">The family\'s law fitted to each video with its '
            f'parameters free (docs/results.md, "Law identification"): median [interquartile range] of '
            f'<code>{escape(name)}</code> over videos. A model that learned the law matches the ground truth\'s '
            'row at every level, OOD included. Models are in the board\'s order.</p>'
            f'<div class="table-wrap scroll"><table class="law"><thead><tr><th>model</th>{head}</tr></thead>'
            f'<tbody>{body}</tbody></table></div>')


def law_markdown(board: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for param in shown_params(board):
        name, labels, rows = law_rows(board, param)
        if not rows:
            continue
        out += ["", f"Learned law, `{name}`: median [interquartile range] over videos.", "",
                "| model | " + " | ".join(markdown_escape(x) for x in labels) + " |", "|---|" + "---:|" * len(labels)]
        out += ["| " + " | ".join([markdown_escape(model), *cells]) + " |" for model, cells in rows]
    return out


def _quantile(values: list[float], q: float) -> float:
    """The q-quantile of sorted `values` (nearest rank below): no interpolation, same bytes every build."""
    return values[int(q * (len(values) - 1))]


def law_axis(truths: list[float], fits: dict[str, list[float]]) -> tuple[float, float]:
    """The law scatter's range (both axes, so the diagonal is the law): every ground-truth value
    and, for each model, its fits inside Tukey's far-out fences (the quartiles -+ 3 interquartile
    ranges), padded by 5%.  One model's outliers (a fit of -14294 for a restitution near 1) then
    cannot squash every other point into a corner, whatever their share up to a quarter of its
    videos; the points beyond the range are drawn on its edge (`edge_marks`)."""
    lows, highs = [min(truths)], [max(truths)]
    for values in fits.values():
        ordered = sorted(values)
        q1, q3 = _quantile(ordered, 0.25), _quantile(ordered, 0.75)
        lows.append(max(ordered[0], q1 - 3 * (q3 - q1)))
        highs.append(min(ordered[-1], q3 + 3 * (q3 - q1)))
    lo, hi = min(lows), max(highs)
    pad = 0.05 * (hi - lo or abs(hi) or 1.0)
    return lo - pad, hi + pad


def plot_law_scatter(board: dict[str, Any], colours: dict[str, str], cap: int = ROW_CAP) -> tuple[str, str] | None:
    """Each video's fitted headline parameter against its ground truth's fit, for the board's
    `PLOTTED_ROWS` best-ranked models, at most `cap` videos each (`scatter`): (the SVG, its
    caption's words on what it draws)."""
    name = headline(board["task"])
    pts: dict[str, list[tuple[float, float]]] = {}
    links: dict[str, tuple[list[tuple[str, str]], dict[str, str]]] = {}  # per model: (sample id, file) per point, its viewers
    totals: dict[str, int] = {}
    for r in board_order(board)[:PLOTTED_ROWS]:  # the best-ranked models: every model's videos are in its viewer
        sample = r.get("scatter") or {}
        if name is not None and sample.get("law_param") == name and sample.get("law_points"):
            pts[r["model"]] = [(p["truth"], p["fit"]) for p in sample["law_points"][:cap]]
            links[r["model"]] = ([(p["sample_id"], p.get("file", "")) for p in sample["law_points"][:cap]], hrefs_of(r))
            totals[r["model"]] = sample["law_fits"]
    if name is None or not pts:
        return None
    models = sorted(pts, key=lambda m: _board_rank(board).get(m, len(board["rows"])))
    plot = Plot(420, 400 + 18 * len(models), 64, 16, 20, 44 + 18 * len(models),
                 f"fitted {name} against the ground truth's, per video")
    lo, hi = law_axis([x for m in models for x, _ in pts[m]], {m: [y for _, y in pts[m]] for m in models})
    ticks = lin_ticks(lo, hi)
    sx = lambda v: plot.x0 + (v - lo) / (hi - lo) * (plot.x1 - plot.x0)  # noqa: E731
    sy = lambda v: plot.y1 - (v - lo) / (hi - lo) * (plot.y1 - plot.y0)  # noqa: E731
    for t in ticks:
        plot.add(f'<line class="grid" x1="{plot.x0}" x2="{plot.x1}" y1="{sy(t):.1f}" y2="{sy(t):.1f}"/>')
        plot.text(plot.x0 - 6, sy(t) + 4, _num(t), anchor="end")
        plot.text(sx(t), plot.y1 + 16, _num(t))
    plot.text((plot.x0 + plot.x1) / 2, plot.y1 + 36, f"ground truth's fitted {name}", cls="axis-label")
    cy = (plot.y0 + plot.y1) / 2
    plot.text(14, cy, f"model's fitted {name}", cls="axis-label", extra=f' transform="rotate(-90 14 {cy:.1f})"')
    plot.frame()
    plot.add(f'<line class="diagonal" x1="{sx(lo):.1f}" y1="{sy(lo):.1f}" x2="{sx(hi):.1f}" y2="{sy(hi):.1f}"/>')
    clipped_any = 0
    for i, model in enumerate(models):
        colour = colours.get(model, PALETTE[i % len(PALETTE)])
        ids, hrefs = links[model]
        inside = [(sx(x), sy(y), *ids[k]) for k, (x, y) in enumerate(pts[model]) if lo <= x <= hi and lo <= y <= hi]
        beyond = [(x, y) for x, y in pts[model] if not (lo <= x <= hi and lo <= y <= hi)]
        edge = [(sx(min(max(x, lo), hi)), sy(min(max(y, lo), hi)), *ids[k]) for k, (x, y) in enumerate(pts[model])
                if not (lo <= x <= hi and lo <= y <= hi)]
        tip = f"{model}: {len(pts[model])} of {totals[model]} videos"
        if beyond:
            values = sorted(y for _, y in beyond)
            tip += f"; {len(beyond)} beyond the axes (fits from {_num(values[0])} to {_num(values[-1])}), marked on the edge"
        paths = "".join(dots(xy, colour, opacity=0.5, extra=link_attrs(href, sids))
                        for href, xy, sids in by_viewer(inside, hrefs)) or dots([], colour, opacity=0.5)
        paths += "".join(edge_marks(xy, colour, extra=link_attrs(href, sids)) for href, xy, sids in by_viewer(edge, hrefs))
        plot.add(f'<g class="points" data-model="{escape(model)}"><title>{escape(tip)}</title>{paths}</g>')
        clipped_any += len(beyond)
        y = plot.y1 + 52 + 18 * i
        plot.add(f'<circle cx="{plot.x0 + 5}" cy="{y}" r="4" fill="{colour}"/>')
        plot.text(plot.x0 + 14, y + 4, model + (f" ({len(beyond)} beyond the axes)" if beyond else ""),
                  cls="legend", anchor="start")
    shown, total = sum(len(v) for v in pts.values()), sum(totals.values())
    words = sample_caption(shown, total) + (
        f"; {clipped_any} point(s) beyond the axes (outliers) are hollow diamonds on the edge" if clipped_any else "")
    return plot.svg(), words


def _board_rank(board: dict[str, Any]) -> dict[str, int]:
    """Each model's place in the board's order (`order.board_order`): the scatter's legend follows it."""
    return {r["model"]: i for i, r in enumerate(board_order(board))}
