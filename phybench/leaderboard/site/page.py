"""The leaderboard page: index.html from the template, with each board, its plots and the data."""
from __future__ import annotations

import re
from importlib import resources
from typing import Any, Iterable

from .export import script_json
from ..common.format import escape
from .law import law_table_html, plot_law_scatter
from .order import board_order
from .plots import plot_scaling, plot_velocity_scatter
from .scatter import PLOTTED_ROWS, ROW_CAP, SAMPLE_WORDS, per_row_cap
from .svg import PALETTE
from .table import PRIMARY_METRIC

TEMPLATE_PACKAGE = "phybench.leaderboard.site"
TEMPLATE_DIR = "template"
STATIC_FILES = ("style.css", "leaderboard.js")  # copied verbatim from the template
BY_LEVEL_LINES = 12  # models in the by-level plot (leaderboard.js MAX_LINES: keep the two equal)
# ================================================================ the page
def template_text(name: str) -> str:
    return (resources.files(TEMPLATE_PACKAGE) / TEMPLATE_DIR / name).read_text(encoding="utf-8")


def _render(template: str, values: dict[str, str]) -> str:
    """One pass over {{name}} placeholders: inserted text is never scanned again."""
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], template)


def _figure(svg: str, caption: str, cls: str = "", metric: str | None = None, shown: bool = True) -> str:
    """A plot card; `metric`: the metric it draws (the board's metric switch shows only that metric's plots)."""
    attrs = f' data-metric="{escape(metric)}"' if metric else ""
    attrs += "" if shown else " hidden"
    return f'<figure class="plot-card {cls}"{attrs}>{svg}<figcaption>{escape(caption)}</figcaption></figure>'


def initial_metric(board: dict[str, Any]) -> str | None:
    """The metric a board opens on (leaderboard.js reads the same field): the ranked column, else
    the older lost-ball-as-worst one, else the paper's mean, else the first (`table.combine`)."""
    names = [m["name"] for m in board["metrics"]]
    return board.get("initial_metric") or (PRIMARY_METRIC if PRIMARY_METRIC in names else (names[0] if names else None))


def _metric_words(metric: dict[str, Any]) -> str:
    return f"{metric['label']} ({metric['name']}{', ' + metric['unit'] if metric['unit'] else ''}; " \
           f"{'higher' if metric['higher_is_better'] else 'lower'} is better)"


def model_colours(names: Iterable[str]) -> dict[str, str]:
    """A colour per model that stays the same from build to build: the model name's hash picks
    a palette slot; a clash takes the next free slot (names in sorted order), so adding a
    model moves no other model's colour unless the two would clash."""
    import hashlib

    out: dict[str, str] = {}
    taken: set[int] = set()
    for name in sorted(set(names)):
        slot = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") % len(PALETTE)
        for k in range(len(PALETTE)):
            if (slot + k) % len(PALETTE) not in taken or len(taken) >= len(PALETTE):
                slot = (slot + k) % len(PALETTE)
                break
        taken.add(slot)
        out[name] = PALETTE[slot]
    return out


def _board_html(board: dict[str, Any], cap: int = ROW_CAP) -> str:
    """One board's section; `cap`: points each scatter series draws (`scatter.per_row_cap`)."""
    colours = model_colours(row["model"] for row in board["rows"])
    figures = []
    first = initial_metric(board)
    families: dict[str, list[dict[str, Any]]] = {}
    for row in board["rows"]:
        if isinstance(row["meta"].get("family"), str):
            families.setdefault(row["meta"]["family"], []).append(row)
    if len(board["levels"]) > 1 and board["metrics"]:  # drawn by leaderboard.js from the table's data
        figures.append(
            '<figure class="plot-card wide by-level"><div class="by-level-plot"></div><figcaption>'
            '<span class="metric-words">The table\'s metric</span> at each level, per model: mean and 95% interval '
            f'(at most {BY_LEVEL_LINES} models: '
            'the best-ranked on the metric shown, or the rows selected for comparison). A model that learned the '
            'law stays flat from ID to OOD.</figcaption></figure>')
    for metric in board["metrics"]:  # one set of scaling plots per metric; the metric switch shows its own
        name, words, shown = metric["name"], _metric_words(metric), metric["name"] == first
        for family, rows in sorted(families.items()):
            for axis, what in (("train_size", "training-set size"), ("size", "model size")):
                svg = plot_scaling(board, family, rows, axis, name)
                if svg:
                    figures.append(_figure(svg, f"Scaling of {family} with {what}: {words}, ID solid, OOD dashed.",
                                           "", name, shown))
    scatters = [(row, svg) for row in board_order(board)[:PLOTTED_ROWS] if (svg := plot_velocity_scatter(board, row, cap))]
    scatter_html = ""
    if scatters:
        cards = "".join(_figure(svg, row["model"], "small") for row, svg in scatters)
        scatter_html = (
            '<h3>Generated vs conditioned velocity, per sample</h3>'
            '<p class="note">Each dot is one video: the velocity it was conditioned on against the velocity the '
            'model generated. On the dashed diagonal the model follows the law; outside the shaded training '
            'range, models that only mimic their data pull velocities back towards it (paper figure 5). '
            f'Plots for the board\'s {PLOTTED_ROWS} best-ranked rows, each with at most {cap} videos: '
            f'{escape(SAMPLE_WORDS)}; every video is in the model\'s viewer and its results sidecar.</p>'
            f'<div class="plots scatter">{cards}</div>'
        )
    law_plot = plot_law_scatter(board, colours, cap)
    law_html = law_table_html(board) + (
        '<div class="plots">' + _figure(law_plot[0], "Each video's fitted law parameter against the ground truth's fit "
                                        f"of the same scene: on the diagonal, the model follows the law. Drawn: "
                                        f"{law_plot[1]}.", "") + '</div>'
        if law_plot else "")
    desc = f'<p class="task-desc">{escape(board["description"])}</p>' if board["description"] else ""
    plots = f'<h3>Plots</h3><div class="plots">{"".join(figures)}</div>' if figures else ""
    return (
        f'<section class="board" id="{board["id"]}" data-board="{board["id"]}">'
        f'<div class="board-head"><h2>{escape(board["title"])} <span class="version">v{escape(board["task_version"])}</span></h2>'
        f'{desc}</div>'
        '<div class="controls"><label>Metric <select class="metric-select" aria-label="metric"></select></label>'
        '<span class="hint">Click a column to sort; tick rows to compare them; ▸ shows where an entry comes '
        'from.</span></div>'
        f'<div class="table-wrap"><table class="lb" data-board="{board["id"]}"></table></div>'
        '<noscript><p class="note">The tables need JavaScript; the same numbers are in '
        '<a href="leaderboard.md">leaderboard.md</a> and <a href="leaderboard.csv">leaderboard.csv</a>.</p></noscript>'
        f'{law_html}{plots}{scatter_html}</section>'
    )


def page_data(data: dict[str, Any]) -> dict[str, Any]:
    """What the page's script reads (the JSON inside index.html): the board data without what the
    page draws in Python (the scatter samples, the learned-law blocks), its numbers rounded, and
    each board's model colours (the script draws the by-level plot).  Per-video data stays out of
    the page: leaderboard.json keeps the samples, the results sidecars every video."""
    def slim_row(row: dict[str, Any]) -> dict[str, Any]:
        cells = {k: _rounded({**{f: v for f, v in c.items() if f not in ("law", "metrics")},
                              "metrics": {m: _packed(e) for m, e in c["metrics"].items()}}) for k, c in row["cells"].items()}
        return {**{k: v for k, v in row.items() if k != "scatter"}, "cells": cells, "gap": _rounded(row.get("gap") or {})}

    return {**data, "boards": [{**b, "rows": [slim_row(r) for r in b["rows"]],
                                "colours": model_colours(r["model"] for r in b["rows"])} for b in data["boards"]]}


def _packed(entry: dict[str, Any]) -> Any:
    """A one-run mean's entry as [mean, ci low, ci high, count] (leaderboard.js `entryOf` unpacks it):
    the table's numbers are most of the page, and their key names were a third of them."""
    if set(entry) == {"mean", "ci95", "count"}:
        return [entry["mean"], *entry["ci95"], entry["count"]]
    return entry


def _rounded(value: Any) -> Any:
    """Numbers to 4 significant digits (the tables show 3): the page's copy only, the exports keep all."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def page_html(data: dict[str, Any], probes: bool = False) -> str:
    """The main page; `probes`: link the Probes page (written only when probe results exist)."""
    boards = data["boards"]
    nav = "".join(f'<a href="#{b["id"]}">{escape(b["title"])}</a>' for b in boards)
    if probes:
        nav += '<a href="probes.html">Probes</a>'

    refused = ""
    if data["refused"]:
        items = "".join(f"<li><code>{escape(r['file'])}</code>: {escape(r['reason'])}</li>" for r in data["refused"])
        refused = (
            f'<section class="refused"><h2>Refused results ({len(data["refused"])})</h2>'
            "<p>These files do not match this phybench's registry and are not shown.</p>"
            f"<ul>{items}</ul></section>"
        )
    cap = per_row_cap(boards)
    sections = "".join(_board_html(b, cap) for b in boards) or '<p class="empty">No results yet.</p>'
    models = len({r["model"] for b in boards for r in b["rows"]})
    return _render(template_text("index.html"), {
        "version": escape(data["phybench_version"]),
        "nav": nav,
        "refused": refused,
        "sections": sections,
        "counts": escape(f"{models} model{'s' * (models != 1)}, {len(data['files'])} results file{'s' * (len(data['files']) != 1)}"),
        "checked": (
            "Every entry was checked against this version's registry: task spec hash, metric settings, "
            "network weight hashes and split hash." if data["registry_checked"] else
            "<strong>Built without the registry check</strong>: entries were not verified against this version."
        ),
        "data": script_json(page_data(data)),
    })
