"""Which neighbouring rows of a board actually differ: a paired bootstrap on per-video values (issue 37, item 5).

Every model on a board answers the same sample ids, so two rows can be compared video by
video: the difference of their per-video values of the ranked column
(``velocity_error_ranked``, `phybench.scoring.metrics.ranked_error`), resampled over the
sample ids.  For each column of a board (ID, OOD overall, each OOD level) the rows are
ordered by that column's mean (best first) and each row is compared with the row just above
it: ``PAIRED_RESAMPLES`` resamples of the shared sample ids with a fixed seed, the 95%
percentile interval of the mean difference; a row whose interval contains 0 is marked
"statistically indistinguishable from the row above" (``same``).

The per-video values are not in the results file nor its ``.samples.json`` sidecar (the
sidecar keeps the plotted velocities, from which the ranked value cannot be rebuilt: it needs
the lost-frame share and the per-pair errors); they come from a viewer record
(`phybench.leaderboard.viewer.board_viewers`), written when a row's viewer is built from its
submission, whose mean is checked against the results file's headline.  Rows without one
get no mark.  A row of several runs (seeds) is compared by its per-video values averaged over
its runs (`average_runs`: a video's value is the mean over the seeds that scored it, every run
must have a viewer record) and then the same paired bootstrap over the videos: the seeds take
their noise out of each video's value, and the interval is over videos, the unit the benchmark
samples (a bootstrap over 3 seeds would say little).  Values are read one
column at a time (`values_of` is called per row when a column needs it), never all sidecars
at once.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ...stats import bootstrap_mean_ci

PAIRED_METRIC = "velocity_error_ranked"
PAIRED_RESAMPLES = 2000
PAIRED_SEED = 20261126  # fixed: the same board gives the same marks
CHUNK = 250  # resamples drawn per step (memory: CHUNK x videos indices)
OOD_ALL = "ood-overall"

# values of one row's file: sample id -> (level, value or None)
Values = Mapping[str, tuple[str, float | None]]


def paired_bootstrap(a: Sequence[float], b: Sequence[float], resamples: int = PAIRED_RESAMPLES,
                     seed: int = PAIRED_SEED) -> dict[str, Any]:
    """Mean of b - a over the paired videos and its bootstrap 95% interval (resampling the pairs).

    `a` and `b` are per-video values of the same sample ids in the same order (finite).  `same`
    is True when the interval contains 0: the two cannot be told apart at 95%."""
    x = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    n = len(x)
    if n == 0:
        raise ValueError("no paired videos")
    lo, hi = bootstrap_mean_ci(x, resamples, seed, chunk=CHUNK)
    return {"diff": _round(float(x.mean())), "ci95": [_round(lo), _round(hi)], "n": n,
            "same": bool(lo <= 0.0 <= hi)}


def _round(x: float) -> float:
    return float(f"{x:.6g}")


def average_runs(runs: Sequence[Values]) -> dict[str, tuple[str, float | None]]:
    """One row's per-video values from several runs (seeds) of its model on one split: a sample id's
    value is the mean over the runs with a finite value for it (None when none has one); its level
    is the first run's.  Sample ids that a run lacks are left out: the runs answer the same split."""
    if not runs:
        return {}
    ids = set(runs[0]).intersection(*runs[1:])
    out: dict[str, tuple[str, float | None]] = {}
    for sid in sorted(ids):
        finite = [v for r in runs if (v := r[sid][1]) is not None and math.isfinite(v)]
        out[sid] = (runs[0][sid][0], sum(finite) / len(finite) if finite else None)
    return out


def column_values(values: Values, column: str, whole: bool = False) -> dict[str, float]:
    """The finite per-video values of a column: ID or one OOD level (that level's videos), OOD
    overall or a whole split's column (`whole`: every video of the file)."""
    out = {}
    for sid, (level, value) in values.items():
        if value is None or not math.isfinite(value):
            continue
        if whole or column == OOD_ALL or level == column:
            out[sid] = value
    return out


def _cell_mean(row: dict[str, Any], column: str, metric: str) -> float | None:
    entry = (row.get("cells", {}).get(column) or {}).get("metrics", {}).get(metric) or {}
    value = entry.get("mean")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def mark_column(board: dict[str, Any], column: str, values_of: Callable[[dict[str, Any], str], Values | None],
                metric: str = PAIRED_METRIC) -> list[dict[str, Any]]:
    """Compare each row with the row ranked just above it in `column`; returns the marks made
    ({"model", "above", "diff", "ci95", "n", "same"}) and stores each under
    ``row["paired"][column]``."""
    higher = next((m["higher_is_better"] for m in board["metrics"] if m["name"] == metric), False)
    ranked = [(v, r) for r in board["rows"] if (v := _cell_mean(r, column, metric)) is not None]
    ranked.sort(key=lambda p: (-p[0] if higher else p[0], p[1]["model"]))
    marks = []
    above: dict[str, float] | None = None
    for i, (_, row) in enumerate(ranked):
        got = values_of(row, column)  # a row of several runs: averaged over them (`average_runs`)
        mine = column_values(got, column, board.get("layout") == "splits") if got is not None else None
        if i > 0 and mine is not None and above is not None:
            ids = sorted(set(mine) & set(above))
            if ids:
                mark = {"model": row["model"], "above": ranked[i - 1][1]["model"], "metric": metric,
                        **paired_bootstrap([above[s] for s in ids], [mine[s] for s in ids])}
                row.setdefault("paired", {})[column] = {k: v for k, v in mark.items() if k != "model"}
                marks.append(mark)
        above = mine
    return marks


def mark_board(board: dict[str, Any], values_of: Callable[[dict[str, Any], str], Values | None],
               metric: str = PAIRED_METRIC) -> list[dict[str, Any]]:
    """Every column of a levels board (ID, OOD overall, each OOD level); nothing on a board
    without the metric."""
    if not any(m["name"] == metric for m in board["metrics"]):
        return []
    marks = []
    for level in board["levels"]:
        marks += mark_column(board, level["key"], values_of, metric)
    return marks


# ================================================================ the marks in words (leaderboard.md)
MARK = "≈"


def paired_mark(row: dict[str, Any], column: str, metric: str) -> str:
    """" ≈" after a Markdown cell the paired comparison cannot tell from the row ranked just above it."""
    mark = (row.get("paired") or {}).get(column)
    return f" {MARK}" if mark and mark.get("metric") == metric and mark.get("same") else ""


def paired_note(board: dict[str, Any], metric: str) -> list[str]:
    """The sentence under a table with marks: what ≈ means, and per column which row it compares with
    (leaderboard.md orders rows by the first column, so the row above in another column may differ)."""
    from ..common.format import markdown_escape

    pairs = []
    for level in board["levels"]:
        for row in board["rows"]:
            mark = (row.get("paired") or {}).get(level["key"])
            if mark and mark.get("metric") == metric and mark.get("same"):
                pairs.append(f"{markdown_escape(level.get('label', level['key']))}: {markdown_escape(row['model'])} "
                             f"{MARK} {markdown_escape(mark['above'])}")
    if not pairs:
        return []
    return ["", f"{MARK}: statistically indistinguishable from the model ranked just above it in that column (paired "
                f"bootstrap of the per-video differences over the same sample ids, {PAIRED_RESAMPLES} resamples, 95%; "
                f"docs/leaderboard.md): {'; '.join(pairs)}."]
