"""The OOD / ID gap of each row: how much worse a model does out of distribution (issue 37 item 4c).

The paper's question at a glance: a model that learned the law keeps its in-distribution error
out of distribution (a ratio near 1); one that mimics its training data does much worse (a ratio
of 5 or 10).  For each row and each per-video metric of a board, the ratio of the OOD column's
mean to the ID column's mean, with a 95% interval:

* levels boards (uniform, parabola, collision): "OOD overall" (every OOD video) over ID;
* splits boards with two evaluation splits (combinatorial): the second split over the first
  (out-of-template over in-template).

The interval comes from the two bootstrap intervals the results files carry (the per-video
values are not in the files, so the ratio itself cannot be bootstrapped here): each mean is
taken as log-normal with the standard error its interval implies, se = (ln hi - ln lo) / (2 x
1.96); the ID and OOD videos are different videos, so the log-ratio's standard error is
sqrt(se_id^2 + se_ood^2), and the interval is ratio x exp(+-1.96 se).  It needs both means and
all four bounds above zero; otherwise the ratio is shown without an interval (or not at all
when a mean is zero).  A row of several runs uses the envelope of its runs' intervals, which
makes its interval wider, never narrower, and shows the across-seed spread beside it as the
table's cells do: the standard deviation (n - 1) of the per-seed ratios, each seed's OOD run over
the same seed's ID run (`runs.seeds`, `table.merge_runs`), when at least two seeds have both.
"""
from __future__ import annotations

import math
from typing import Any

from ...scoring.metrics import is_set_metric
from .load import is_number

Z95 = 1.959963984540054
METHOD = ("ratio of the OOD mean to the ID mean; 95% interval from the two bootstrap intervals, "
          "each mean taken as log-normal (se of ln mean = (ln hi - ln lo) / 3.92), independent videos")


def gap_columns(board: dict[str, Any]) -> tuple[str, str, str, str] | None:
    """(ID column, OOD column, label, short header) of a board, or None when it has no such pair."""
    keys = [c["key"] for c in board["levels"]]
    if board.get("layout") == "splits":
        return (keys[0], keys[1], f"{keys[1]} / {keys[0]}", "ratio") if len(keys) == 2 else None
    return ("id", "ood-overall", "OOD / ID", "OOD/ID") if "id" in keys and "ood-overall" in keys else None


def _sig(x: float) -> float:
    return float(f"{x:.6g}")


def ratio_interval(id_entry: dict[str, Any] | None, ood_entry: dict[str, Any] | None) -> dict[str, Any] | None:
    """{"ratio", "ci95": [lo, hi] or [None, None]} of two cells' metric entries; None without a ratio."""
    if not id_entry or not ood_entry:
        return None
    a, b = id_entry.get("mean"), ood_entry.get("mean")
    if not (is_number(a) and is_number(b)) or a <= 0 or b < 0:
        return None
    ratio = b / a
    bounds = [*(id_entry.get("ci95") or [None, None]), *(ood_entry.get("ci95") or [None, None])]
    if b == 0 or not all(is_number(x) and x > 0 for x in bounds):
        return {"ratio": _sig(ratio), "ci95": [None, None]}
    se = math.hypot(math.log(bounds[1] / bounds[0]), math.log(bounds[3] / bounds[2])) / (2 * Z95)
    out = {"ratio": _sig(ratio), "ci95": [_sig(ratio * math.exp(-Z95 * se)), _sig(ratio * math.exp(Z95 * se))]}
    spread = seed_spread(id_entry.get("runs"), ood_entry.get("runs"))
    return {**out, "runs": spread} if spread else out


def seed_spread(id_runs: Any, ood_runs: Any) -> dict[str, Any] | None:
    """{"n", "sd"} of the per-seed OOD / ID ratios of two cells' runs, paired by seed; None under two pairs."""
    if not isinstance(id_runs, dict) or not isinstance(ood_runs, dict):
        return None
    by_seed = [{str(k): v for k, v in zip(r.get("seeds") or [], r.get("values") or [])} for r in (id_runs, ood_runs)]
    ratios = [by_seed[1][k] / by_seed[0][k] for k in sorted(set(by_seed[0]) & set(by_seed[1]))
              if is_number(by_seed[0][k]) and is_number(by_seed[1][k]) and by_seed[0][k] > 0]
    if len(ratios) < 2:
        return None
    mean = sum(ratios) / len(ratios)
    return {"n": len(ratios), "sd": _sig((sum((r - mean) ** 2 for r in ratios) / (len(ratios) - 1)) ** 0.5)}


def add_gaps(boards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each board gets `gap` ({id, ood, label, short, method}) and each of its rows `gap` ({metric: ratio_interval})."""
    for board in boards:
        columns = gap_columns(board)
        if columns is None:
            continue
        id_key, ood_key, label, short = columns
        board["gap"] = {"id": id_key, "ood": ood_key, "label": label, "short": short, "method": METHOD}
        for row in board["rows"]:
            gaps = {}
            for m in board["metrics"]:
                if is_set_metric(m["name"]):
                    continue
                found = ratio_interval(((row["cells"].get(id_key) or {}).get("metrics") or {}).get(m["name"]),
                                       ((row["cells"].get(ood_key) or {}).get("metrics") or {}).get(m["name"]))
                if found is not None:
                    gaps[m["name"]] = found
            row["gap"] = gaps
    return boards
