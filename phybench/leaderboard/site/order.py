"""The board's order of rows, in one place: the Markdown tables, the page's first sort, the
learned-law table and the law scatter's legend all list models in it.

Best first on the board's ranked metric (`initial_metric`: the column the page opens on) at
the first level column a row has (ID, usually), then by name; rows with no value go last.
"""
from __future__ import annotations

from typing import Any

from ...scoring.metrics import is_set_metric
from .load import is_number


def cell_mean(cell: dict[str, Any] | None, metric: str) -> float | None:
    """A cell's number for `metric`: the mean over videos, or a set metric's value (`kind="set"`)."""
    entry = (cell or {}).get("metrics", {}).get(metric) or {}
    value = entry.get("value" if is_set_metric(metric) else "mean")
    return value if is_number(value) else None


def sort_key(row: dict[str, Any], board: dict[str, Any], metric: str) -> tuple:
    """Best first on the first level column present (ID, usually), then by name."""
    hib = next((m["higher_is_better"] for m in board["metrics"] if m["name"] == metric), False)
    for level in board["levels"]:
        value = cell_mean(row["cells"].get(level["key"]), metric)
        if value is not None:
            return (0, -value if hib else value, row["model"])
    return (1, 0.0, row["model"])


def board_order(board: dict[str, Any], metric: str | None = None) -> list[dict[str, Any]]:
    """The board's rows in its order on `metric` (default: the board's ranked column)."""
    metric = metric or board.get("initial_metric") or (board["metrics"][0]["name"] if board["metrics"] else "")
    return sorted(board["rows"], key=lambda r: sort_key(r, board, metric))
