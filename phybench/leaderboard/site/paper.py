"""The paper's own numbers, quoted beside the board's rows: Figure 3 and Table 2 (Kang et al. 2024).

Reference points, never rows: they are not phybench results (no results file, no submission,
no verification), so they are not ranked, not sorted with the rows and not in the exports'
ranked tables.  Each fundamental board carries them as `board["paper"]` for the metric they
are comparable with (Figure 3: `velocity_error_paper`, the authors' own measurement,
`phybench.scoring.physics.paper_velocity`; Table 2: `abnormal`, which the authors counted by hand);
the page shows them under the table when that metric is chosen, marked "quoted from the paper".

Figure 3 was digitised from the authors' plot file (their project-page repository,
`static/image/scaling_combined.png`; every number the paper's text quotes agrees within 0.0005);
values marked approximate (`~`) were hidden behind another point and inferred.  The floor row is
the paper's Table 3 / Table 4 ground truth against itself (at 256 px: see docs/scoring.md).
"""
from __future__ import annotations

from typing import Any

from ..common.format import markdown_escape

SOURCE = "Kang et al. 2024, How Far is Video Generation from World Model (arXiv:2411.02385)"
FIGURE3_METRIC = "velocity_error_paper"
TABLE2_METRIC = "abnormal"
ID_KEY, OOD_KEY = "id", "ood-overall"  # the fundamental boards' column keys (`leaderboard.table`)
IN_TEMPLATE, OUT_OF_TEMPLATE = "in-template-eval", "out-of-template-eval"  # the combinatorial board's

SIZES = ("30K", "300K", "3M")
# Figure 3: panel -> model -> (ID at 30K, 300K, 3M), (OOD at 30K, 300K, 3M); a string "~x" is approximate.
FIGURE3: dict[str, dict[str, tuple[tuple[float | str, ...], tuple[float | str, ...]]]] = {
    "Figure 3, uniform motion": {
        "DiT-S": ((0.022, 0.018, 0.015), (0.435, 0.293, 0.288)),
        "DiT-B": ((0.017, "~0.015", 0.0138), (0.433, 0.328, 0.358)),
        "DiT-L": ((0.015, 0.014, 0.012), (0.378, 0.385, 0.427)),
    },
    "Figure 3, collision": {
        "DiT-S": ((0.027, 0.024, 0.023), (0.188, 0.200, 0.153)),
        "DiT-B": ((0.030, 0.019, 0.018), (0.241, "~0.167", 0.211)),
        "DiT-L": ((0.024, 0.016, 0.015), (0.270, 0.173, "~0.161")),
    },
    "Figure 3, parabola": {
        "DiT-S": ((0.051, 0.049, 0.047), (0.307, 0.285, 0.307)),
        "DiT-B": ((0.043, 0.039, "~0.037"), ("~0.317", 0.376, 0.288)),
        "DiT-L": ((0.038, 0.035, 0.033), ("~0.314", 0.352, 0.338)),
    },
}
# The ground truth against itself (Table 3 ID; Table 4 gives uniform OOD): panel -> (ID, OOD or None).
FLOORS: dict[str, tuple[float, float | None]] = {
    "Figure 3, uniform motion": (0.0099, 0.0104), "Figure 3, collision": (0.0117, None),
    "Figure 3, parabola": (0.0210, None)}
# Table 2 (combinatorial): model, training templates, abnormal share in-template, out-of-template.
TABLE2: tuple[tuple[str, int, float, float], ...] = (
    ("DiT-XL", 6, 0.03, 0.67), ("DiT-XL", 30, 0.03, 0.18), ("DiT-XL", 60, 0.02, 0.10), ("DiT-B", 60, 0.03, 0.24))


def quote_of(task: str) -> str | None:
    """The paper's table or figure that quotes a task (its family's `paper_quote`); None for an unknown task."""
    from ...tasks import family_of, get_task

    try:
        return family_of(get_task(task)).paper_quote
    except KeyError:
        return None


def _value(v: float | str) -> tuple[float, bool]:
    """(number, approximate?) of one quoted value."""
    return (float(v[1:]), True) if isinstance(v, str) else (float(v), False)


def _row(model: str, cells: dict[str, float | str]) -> dict[str, Any]:
    values = {k: _value(v) for k, v in cells.items()}
    return {"model": model, "cells": {k: v[0] for k, v in values.items()},
            "approx": sorted(k for k, v in values.items() if v[1])}


def figure3_rows(task: str) -> list[dict[str, Any]]:
    """The paper's rows of one fundamental task: each model at each training size, then the floor."""
    return _figure3_rows(quote_of(task) or "")


def _figure3_rows(key: str) -> list[dict[str, Any]]:
    rows = []
    for model, (ids, oods) in FIGURE3.get(key, {}).items():
        for size, i, o in zip(SIZES, ids, oods):
            rows.append(_row(f"{model} · {size} videos", {ID_KEY: i, OOD_KEY: o}))
    if key in FLOORS:
        floor_id, floor_ood = FLOORS[key]
        rows.append(_row("ground truth (their videos, 256 px)",
                         {ID_KEY: floor_id, **({OOD_KEY: floor_ood} if floor_ood is not None else {})}))
    return rows


TRAIN_VIDEOS = {"30K": 3e4, "300K": 3e5, "3M": 3e6}  # the x of Figure 3 (collision's grids: 28K / 329K / 3.4M)


def figure3_series(task: str) -> list[tuple[str, list[tuple[float, float]], list[tuple[float, float]]]]:
    """(model, ID points, OOD points) of one task, points (training videos, value): the scaling plot's
    reference lines."""
    out = []
    for model, (ids, oods) in FIGURE3.get(quote_of(task) or "", {}).items():
        xs = [TRAIN_VIDEOS[s] for s in SIZES]
        out.append((model, [(x, _value(v)[0]) for x, v in zip(xs, ids)], [(x, _value(v)[0]) for x, v in zip(xs, oods)]))
    return out


def table2_rows() -> list[dict[str, Any]]:
    return [_row(f"{model} · {n} templates", {IN_TEMPLATE: a, OUT_OF_TEMPLATE: b}) for model, n, a, b in TABLE2]


def _figure3_block(panel: str) -> dict[str, Any]:
    return {"metric": FIGURE3_METRIC, "source": f"{SOURCE}, Figure 3 (floor: Tables 3, 4)",
            "note": ("quoted from the paper, not verified, not ranked: the authors' DiT models at 30K / 300K / 3M "
                     "training videos, in their convention, velocity_error_paper (hard colour masks, pixel / W, a "
                     "lost ball placed at the edge; their ground truth's floor is a scale bias of their renderer, "
                     "phybench's exact renders score lower: docs/scoring.md; phybench's own velocity_error is a "
                     "different measurement); ~: read off their plot behind another point"),
            "rows": _figure3_rows(panel)}


def _table2_block() -> dict[str, Any]:
    return {"metric": TABLE2_METRIC, "source": f"{SOURCE}, Table 2",
            "note": ("quoted from the paper, not verified, not ranked: share of abnormal videos the authors counted "
                     "by hand, by training templates (ours: the automatic judge)"),
            "rows": table2_rows()}


# The quoted blocks, by the paper's table or figure (a family names its own: `TaskFamily.paper_quote`).
QUOTED: dict[str, dict[str, Any]] = {**{panel: _figure3_block(panel) for panel in FIGURE3}, "Table 2": _table2_block()}


def reference_for(task: str) -> dict[str, Any] | None:
    """The quoted block of a task's board (`board["paper"]`), or None when the paper has no number for it."""
    key = quote_of(task)
    return QUOTED.get(key) if key is not None else None


def add_paper_references(boards: list[dict[str, Any]]) -> None:
    """Attach each board's quoted block where its task has one and the board shows the metric it quotes."""
    for board in boards:
        ref = reference_for(board["task"])
        if ref is not None and any(m["name"] == ref["metric"] for m in board["metrics"]):
            board["paper"] = ref


def quoted_markdown(board: dict[str, Any]) -> list[str]:
    """leaderboard.md's lines for a board's quoted block: its own small table under the board's, never merged."""
    ref = board.get("paper")
    if not ref:
        return []
    levels = [c for c in board["levels"] if any(c["key"] in r["cells"] for r in ref["rows"])]
    lines = ["", f"Quoted from the paper ({markdown_escape(ref['source'])}; `{ref['metric']}`; not verified, "
                 "not ranked; ~ approximate):", "",
             "| paper | " + " | ".join(markdown_escape(c["label"]) for c in levels) + " |",
             "|---|" + "---:|" * len(levels)]
    for row in ref["rows"]:
        cells = [("~" if c["key"] in row["approx"] else "") + f"{row['cells'][c['key']]:.3g}"
                 if c["key"] in row["cells"] else "–" for c in levels]
        lines.append(f"| {markdown_escape(row['model'])} | " + " | ".join(cells) + " |")
    return lines
