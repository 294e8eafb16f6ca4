"""The leaderboard's text exports: Markdown (one table per task), CSV and JSON.

Submissions are untrusted text: Markdown cells and CSV cells a spreadsheet would run as
formulas are escaped here; `script_json` makes JSON safe inside a <script> element.
"""
from __future__ import annotations

import csv
import io
import json
from typing import Any, Iterator

from ...scoring.metrics import METRICS, is_set_metric, metric_names
from ..common.format import fmt, markdown_escape
from .law import law_markdown
from .load import is_number
from .order import cell_mean, sort_key as _sort_key  # noqa: F401 - cell_mean: plots read it here
from .paired import paired_mark, paired_note
from .paper import quoted_markdown
from .table import FALLBACK_METRIC, OLDER_PRIMARY, OOD_ALL, PRIMARY_METRIC


# ================================================================ formatting and exports
def _cell_text(cell: dict[str, Any] | None, metric: str) -> str:
    entry = (cell or {}).get("metrics", {}).get(metric)
    if not entry:
        return "–"
    if is_set_metric(metric):
        runs = entry.get("runs")
        spread = f" ± {fmt(runs.get('sd'))}, {runs.get('n')} runs" if runs else ""
        return f"{fmt(entry.get('value'))} (N={entry.get('videos')}{spread})"
    ci = entry.get("ci95") or [None, None]
    text = fmt(entry.get("mean"))
    runs = entry.get("runs")
    if runs:  # several runs (seeds): mean over runs ± their standard deviation
        text += f" ± {fmt(runs.get('sd'))}"
    if is_number(ci[0]) and is_number(ci[1]):
        text += f" [{fmt(ci[0])}, {fmt(ci[1])}]"
    if runs:
        text += f" ({runs.get('n')} runs)"
    return text


def _untrackable_rate(row: dict[str, Any]) -> float | None:
    """Untrackable videos over all videos of the row's files (ID and every OOD level)."""
    count = videos = 0
    for key, cell in row["cells"].items():
        if key == OOD_ALL:
            continue
        videos += cell.get("videos") or 0
        count += (cell.get("untrackable") or {}).get("count") or 0
    return count / videos if videos else None


def markdown(data: dict[str, Any], metric: str = PRIMARY_METRIC) -> str:
    """One Markdown table per task: models x (ID, OOD levels), mean [95% interval]."""
    label, unit = METRICS.get(metric).label, METRICS.get(metric).unit
    lost = ("Per video (1 - f) e + f^2 P: e the velocity error over the frames where the ball is found, f the "
            "share of in-view frames where it is lost, P = 2 sqrt(2) x world size / frame interval (282.8 units/s "
            "here, the worst possible error), so a blink costs little and losing a ball never helps; the last "
            "column gives the share of videos with a lost ball. Tables of results files without this column show "
            "the older lost-ball-as-worst column, else the paper's mean over trackable videos. "
            if metric == PRIMARY_METRIC else
            "Untrackable videos are left out of the means and counted in the last column. ")
    lines = [
        "# phybench leaderboard",
        "",
        f"{label} ({unit}; {'higher' if METRICS.get(metric).higher_is_better else 'lower'} is better): mean "
        "[bootstrap 95% interval] over videos. ID: every parameter inside the training range; "
        f"OOD: outside it. {lost}"
        "Several runs (seeds) of one model are one row: mean over runs ± their standard deviation, beside the "
        "envelope of their per-video intervals. The last column says whether the row was re-scored from its "
        "submission (verified) or not (self-reported); a learned model's row needs 3 seeds for the mark "
        "(\"needs 3 seeds (has 1)\" until then; the reference baselines are exempt). "
        f"Built with phybench {data['phybench_version']}.",
    ]
    asked = metric
    for board in data["boards"]:
        if board.get("layout") == "splits":
            lines += _markdown_by_split(board) + quoted_markdown(board) + law_markdown(board)
            continue
        metric = asked
        if not any(m["name"] == metric for m in board["metrics"]) and metric == PRIMARY_METRIC:
            metric = OLDER_PRIMARY if any(m["name"] == OLDER_PRIMARY for m in board["metrics"]) else FALLBACK_METRIC
        if not any(m["name"] == metric for m in board["metrics"]):
            continue
        arrow = "↑" if METRICS.get(metric).higher_is_better else "↓"
        head = ["model"] + [f"{markdown_escape(c['label'])} {arrow}" for c in board["levels"]] + ["untrackable",
                                                                                                    "verification"]
        lines += ["", f"## {markdown_escape(board['title'])}", "", _protocol_line(board), "",
                  "| " + " | ".join(head) + " |",
                  "|---|" + "---:|" * (len(head) - 1)]
        for row in sorted(board["rows"], key=lambda r: _sort_key(r, board, metric)):
            rate = _untrackable_rate(row)
            cells = [markdown_escape(row["model"]) + _marks(row)]
            cells += [_cell_text(row["cells"].get(c["key"]), metric) + paired_mark(row, c["key"], metric)
                      for c in board["levels"]]
            cells.append("–" if rate is None else f"{100 * rate:.1f}%")
            cells.append(markdown_escape(verification_text(row)))
            lines.append("| " + " | ".join(cells) + " |")
        lines += paired_note(board, metric) + quoted_markdown(board) + law_markdown(board)
    return "\n".join(lines) + "\n"


def verification_text(row: dict[str, Any]) -> str:
    """'verified (re-scored from submission <hash12> with phybench <version> on <date>)' or 'self-reported'."""
    return (row.get("verification") or {}).get("text", "self-reported")


def _marks(row: dict[str, Any]) -> str:
    """The condition track and a lossy-source mark after a model's name (Markdown)."""
    meta = row.get("meta", {})
    out = f" ({markdown_escape(str(meta['track']))})" if "track" in meta else ""
    return out + (f" [lossy source: {markdown_escape(str(meta['lossy']))}]" if "lossy" in meta else "")


def _protocol_line(board: dict[str, Any]) -> str:
    """Which evaluation protocol the board's results are on, in words."""
    from ...tasks.protocols import PROTOCOLS

    words = []
    for name in board.get("protocols", []):
        if name in PROTOCOLS:
            words.append(f"{name} ({PROTOCOLS.get(name).description})")
        else:
            words.append(f"{name.replace('limit ', '--limit ')} (a debugging subset, not an official protocol)")
    return ("Protocol: " + "; ".join(words) + ".") if words else "Protocol: unknown."


def _set_labels() -> str:
    """The set metrics' labels, joined: their registry rows, not a name spelt here."""
    return ", ".join(METRICS.get(n).label for n in metric_names("set"))


def _markdown_by_split(board: dict[str, Any]) -> list[str]:
    """The paper's Table 2 layout: model, training set, then each metric as "split A / split B"."""
    splits = [c["key"] for c in board["levels"]]
    metrics = board["metrics"]
    head = ["model", "training set"] + [
        f"{markdown_escape(m['label'])} {'↑' if m['higher_is_better'] else '↓'}" for m in metrics] + ["verification"]
    lines = ["", f"## {markdown_escape(board['title'])}", "", _protocol_line(board), "",
             f"Each cell: {' / '.join(markdown_escape(s) for s in splits)} (mean over videos; {_set_labels()} over the set).",
             "", "| " + " | ".join(head) + " |", "|---|---|" + "---:|" * len(metrics) + "---|"]
    first = metrics[0]["name"] if metrics else PRIMARY_METRIC
    for row in sorted(board["rows"], key=lambda r: _sort_key(r, board, first)):
        meta = row.get("meta", {})
        train = meta.get("train_split", "–")
        if "train_size" in meta:
            train = f"{train} ({meta['train_size']} videos)"
        cells = [markdown_escape(row["model"]) + _marks(row), markdown_escape(train)]
        for m in metrics:
            cells.append(" / ".join(_cell_text(row["cells"].get(s), m["name"]) for s in splits))
        cells.append(markdown_escape(verification_text(row)))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


CSV_COLUMNS = (
    "task", "task_version", "resolution", "model", "family", "size", "params", "train_size", "level", "metric",
    "higher_is_better", "mean", "ci95_low", "ci95_high", "count", "videos", "untrackable_count",
    "untrackable_rate", "split", "file", "submission_hash", "split_hash", "task_spec_hash", "phybench_version",
    "runs", "runs_sd", "verification",
)


def csv_safe(value: Any) -> Any:
    """A cell a spreadsheet shows as text, never runs: text starting =, +, -, @, tab or CR gets a quote."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def csv_rows(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The combined table, long form: one row per (task, resolution, model, level, metric), made
    as it is read (a board of many rows has tens of thousands)."""
    for board in data["boards"]:
        for row in board["rows"]:
            for level in board["levels"]:
                cell = row["cells"].get(level["key"])
                if cell is None:
                    continue
                split = row.get("cell_splits", {}).get(level["key"])
                source = next((s for s in row["sources"] if s["split"] == split), row["sources"][0])
                for m in board["metrics"]:
                    entry = cell["metrics"].get(m["name"])
                    if not entry:
                        continue
                    ci = entry.get("ci95") or [None, None]
                    unt = cell.get("untrackable") or {}
                    yield {
                        "task": board["task"], "task_version": board["task_version"], "resolution": board["resolution"],
                        "model": row["model"], "family": row["meta"].get("family"), "size": row["meta"].get("size"),
                        "params": row["meta"].get("params"), "train_size": row["meta"].get("train_size"),
                        "level": level["key"], "metric": m["name"], "higher_is_better": m["higher_is_better"],
                        "mean": entry.get("value", entry.get("mean")), "ci95_low": ci[0], "ci95_high": ci[1],
                        "count": entry.get("count", entry.get("videos")), "videos": cell.get("videos"),
                        "untrackable_count": unt.get("count"), "untrackable_rate": unt.get("rate"),
                        "split": source["split"], "file": source["file"],
                        "submission_hash": source["provenance"]["submission_hash"],
                        "split_hash": source["provenance"]["split_hash"],
                        "task_spec_hash": source["provenance"]["task_spec_hash"],
                        "phybench_version": source["provenance"]["phybench_version"],
                        "runs": (entry.get("runs") or {}).get("n", 1),
                        "runs_sd": (entry.get("runs") or {}).get("sd"),
                        "verification": verification_text(row),
                    }


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        value = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return csv_safe(value)


def csv_text(data: dict[str, Any]) -> str:
    return "".join(csv_chunks(data))


def csv_chunks(data: dict[str, Any]) -> Iterator[str]:
    """`csv_text`'s text a line at a time, for writing as it is made (the build's memory then holds
    neither the long table's rows nor its text whole)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in csv_rows(data):
        writer.writerow({k: _csv_cell(row[k]) for k in CSV_COLUMNS})
        if buf.tell() > 65536:
            yield buf.getvalue()
            buf.seek(0)
            buf.truncate()
    yield buf.getvalue()


def json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def json_chunks(data: dict[str, Any]) -> Iterator[str]:
    """`json_text`'s text in pieces, for writing as it is made: ``json.dumps`` with an indent joins a
    list of every piece first (about five times the text's size at once, the build's peak)."""
    yield from json.JSONEncoder(sort_keys=True, indent=2, ensure_ascii=False).iterencode(data)
    yield "\n"


def script_json(data: dict[str, Any]) -> str:
    """JSON for a <script type="application/json"> element: nothing in it can end the element."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text
