"""Where the viewer's per-video numbers come from: a results file, its sidecar and the details Parquet.

`phybench view` reuses the scores (issue 37: "the viewer ... reuses the scores and never
re-scores").  Given ``--results R.json`` it reads, and computes nothing from the videos:

* ``R.json``: the header's numbers and the untrackable / excluded videos with their reasons,
  after checking that it belongs to this split (its split hash) and to this submission (its
  submission hash, recomputed from the submission's bytes: a hash, not a score);
* its sidecar beside it (``R.samples.json``, or ``R.samples.parquet`` as the Hub keeps it), for a
  family with a plotted DoF: each video's true and generated velocity and its law fit, after
  checking the sidecar's own hashes against the results file's;
* optionally ``--details D.parquet`` (``phybench score --details``): every per-video metric
  (velocity error, SSIM, PSNR, the judge's verdict, ...), after checking that it names this
  split's videos and the same untrackable ones as the results file (the Parquet carries no hash).

Without ``--results`` there is nothing to reuse: the viewer then scores the cheap metrics once,
in memory (`scored_model`), and reads that score through the same Parquet and sidecar forms, so a
page built either way shows the same numbers.  The per-video rows are one dict per sample id
(`ViewerModel.details`), the details row overlaid by the sidecar row and the results file's reasons.
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence, cast

import numpy as np
from ...data.documents import Manifest

if TYPE_CHECKING:
    from ...scoring.run.documents import Results, Sidecar

CHEAP_METRICS = ("velocity_error", "ssim", "psnr")
MAX_DETAILS_BYTES = 64 * 1024 * 1024  # a full split's details Parquet is a few MB


class SourceError(Exception):
    """A results file, sidecar or details file the viewer will not use; `code` names the case."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class ViewerModel:
    """One submission as the viewer shows it: every number comes from `results`, `details` (per sample id)."""

    path: Path
    name: str
    results: Results
    details: dict[str, dict[str, Any]]
    source: str  # "results" (read from files) or "scored" (no results file given: scored here, once)
    findings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def json_number(x: Any, digits: int = 6) -> float | None:
    """A JSON-safe number: None for NaN, inf, None and non-numbers."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.floating, np.integer)):
        return None
    x = float(x)
    return float(f"{x:.{digits}g}") if math.isfinite(x) else None


def model_name(results: Results, path: Path) -> str:
    model = results.get("model") or {}
    name = model.get("name") if isinstance(model, dict) else None
    return str(name or path.name)


# ================================================================ reading
def read_results_file(path: Path) -> Results:
    """A results file's document, its shape checked (untrusted input)."""
    from ...scoring.run.layout import read_results_doc as read_results

    try:
        doc = read_results(path)
    except (OSError, ValueError, RecursionError) as exc:
        raise SourceError(f"--results {path}: cannot be read as JSON ({exc})", "results_unreadable") from None
    prov = doc.get("provenance") if isinstance(doc, dict) else None
    summary = doc.get("summary") if isinstance(doc, dict) else None
    if not (isinstance(prov, dict) and isinstance(summary, dict) and isinstance(summary.get("overall"), dict)
            and isinstance(summary.get("levels", {}), dict) and isinstance(doc.get("metrics"), list)
            and isinstance(doc.get("higher_is_better", {}), dict)):
        raise SourceError(f"--results {path} is not a phybench results file (no provenance, summary or metrics)",
                          "results_unreadable")
    return cast("Results", doc)  # its shape checked above, as far as the viewer reads it


def check_belongs(doc: Results, path: Path, split_hash: str, submission_hash: str) -> None:
    """A results file of another split or submission is refused (before anything is written)."""
    prov = doc["provenance"]
    for key, what, mine in (("split_hash", "split", split_hash), ("submission_hash", "submission", submission_hash)):
        if prov.get(key) != mine:
            raise SourceError(f"--results {path} is of another {what} ({key} {str(prov.get(key))[:12]}..., this "
                              f"one's is {mine[:12]}...)", "results_mismatch")


def read_samples(results_path: Path, doc: Results) -> Sidecar | None:
    """The sidecar beside a results file (JSON, else Parquet), its hashes checked; None when there is none."""
    from ...scoring.run.layout import samples_path
    from ..common.samples_parquet import SidecarError, parquet_path, read_any_sidecar

    found = [p for p in (samples_path(results_path), parquet_path(samples_path(results_path))) if p.is_file()]
    if not found:
        return None
    try:
        side = read_any_sidecar(found[0])
    except SidecarError as exc:
        raise SourceError(f"{found[0]}: {exc}", "samples_unreadable") from None
    prov = doc["provenance"]
    if not isinstance(side.get("samples"), list) or any(side.get(k) != prov.get(k)
                                                       for k in ("split_hash", "submission_hash")):
        raise SourceError(f"{found[0]} is not the sidecar of {results_path} (its hashes differ)", "samples_mismatch")
    return side


def read_details_bytes(data: bytes, where: str) -> list[dict[str, Any]]:
    """The rows of a details Parquet (`phybench.scoring.run.results.details_bytes`), NaN read as None."""
    import math

    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        cols = pq.read_table(io.BytesIO(data)).to_pydict()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise SourceError(f"{where}: not a details Parquet ({str(exc)[:120]})", "details_unreadable") from None
    if "sample_id" not in cols:
        raise SourceError(f"{where}: not a details Parquet (no sample_id column)", "details_unreadable")

    def clean(x: Any) -> Any:
        return None if isinstance(x, float) and not math.isfinite(x) else x

    names = list(cols)
    return [{k: clean(cols[k][i]) for k in names} for i in range(len(cols["sample_id"]))]


def read_details(path: Path) -> list[dict[str, Any]]:
    from ..common.files import UnsafeFile, read_regular

    try:
        data = read_regular(path, MAX_DETAILS_BYTES)
    except UnsafeFile as exc:
        raise SourceError(f"--details {path}: {exc}", "details_unreadable") from None
    return read_details_bytes(data, f"--details {path}")


BOARD_FILE_BYTES = 50_000_000  # a results file larger than this is skipped when ranking


def rank_among(board_dir: Path, results: Results) -> dict[str, Any]:
    """Where this model would rank among the results files under `board_dir` on the same split (same split hash):
    by the ranked velocity error where scored, else the velocity error; reference baselines marked."""
    from ...scoring.run.layout import is_beside, read_results_doc

    overall = results["summary"]["overall"]
    metric = next((m for m in ("velocity_error_ranked", "velocity_error") if isinstance(overall.get(m), dict)), None)
    out: dict[str, Any] = {"metric": metric, "rows": [], "files": 0}
    if metric is None:
        return out
    higher = bool(results.get("higher_is_better", {}).get(metric, False))
    mine = results["provenance"]
    rows = [{"model": str((results.get("model") or {}).get("name", "this model")), "this": True, "baseline": False,
             "value": json_number(overall[metric].get("mean")), "ci95": overall[metric].get("ci95")}]
    for path in sorted(board_dir.rglob("*.json")):
        if is_beside(path) or not path.is_file() or path.is_symlink():
            continue
        if path.stat().st_size > BOARD_FILE_BYTES:
            continue
        try:
            doc = read_results_doc(path)
        except (OSError, ValueError, RecursionError):
            continue
        if not isinstance(doc, dict) or doc.get("kind") != "phybench-results":
            continue
        prov, summary = doc.get("provenance"), doc.get("summary")
        if not (isinstance(prov, dict) and isinstance(summary, dict) and isinstance(summary.get("overall"), dict)):
            continue
        if prov.get("split_hash") != mine["split_hash"] or prov.get("submission_hash") == mine["submission_hash"]:
            continue
        entry = summary["overall"].get(metric)
        if not isinstance(entry, dict) or json_number(entry.get("mean")) is None:
            continue
        got = doc.get("model")
        model: dict[str, Any] = got if isinstance(got, dict) else {}
        got = model.get("sampler")
        sampler: dict[str, Any] = got if isinstance(got, dict) else {}
        ci = entry.get("ci95") if isinstance(entry.get("ci95"), list) and len(entry["ci95"]) == 2 else None
        rows.append({"model": str(model.get("name", path.stem)), "this": False,
                     "baseline": str(sampler.get("name", "")).startswith("baseline:"),
                     "value": json_number(entry.get("mean")), "ci95": [json_number(c) for c in ci] if ci else None})
        out["files"] += 1
    rows.sort(key=lambda r: (r["value"] is None, -(r["value"] or 0.0) if higher else (r["value"] or 0.0)))
    out["rows"] = rows
    out["rank"] = next(i + 1 for i, r in enumerate(rows) if r["this"])
    return out


# ================================================================ one row per video
def merge_rows(order: Sequence[str], results: Results, samples: Sidecar | None,
               details: list[dict[str, Any]] | None, where: str) -> dict[str, dict[str, Any]]:
    """Per sample id (the split's order): the details row, overlaid by the sidecar row, then the
    results file's untrackable / excluded reasons.  Rows of other videos are refused."""
    rows: dict[str, dict[str, Any]] = {sid: {} for sid in order}
    sources: tuple[tuple[str, Sequence[Mapping[str, Any]] | None], ...] = (
        ("details", details), ("sidecar", samples["samples"] if samples is not None else None))
    for label, got in sources:
        if got is None:
            continue
        ids = [r.get("sample_id") if isinstance(r, dict) else None for r in got]
        if sorted(map(str, ids)) != sorted(order) or len(set(ids)) != len(ids):
            raise SourceError(f"{where}: its {label} do not name this split's videos", "ids_mismatch")
        for r in got:
            rows[r["sample_id"]].update({k: v for k, v in r.items() if k != "sample_id"})
    for key, entries in (("untrackable", results.get("untrackable", [])), ("excluded", results.get("excluded", []))):
        listed = {e.get("sample_id"): e.get("reason") for e in entries if isinstance(e, dict)}
        if details is not None and {s for s in order if rows[s].get(key)} != set(listed):
            raise SourceError(f"{where}: the details' {key} videos are not the results file's: details of another "
                              "score", "details_mismatch")
        for sid in order:
            reason = listed.get(sid)
            rows[sid][key] = str(reason) if reason else None
    return rows


def model_from_results(path: Path, results_path: Path, details: Path | list[dict[str, Any]] | None,
                       manifest: Manifest, order: Sequence[str]) -> ViewerModel:
    """A submission's model read from its results file (+ sidecar, + details: a Parquet's path or its
    rows already in memory): nothing is scored."""
    from ...submission import SubmissionError, submission_hash

    doc = read_results_file(results_path)
    try:
        sub_hash = submission_hash(path)
    except (SubmissionError, OSError) as exc:
        raise SourceError(f"{path}: {exc}", "score_error") from None
    check_belongs(doc, results_path, str(manifest.get("split_hash")), sub_hash)
    samples = read_samples(results_path, doc)
    rows = merge_rows(order, doc, samples, read_details(details) if isinstance(details, Path) else details,
                      str(results_path))
    return ViewerModel(path, model_name(doc, path), doc, rows, "results")


def score_rows(path: Path, split_dir: Path, metrics: Sequence[str], progress: bool = False) -> tuple[
        Results, list[dict[str, Any]], Sidecar | None]:
    """Score `metrics` once, in memory: (results, details rows as the details Parquet holds them, sidecar as written)."""
    import json

    from ...scoring.run.results import details_bytes
    from ...scoring.run.score import ScoreError, samples_sidecar, score
    from ..common.samples_parquet import canonical_json

    try:
        out = score(path, split_dir, list(metrics), progress=progress)
    except ScoreError as exc:
        raise SourceError(f"{path}: {exc}", exc.code) from None
    rows = read_details_bytes(details_bytes(out.details, out.results["metrics"]), str(path))
    side = samples_sidecar(out.results, out.details)
    return out.results, rows, (json.loads(canonical_json(side)) if side is not None else None)


def scored_model(path: Path, split_dir: Path, order: Sequence[str], progress: bool) -> ViewerModel:
    """No results file given: score the cheap metrics once, in memory, and read them as the files would hold them."""
    results, details, samples = score_rows(path, split_dir, CHEAP_METRICS, progress)
    if sorted(d["sample_id"] for d in details) != sorted(order):
        raise SourceError(f"{path} does not answer this split's sample ids", "ids_mismatch")
    return ViewerModel(path, model_name(results, path), results, merge_rows(order, results, samples, details, str(path)),
                 "scored")
