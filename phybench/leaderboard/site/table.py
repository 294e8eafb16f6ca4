"""The combined table: accepted results files -> one board per task, a row per model, a cell per level.

Also the few facts read from the task registry (layout, evaluation splits, OOD splits, the
velocity range), each falling back to the fundamental layout for an unregistered task,
which `load` refuses with its own reason.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from ...scoring.metrics import METRICS, is_set_metric
from ...submission.model_fields import board_meta, train_size  # noqa: F401 - train_size: the plots read it here
from .law_cell import law_cell
from .paper import add_paper_references
from .scatter import export_form, merge as merge_samples
from ..verify.seeds import is_reference_run, pins, run_seeds, seed_count, seeds_state, seeds_words
from .load import (
    LEVEL_CLASH,
    Entry,
    Refusal,
    eval_splits,
    is_number,
    metrics_present,
    protocol_of_provenance,
    report_order,
)


def _layout(task: Any) -> str:
    """How a task's board is laid out: "levels" or "splits" (`TaskFamily.board_layout`)."""
    try:
        from ...tasks import family_of, get_task

        return family_of(get_task(task)).board_layout
    except Exception:
        return "levels"


def _is_ood_split(task: str, split: str) -> bool:
    """A split drawn OOD level by level: its whole-split summary is the "OOD overall" column."""
    try:
        from ...tasks import get_task

        return get_task(task).split(split).draw == "ood-levels"
    except Exception:
        return split == "ood-eval"
# Tables open on (and the Markdown ranks by) the ranked velocity error (docs/results.md, "The
# ranked column"): a lost frame costs more the more frames are lost, so losing balls never
# improves a rank; results files without it (made before it existed) fall back to the
# lost-ball-as-worst column, then to the paper's trackable-only mean.
PRIMARY_METRIC = "velocity_error_ranked"
OLDER_PRIMARY = "velocity_error_penalised"
FALLBACK_METRIC = "velocity_error"

# Which block of `provenance.metric_settings` states a metric's conventions, which pinned
# network it runs (its weight hash must be in `provenance.weights`), its label and unit:
# the metric registry, `phybench.scoring.metrics.METRICS`.
ID_LEVEL = "id"
OOD_ALL = "ood-overall"  # the ood-eval file's `summary.overall`: every OOD video together

# ================================================================ the combined table
def _split_columns(task: str, present: Iterable[str]) -> list[dict[str, str]]:
    """Columns of a "splits" board: each evaluation split the task declares, in its order."""
    from ...tasks import get_task

    present = set(present)
    spec = get_task(task)
    return [{"key": s, "label": s, "group": "", "short": s, "title": spec.split(s).description or s}
            for s in spec.eval_splits if s in present]


def _levels(task: str, present: Iterable[str]) -> list[dict[str, str]]:
    """Columns of a task table: ID, all OOD videos, then each OOD level in registry order."""
    if _layout(task) == "splits":
        return _split_columns(task, present)
    described: dict[str, str] = {}
    order: list[str] = []
    try:
        from ...tasks import get_task

        spec = get_task(task)
        for level in spec.ood_levels:
            order.append(level.name)
            described[level.name] = level.description or f"{', '.join(level.ood_dofs)} out of the training range"
    except Exception:
        pass
    present = set(present)
    cols = []
    # label: in Markdown and plots; group + short: the two lines of a table header
    if ID_LEVEL in present:
        cols.append({"key": ID_LEVEL, "label": "ID", "group": "", "short": "ID",
                     "title": "in distribution: every parameter inside the training range"})
    if OOD_ALL in present:
        cols.append({"key": OOD_ALL, "label": "OOD overall", "group": "OOD", "short": "overall",
                     "title": "out of distribution: every OOD video together"})
    for name in order + sorted(present - set(order) - {ID_LEVEL, OOD_ALL}):
        if name in present:
            cols.append({"key": name, "label": f"OOD {name}", "group": "OOD level", "short": name,
                         "title": described.get(name, f"OOD level {name}")})
    return cols


def _cell(group: dict[str, Any], metrics: Iterable[str]) -> dict[str, Any]:
    """One table cell's numbers; anything that is not a number becomes null (files are untrusted)."""

    def number(x: Any) -> float | None:
        return x if is_number(x) else None

    def count(x: Any) -> int | None:
        return x if isinstance(x, int) and not isinstance(x, bool) and x >= 0 else None

    untrackable = group.get("untrackable") if isinstance(group.get("untrackable"), dict) else {}
    cell: dict[str, Any] = {
        "videos": count(group.get("videos")),
        "untrackable": {"count": count(untrackable.get("count")), "rate": number(untrackable.get("rate"))},
        "metrics": {},
    }
    for m in metrics:
        value = group.get(m)
        if not isinstance(value, dict):
            continue
        if is_set_metric(m):
            cell["metrics"][m] = {"value": number(value.get("value")), "videos": count(value.get("videos")),
                                  "frames": count(value.get("frames"))}
        else:
            ci = value.get("ci95") if isinstance(value.get("ci95"), list) and len(value["ci95"]) == 2 else [None, None]
            cell["metrics"][m] = {"mean": number(value.get("mean")), "ci95": [number(ci[0]), number(ci[1])],
                                  "count": count(value.get("count"))}
    law = law_cell(group.get("law"))  # the fitted law (phybench.leaderboard.site.law)
    if law is not None:
        cell["law"] = law
    return cell


def _mean_sd(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (n - 1) of several runs' numbers."""
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5 if len(values) > 1 else 0.0
    return float(f"{mean:.9g}"), float(f"{sd:.9g}")


def merge_runs(cells: list[dict[str, Any]], seeds: list[Any] | None = None) -> dict[str, Any]:
    """One cell from several independent runs (seeds) of one model on one level.

    The value is the mean over runs of each run's mean, with `runs` = {n, sd, values}: the
    standard deviation across runs (n - 1).  The interval shown beside it is the envelope of
    the runs' per-video 95% intervals (lowest low, highest high): the spread over videos,
    not a new bootstrap.  Videos and untrackable counts are totals over the runs.  `seeds`: each
    run's seeds (its card's), kept beside the values (`runs.seeds`) so the gap pairs a seed's ID
    and OOD runs (`gap.ratio_interval`).
    """
    if len(cells) == 1:
        return cells[0]
    videos = [c["videos"] for c in cells]
    lost = [c["untrackable"]["count"] for c in cells]
    total = sum(videos) if all(v is not None for v in videos) else None
    count = sum(lost) if all(v is not None for v in lost) else None
    out: dict[str, Any] = {
        "videos": total,
        "untrackable": {"count": count, "rate": float(f"{count / total:.9g}") if total and count is not None else None},
        "metrics": {},
        "runs": len(cells),
    }
    for m in sorted({m for c in cells for m in c["metrics"]}):
        entries = [c["metrics"][m] for c in cells if m in c["metrics"]]
        key = "value" if is_set_metric(m) else "mean"
        values = [e[key] for e in entries if is_number(e.get(key))]
        if len(values) != len(cells):  # a run without this number: the row cannot say its spread
            continue
        mean, sd = _mean_sd(values)
        merged: dict[str, Any] = {key: mean, "runs": {"n": len(values), "sd": sd, "values": values}}
        if seeds is not None and len(seeds) == len(values):
            merged["runs"]["seeds"] = [list(x) for x in seeds]
        if key == "mean":
            lows = [e["ci95"][0] for e in entries if is_number(e["ci95"][0])]
            highs = [e["ci95"][1] for e in entries if is_number(e["ci95"][1])]
            merged["ci95"] = [min(lows) if len(lows) == len(entries) else None,
                              max(highs) if len(highs) == len(entries) else None]
            counts = [e.get("count") for e in entries]
            merged["count"] = sum(counts) if all(isinstance(c, int) for c in counts) else None
        else:
            for k in ("videos", "frames"):
                ks = [e.get(k) for e in entries]
                merged[k] = sum(ks) if all(isinstance(v, int) for v in ks) else None
        out["metrics"][m] = merged
    return out


def source_verification(verification: Any) -> str:
    """A source's state in words: "verified (re-scored from submission <hash12> with phybench <version>
    on <date>)" or "self-reported"."""
    if verification is None:
        return "self-reported"
    words = (f"re-scored from submission {verification.submission_hash[:12]} with phybench "
             f"{verification.phybench_version} on {verification.date}")
    if verification.skipped:
        words += f"; not recomputed: {', '.join(verification.skipped)}"
    return f"verified ({words})"


def row_verification(sources: list[dict[str, Any]], seeds: dict[str, Any] | None = None) -> dict[str, Any]:
    """A row is verified only if every file it shows (each split, each run) is, and, for a learned
    model, its runs have at least 3 distinct seeds (`seeds`: `verify.seeds.seeds_state`; a pinned
    reference baseline is exempt).  Short of seeds, every file verified: "needs 3 seeds (has 1)"."""
    states = [s["verification"] for s in sources]
    files_verified = all(v.startswith("verified") for v in states)
    verified = files_verified and (seeds is None or seeds["enough"])
    if verified:
        inner = sorted({v[len("verified ("):-1] for v in states})
        text = f"verified ({'; '.join(inner)})"
    elif files_verified:
        assert seeds is not None
        text = seeds_words(seeds)
    else:
        done = sum(v.startswith("verified") for v in states)
        text = "self-reported" + (f" ({done} of {len(states)} files verified)" if done else "")
    out: dict[str, Any] = {"verified": verified, "text": text}
    if files_verified and not verified:
        out["needs_seeds"] = True
    return out


def combine(entries: list[Entry]) -> tuple[list[dict[str, Any]], list[Refusal]]:
    """Boards (one per task and resolution): rows of models, cells per level.

    Several files of one model on one split (different submissions: `load` refuses the same
    one twice) are independent runs, merged cell by cell (`merge_runs`).  Each entry's summary is
    consumed (set to None once its cells are made): the boards carry its numbers from then on.
    """
    boards: dict[tuple[str, int, str], dict[str, Any]] = {}
    refused: list[Refusal] = []
    known = list(_registered_tasks())
    runs: dict[tuple[Any, ...], list[Entry]] = {}
    pinned = pins()  # the reference baselines' videos hashes (`verify.seeds`): their rows need no 3 seeds
    for e in sorted(entries, key=lambda e: (e.key, e.model, e.results["split"], e.file)):
        runs.setdefault((e.key, e.model, e.results["split"]), []).append(e)
    for (_, _, split), group in runs.items():
        e = group[0]
        doc = e.results
        metrics = [m for m in report_order() if any(m in metrics_present(g.results) for g in group)]
        per_run: list[dict[str, Any]] = []
        for g in group:
            cells = {}
            if _layout(doc["task"]) == "splits":  # one column per split: its whole-split summary
                cells[split] = _cell(g.results["summary"]["overall"], metrics)
            else:
                if _is_ood_split(doc["task"], split):  # for id-eval the whole split is the ID level
                    cells[OOD_ALL] = _cell(g.results["summary"]["overall"], metrics)
                for level, summary in g.results["summary"]["levels"].items():
                    cells[level] = _cell(summary, metrics)
            per_run.append(cells)
        for g in group:  # consumed: the cells hold its numbers, and a build holds no file's summary past its row
            g.results["summary"] = None
        keys = sorted({k for cells in per_run for k in cells})
        seeds = [run_seeds(g.results["model"]) or (0,) for g in group]
        cells = {k: merge_runs([c[k] for c in per_run if k in c], [x for c, x in zip(per_run, seeds) if k in c])
                 for k in keys}
        board = boards.setdefault(e.key, {"rows": {}, "metrics": {}, "task_version": doc["task_version"]})
        row = board["rows"].get(e.model) or {"model": e.model, "meta": board_meta(doc["model"]), "cells": {}, "sources": []}
        clash = sorted(set(cells) & set(row["cells"]))
        if clash:  # an ood-eval file with an "id" level, say: which file is right is not ours to guess
            refused += [Refusal(g.file, f"model {e.model!r} already has level(s) {', '.join(clash)} "
                                        f"on {e.key[0]} from {', '.join(s['file'] for s in row['sources'])}", LEVEL_CLASH)
                        for g in group]
            continue
        board["rows"][e.model] = row
        for m in metrics:
            board["metrics"].setdefault(m, bool(doc.get("higher_is_better", {}).get(m, METRICS.get(m).higher_is_better)))
        row["cells"].update(cells)
        row.setdefault("cell_splits", {}).update({k: split for k in cells})
        row["runs"] = max(row.get("runs", 1), len(group))
        count = seed_count(g.results["model"] for g in group)  # the row's seeds: its fewest on any split
        reference = all(is_reference_run(g.results["model"], g.verification, pinned) for g in group)
        before = row.get("seeds")
        row["seeds"] = seeds_state(count if before is None else min(count, before["seeds"]),
                                   reference and (before is None or before["reference"]))
        for i, g in enumerate(group):
            prov = g.results["provenance"]
            row["sources"].append({
                "file": g.file,
                "split": split,
                "run": i + 1 if len(group) > 1 else None,
                "model": board_meta(g.results["model"]),
                "provenance": {k: prov.get(k) for k in (
                    "phybench_version", "task_spec_hash", "split_hash", "split_num_samples", "split_full_size",
                    "resolution", "pixel_mapping", "submission_hash", "weights")},
                "protocol": protocol_of_provenance(g.results["task"], prov),
                "untrackable": g.results.get("untrackable_count", len(g.results.get("untrackable") or [])),
                "warnings": [w for w in g.results.get("warnings") or [] if isinstance(w, str)],
                "verification": source_verification(g.verification),
            })
            if g.samples is not None:  # the page's sample of the row's videos (`scatter`)
                row["scatter"] = merge_samples(row.get("scatter"), g.samples)

    out = _ordered_boards(boards, known)
    add_paper_references(out)  # the paper's Figure 3 / Table 2, quoted beside the rows (`paper`)
    return out, refused


def _ordered_boards(boards: dict[tuple[str, int, str], dict[str, Any]], known: list[str]) -> list[dict[str, Any]]:
    """The boards in registration order, each with its title, id, levels and metrics; rows by model name."""
    out: list[dict[str, Any]] = []
    ids: set[str] = set()
    resolutions: dict[str, set[int]] = {}
    groups: dict[str, set[str]] = {}
    for task, res, protocol_group in boards:
        resolutions.setdefault(task, set()).add(res)
        groups.setdefault(task, set()).add(protocol_group)
    order = {t: i for i, t in enumerate(known)}
    group_order = {"full": 0, "lite": 1, "debug": 2}
    for (task, res, protocol_group), board in sorted(
            boards.items(), key=lambda kv: (order.get(kv[0][0], len(order)), kv[0][0], kv[0][1], group_order[kv[0][2]])):
        rows = [board["rows"][name] for name in sorted(board["rows"])]
        for row in rows:
            splits = eval_splits(task)
            row["sources"].sort(key=lambda s: (splits.index(s["split"]) if s["split"] in splits else len(splits), s["file"]))
            row["verification"] = row_verification(row["sources"], row.get("seeds"))
            if "scatter" in row:
                row["scatter"] = export_form(row["scatter"])
        present = {k for r in rows for k in r["cells"]}
        metrics = [m for m in report_order() if m in board["metrics"]]
        title = task if len(resolutions[task]) == 1 else f"{task} · {res} px"
        board_id = _slug(f"{task}-{res}")
        if len(groups[task]) > 1:  # the same task on several protocols: one board each, named
            title += " · " + ("debugging subsets" if protocol_group == "debug" else f"{protocol_group} protocol")
            board_id += f"-{protocol_group}"
        while board_id in ids:  # two unregistered task names that slug alike
            board_id += "-x"
        ids.add(board_id)
        out.append({
            "id": board_id,
            "task": task,
            "task_version": board["task_version"],
            "resolution": res,
            "protocol_group": protocol_group,
            "title": title,
            "description": _task_description(task),
            "layout": _layout(task),
            "protocols": sorted({s["protocol"] for r in rows for s in r["sources"] if s.get("protocol")}),
            "levels": _levels(task, present),
            "metrics": [
                {"name": m, "label": METRICS.get(m).label, "unit": METRICS.get(m).unit,
                 "higher_is_better": board["metrics"][m]}
                for m in metrics
            ],
            "initial_metric": next((m for m in (PRIMARY_METRIC, OLDER_PRIMARY, FALLBACK_METRIC) if m in metrics),
                                   metrics[0] if metrics else None),  # the table opens on it, as leaderboard.md ranks
            "rows": rows,
        })
    return out


def _registered_tasks() -> list[str]:
    try:
        from ...tasks import TASKS

        return list(TASKS)
    except Exception:
        return []


def _task_description(task: str) -> str:
    try:
        from ...tasks import get_task

        return get_task(task).description
    except Exception:
        return ""


def task_velocity_range(task: str, dof: str | None) -> tuple[str, tuple[float, float]] | None:
    """The training (ID) range of the velocity the scatter plot shows, from the registry."""
    try:
        from ...tasks import get_task

        dofs = get_task(task).dofs
    except Exception:
        return None
    for d in dofs:
        if (dof and d.name == dof) or (not dof and d.name.startswith("velocity")):
            return d.name, (float(d.id_range[0]), float(d.id_range[1]))
    return None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"
