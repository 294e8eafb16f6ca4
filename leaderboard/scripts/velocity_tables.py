"""The velocity-error tables of docs/baselines.md (mean over trackable videos, untrackable share) from results files.

Usage: python leaderboard/scripts/velocity_tables.py WORK/full/results   (bash leaderboard/scripts/fundamental.sh WORK full)
Reads every `<task>-<split>-<model>.json` under the folder (one ID and one OOD file per model)
and prints one Markdown table per task, models sorted by their ID error.
"""
from __future__ import annotations

import sys
from pathlib import Path

from phybench.scoring.run.layout import is_beside
from phybench.scoring.run.layout import read as read_results
from phybench.tasks import TASKS, get_task


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def main(folder: str) -> None:
    docs = [read_results(p) for p in sorted(Path(folder).glob("*.json")) if not is_beside(p)]
    present = {d["task"] for d in docs}
    for task in [t for t in TASKS if t in present]:  # registration order: uniform, parabola, collision
        mine = [d for d in docs if d["task"] == task]
        levels = [lv.name for lv in get_task(task).ood_levels]
        rows: dict[str, dict[str, object]] = {}
        for d in mine:
            row = rows.setdefault(d["model"]["name"], {})
            s = d["summary"]
            if d["split"] == "id-eval":
                row["id"] = s["overall"]["velocity_error"]["mean"]
                row["n_id"], row["u_id"] = s["overall"]["videos"], s["overall"]["untrackable"]["rate"]
            else:
                row["ood"] = s["overall"]["velocity_error"]["mean"]
                row["n_ood"], row["u_ood"] = s["overall"]["videos"], s["overall"]["untrackable"]["rate"]
                for lv in levels:
                    row[lv] = s["levels"].get(lv, {}).get("velocity_error", {}).get("mean")
        n_id = next(iter(rows.values())).get("n_id")
        n_ood = next(iter(rows.values())).get("n_ood")
        print(f"#### {task} ({n_id} ID / {n_ood} OOD videos)\n")
        escaped = [lv.replace("+", "\\+") for lv in levels]  # Markdown: r\+v
        head = ["model", "ID ↓", "OOD overall ↓", *[f"OOD {lv} ↓" for lv in escaped], "untrackable ID / OOD"]
        print("| " + " | ".join(head) + " |")
        print("|---|" + "---:|" * (len(head) - 1))
        for name, row in sorted(rows.items(), key=lambda kv: kv[1].get("id") or 0.0):
            cells = [name, _fmt(row.get("id")), _fmt(row.get("ood")), *[_fmt(row.get(lv)) for lv in levels],
                     f"{100 * row.get('u_id', 0):.1f}% / {100 * row.get('u_ood', 0):.1f}%"]
            print("| " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "leaderboard/results/fundamental/lite")
