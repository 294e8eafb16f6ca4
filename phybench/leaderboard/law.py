"""The board's "learned law": which law each model's videos follow, against the ground truth's.

Results files of a family with a law fit carry `summary.<group>.law` (median and IQR of each
fitted parameter, the model's and the ground truth's: `phybench.scoring.law`), and their
samples sidecars the per-video fits.  Here they become one table per board (the family's
headline parameter per level, model against ground truth) and one scatter per board (each
video's fitted headline parameter against the ground truth's: on the diagonal, the model
learned the law; a model that mimics its data pulls OOD points towards the training range).
Every number is read from untrusted files: anything that is not a finite number is dropped.
"""
from __future__ import annotations

from typing import Any

from .format import escape, markdown_escape
from .load import is_number
from .svg import PALETTE, Plot, lin_ticks

MAX_PARAMS = 16  # parameters kept per law block (a family has at most 8 today)


def _stats(entry: Any) -> dict[str, Any] | None:
    if not isinstance(entry, dict) or not is_number(entry.get("median")):
        return None
    iqr = entry.get("iqr")
    iqr = iqr if isinstance(iqr, list) and len(iqr) == 2 and all(is_number(x) for x in iqr) else None
    count = entry.get("count")
    return {"median": float(entry["median"]), "iqr": iqr,
            "count": count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None}


def law_cell(block: Any) -> dict[str, Any] | None:
    """A summary's `law` block, cleaned: {fit, videos, params: {name: {model, truth}}}; None if unusable."""
    if not isinstance(block, dict) or not isinstance(block.get("fit"), str) or not isinstance(block.get("params"), dict):
        return None
    params: dict[str, Any] = {}
    for name, entry in list(block["params"].items())[:MAX_PARAMS]:
        if isinstance(name, str) and isinstance(entry, dict):
            kept = {who: s for who in ("model", "truth") if (s := _stats(entry.get(who))) is not None}
            if kept:
                params[name] = kept
    videos = block.get("videos")
    return {"fit": block["fit"][:40], "videos": videos if isinstance(videos, int) and not isinstance(videos, bool) else None,
            "params": params} if params else None


def headline(task: str) -> str | None:
    """The family's headline law parameter (`TaskFamily.law_headline`), None for a task not installed."""
    from ..tasks import family_of, get_task

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
    parameter (default: the headline), the ground truth's fit first; empty when no row carries it."""
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
    for r in sorted(board["rows"], key=lambda r: r["model"]):
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
    body = "".join(f"<tr><td class=\"who\">{escape(model)}</td>" + "".join(cell(c) for c in cells) + "</tr>"
                   for model, cells in rows)
    return (f'<h3>Learned law: {escape(name)}</h3><p class="note">The family\'s law fitted to each video with its '
            f'parameters free (docs/results.md, "Law identification"): median [interquartile range] of '
            f'<code>{escape(name)}</code> over videos. A model that learned the law matches the ground truth\'s '
            'row at every level, OOD included.</p>'
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


def plot_law_scatter(board: dict[str, Any], colours: dict[str, str]) -> str | None:
    """Each video's fitted headline parameter against its ground truth's fit, every model of the board."""
    name = headline(board["task"])
    pts: list[tuple[str, float, float]] = []
    for r in board["rows"]:
        for lw in r.get("laws", []):
            x, y = lw["truth"].get(name), lw["fit"].get(name)
            if is_number(x) and is_number(y):
                pts.append((r["model"], float(x), float(y)))
    if name is None or not pts:
        return None
    models = sorted({m for m, _, _ in pts})
    plot = Plot(420, 400 + 18 * len(models), 64, 16, 20, 44 + 18 * len(models),
                 f"fitted {name} against the ground truth's, per video")
    values = [v for _, x, y in pts for v in (x, y)]
    lo, hi = min(values), max(values)
    pad = 0.05 * (hi - lo or abs(hi) or 1.0)
    lo, hi = lo - pad, hi + pad
    ticks = lin_ticks(lo, hi)
    lo, hi = min(lo, ticks[0]), max(hi, ticks[-1])
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
    for i, model in enumerate(models):
        colour = colours.get(model, PALETTE[i % len(PALETTE)])
        mine = [(x, y) for m, x, y in pts if m == model and lo <= y <= hi]
        plot.add(f'<g class="points" fill="{colour}" fill-opacity="0.5"><title>{escape(model)}</title>')
        plot.add("".join(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.2"/>' for x, y in mine))
        plot.add("</g>")
        y = plot.y1 + 52 + 18 * i
        plot.add(f'<circle cx="{plot.x0 + 5}" cy="{y}" r="4" fill="{colour}"/>')
        plot.text(plot.x0 + 14, y + 4, model, cls="legend", anchor="start")
    return plot.svg()
