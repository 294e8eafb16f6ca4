"""Recompute some cheap per-video metrics of a shipped results file, keep the rest: `phybench rescore`.

For the maintainer whose judge (or another cheap metric) changed its settings: re-scoring a
whole split again costs the network metrics, which did not change.  This recomputes only the named
per-video metrics (no weights) from the same submission against the same split, refusing
anything else, and notes it in `provenance.rescored`.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

from ..._version import __version__
from ...data.split import SplitReader
from ...tasks import family_of, get_task
from .layout import read_results_doc as read_results
from ..metrics import METRICS, TRACKING_METRIC, reported, settings_blocks
from .results import tracking_lists
from .score import ScoreError, invalid_submission


RESCORABLE_KINDS = ("video",)  # per-video metrics with a `compute` (no torch weights): cheap to recompute


def rescore(results_path: str | os.PathLike[str], submission: str | os.PathLike[str], split_dir: str | os.PathLike[str],
            metrics: Sequence[str], *, progress: bool = True) -> dict[str, Any]:
    """The results document of `rescore_with_details` (its sidecar rows left aside)."""
    return rescore_with_details(results_path, submission, split_dir, metrics, progress=progress)[0]


def rescore_with_details(results_path: str | os.PathLike[str], submission: str | os.PathLike[str],
                         split_dir: str | os.PathLike[str], metrics: Sequence[str], *,
                         progress: bool = True) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A results file with some per-video metrics recomputed by this phybench; the rest kept.

    For the maintainer whose judge (or another cheap metric) changed its settings: the
    shipped results keep their network metrics (which did not change, and cost most of the time)
    and get `metrics` recomputed from the same submission.  The submission must be the one
    scored (same content hash) and the split the one it answered (same split hash); every
    other metric's settings must still be this phybench's, else it refuses: re-score in full.
    Returns the new results document and the recomputed detail rows (for `rescored_sidecar`)."""
    import json

    from tqdm import tqdm

    from .loop import PassSettings, run_pass
    from ...submission.archive import SubmissionError
    from ...submission.format import open_submission
    from ...submission.validation import check_header, finish, record_video, unopenable

    try:
        doc = read_results(results_path)
    except (OSError, ValueError) as exc:
        raise ScoreError(f"{results_path}: not a readable results file ({exc})") from None
    except RecursionError:
        raise ScoreError(f"{results_path}: not a results file (its JSON is nested too deeply)") from None
    if not isinstance(doc, dict) or doc.get("kind") != "phybench-results" or not isinstance(doc.get("provenance"), dict):
        raise ScoreError(f"{results_path}: not a phybench results file (kind 'phybench-results')")
    prov = doc["provenance"]
    missing, addable = _check_metrics(doc, metrics, results_path)
    reader = SplitReader(split_dir)
    manifest = reader.manifest
    if manifest["split_hash"] != prov["split_hash"]:
        raise ScoreError(f"{split_dir} is not the split {results_path} was scored on (split hash "
                         f"{manifest['split_hash'][:12]}, the results say {prov['split_hash'][:12]})")
    if missing:
        doc["metrics"] = _listed_with(doc, [m for m in addable if m in missing])
        doc["higher_is_better"] = {m: METRICS.get(m).higher_is_better for m in doc["metrics"] if m in METRICS}
    current = json.loads(json.dumps(settings_blocks([TRACKING_METRIC, *doc["metrics"]])))
    keys = {METRICS.get(m).settings_key for m in metrics} - {None}
    if family_of(get_task(doc["task"])).object_reader == "none":
        # No disc is parsed in this family (its bodies share colours): the tracking block states
        # nothing any number in the file depends on (untrackable is always empty), so it follows
        # this phybench's wording instead of forcing the network metrics to be recomputed.
        keys.add(METRICS.get(TRACKING_METRIC).settings_key)
    stale = sorted(k for k, v in prov["metric_settings"].items() if k not in keys and current.get(k) != v)
    if stale:
        raise ScoreError(f"{results_path}: the settings of {', '.join(stale)} differ from this phybench's too; "
                         "re-score the submission in full")
    rows = list(reader.rows())
    ids = [row["sample_id"] for row in rows]
    try:
        sub = open_submission(submission, manifest=manifest)
    except SubmissionError as exc:
        raise invalid_submission(unopenable(submission, split_dir, manifest, ids, exc), submission, split_dir) from None
    with sub:  # one pass: each video decoded once, to check it, hash it and recompute the metrics
        report = check_header(sub, manifest, split_dir, ids)
        if not report.ok:
            raise invalid_submission(report, submission, split_dir)
        order = sub.storage_order(ids)
        with tqdm(total=len(ids), unit="video", desc=f"rescore {', '.join(metrics)}", disable=not progress) as bar:
            done = run_pass(sub, reader, rows, order, PassSettings(tuple(metrics)), tick=bar.update)
    for sample_id in order:
        record_video(report, *done.checks[sample_id])
    if not finish(report).ok:
        raise invalid_submission(report, submission, split_dir)
    got = report.submission_hash or ""
    if got != prov["submission_hash"]:
        raise ScoreError(f"{submission} is not the submission {results_path} was scored from (content hash "
                         f"{got[:12]}, the results say {prov['submission_hash'][:12]})")
    details = [done.found[i][0] for i in ids]
    _update_summaries(doc, details, metrics)
    for k in keys:
        prov["metric_settings"][k] = current[k]
    before = prov.get("rescored") or {}
    # every metric ever recomputed stays named: a second rescore must not hide the first
    earlier = [m for m in before.get("metrics", []) if isinstance(m, str)] if isinstance(before, dict) else []
    prov["rescored"] = {"metrics": sorted({*earlier, *metrics}), "phybench_version": __version__}
    return doc, details


def _listed_with(doc: dict[str, Any], added: Sequence[str]) -> list[str]:
    """The file's `metrics` with `added` where a fresh score lists them (the requested metrics, then
    the family's companions in its order): verify compares the list as a fresh score writes it."""
    listed = [*doc["metrics"], *added]
    requested = [m for m in listed if not (m in METRICS and METRICS.get(m).companion)]
    fresh = reported(requested, family_of(get_task(doc["task"])).metrics)
    return [*[m for m in fresh if m in listed], *[m for m in listed if m not in fresh]]


def rescored_sidecar(old: dict[str, Any] | None, doc: dict[str, Any], details: Sequence[dict[str, Any]],
                     metrics: Sequence[str]) -> dict[str, Any] | None:
    """The `.samples.json` sidecar after a rescore: each row's law from the recomputed details when a
    rescored metric's summary carries the law block (`law_error`), the old row's law otherwise; the
    velocities are recomputed either way (the same numbers).  Why: the sidecar carries per-video law
    fits; a rescore that changed the law must change them too, or `leaderboard verify` finds the
    file's own sidecar out of date."""
    from .results import summarise
    from .score import samples_sidecar

    new = samples_sidecar(doc, details)  # type: ignore[arg-type]
    if new is None or old is None:
        return None if new is None else dict(new)
    if "law" in summarise(list(details), metrics):  # the law was recomputed: the new rows as they are
        return dict(new)
    before = {r.get("sample_id"): r for r in old.get("samples", []) if isinstance(r, dict)}
    for row in new["samples"]:
        kept = before.get(row["sample_id"], {})
        row.pop("law", None)
        if "law" in kept:
            row["law"] = kept["law"]
    return dict(new)


def _check_metrics(doc: dict[str, Any], metrics: Sequence[str],
                   results_path: str | os.PathLike[str]) -> tuple[list[str], list[str]]:
    """Refuse metrics that cannot be recomputed alone or that the file does not report (except the
    family's new companions, added together); returns (the requested ones missing, the addable companions)."""
    bad = [m for m in metrics if m not in METRICS or METRICS.get(m).kind not in RESCORABLE_KINDS
           or METRICS.get(m).compute is None or METRICS.get(m).weights]
    if bad:
        raise ScoreError(f"cannot recompute {', '.join(bad)} alone: only per-video metrics without weights can be "
                         "(score the submission in full)")
    missing = [m for m in metrics if m not in doc["metrics"]]
    # A companion the family gained after the file was scored may be added: a fresh score lists
    # companions after the requested metrics, in the family's order, so appending them in that
    # order gives the list a fresh score would.
    companions = [m for m in family_of(get_task(doc["task"])).metrics if m in METRICS and METRICS.get(m).companion]
    addable = [m for m in companions if m not in doc["metrics"]]
    not_addable = [m for m in missing if m not in addable]
    if not_addable:
        raise ScoreError(f"{results_path} does not report {', '.join(not_addable)}; score the submission in full")
    if missing and addable[: len(missing)] != [m for m in addable if m in missing]:
        raise ScoreError(f"add the family's new companions together ({', '.join(addable)}); "
                         "or score the submission in full")
    return missing, addable


def _update_summaries(doc: dict[str, Any], ordered: list[dict[str, Any]], metrics: Sequence[str]) -> None:
    """Replace `metrics` (and the blocks their summary hooks add) in the overall and per-level summaries;
    with the tracking metric, which videos the parser lost (the lists and counts) as well."""
    from .results import summarise

    if TRACKING_METRIC in metrics:
        doc.update(tracking_lists(ordered))

    levels: dict[str, list[dict[str, Any]]] = {}
    for d in ordered:
        levels.setdefault(d["level"], []).append(d)
    for group, part in [("overall", ordered), *((f"level:{k}", v) for k, v in levels.items())]:
        block = summarise(part, metrics)
        target = doc["summary"]["overall"] if group == "overall" else doc["summary"]["levels"][group[len("level:"):]]
        hooks = sorted(set(block) - {"videos", "untrackable", "excluded"} - set(METRICS))  # e.g. `law`
        tracking = ["untrackable", "excluded"] if TRACKING_METRIC in metrics else []
        for m in [*tracking, *metrics, *hooks]:  # the metrics, the tracking counts, the summary hooks' blocks
            if m in block:
                target[m] = block[m]
            else:
                target.pop(m, None)
